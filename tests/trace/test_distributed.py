"""grade_many and grade_each on real distributed engines: a 2-worker Dask LocalCluster (processes) and a local Ray
instance behind :class:`verigate.trace.RayExecutor`, each giving the same report as no executor. The CLI's
``--scheduler`` is run as a subprocess against the Dask cluster's scheduler. Each engine is an optional extra
(``dask``, ``ray``; both in ``dev``): a test skips when its engine is not installed.
"""

from __future__ import annotations

import concurrent.futures
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from folder_sessions import DAMAGED, write_sessions
from grade_helpers import REPO, cli, run, step, write_traces

from verigate import InputError
from verigate.trace import RayExecutor, Source, grade_each, grade_many

pytestmark = pytest.mark.slow


def _sources(folder: Path) -> list[Source]:
    write_sessions(folder / "runs", 16)
    traces = write_traces(folder / "suite.json", [run("t", f"t/{index}", [step("x", ok=index % 3 != 0)],
                                                      ok=None) for index in range(6)])
    paths = sorted((folder / "runs").rglob("*.jsonl"))
    return [*(Source(str(path), None, "fix") for path in paths), Source(str(traces), "traces")]


@pytest.fixture(scope="module")
def dask_client() -> Iterator[object]:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_dask_executor_gives_the_report_of_no_executor(dask_client: object, tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    alone = grade_many(sources)
    assert len(alone.runs) == 22 and alone.exit_code == 3
    executor = dask_client.get_executor()  # type: ignore[attr-defined]
    assert grade_many(sources, executor=executor) == alone
    streamed = [graded.report for graded in grade_each(sources, executor=executor, in_flight=3)]
    assert tuple(result for report in streamed if report for result in report.runs) == alone.runs


def test_cli_on_a_dask_scheduler_matches_local_processes(dask_client: object, tmp_path: Path) -> None:
    write_sessions(tmp_path / "runs", 12)
    (tmp_path / "runs" / "damaged.jsonl").write_text(DAMAGED, encoding="utf-8")
    address = dask_client.scheduler.address  # type: ignore[attr-defined]
    on_dask = cli("grade", "--transcripts", "runs/**/*.jsonl", "--json", "--scheduler", address, cwd=tmp_path)
    local = cli("grade", "--transcripts", "runs/**/*.jsonl", "--json", "--jobs", "2", cwd=tmp_path)
    assert on_dask.returncode == local.returncode == 2, on_dask.stderr
    assert on_dask.stdout == local.stdout
    assert json.loads(on_dask.stdout.splitlines()[-1])["errors"] == 1


def test_an_unreachable_scheduler_is_an_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    write_sessions(tmp_path, 1)
    done = cli("grade", "--transcripts", "**/*.jsonl", "--scheduler", "tcp://127.0.0.1:9", cwd=tmp_path,
               env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    assert done.returncode == 2 and "cannot reach the Dask scheduler" in done.stderr


def test_ray_executor_gives_the_report_of_no_executor(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    sources = _sources(tmp_path)
    alone = grade_many(sources)
    executor = RayExecutor(init={"num_cpus": 2, "include_dashboard": False, "log_to_driver": False,
                                 "runtime_env": {"env_vars": {"PYTHONPATH": str(REPO / "src")}}})
    try:
        assert grade_many(sources, executor=executor) == alone
        streamed = [graded.report for graded in grade_each(sources, executor=executor, in_flight=2)]
        assert tuple(result for report in streamed if report for result in report.runs) == alone.runs
        damaged = tmp_path / "damaged.jsonl"
        damaged.write_text(DAMAGED, encoding="utf-8")
        with pytest.raises(InputError):  # an error in a Ray task is the task's own exception, never a pass
            grade_many([damaged], executor=executor)
        future = executor.submit(sum, [1, 2, 3])
        assert future.result(timeout=120) == 6
        (graded,) = grade_each([damaged], executor=executor)
        assert graded.report is None and graded.error and "damaged.jsonl" in graded.error
    finally:
        executor.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(sum, [1])
    import ray

    assert not ray.is_initialized()  # the executor started Ray, so it ended it


def test_executor_interface_is_the_standard_one() -> None:
    assert issubclass(RayExecutor, concurrent.futures.Executor)

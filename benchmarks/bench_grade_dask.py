"""Benchmark: grade 1,000 generated transcripts on 1 process vs a 2-worker Dask cluster, as a ratio.

    python benchmarks/bench_grade_dask.py [--files 1000] [--rounds 3] [--quick]

The transcripts are generated Claude Code sessions (Read/Edit/Bash calls with results; a few force-push or edit
an unread file) of about 20 KB each. Both sides call ``verigate.trace.grade_many`` on the same sources: once with
no executor, once with ``distributed.Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True))
.get_executor()``; the cluster is started before the clock runs (its start-up is reported apart). Wall clock,
best of the interleaved rounds (the machine is shared). Both reports must be equal, or the script fails.
Nothing else is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path


def _line(kind: str, session: str, counter: int, **fields: object) -> str:
    record: dict[str, object] = {"parentUuid": f"u{counter - 1}", "isSidechain": False, "userType": "external",
                                 "cwd": "/home/dev/project", "sessionId": session, "version": "2.0.14",
                                 "type": kind, "uuid": f"u{counter}", "timestamp": "2026-01-01T00:00:00.000Z",
                                 **fields}
    return json.dumps(record) + "\n"


def generate(folder: Path, files: int, seed: int = 7) -> list[Path]:
    """``files`` sessions of 20-40 tool calls each; about one in ten force-pushes, some edit unread files."""
    rng = random.Random(seed)
    paths = []
    for index in range(files):
        session, counter, lines = f"s{index}", 0, []
        lines.append(_line("user", session, counter, message={"role": "user", "content": f"Fix issue {index}."}))
        for call in range(rng.randint(20, 40)):
            counter += 2
            name = rng.choice(["Read", "Read", "Edit", "Bash"])
            path = f"/home/dev/project/src/m{rng.randint(0, 30)}.py"
            tool_input = {"Read": {"file_path": path},
                          "Edit": {"file_path": path, "old_string": "a = 1", "new_string": "a = 2"},
                          "Bash": {"command": "git push --force" if rng.random() < 0.01 else "pytest -q"}}[name]
            tool_id = f"toolu_{index}_{call}"
            lines.append(_line("assistant", session, counter, message={
                "id": f"msg_{counter}", "type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}))
            output = "".join(f"    value_{n} = compute(value_{n - 1})\n" for n in range(rng.randint(3, 20)))
            lines.append(_line("user", session, counter + 1, message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": output,
                 "is_error": name == "Bash" and rng.random() < 0.2}]}))
        lines.append(_line("assistant", session, counter + 2, message={
            "id": f"msg_{counter + 2}", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "Done."}]}))
        target = folder / f"project-{index % 10}" / f"session-{index}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(lines), encoding="utf-8")
        paths.append(target)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000, help="generated transcripts (default 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each is reported")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 40 files, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.files, args.rounds = 40, 1
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SystemExit("bench_grade_dask.py needs Dask: pip install 'verigate-agents[dask]'") from None
    from verigate.trace import Source, grade_many, load_trace_config, rule_registry

    config = load_trace_config()
    rule_registry()  # plug-ins loaded once here, as in the workers after their first task
    with tempfile.TemporaryDirectory(prefix="verigate-bench-dask-") as folder:
        paths = generate(Path(folder), args.files)
        megabytes = sum(path.stat().st_size for path in paths) / 1e6
        sources = [Source(str(path), "claude-code", "bench") for path in paths]
        began = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        executor = client.get_executor()
        grade_many(sources[:2], executor=executor, config=config)  # each worker imports verigate once
        startup = time.perf_counter() - began
        alone: list[float] = []
        dask: list[float] = []
        try:
            for _ in range(args.rounds):
                started = time.perf_counter()
                sequential = grade_many(sources, config=config)
                alone.append(time.perf_counter() - started)
                started = time.perf_counter()
                distributed = grade_many(sources, executor=executor, config=config)
                dask.append(time.perf_counter() - started)
                if distributed != sequential:
                    raise SystemExit("the Dask report differs from the single-process one")
        finally:
            client.close()
            cluster.close()
    corrupt = len(sequential.corrupt_runs)
    print(f"{args.files:,} transcripts, {megabytes:,.1f} MB ({corrupt} corrupt-success runs); best of {args.rounds}")
    print(f"1 process         : {min(alone):7.2f} s   {args.files / min(alone):7.0f} files/s")
    print(f"Dask, 2 workers   : {min(dask):7.2f} s   {args.files / min(dask):7.0f} files/s   "
          f"(cluster start-up and first task, not counted: {startup:.1f} s)")
    print(f"ratio 1 process / Dask 2 workers (wall): {min(alone) / min(dask):.2f}x")


if __name__ == "__main__":
    main()

"""The benchmark scripts still run: each one's ``--help`` and its ``--quick`` smoke mode, as a subprocess, exit 0
and print their table's header. Benchmarks report and never assert times; neither does this test.

The peers (Guardrails AI and the others) are not installed here, and ``bench_peers.py`` gets no ``--peer-python``:
its peer rows must then say so instead of failing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"

#: script -> a line of its output's table header
HEADERS = {
    "bench_peers.py": "| # | work | unit | verigate min / median / max |",
    "bench_finalize.py": "finalize, :memory: store",
    "bench_grade.py": "grade / json.loads throughput",
    "bench_grade_dask.py": "ratio 1 process / Dask 2 workers",
    "bench_judge.py": "ratio llm_judge / bare",
    "bench_redact.py": "MB/s",
    "bench_evidence.py": "verify throughput",
    "bench_store.py": "store rows/s",
    "bench_store_workers.py": "PostgreSQL/SQLite",
    "bench_otel.py": "ratio with / without",
    "bench_stop_hook.py": "python -c pass",
    "bench_selfgate_hook.py": "pre-tool-use, first call",
    "bench_runtime_claude_agent_sdk.py": "gated run",
    "bench_runtime_langgraph.py": "gated/ungated",
    "bench_runtime_openai_agents.py": "ungated Runner.run",
    "bench_runtime_pydantic_ai.py": "ratio gated / ungated",
}

pytestmark = [pytest.mark.bench, pytest.mark.slow]


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=280, check=False)


def test_every_benchmark_is_listed() -> None:
    assert sorted(HEADERS) == sorted(path.name for path in BENCHMARKS.glob("bench_*.py"))


@pytest.mark.parametrize("script", sorted(HEADERS))
def test_help(script: str) -> None:
    done = _run(script, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout and "--quick" in done.stdout


@pytest.mark.parametrize("script", sorted(HEADERS))
def test_quick_run(script: str) -> None:
    done = _run(script, "--quick")
    assert done.returncode == 0, done.stderr[-3000:]
    assert HEADERS[script] in done.stdout, done.stdout[-3000:]
    if script == "bench_peers.py":
        assert "peer not installed" in done.stdout
        assert "Traceback" not in done.stderr

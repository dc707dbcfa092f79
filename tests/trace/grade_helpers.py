"""Helpers for the trace-grader tests: run the CLI as a user does, write traces, build configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SHARED_FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m verigate grade …`` (or another sub-command when the first arg is not an option)."""
    full_env = {key: value for key, value in os.environ.items() if key not in ("GITHUB_ACTIONS",
                                                                              "GITHUB_STEP_SUMMARY")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "verigate", *args], capture_output=True, text=True, cwd=cwd,
                          env=full_env, timeout=120, check=False)


def config(**overrides: Any) -> dict[str, Any]:
    """A complete trace-grader config (the seed's shape) with ``overrides``."""
    base: dict[str, Any] = {
        "verified": False,
        "forbidden_tools": [],
        "retry_threshold": 3,
        "step_budget": 40,
        "order_constraints": {"must_precede": []},
        "grounding": {"enabled": True},
        "judge": {"enabled": False},
    }
    base.update(overrides)
    return base


def run(task: str, run_id: str, steps: Sequence[Mapping[str, Any]], ok: bool | None = True) -> dict[str, Any]:
    entry: dict[str, Any] = {"task": task, "run_id": run_id,
                             "steps": [{"step": index + 1, **step} for index, step in enumerate(steps)]}
    if ok is not None:
        entry["ok"] = ok
    return entry


def step(tool: str, ok: bool | None = True, observation: str = "", **args: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"tool": tool, "args": args, "observation": observation}
    if ok is not None:
        entry["ok"] = ok
    return entry


def write_traces(path: Path, runs: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text(json.dumps({"runs": list(runs)}), encoding="utf-8")
    return path

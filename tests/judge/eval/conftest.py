"""Fixtures for the judge-quality tests; the server and helpers are in tests/judge_eval_helpers.py."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge_eval_helpers import ROOT, CaseServer, judge_config


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = f"test-{secrets.token_hex(8)}"
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TYPESAFE_API_KEY"):
        monkeypatch.setenv(name, key)
    return key


@pytest.fixture
def case_server(api_key: str) -> Iterator[CaseServer]:
    with CaseServer(required_key=api_key) as server:
        yield server


@pytest.fixture
def config_file(tmp_path: Path, case_server: CaseServer) -> Path:
    path = tmp_path / "verigate.yaml"
    path.write_text(json.dumps({"judge": judge_config(case_server)}), encoding="utf-8")  # JSON is YAML
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # the checkout's code and its client plug-ins (which report usage) win over whatever is installed
    paths = [str(ROOT / "src"), *(str(ROOT / "plugins" / f"verigate-{name}" / "src")
                                  for name in ("openai", "anthropic", "jev"))]
    env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "verigate", *args], capture_output=True, text=True,
                              timeout=240, check=False, cwd=cwd or tmp_path, env=_env())

    return run

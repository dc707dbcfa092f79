"""Every CLI error is one line on stderr, never a traceback: bad inputs through the real ``verigate`` process, and an
unexpected exception, whose traceback goes (redacted) to the error log beside the store and to stderr only with
``--debug`` / ``VERIGATE_DEBUG=1``."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from verigate import _errorlog
from verigate._errorlog import LOG_NAME, log_exception

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "examples" / "traces" / "traces.json"
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def _verigate(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("VERIGATE_")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "verigate", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False, env=environment)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "task").mkdir()
    (tmp_path / "deep.json").write_text(DEEP_JSON, encoding="utf-8")
    (tmp_path / "deep-object.json").write_text('{"a":' * 5000 + "1" + "}" * 5000, encoding="utf-8")
    (tmp_path / "twice.json").write_text('{"terminal_state": "failed", "terminal_state": "completed"}')
    (tmp_path / "broken.yaml").write_text("judge: [unclosed\n", encoding="utf-8")
    (tmp_path / "tabs.yaml").write_text("budget:\n\trevise: 2\n", encoding="utf-8")
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00garbage")
    return tmp_path


#: (arguments, allowed exit codes) — paths are relative to the inputs folder
TABLE: list[tuple[tuple[str, ...], frozenset[int]]] = [
    # evidence: 1 is "rejected", 2 "cannot run"; a hostile file may be either, never a crash
    (("evidence", "verify", "deep.json", "task"), frozenset({1, 2})),
    (("evidence", "verify", "deep-object.json", "task"), frozenset({1, 2})),
    (("evidence", "verify", "twice.json", "task"), frozenset({1, 2})),
    (("evidence", "verify", "missing.json", "task"), frozenset({1, 2})),
    (("evidence", "produce", "task"), frozenset({1, 2})),
    (("grade", "--traces", "deep.json"), frozenset({2})),
    (("grade", "--traces", "deep-object.json"), frozenset({2})),
    (("grade", "--traces", "missing.json"), frozenset({2})),
    (("grade", "--config", "broken.yaml", "--traces", str(TRACES)), frozenset({2})),
    (("grade", "--config", "binary.yaml", "--traces", str(TRACES)), frozenset({2})),
    (("rules", "lint", "broken.yaml"), frozenset({2})),
    (("rules", "lint", "tabs.yaml"), frozenset({2})),
    (("rules", "lint", "missing.yaml"), frozenset({2})),
    (("demo", "--config", "broken.yaml"), frozenset({2})),
    (("demo", "--config", "missing.yaml"), frozenset({2})),
    (("config", "verify", "broken.yaml"), frozenset({2})),
    (("config", "verify", "missing.yaml"), frozenset({2})),
    (("ledger", "verify", "--store", "nowhere/verigate.db"), frozenset({2})),
    (("review", "show", "rv_0000"), frozenset({2})),
]


@pytest.mark.parametrize(("args", "codes"), TABLE, ids=[" ".join(args[:3]) for args, _ in TABLE])
def test_a_bad_input_is_one_stderr_line(inputs: Path, args: tuple[str, ...], codes: frozenset[int]) -> None:
    done = _verigate(*args, cwd=inputs)
    assert done.returncode in codes, done
    _one_line(done)


def test_a_hostile_config_in_the_working_directory_is_one_line(inputs: Path) -> None:
    (inputs / "verigate.yaml").write_text("plugins: " + "[" * 200 + "]" * 200 + "\n", encoding="utf-8")
    done = _verigate("demo", cwd=inputs)
    assert done.returncode == 2
    assert "verigate.yaml:1: refused YAML" in _one_line(done)


# ------------------------------------------------------------------------------------------- unexpected errors

#: makes `verigate plugins` raise a bug whose message holds a token (generated per run, so no pack knows it)
BUG = '''import verigate.cli._plugins_cmd as command


def main(argv):
    raise RuntimeError("bug while listing, token {token}\\nsecond line")


command.main = main
'''


@pytest.fixture
def buggy(tmp_path: Path) -> tuple[dict[str, str], str]:
    token = "ghp_" + secrets.token_hex(18)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BUG.format(token=token), encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))}, token


def test_an_unexpected_error_is_one_line_and_its_traceback_is_logged_redacted(
        tmp_path: Path, buggy: tuple[dict[str, str], str]) -> None:
    env, token = buggy
    project = tmp_path / "project"
    (project / ".verigate").mkdir(parents=True)
    done = _verigate("plugins", cwd=project, env=env)
    assert done.returncode == 2
    log = project / ".verigate" / "logs" / LOG_NAME
    line = _one_line(done)
    assert line.startswith("verigate plugins: internal error: RuntimeError: bug while listing")
    assert line.endswith(f"(details in {log})")
    text = log.read_text(encoding="utf-8")
    assert "RuntimeError" in text and "in main" in text
    assert token not in text + done.stderr  # the message passed the secrets pack before it was written
    assert log.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("how", ["--debug", "VERIGATE_DEBUG"])
def test_debug_prints_the_traceback(tmp_path: Path, buggy: tuple[dict[str, str], str], how: str) -> None:
    env, _ = buggy
    if how == "--debug":
        done = _verigate("--debug", "plugins", cwd=tmp_path, env=env)
    else:
        done = _verigate("plugins", cwd=tmp_path, env={**env, "VERIGATE_DEBUG": "1"})
    assert done.returncode == 2
    assert "Traceback" in done.stderr and "RuntimeError" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("verigate plugins: internal error:")


def test_outside_a_project_nothing_is_created(tmp_path: Path, buggy: tuple[dict[str, str], str]) -> None:
    env, _ = buggy
    done = _verigate("plugins", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert _one_line(done).endswith("(run with --debug for the traceback)")
    assert not (tmp_path / ".verigate").exists()


def test_a_log_that_cannot_be_written_is_no_log(tmp_path: Path, buggy: tuple[dict[str, str], str]) -> None:
    env, _ = buggy
    (tmp_path / ".verigate").mkdir()
    (tmp_path / ".verigate" / "logs").write_text("a file where the folder should be", encoding="utf-8")
    done = _verigate("plugins", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert _one_line(done).endswith("(run with --debug for the traceback)")


def test_a_hook_bug_is_logged_not_printed(tmp_path: Path, buggy: tuple[dict[str, str], str]) -> None:
    """Hosts hand a hook's stderr to the model: a traceback there is noise it reads, and may carry data."""
    env, _ = buggy
    site = Path(env["PYTHONPATH"].split(os.pathsep)[0])
    (site / "sitecustomize.py").write_text(
        "import verigate.selfgate._quick as quick\n\n"
        "def broken(*args, **kwargs):\n    raise ZeroDivisionError('a bug in the check')\n\n"
        "quick.quick_tool_decision = broken\n", encoding="utf-8")
    (tmp_path / ".verigate").mkdir()
    stdin = json.dumps({"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
                        "tool_name": "Bash", "tool_input": {"command": "ls"}})
    done = subprocess.run([sys.executable, "-m", "verigate", "hook", "claude-code", "pre-tool-use"], cwd=tmp_path,
                          input=stdin, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **env, "CLAUDE_PROJECT_DIR": str(tmp_path)})
    assert done.returncode == 2  # refused
    line = _one_line(done)
    assert "ZeroDivisionError: a bug in the check" in line and "details in" in line
    assert "ZeroDivisionError" in (tmp_path / ".verigate" / "logs" / LOG_NAME).read_text(encoding="utf-8")


def test_the_log_rotates_past_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_errorlog, "MAX_LOG_BYTES", 2000)
    (tmp_path / ".verigate").mkdir()
    for number in range(20):
        try:
            raise ValueError(f"failure {number}")
        except ValueError as exc:
            path = log_exception(exc, tmp_path, context="test")
    assert path is not None
    older = path.with_name(LOG_NAME + ".1")
    assert older.is_file() and path.stat().st_size <= 2000 and older.stat().st_size <= 2000
    assert "failure 19" in path.read_text(encoding="utf-8")

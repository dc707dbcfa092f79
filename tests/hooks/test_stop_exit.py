"""The hook process ends as soon as its answer is out, and still does what an ordinary exit does that anyone sees:
``atexit`` handlers (telemetry exporters and logging flush there) run once, in the process that ran the hook."""

from __future__ import annotations

import os
from pathlib import Path

from stop_helpers import FAIL, PASS, hook_env, run_hook_process, stop

from judge_servers import JudgeServer

#: imported by every Python start on its path: registers an exit handler before the hook forks
SITECUSTOMIZE = '''
import atexit, os, sys

def _ran():
    with open(os.environ["VERIGATE_TEST_EXIT_FILE"], "a", encoding="utf-8") as out:
        out.write(f"atexit {os.getpid()}\\n")
    sys.stderr.write("exit handler wrote to stderr\\n")

atexit.register(_ran)
'''


def _env(tmp_path: Path, marker: Path) -> dict[str, str]:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    env = hook_env(VERIGATE_TEST_EXIT_FILE=str(marker))
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [env.get("PYTHONPATH")])])
    return env


def test_exit_handlers_run_once_after_a_block(tmp_path: Path, project: Path, judge: JudgeServer) -> None:
    judge.reply_text(FAIL)
    marker = tmp_path / "exits.txt"
    run = run_hook_process("claude-code", "stop", stop(project), env=_env(tmp_path, marker))
    assert run.code == 0 and run.blocked, run
    assert "exit handler wrote to stderr" in run.stderr
    assert len(marker.read_text(encoding="utf-8").splitlines()) == 1


def test_exit_handlers_run_once_after_a_silent_completion(tmp_path: Path, project: Path, judge: JudgeServer) -> None:
    judge.reply_text(PASS)
    marker = tmp_path / "exits.txt"
    run = run_hook_process("claude-code", "stop", stop(project), env=_env(tmp_path, marker))
    assert run.code == 0 and run.allowed_silently, run
    assert len(marker.read_text(encoding="utf-8").splitlines()) == 1

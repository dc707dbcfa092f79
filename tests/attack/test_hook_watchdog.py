"""Every hook answers within its own deadline whatever the input, failing closed before a host's timeout would let
the action through: real ``verigate hook`` processes fed inputs that never end or never let the hook finish."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# the Stop-hook helpers (transcripts, a project judged by a loopback server) live beside the Stop-hook tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from stop_helpers import ANSWER, PASS, REQUEST, TOOLS, claude_transcript, stop_payload, write_config

from judge_servers import JudgeServer
from verigate.cli._hook import EVENTS, deadline_answer
from verigate.hooks import _stop
from verigate.hooks._protocol import (
    DEADLINE_ENV,
    MAX_STOP_GRACE_S,
    STOP_BUDGET_DEFAULT_S,
    TOOL_HOOK_DEADLINE_S,
    Watchdog,
    hook_budget_s,
    watchdog_deadline_s,
)

#: the judge server's delay: the hook must answer long before it
SLOW_JUDGE_S = 10.0


def _env(**overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE_", "VERIGATE_"))}
    env["VERIGATE_TEST_JUDGE_KEY"] = "sk-loopback-test"
    env.update(overrides)
    return env


def _start(host: str, event: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "verigate", "hook", host, event], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)


def _finish(process: subprocess.Popen[str], timeout: float) -> tuple[int, str, str]:
    """Wait for the process to exit by itself (stdin left open), then read what it wrote."""
    try:
        code = process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    if process.stdin is not None:
        process.stdin.close()
    return code, out, err


def _assert_fail_closed(host: str, event: str, code: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err
    if event == "pre-tool-use":  # exit 2 + the reason on stderr: both hosts refuse the tool call
        assert code == 2 and not out.strip()
        assert "verigate fails closed" in err and len(err.strip().splitlines()) == 1
        return
    assert code == 0, (code, out, err)
    answer = json.loads(out)
    if event == "user-prompt-submit":
        assert answer["decision"] == "block"
    else:  # Stop / SubagentStop: handed to a person, marked NOT verified
        assert answer["continue"] is False and "EXTERNAL_VERIFICATION_REQUIRED" in answer["stopReason"]
        assert "NOT verified" in answer["systemMessage"]


@pytest.mark.parametrize(("host", "event"), sorted(EVENTS))
def test_stdin_that_never_ends_is_answered_at_the_deadline(host: str, event: str, tmp_path: Path) -> None:
    """The host (or an attacker between it and the hook) never closes stdin: the hook would wait forever."""
    process = _start(host, event, _env(**{DEADLINE_ENV: "1"}), tmp_path)
    assert process.stdin is not None
    process.stdin.write('{"session_id": "s-slow", "cwd": ')
    process.stdin.flush()
    started = time.monotonic()
    code, out, err = _finish(process, timeout=60)
    assert time.monotonic() - started < 30  # the deadline is 1 s (Stop: 1.25 s); generous for a busy machine
    _assert_fail_closed(host, event, code, out, err)
    assert "deadline" in out + err


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    with JudgeServer("openai", required_key="sk-loopback-test") as server:
        yield server


@pytest.mark.parametrize("event", ["stop", "subagent-stop"])
def test_a_stop_hook_with_a_judge_slower_than_the_deadline_answers_before_it(tmp_path: Path, judge: JudgeServer,
                                                                          event: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_config(project, judge.base_url)
    judge.reply_text(PASS, delay_s=SLOW_JUDGE_S)
    transcript = claude_transcript(tmp_path / "session.jsonl", "s-judge", [(REQUEST, TOOLS, ANSWER)],
                                   sidechain=event == "subagent-stop")
    payload = stop_payload(project, "s-judge", transcript, last_message=ANSWER,
                           event="SubagentStop" if event == "subagent-stop" else "Stop")
    if event == "subagent-stop":
        payload.update(agent_id="agent-1", agent_transcript_path=str(transcript))
    process = _start("claude-code", event, _env(**{DEADLINE_ENV: "1"}), project)
    assert process.stdin is not None
    started = time.monotonic()
    process.stdin.write(json.dumps(payload))
    process.stdin.close()
    code, out, err = _finish(process, timeout=60)
    assert time.monotonic() - started < SLOW_JUDGE_S
    _assert_fail_closed("claude-code", event, code, out, err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_transcript_that_never_opens_is_answered_by_the_watchdog(tmp_path: Path) -> None:
    """A FIFO as transcript_path blocks the Stop hook before its own time keeping starts: only the watchdog helps."""
    project = tmp_path / "project"
    (project / ".verigate").mkdir(parents=True)
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    process = _start("codex", "stop", _env(**{DEADLINE_ENV: "1"}), project)
    assert process.stdin is not None
    process.stdin.write(json.dumps(stop_payload(project, "s-fifo", fifo)))
    process.stdin.close()
    code, out, err = _finish(process, timeout=60)
    _assert_fail_closed("codex", "stop", code, out, err)
    assert "ran out of time" in json.loads(out)["stopReason"]


#: sitecustomize modules that make the pre-tool-use check misbehave once the hook runs (after any fork)
CHECKS = {
    "lingers": "import threading, time\n"
               "def check(*args, **kwargs):\n"
               "    threading.Thread(target=time.sleep, args=(120,), daemon=False).start()  # a careless plug-in\n"
               "    return ('allow', '', '')\n",
    "holds-the-gil": "import re\n"
                     "def check(*args, **kwargs):\n"
                     "    re.match(r'(a+)+$', 'a' * 40 + 'b')  # backtracks for hours inside C, holding the GIL\n"
                     "    return ('allow', '', '')\n",
    "dies": "import os, signal\n"
            "def check(*args, **kwargs):\n"
            "    os.kill(os.getpid(), signal.SIGKILL)  # a crash no exception handler sees\n",
}


def _misbehaving(tmp_path: Path, how: str) -> subprocess.Popen[str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        CHECKS[how] + "import verigate.selfgate._quick as quick\nquick.quick_tool_decision = check\n",
        encoding="utf-8")
    env = _env(**{DEADLINE_ENV: "2", "PYTHONPATH": os.pathsep.join(filter(None, [
        str(site), os.environ.get("PYTHONPATH", "")]))})
    process = _start("claude-code", "pre-tool-use", env, tmp_path)
    assert process.stdin is not None
    process.stdin.write(json.dumps({"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
                                    "tool_name": "Read", "tool_input": {"file_path": "README.md"}}))
    process.stdin.close()
    return process


def test_a_process_that_answered_but_lingers_is_ended_with_its_answer(tmp_path: Path) -> None:
    """A non-daemon thread would keep the hook alive past the host's timeout, which discards the answer."""
    started = time.monotonic()
    code, out, err = _finish(_misbehaving(tmp_path, "lingers"), timeout=60)
    assert time.monotonic() - started < 60
    assert (code, out.strip(), err.strip()) == (0, "", "")  # the Read is allowed: no output, exit 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="only a supervising process can stop C code holding the GIL")
def test_c_code_holding_the_gil_is_answered_at_the_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    code, out, err = _finish(_misbehaving(tmp_path, "holds-the-gil"), timeout=60)
    assert time.monotonic() - started < 30  # the regular expression alone would run for hours
    _assert_fail_closed("claude-code", "pre-tool-use", code, out, err)
    assert "deadline" in err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a killed hook process can only be answered for by its parent")
def test_a_hook_process_that_dies_is_answered_for(tmp_path: Path) -> None:
    code, out, err = _finish(_misbehaving(tmp_path, "dies"), timeout=60)
    _assert_fail_closed("claude-code", "pre-tool-use", code, out, err)
    assert "ended without an answer (killed by signal 9)" in err


# ------------------------------------------------------------------------------------------- the watchdog itself


class _Exit:
    """A stand-in for os._exit that records the code (the watchdog thread then simply ends)."""

    def __init__(self) -> None:
        self.codes: list[int] = []
        self.called = threading.Event()

    def __call__(self, code: int) -> None:
        self.codes.append(code)
        self.called.set()


def test_the_hook_that_claims_first_keeps_its_answer_and_its_exit_code() -> None:
    exit_ = _Exit()
    watchdog = Watchdog(0.2, (2, None, ""), exit_=exit_)
    assert watchdog.claim() and watchdog.claim()  # the hook may claim again (idempotent)
    watchdog.answered(0)
    watchdog.start()
    assert exit_.called.wait(10)
    assert exit_.codes == [0]


def test_the_watchdog_that_fires_first_keeps_the_hook_from_answering(capfd: pytest.CaptureFixture[str]) -> None:
    exit_ = _Exit()
    watchdog = Watchdog(0.0, (0, {"decision": "block", "reason": "late"}, "why"), exit_=exit_).start()
    assert exit_.called.wait(10)
    assert exit_.codes == [0]
    assert not watchdog.claim()
    out, err = capfd.readouterr()
    assert json.loads(out) == {"decision": "block", "reason": "late"} and err == "why\n"


def _token() -> int:
    """The supervisor's answer token: one byte in a pipe whose write end is closed (see supervise)."""
    read, write = os.pipe()
    os.write(write, b"!")
    os.close(write)
    os.set_blocking(read, False)
    return read


def test_the_answer_token_goes_to_one_process_only(capfd: pytest.CaptureFixture[str]) -> None:
    """The supervisor took the token at the deadline: the child's hook may not answer, and its watchdog, firing a
    moment later on a loaded machine, ends quietly instead of writing a second answer to the shared stderr."""
    claim = _token()
    try:
        exit_ = _Exit()
        watchdog = Watchdog(0.0, (2, None, "the child's deadline answer"), exit_=exit_, claim_fd=claim)
        assert os.read(claim, 1) == b"!"  # the supervisor's take
        assert not watchdog.claim()
        watchdog.start()
        assert exit_.called.wait(10)
        assert exit_.codes == [2]
        assert capfd.readouterr() == ("", "")
    finally:
        os.close(claim)


def test_a_child_that_took_the_token_answers_and_the_other_side_cannot() -> None:
    claim = _token()
    try:
        watchdog = Watchdog(60.0, (2, None, "x"), exit_=_Exit(), claim_fd=claim)
        assert watchdog.claim() and watchdog.claim()  # the hook holds it (idempotent)
        # the supervisor finds it taken (the pipe is empty and has no writer): it waits for the child's answer
        assert os.read(claim, 1) == b""
    finally:
        os.close(claim)


def test_exit_one_is_never_the_watchdogs_code() -> None:
    exit_ = _Exit()
    Watchdog(0.0, (1, None, "x"), exit_=exit_).start()
    assert exit_.called.wait(10)
    assert exit_.codes == [2]


# ------------------------------------------------------------------------------------------- the deadlines


@pytest.mark.parametrize("budget", ["0.5", "1", "4", "60", "150", "170", "1000"])
def test_the_stop_hooks_own_deadlines_end_before_the_watchdog(budget: str) -> None:
    environ = {DEADLINE_ENV: budget}
    deadline, give_up = _stop.hook_deadlines(0.0, environ)
    watchdog = watchdog_deadline_s("stop", environ)
    assert deadline <= give_up < float(budget) < watchdog <= float(budget) + MAX_STOP_GRACE_S


@pytest.mark.parametrize(("value", "stop", "tool"), [
    (None, STOP_BUDGET_DEFAULT_S + MAX_STOP_GRACE_S, TOOL_HOOK_DEADLINE_S),
    ("1", 1.25, 1.0),
    ("170", 175.0, TOOL_HOOK_DEADLINE_S),
    ("soon", STOP_BUDGET_DEFAULT_S + MAX_STOP_GRACE_S, TOOL_HOOK_DEADLINE_S),  # invalid: the Stop hook says so
    ("-3", STOP_BUDGET_DEFAULT_S + MAX_STOP_GRACE_S, TOOL_HOOK_DEADLINE_S),
    ("nan", STOP_BUDGET_DEFAULT_S + MAX_STOP_GRACE_S, TOOL_HOOK_DEADLINE_S),
])
def test_watchdog_deadlines(value: str | None, stop: float, tool: float) -> None:
    environ = {} if value is None else {DEADLINE_ENV: value}
    assert watchdog_deadline_s("stop", environ) == pytest.approx(stop)
    assert watchdog_deadline_s("tool", environ) == pytest.approx(tool)
    assert hook_budget_s(environ) > 0


def test_the_default_deadlines_are_below_the_example_timeouts() -> None:
    root = Path(__file__).resolve().parents[2] / "examples"
    for path in (root / "claude-code" / "settings.json", root / "codex" / "hooks.json"):
        for event, entries in json.loads(path.read_text(encoding="utf-8"))["hooks"].items():
            for entry in entries:
                for hook in entry["hooks"]:
                    kind: Any = "stop" if "Stop" in event else "tool"
                    assert watchdog_deadline_s(kind, {}) < hook["timeout"], (path, event)


@pytest.mark.parametrize(("host", "event"), sorted(EVENTS))
def test_every_deadline_answer_is_the_documented_fail_closed_one(host: str, event: str) -> None:
    code, payload, message = deadline_answer(host, event, 1.0)
    _assert_fail_closed(host, event, code, json.dumps(payload) if payload else "", message)


@pytest.mark.parametrize(("host", "event"), [("claude-code", "pre-tool-use"), ("codex", "user-prompt-submit"),
                                             ("claude-code", "stop")])
def test_stdin_past_the_bound_is_answered_without_reading_it_all(tmp_path: Path, host: str, event: str) -> None:
    """20 MiB on stdin: refused after 8 MiB + 1 bytes; the writer gets a broken pipe, not a hook that waits."""
    process = _start(host, event, _env(), tmp_path)
    assert process.stdin is not None
    stdin = process.stdin

    def flood() -> None:
        try:
            stdin.write('{"prompt": "' + "x" * (20 * 1024 * 1024) + '"}')
            stdin.close()
        except (OSError, ValueError):  # the hook stopped reading (or the test closed the pipe)
            pass

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    code, out, err = _finish(process, timeout=60)
    writer.join(30)
    assert not writer.is_alive()
    if event == "stop":  # a first error blocks once (no project here to count errors in: handed over at once)
        assert "(size)" in out and "Traceback" not in out + err
    else:
        _assert_fail_closed(host, event, code, out, err)
        assert "(size)" in out + err

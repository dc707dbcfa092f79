"""The Stop gate never loops and always answers in time: persistent input errors, the overall deadline, and a
request the redactor changes."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import secrets
import string
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stop_helpers import (
    ANSWER,
    FAIL,
    PASS,
    REQUEST,
    REVIEW_ID,
    TOOLS,
    HookRun,
    claude_transcript,
    hook_env,
    review_status,
    run_hook_in_process,
    run_hook_process,
    stop,
    stop_payload,
    write_config,
)

from judge_servers import JudgeServer
from verigate import ConfigError
from verigate.gate import PENDING_STATUS
from verigate.hooks._protocol import DEADLINE_ENV, STOP_BUDGET_DEFAULT_S
from verigate.hooks._stop import (
    FEEDBACK_MARKER,
    hook_deadlines,
    parse_stop_input,
)
from verigate.hooks._stop_state import load_state, state_path


def _not_verified(run: HookRun) -> bool:
    """The agent may stop, and the person is told plainly that the answer is not verified."""
    return (run.code == 0 and run.output is not None and run.output.get("continue") is False
            and PENDING_STATUS in run.output["stopReason"] and "NOT verified" in run.output["systemMessage"])


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    """Set (or, for None, remove) variables for an in-process hook run; everything is put back afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ------------------------------------------------------------------------------------------- persistent errors


def test_unreadable_stdin_hands_over_instead_of_blocking() -> None:
    """No JSON: no session to count against and no stop_hook_active; a block could repeat for ever."""
    run = run_hook_process("claude-code", "stop", "not json at all")
    assert _not_verified(run), run
    assert "not JSON" in run.output["systemMessage"]  # type: ignore[index]


def test_unreadable_stdin_in_a_project_blocks_once_then_files_a_review(project: Path) -> None:
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    first = run_hook_process("claude-code", "stop", "[1, 2]", env=env)
    again = run_hook_process("claude-code", "stop", "[1, 2]", env=env)
    assert first.code == 0 and first.blocked, first
    assert first.output["reason"].startswith(FEEDBACK_MARKER)  # type: ignore[index]
    assert _not_verified(again), again
    (review_id,) = set(REVIEW_ID.findall(again.output["stopReason"]))  # type: ignore[index]
    assert review_status(project, review_id) == "pending"


def test_a_moved_project_dir_never_loops(project: Path, tmp_path: Path) -> None:
    """The reviewer's reproducer: CLAUDE_PROJECT_DIR names a folder that is gone, every Stop says
    stop_hook_active; the input's cwd is still a verigate project, so the error is counted there."""
    payload = stop(project, "moved", active=True, last_message=ANSWER)
    env = hook_env(CLAUDE_PROJECT_DIR=str(tmp_path / "moved-away"))
    runs = [run_hook_process("claude-code", "stop", payload, env=env) for _ in range(3)]
    assert [run.blocked for run in runs] == [True, False, False], runs
    assert "does not exist" in runs[0].output["reason"]  # type: ignore[index]
    assert all(_not_verified(run) for run in runs[1:])
    review_ids = {found for run in runs[1:] for found in REVIEW_ID.findall(run.output["stopReason"])}  # type: ignore[index]
    assert len(review_ids) == 2 and {review_status(project, found) for found in review_ids} == {"pending"}


@pytest.mark.usefixtures("in_process")
def test_without_a_project_the_host_flag_decides(tmp_path: Path) -> None:
    payload = {"session_id": "nowhere", "cwd": str(tmp_path / "gone"), "transcript_path": None}
    assert run_hook_in_process("claude-code", "stop", dict(payload, stop_hook_active=False)).blocked
    assert _not_verified(run_hook_in_process("claude-code", "stop", dict(payload, stop_hook_active=True)))
    assert _not_verified(run_hook_in_process("claude-code", "stop", payload))  # no flag: cannot tell, hand over
    assert not (tmp_path / "gone").exists()


@pytest.mark.usefixtures("in_process")
def test_a_folder_that_is_no_verigate_project_gets_no_store(tmp_path: Path) -> None:
    """The error path counts only in a folder that already is a verigate project: it never litters another."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = {"session_id": "x", "cwd": str(elsewhere), "stop_hook_active": False}
    with environment(CLAUDE_PROJECT_DIR=str(tmp_path / "gone")):
        assert run_hook_in_process("claude-code", "stop", payload).blocked
    assert list(elsewhere.iterdir()) == []


@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize("flag", ["yes", 1, "true", {"on": True}])
def test_an_odd_stop_hook_active_is_read_leniently(project: Path, judge: JudgeServer, flag: object) -> None:
    judge.reply_text(PASS)
    assert parse_stop_input(stop(project, active=flag), "claude-code", "stop", environ={}).stop_hook_active
    assert run_hook_in_process("claude-code", "stop", stop(project, active=flag)).allowed_silently


def test_stop_hook_active_false_shapes() -> None:
    for flag in (False, None, 0, "", "false", "0"):
        payload = {"session_id": "s", "cwd": "/", "stop_hook_active": flag}
        assert not parse_stop_input(payload, "claude-code", "stop", environ={}).stop_hook_active


ERROR_KINDS = ["moved_project_dir", "no_agent_id", "missing_transcript", "not_an_object", "no_project"]


def _erroneous_input(kind: str, project: Path,
                     scratch: Path) -> tuple[str, str | Mapping[str, Any], dict[str, str | None]]:
    """(event, stdin, environment) of an input error that stays the same on every Stop."""
    log = scratch / "t.jsonl"
    if not log.exists():
        claude_transcript(log, "loop", [(REQUEST, TOOLS, ANSWER)])
    payload = stop_payload(project, "loop", log, last_message=ANSWER)
    env: dict[str, str | None] = {"CLAUDE_PROJECT_DIR": None}
    event = "stop"
    if kind == "moved_project_dir":
        env["CLAUDE_PROJECT_DIR"] = str(scratch / "moved-away")
    elif kind == "no_agent_id":
        event = "subagent-stop"
    elif kind == "missing_transcript":
        payload["transcript_path"] = str(scratch / "missing.jsonl")
    elif kind == "not_an_object":
        env["CLAUDE_PROJECT_DIR"] = str(project)
        return event, json.dumps([payload]), env
    else:
        payload["cwd"] = str(scratch / "gone")
    return event, payload, env


@settings(max_examples=8, deadline=None)
@given(kind=st.sampled_from(ERROR_KINDS), stops=st.integers(min_value=2, max_value=6),
       host=st.sampled_from(["faithful", "always_set", "never_set"]))
def test_a_persistent_error_never_blocks_twice_in_a_row(kind: str, stops: int, host: str) -> None:
    """The same error on every Stop. A faithful host sets stop_hook_active when the previous Stop blocked; others
    set it always or never. Blocks never follow each other, and with a counter (every kind but ``no_project``)
    there is at most one block at all, whatever the flag says."""
    if kind == "no_project" and host == "never_set":
        return  # no counter and a flag that lies: nothing is left to tell a repeat (documented)
    with tempfile.TemporaryDirectory() as folder, JudgeServer("openai") as judge:
        scratch = Path(folder)
        project = scratch / "project"
        project.mkdir()
        write_config(project, judge.base_url)
        event, stdin, env = _erroneous_input(kind, project, scratch)
        blocked: list[bool] = []
        with environment(VERIGATE_TEST_JUDGE_KEY="sk-loopback-test", **env):
            for _ in range(stops):
                active = host == "always_set" or (host == "faithful" and bool(blocked) and blocked[-1])
                if isinstance(stdin, str):
                    run = _run_raw(event, stdin)
                else:
                    run = run_hook_in_process("claude-code", event, dict(stdin, stop_hook_active=active))
                assert run.code == 0 and (run.blocked or _not_verified(run)), run
                blocked.append(run.blocked)
        assert not any(first and second for first, second in itertools.pairwise(blocked)), blocked
        if kind != "no_project":
            assert sum(blocked) <= 1, blocked
        assert judge.requests == []


def _run_raw(event: str, stdin: str) -> HookRun:
    import io

    from verigate.hooks._protocol import run_hook
    from verigate.hooks._stop import _Run

    out = io.StringIO()
    run = _Run("claude-code", event)  # type: ignore[arg-type]
    code = run_hook(run.handle, run.on_error, stdin=io.StringIO(stdin), stdout=out, stderr=io.StringIO())
    return HookRun(code, json.loads(out.getvalue()) if out.getvalue().strip() else None, "")


# ------------------------------------------------------------------------------------------- the deadline


def test_deadline_budget_from_the_environment() -> None:
    deadline, give_up = hook_deadlines(1000.0, {})
    assert 1000.0 < deadline < give_up < 1000.0 + STOP_BUDGET_DEFAULT_S
    deadline, give_up = hook_deadlines(1000.0, {DEADLINE_ENV: " 30 "})
    assert 1000.0 < deadline < give_up < 1030.0


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf"])
def test_an_invalid_deadline_budget_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match=DEADLINE_ENV):
        hook_deadlines(0.0, {DEADLINE_ENV: value})


@given(budget=st.floats(min_value=0.001, max_value=1e6), started=st.floats(min_value=0, max_value=1e6))
def test_the_deadline_always_leaves_time_to_answer(budget: float, started: float) -> None:
    deadline, give_up = hook_deadlines(started, {DEADLINE_ENV: repr(budget)})
    assert deadline <= give_up <= started + budget
    assert deadline >= started + budget * 0.9 - 1e-6


def test_a_slow_judge_is_cut_at_the_hook_deadline(project: Path, judge: JudgeServer) -> None:
    """The judge's own timeout (10 s here, up to 120 s) is longer than the hook's budget: the budget wins, and
    the answer is a pending review rather than a host timeout (which would let the agent stop unverified)."""
    judge.reply_text(PASS, delay_s=60)
    # 8 s: below the judge's 10 s, and room for the gate to open on a loaded machine before the watchdog's cut
    run = run_hook_process("claude-code", "stop", stop(project), env=hook_env(**{DEADLINE_ENV: "8"}))
    assert _not_verified(run), run
    assert "verification_time_budget_exhausted" in run.output["systemMessage"]  # type: ignore[index]


SLOW_STAGE = '''"""A PostVerify stage that never finishes in time."""
import asyncio

from verigate import hookimpl


@hookimpl
async def verigate_post_verify(candidate, verdict):
    await asyncio.sleep(60)
'''


def test_a_slow_hook_stage_is_given_up_before_the_host_timeout(project: Path, judge: JudgeServer,
                                                               tmp_path: Path) -> None:
    (tmp_path / "slow_stage.py").write_text(SLOW_STAGE, encoding="utf-8")
    write_config(project, judge.base_url, extra="plugins: [slow_stage]\nhooks:\n  timeout_s: 60\n")
    judge.reply_text(PASS)
    env = hook_env(**{DEADLINE_ENV: "4", "PYTHONPATH": os.pathsep.join(filter(None, [
        str(tmp_path), os.environ.get("PYTHONPATH", "")]))})
    run = run_hook_process("claude-code", "stop", stop(project), env=env)
    assert _not_verified(run), run
    assert "time budget" in run.output["systemMessage"]  # type: ignore[index]
    (review_id,) = set(REVIEW_ID.findall(run.output["stopReason"]))  # type: ignore[index]
    assert review_status(project, review_id) == "pending"


NOISY_STAGE = '''"""A PostVerify stage writing to the process's stdout below Python: C code, a child process."""
import asyncio
import os
import subprocess
import sys

from verigate import hookimpl


@hookimpl
async def verigate_post_verify(candidate, verdict):
    os.write(1, b"a plug-in's C code on descriptor 1\\n")
    subprocess.run([sys.executable, "-c", "print('a plug-in child process on its inherited stdout')"], check=True)
    if os.environ.get("NOISY_STAGE_HANGS"):
        await asyncio.sleep(60)
'''


@pytest.mark.parametrize("hangs", [False, True], ids=["answers", "hangs past the deadline"])
def test_output_below_python_never_spoils_the_stop_answer(project: Path, judge: JudgeServer, tmp_path: Path,
                                                          hangs: bool) -> None:
    # text before the JSON answer makes it unparseable, and a host that cannot parse a Stop answer lets the agent
    # stop: a block would become a pass. print() was caught; a write to descriptor 1 itself was not
    (tmp_path / "noisy_stage.py").write_text(NOISY_STAGE, encoding="utf-8")
    write_config(project, judge.base_url, extra="plugins: [noisy_stage]\nhooks:\n  timeout_s: 60\n")
    judge.reply_text(FAIL)
    env = hook_env(**{DEADLINE_ENV: "4", "PYTHONPATH": os.pathsep.join(filter(None, [
        str(tmp_path), os.environ.get("PYTHONPATH", "")]))})
    if hangs:
        env["NOISY_STAGE_HANGS"] = "1"
    run = run_hook_process("claude-code", "stop", stop(project), env=env)  # the stdout must parse as JSON
    if hangs:
        assert _not_verified(run), run
    else:
        assert run.blocked, run
    assert "a plug-in's C code on descriptor 1" in run.stderr  # not lost: it goes to stderr
    assert "a plug-in child process on its inherited stdout" in run.stderr


def test_a_host_merging_stderr_still_reads_the_stop_answer_alone(project: Path, judge: JudgeServer,
                                                                  tmp_path: Path) -> None:
    # the supervised child's descriptor 1 is a pipe to the supervisor: whether stderr is merged into stdout is the
    # host's stdout's question, not the pipe's
    (tmp_path / "noisy_stage.py").write_text(NOISY_STAGE.replace("    subprocess.run(", "    0 and subprocess.run("),
                                             encoding="utf-8")
    write_config(project, judge.base_url, extra="plugins: [noisy_stage]\nhooks:\n  timeout_s: 60\n")
    judge.reply_text(FAIL)
    env = hook_env(PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH", "")])))
    done = subprocess.run([sys.executable, "-m", "verigate", "hook", "claude-code", "stop"],
                          input=json.dumps(stop(project)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["decision"] == "block", done.stdout


@pytest.mark.usefixtures("in_process")
def test_an_invalid_deadline_budget_fails_closed(project: Path, judge: JudgeServer) -> None:
    with environment(**{DEADLINE_ENV: "soon"}):
        first = run_hook_in_process("claude-code", "stop", stop(project, "bad-budget"))
        again = run_hook_in_process("claude-code", "stop", stop(project, "bad-budget", active=True))
    assert first.blocked and DEADLINE_ENV in first.output["reason"], first  # type: ignore[index]
    assert _not_verified(again)
    assert judge.requests == []


# ------------------------------------------------------------------------------------------- a redacted request


def _github_token() -> str:
    """A GitHub-token-shaped value made at test time (no secret-shaped literal in the repository)."""
    alphabet = string.ascii_letters + string.digits
    return "gh" + "p_" + "".join(secrets.choice(alphabet) for _ in range(36))


@pytest.mark.usefixtures("in_process")
def test_the_revise_budget_holds_for_a_request_the_redactor_changes(project: Path, judge: JudgeServer) -> None:
    """The stored request is redacted, so its sha is not the raw request's: the counters must still be those of
    the raw request — two blocks with ``budget.revise: 2``, then a pending review."""
    token = _github_token()
    request = f"Deploy with token {token} please, and run the tests."
    for _ in range(4):
        judge.reply_text(FAIL)
    log = project.parent / "redacted.jsonl"
    turns: list[tuple[str, tuple[Any, ...], str]] = [(request, TOOLS, ANSWER)]
    claude_transcript(log, "red", turns)
    runs = []
    for index in range(4):
        run = run_hook_in_process("claude-code", "stop", stop_payload(project, "red", log, active=index > 0))
        runs.append(run)
        if not run.blocked:
            break
        feedback = f"Stop hook feedback:\n[verigate hook claude-code stop]: {run.output['reason']}"  # type: ignore[index]
        turns.append((feedback, (), f"Revised, attempt {index + 2}."))
        claude_transcript(log, "red", turns)
    assert [run.blocked for run in runs] == [True, True, False], runs
    assert runs[-1].pending
    assert all(token not in request.text for request in judge.requests)
    state_file = state_path(project, "red")
    assert token not in state_file.read_text(encoding="utf-8")  # the hook keeps the raw request's sha, never its text
    assert load_state(project, "red").request_sha256 == hashlib.sha256(request.encode()).hexdigest()


@pytest.mark.usefixtures("in_process")
def test_a_new_request_after_a_redacted_one_starts_over(project: Path, judge: JudgeServer) -> None:
    write_config(project, judge.base_url, revise_budget=1)
    for _ in range(3):
        judge.reply_text(FAIL)
    log = project.parent / "again.jsonl"
    first_request = f"Use {_github_token()} to publish."
    claude_transcript(log, "again", [(first_request, TOOLS, ANSWER)])
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "again", log)).blocked
    claude_transcript(log, "again", [(first_request, TOOLS, ANSWER), ("Never mind; list the files.", (), "a.py")])
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "again", log)).blocked
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "again", log, active=True)).pending



@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize("first_outcome", ["verified", "revise_outstanding"])
def test_feedback_of_an_error_block_is_judged_against_the_new_request(project: Path, judge: JudgeServer,
                                                                        first_outcome: str) -> None:
    """Request A ends verified, or with a revise still outstanding when the person types request B instead; the
    first Stop of B fails before the gate runs, and its block reason is verigate feedback too. The next Stop is
    judged against B — the person's latest request in the transcript — never against A's stored copy."""
    new_request = "Forget that; rename pager.py to paging.py."
    judge.reply_text(PASS if first_outcome == "verified" else FAIL)
    log = project.parent / "ab.jsonl"
    turns: list[tuple[str, tuple[Any, ...], str]] = [(REQUEST, TOOLS, ANSWER)]
    claude_transcript(log, "ab", turns)
    first = run_hook_in_process("claude-code", "stop", stop_payload(project, "ab", log))
    assert first.blocked == (first_outcome == "revise_outstanding")
    failed = run_hook_in_process("claude-code", "stop", stop_payload(project, "ab", project / "not-yet.jsonl"))
    assert failed.blocked
    feedback = f"Stop hook feedback:\n[verigate hook claude-code stop]: {failed.output['reason']}"  # type: ignore[index]
    turns += [(new_request, (), "Renamed."), (feedback, (), "Renamed, really.")]
    claude_transcript(log, "ab", turns)
    judge.reply_text(PASS)
    again = run_hook_in_process("claude-code", "stop", stop_payload(project, "ab", log, active=True))
    assert again.allowed_silently, again
    assert new_request in judge.requests[-1].text and REQUEST not in judge.requests[-1].text
    assert load_state(project, "ab").request_sha256 == hashlib.sha256(new_request.encode()).hexdigest()

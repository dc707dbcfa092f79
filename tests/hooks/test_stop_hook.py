"""The Stop gate end to end: ``verigate hook claude-code|codex stop`` as a process, real stdin JSON, real
transcripts, a loopback OpenAI-compatible judge, the real SQLite store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from dulwich.repo import Repo
from git_helpers import commit_files, make_repo, write
from hypothesis import given
from hypothesis import strategies as st
from stop_helpers import (
    ANSWER,
    FAIL,
    PASS,
    REQUEST,
    REVIEW_ID,
    TOOLS,
    Tool,
    claude_transcript,
    codex_rollout,
    hook_env,
    review_status,
    run_hook_in_process,
    run_hook_process,
    stop,
    stop_payload,
    transcript,
    write_config,
)

from judge_servers import JudgeServer, refused_url
from verigate import FinalizeResult, InputError
from verigate.hooks._stop import FEEDBACK_MARKER, MAX_REASON_CHARS, parse_stop_input
from verigate.hooks._stop_answers import answer as _answer
from verigate.store import open_store

# ------------------------------------------------------------------------------------------- as a process
# Each process start loads every installed plug-in (and their SDKs): the process tests are few and cover the
# protocol at the process boundary; sequences run the same hook code in-process (same stdin JSON, same store).


def test_revise_blocks_then_the_third_failure_goes_to_a_pending_review(project: Path, judge: JudgeServer) -> None:
    for _ in range(3):
        judge.reply_text(FAIL)
    runs = [run_hook_process("claude-code", "stop", stop(project, active=index > 0)) for index in range(3)]
    assert [run.code for run in runs] == [0, 0, 0]
    assert [run.blocked for run in runs] == [True, True, False], runs
    reason = runs[0].output["reason"]  # type: ignore[index]
    assert reason.startswith(FEEDBACK_MARKER) and "tests_not_run" in reason
    assert len(reason) <= MAX_REASON_CHARS
    system_prompt = judge.requests[0].json()["messages"][0]["content"]
    assert system_prompt[:80] not in reason  # never the judge prompt
    assert REQUEST in judge.requests[0].text and "pager.py" in judge.requests[0].text
    assert runs[2].pending
    (review_id,) = set(REVIEW_ID.findall(runs[2].output["stopReason"]))  # type: ignore[index]
    assert review_status(project, review_id) == "pending"
    assert len(judge.requests) == 3


def test_judge_down_fails_closed_into_review(project: Path) -> None:
    write_config(project, refused_url() + "/v1")
    run = run_hook_process("claude-code", "stop", stop(project))
    assert run.code == 0 and run.pending and not run.blocked, run
    assert "judge" in run.output["systemMessage"]  # type: ignore[index]


def test_codex_stop(project: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    judge.reply_text(FAIL)
    judge.reply_text(PASS)
    rollout = project.parent / "rollout.jsonl"
    codex_rollout(rollout, [(REQUEST, (Tool("shell", {"command": ["pytest", "-q"]}, "3 passed"),), ANSWER)])
    payload = stop_payload(project, "codex-1", rollout, last_message=ANSWER, turn_id="turn-1", model="gpt-5-codex")
    first = run_hook_process("codex", "stop", payload)
    assert first.blocked and first.output["reason"].startswith(FEEDBACK_MARKER)  # type: ignore[index]
    assert "pytest" in judge.requests[0].text
    monkeypatch.setenv("VERIGATE_TEST_JUDGE_KEY", "sk-loopback-test")
    second = run_hook_in_process("codex", "stop", dict(payload, stop_hook_active=True))
    assert second.allowed_silently, second  # Codex: allowing is an empty answer, never decision "approve"


def test_git_claims_make_the_gate_revise(tmp_path: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    repo: Repo = make_repo(tmp_path / "checkout")
    project = Path(repo.path)
    write_config(project, judge.base_url)
    write(repo, {"src/app.py": "print('fixed')\n"})
    edit = Tool("Edit", {"file_path": str(project / "src/app.py"), "old_string": "hello", "new_string": "fixed"},
                "The file has been updated.")
    claim = "I fixed src/app.py and committed the fix."
    log = claude_transcript(tmp_path / "git.jsonl", "git-1", [("Fix app.py and commit it.", (edit,), claim)])
    judge.reply_text(PASS)  # the judge is fooled; the repository is not
    run = run_hook_process("claude-code", "stop", stop_payload(project, "git-1", log))
    assert run.blocked and "claimed_commit_missing" in run.output["reason"], run  # type: ignore[index]
    commit_files(repo, {"src/app.py": "print('fixed')\n"}, "fix app")
    judge.reply_text(PASS)
    monkeypatch.setenv("VERIGATE_TEST_JUDGE_KEY", "sk-loopback-test")
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "git-1", log, active=True)).allowed_silently


def test_sessions_stopping_at_once_share_the_project_store(project: Path, judge: JudgeServer) -> None:
    sessions = ["para-1", "para-2"]
    for _ in sessions:
        judge.reply_text(PASS)
    started = [
        subprocess.Popen([sys.executable, "-m", "verigate", "hook", "claude-code", "stop"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=hook_env())
        for _ in sessions
    ]
    outputs = [process.communicate(json.dumps(stop(project, session)), timeout=120) for process, session
               in zip(started, sessions, strict=True)]
    assert [process.returncode for process in started] == [0, 0]
    assert [out for out, _ in outputs] == ["", ""], outputs  # all verified: silent stops
    store = open_store(str(project / ".verigate" / "verigate.db"), create=False)
    try:
        assert {store.get_session(session).state for session in sessions} == {"completed"}  # type: ignore[union-attr]
    finally:
        store.close()


# ------------------------------------------------------------------------------------------- in-process sequences


@pytest.mark.usefixtures("in_process")
def test_verified_answer_stops_silently(project: Path, judge: JudgeServer) -> None:
    judge.reply_text(PASS)
    assert run_hook_in_process("claude-code", "stop", stop(project)).allowed_silently


@pytest.mark.usefixtures("in_process")
def test_project_from_claude_project_dir(project: Path, judge: JudgeServer, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    judge.reply_text(PASS)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    payload = stop(project)
    payload["cwd"] = str(tmp_path)  # the agent cd'ed elsewhere: the project is still CLAUDE_PROJECT_DIR
    assert run_hook_in_process("claude-code", "stop", payload).allowed_silently
    assert (project / ".verigate" / "verigate.db").is_file()


@pytest.mark.usefixtures("in_process")
def test_judge_down_never_blocks(project: Path) -> None:
    write_config(project, refused_url() + "/v1")
    runs = [run_hook_in_process("claude-code", "stop", stop(project, active=index > 0)) for index in range(3)]
    assert all(run.pending and not run.blocked for run in runs), runs


@pytest.mark.usefixtures("in_process")
def test_internal_error_blocks_once_then_hands_over_until_a_stop_gets_through(project: Path,
                                                                               judge: JudgeServer) -> None:
    payload = stop_payload(project, "sess-err", project / "missing.jsonl", last_message=ANSWER)
    runs = [run_hook_in_process("claude-code", "stop", dict(payload, stop_hook_active=index % 2 == 1))
            for index in range(6)]
    assert [run.blocked for run in runs] == [True] + [False] * 5  # a persistent error blocks once, never again
    assert all(run.code == 0 for run in runs)
    assert "transcript" in runs[0].output["reason"]  # type: ignore[index]
    assert all(run.pending for run in runs[1:])
    (review_id,) = set(REVIEW_ID.findall(runs[1].output["stopReason"]))  # type: ignore[index]
    assert review_status(project, review_id) == "pending"
    judge.reply_text(PASS)  # the transcript is back: a Stop gets through and the error count starts again
    transcript(project, "sess-err")
    assert run_hook_in_process("claude-code", "stop", stop(project, "sess-err")).allowed_silently
    assert run_hook_in_process("claude-code", "stop", payload).blocked


@pytest.mark.usefixtures("in_process")
def test_broken_configuration_never_loops(project: Path) -> None:
    (project / "verigate.yaml").write_text("judge:\n  engine: llm_judge\n  trust: sometimes\n", encoding="utf-8")
    runs = [run_hook_in_process("claude-code", "stop", stop(project)) for _ in range(2)]
    assert runs[0].blocked and "verigate.yaml" in runs[0].output["reason"]  # type: ignore[index]
    assert runs[1].pending and "could not be stored" in runs[1].output["stopReason"]  # type: ignore[index]


@pytest.mark.usefixtures("in_process")
def test_corrupt_counter_file_falls_back_to_the_host_flag(project: Path, judge: JudgeServer) -> None:
    from verigate.hooks._stop_state import state_path

    path = state_path(project, "sess-c")
    path.parent.mkdir(parents=True)
    path.write_text("{broken", encoding="utf-8")
    first = run_hook_in_process("claude-code", "stop", stop(project, "sess-c", active=False))
    again = run_hook_in_process("claude-code", "stop", stop(project, "sess-c", active=True))
    assert first.blocked and "corrupt" in first.output["reason"]  # type: ignore[index]
    assert again.pending


@pytest.mark.usefixtures("in_process")
def test_subagent_stop_judges_the_subagent(project: Path, judge: JudgeServer) -> None:
    judge.reply_text(FAIL)
    agent_log = claude_transcript(project.parent / "agent-a1.jsonl", "sess-1",
                                  [("Find every caller of page() and list them.", (), "page() has no callers.")],
                                  sidechain=True)
    payload = stop_payload(project, "sess-1", transcript(project), event="SubagentStop", agent_id="a1",
                           agent_transcript_path=str(agent_log))
    assert run_hook_in_process("claude-code", "subagent-stop", payload).blocked
    assert "Find every caller of page()" in judge.requests[0].text


# ------------------------------------------------------------------------------------------- the loop guard


@pytest.mark.usefixtures("in_process")
def test_loop_bound_holds_over_twenty_stops(project: Path, judge: JudgeServer) -> None:
    for _ in range(20):
        judge.reply_text(FAIL)
    payload = stop(project, "sess-loop")
    in_a_row, longest, pending = 0, 0, 0
    for index in range(20):
        run = run_hook_in_process("claude-code", "stop", dict(payload, stop_hook_active=index % 3 != 0))
        assert run.code == 0 and (run.blocked or run.pending), run
        in_a_row = in_a_row + 1 if run.blocked else 0
        longest = max(longest, in_a_row)
        pending += run.pending
    assert longest == 2  # the revise budget, never more
    assert pending >= 6


@pytest.mark.usefixtures("in_process")
def test_loop_guard_holds_when_the_store_forgets_the_revise(project: Path, judge: JudgeServer) -> None:
    write_config(project, judge.base_url, revise_budget=1)
    judge.reply_text(FAIL)
    judge.reply_text(FAIL)
    payload = stop(project, "sess-lost")
    assert run_hook_in_process("claude-code", "stop", payload).blocked
    (project / ".verigate" / "verigate.db").unlink()  # the gate's revise counter is gone with it
    again = run_hook_in_process("claude-code", "stop", dict(payload, stop_hook_active=True))
    assert again.pending and "loop guard" in again.output["systemMessage"], again  # type: ignore[index]
    (review_id,) = set(REVIEW_ID.findall(again.output["stopReason"]))  # type: ignore[index]
    assert review_status(project, review_id) == "pending"


@pytest.mark.usefixtures("in_process")
def test_verigate_feedback_is_not_a_new_request(project: Path, judge: JudgeServer) -> None:
    write_config(project, judge.base_url, revise_budget=1)
    judge.reply_text(FAIL)
    judge.reply_text(FAIL)
    log = project.parent / "fb.jsonl"
    claude_transcript(log, "fb", [(REQUEST, TOOLS, ANSWER)])
    first = run_hook_in_process("claude-code", "stop", stop_payload(project, "fb", log))
    assert first.blocked
    feedback = f"Stop hook feedback:\n[verigate hook claude-code stop]: {first.output['reason']}"  # type: ignore[index]
    claude_transcript(log, "fb", [(REQUEST, TOOLS, ANSWER), (feedback, (), "Ran the tests: 12 passed.")])
    second = run_hook_in_process("claude-code", "stop", stop_payload(project, "fb", log, active=True))
    assert second.pending, second  # the second attempt of the same request, not a fresh first attempt
    assert REQUEST in judge.requests[1].text


@pytest.mark.usefixtures("in_process")
def test_new_request_while_a_revise_is_outstanding_starts_over(project: Path, judge: JudgeServer) -> None:
    write_config(project, judge.base_url, revise_budget=1)
    for _ in range(3):
        judge.reply_text(FAIL)
    log = project.parent / "nr.jsonl"
    claude_transcript(log, "nr", [(REQUEST, TOOLS, ANSWER)])
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "nr", log)).blocked
    claude_transcript(log, "nr", [(REQUEST, TOOLS, ANSWER), ("Forget that; rename pager.py to paging.py.", (),
                                                             "Renamed.")])
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "nr", log)).blocked
    assert run_hook_in_process("claude-code", "stop", stop_payload(project, "nr", log, active=True)).pending


@given(data=st.dictionaries(st.sampled_from(["session_id", "cwd", "transcript_path", "stop_hook_active", "agent_id",
                                             "last_assistant_message", "turn_id"]),
                            st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.just("/")),
       event=st.sampled_from(["stop", "subagent-stop"]))
def test_stop_input_is_parsed_or_refused_with_an_input_error(data: dict[str, object], event: str) -> None:
    try:
        parsed = parse_stop_input(data, "claude-code", event, environ={})  # type: ignore[arg-type]
    except InputError as exc:
        assert exc.source == "<stdin>" and exc.field
    else:
        assert parsed.session_id and parsed.project_dir.is_dir()


OUTCOMES = st.sampled_from(["completed", "revise", "pending_review", "unverified"])


@given(outcome=OUTCOMES, follow_up=st.text(max_size=3000), pending_id=st.none() | st.just("rv_0123"))
def test_answers_block_only_to_revise_and_never_exit_1(outcome: str, follow_up: str, pending_id: str | None) -> None:
    result = FinalizeResult(outcome=outcome, answer="", status=outcome, policy_action="revise", verdict=None,  # type: ignore[arg-type]
                            follow_up=follow_up, attempt=0, session_state="running", pending_id=pending_id)
    code, payload, _ = _answer(result)
    assert code == 0
    blocked = payload is not None and payload.get("decision") == "block"
    assert blocked == (outcome == "revise")
    if blocked:
        assert payload["reason"].strip() and len(payload["reason"]) <= MAX_REASON_CHARS  # type: ignore[index]
    if outcome == "pending_review":
        assert "EXTERNAL_VERIFICATION_REQUIRED" in payload["stopReason"]  # type: ignore[index]


# ------------------------------------------------------------------------------------------- the Stop race


def _without_last_result(path: Path) -> str:
    """Drop the last tool_result line (the one Claude Code may not have written yet at Stop); return it."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    index = max(number for number, line in enumerate(lines) if '"tool_result"' in line)
    late = lines.pop(index)
    path.write_text("".join(lines), encoding="utf-8")
    return late


def test_a_result_written_after_the_hook_started_reaches_the_judge(project: Path, judge: JudgeServer,
                                                                    in_process: None) -> None:
    # in process, so that the hook surely reads the transcript before the late line lands (a new process may
    # take longer to start than the host takes to write)
    import threading
    import time

    path = transcript(project, "sess-race")
    late = _without_last_result(path)
    judge.reply_text(PASS)

    def host_writes_late() -> None:
        time.sleep(0.3)
        with path.open("a", encoding="utf-8") as stream:  # appended after the final message, as a late write
            stream.write(late)

    writer = threading.Thread(target=host_writes_late)
    writer.start()
    run = run_hook_in_process("claude-code", "stop", stop_payload(project, "sess-race", path, last_message=ANSWER))
    writer.join()
    assert run.allowed_silently, run
    user = judge.requests[-1].json()["messages"][1]["content"]
    assert "#2 Edit (ok)" in user and "result: ok" in user


def test_a_result_that_never_comes_is_marked_missing_not_empty(project: Path, judge: JudgeServer) -> None:
    path = transcript(project, "sess-gap")
    _without_last_result(path)
    judge.reply_text(FAIL)
    run = run_hook_process("claude-code", "stop", stop_payload(project, "sess-gap", path, last_message=ANSWER))
    assert run.blocked
    user = judge.requests[-1].json()["messages"][1]["content"]
    assert "#2 Edit (unknown)" in user and "the observation is missing, not empty" in user

"""The Stop gate inside the real clients: a pass ends the run, a failing verdict revises twice and then files a
pending review, a judge that is down files the review at once; Claude Code's SubagentStop gates a Task sub-agent
and a gate declared inside a sub-agent holds its tools and the main agent's."""

from __future__ import annotations

from typing import Any

import pytest
from host_helpers import Project, result_event, session_of
from host_servers import Call, Turn, summary

from judge_servers import JudgeServer, refused_url, verdict_json

HOSTS = ("claude-code", "codex")
FEEDBACK = "[verigate stop gate]"
REQUEST = "Read a.py and tell me what x is."
FINAL = "a.py sets x to 1."


def look(host: str, project: Project) -> Call:
    if host == "claude-code":
        return Call("Read", {"file_path": str(project.dir / "a.py")})
    return Call("exec_command", {"cmd": "cat a.py"})


def feedback_seen(server: Any) -> list[int]:
    """Indexes of the main requests that hand the model the Stop gate's feedback as the newest user message."""
    return [index for index, request in enumerate(server.main_requests())
            if FEEDBACK in server.latest_user_text(request)]


def judge_prompt(request: Any) -> str:
    body = request.json()
    return "\n".join(str(message.get("content")) for message in body["messages"])


def ended_normally(project: Project, run: Any) -> None:
    assert run.returncode == 0 and not run.timed_out, run.describe()
    if project.host == "claude-code":
        result = result_event(run)
        assert result is not None and result["subtype"] == "success", run.describe()


# Audit mode: these scenarios are about the Stop gate, not the self-gate, so no gate (declared, or a problem gate of
# issue 10 item 2) may hold their tool calls.


class Passed:
    """One run: a tool call, a final answer, a judge that passes."""

    def __init__(self, host: str, make: Any, judge: JudgeServer) -> None:
        self.project, self.server = make(host, judge_url=judge.base_url, mode="audit")
        self.judge = judge
        (self.project.dir / "a.py").write_text("x = 1  # marker-4711\n", encoding="utf-8")
        judge.reply_text(verdict_json(passed=True))
        self.server.script(Turn(calls=(look(host, self.project),)), Turn.say(FINAL))
        self.run = self.project.run(REQUEST)


@pytest.fixture(params=HOSTS)
def passed(request: pytest.FixtureRequest, make_project: Any, judge: JudgeServer) -> Passed:
    return Passed(request.param, make_project, judge)


def test_stop_pass_ends_the_run(passed: Passed) -> None:
    project, server, judge = passed.project, passed.server, passed.judge
    ended_normally(project, passed.run)
    assert server.pending == 0 and len(server.main_requests()) == 2 and feedback_seen(server) == [], summary(server)
    assert len(judge.requests) == 1
    prompt = judge_prompt(judge.requests[0])
    assert REQUEST in prompt and FINAL in prompt
    assert project.reviews() == []
    # issue 10 item 5: Claude Code writes its transcript asynchronously; the Stop hook waits for late results
    assert "marker-4711" in prompt, "the judge saw no result for the tool call"


@pytest.mark.parametrize("host", HOSTS)
def test_stop_revises_twice_then_files_a_pending_review(host: str, make_project: Any, judge: JudgeServer) -> None:
    project, server = make_project(host, judge_url=judge.base_url, mode="audit", revise=2)
    for _ in range(3):
        judge.reply_text(verdict_json(passed=False, misses=("claim_unverified",),
                                      observation="the answer claims a test run that never happened"))
    server.script(Turn.say("All tests pass."), Turn.say("All tests pass, really."), Turn.say("They pass."))
    run = project.run("Run the tests and report.")
    assert run.returncode == 0 and not run.timed_out, run.describe()
    assert server.pending == 0 and server.unscripted == 0, summary(server)
    # the model got the gate's feedback twice (after the 1st and 2nd failed verdicts), never a 3rd time
    assert feedback_seen(server) == [1, 2]
    assert len(judge.requests) == 3
    reviews = project.reviews()
    assert len(reviews) == 1, reviews
    assert reviews[0]["session_id"] == session_of(run)
    assert reviews[0]["candidate"]["request"] == "Run the tests and report."


@pytest.mark.parametrize("host", HOSTS)
def test_a_judge_that_is_down_files_a_review_at_once(host: str, make_project: Any) -> None:
    project, server = make_project(host, judge_url=refused_url() + "/v1", mode="audit")
    server.script(Turn.say("Done."))
    run = project.run("Say done.")
    # headless, both hosts exit 0 on a pending review (Claude Code's stream-json has a system line about it,
    # `codex exec --json` nothing): a CI job learns of it only from verigate
    assert run.returncode == 0 and not run.timed_out, run.describe()
    # no revise loop on the judge's own failure: the model was asked once and never got feedback
    assert len(server.main_requests()) == 1 and feedback_seen(server) == [], summary(server)
    reviews = project.reviews()
    assert len(reviews) == 1, reviews
    assert reviews[0]["policy_action"] == "escalate_verification_error"
    assert reviews[0]["verdict"]["error"], reviews[0]
    # ... which is what `review list --exit-code` is for (issue 10 item 7): exit 3 while a review is pending
    listed = project.verigate("review", "list", "--pending", "--exit-code")
    assert listed.returncode == 3 and reviews[0]["review_id"] in listed.stdout, listed.stderr


# ------------------------------------------------------------------------------------------------ sub-agents


def _task(prompt: str) -> Call:
    # Claude Code 2.1.332 names the tool Agent and runs sub-agents in the background unless told otherwise
    return Call("Agent", {"description": "check a.py", "prompt": prompt, "subagent_type": "general-purpose",
                          "run_in_background": False})


@pytest.mark.claude_code
def test_subagent_stop_gates_a_task_subagent(make_project: Any, judge: JudgeServer) -> None:
    """Claude Code only (Codex has no SubagentStop): the sub-agent's first answer fails verification, it gets the
    feedback and answers again; then the main agent stops and is judged."""
    project, server = make_project("claude-code", judge_url=judge.base_url, mode="audit", subagent_stop=True)
    (project.dir / "a.py").write_text("x = 1\n", encoding="utf-8")
    judge.reply_text(verdict_json(passed=False, misses=("unsupported",), observation="the sub-agent read nothing"))
    judge.reply_text(verdict_json(passed=True))
    judge.reply_text(verdict_json(passed=True))
    sub_prompt = "Read a.py and report the value of x."
    server.script(
        Turn(calls=(_task(sub_prompt),)),                                   # main: start the sub-agent
        Turn.say("x is 1."),                                                # sub-agent: answers (judged: fails)
        Turn(calls=(Call("Read", {"file_path": str(project.dir / "a.py")}),)),  # sub-agent: reads after feedback
        Turn.say("a.py sets x = 1."),                                       # sub-agent: answers (passes)
        Turn.say("The sub-agent confirmed that a.py sets x = 1."),          # main: final answer (passes)
    )
    run = project.run("Use a sub-agent to check a.py.")
    ended_normally(project, run)
    assert server.pending == 0 and server.unscripted == 0, summary(server)
    requests = server.main_requests()
    assert any(sub_prompt in text for text in server.user_texts(requests[1])), "request 2 is not the sub-agent's"
    assert feedback_seen(server) == [2], "the sub-agent did not get the SubagentStop feedback"
    assert len(judge.requests) == 3
    assert sub_prompt in judge_prompt(judge.requests[0])
    assert project.reviews() == []
    assert [event for _host, event, _s, _c in project.hook_timings()].count("subagent-stop") == 2


@pytest.mark.claude_code
def test_a_gate_declared_inside_a_subagent_holds_its_tools_and_the_main_agents(make_project: Any,
                                                                               judge: JudgeServer) -> None:
    project, server = make_project("claude-code", judge_url=judge.base_url, subagent_stop=True)
    (project.dir / "a.py").write_text("x = 1\n", encoding="utf-8")
    for _ in range(3):
        judge.reply_text(verdict_json(passed=True))
    sub_edit = Call("Edit", {"file_path": str(project.dir / "a.py"), "old_string": "x = 1", "new_string": "x = 2"})
    main_write = Call("Write", {"file_path": str(project.dir / "b.py"), "content": "y = 2\n"})
    server.script(
        Turn(calls=(_task("Plan a change to a.py."),)),
        Turn(text="I'll wait for your approval before editing a.py.",
             calls=(Call("Read", {"file_path": str(project.dir / "a.py")}),)),   # sub-agent declares
        Turn(calls=(sub_edit,)),                                                 # sub-agent: held
        Turn.say("The plan: set x to 2."),
        Turn(calls=(main_write,)),                                               # main agent: held too
        Turn.say("The sub-agent planned the change."),
    )
    run = project.run("Use a sub-agent to plan a change to a.py.")
    ended_normally(project, run)
    assert server.pending == 0, run.describe()
    gates = [gate for gate in project.gates() if gate["opened_by"] == "ai"]
    assert len(gates) == 1 and gates[0]["session_id"] == session_of(run), gates
    for call in (sub_edit, main_write):
        text, is_error = server.result_of(call)
        assert is_error and f"[{gates[0]['gate_id']}]" in text, (call.name, text)
    assert (project.dir / "a.py").read_text(encoding="utf-8") == "x = 1\n"
    assert not (project.dir / "b.py").exists()

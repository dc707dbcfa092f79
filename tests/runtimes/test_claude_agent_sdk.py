"""The Claude Agent SDK adapter over the real SDK driving the real ``claude`` CLI (the pinned one of the host tier)
against a scripted Anthropic server on 127.0.0.1, with an HTTP judge on another loopback server."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is not installed")
pytest.importorskip("verigate_claude_agent_sdk", reason="the verigate-agents-claude-agent-sdk plug-in is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hosts"))

from claude_agent_sdk import ClaudeAgentOptions
from host_helpers import host_binary
from host_servers import AnthropicServer, Call, Turn, summary
from verigate_claude_agent_sdk import GateHooks, run_gated, verigate_hooks

from judge_servers import JudgeServer, refused_url, verdict_json
from verigate import Gate, ReviewPendingError, UnverifiedError, hookimpl

REPO = Path(__file__).resolve().parents[2]
REQUEST = "Read a.py and tell me what x is."
FINAL = "a.py sets x to 1."
FEEDBACK = "[verigate stop gate]"
JUDGE_KEY_ENV = "VERIGATE_TEST_JUDGE_KEY"
CLI, CLI_MISSING = host_binary("claude-code")
needs_cli = pytest.mark.skipif(CLI is None, reason=f"the claude CLI cannot run: {CLI_MISSING}")


class World:
    """One project folder, a HOME for the CLI, the scripted model server, a judge, and the gate."""

    def __init__(self, root: Path, judge_url: str, *, revise: int = 2, plugins: tuple[object, ...] = ()) -> None:
        self.dir, self.home = root / "proj", root / "home"
        for folder in (self.dir, self.home):
            folder.mkdir(parents=True)
        (self.dir / "a.py").write_text("x = 1  # marker-4711\n", encoding="utf-8")
        (self.home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {
            str(self.dir): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}),
            encoding="utf-8")
        self.server = AnthropicServer().start()
        config = {"judge": {"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini", "base_url": judge_url,
                            "api_key_env": JUDGE_KEY_ENV, "timeout_s": 10},
                  "budget": {"revise": revise}, "self_gate": {"mode": "audit"}}
        self.gate = Gate.from_config(config, plugins=plugins, store=str(self.dir / ".verigate" / "verigate.db"))

    def options(self, **extra: Any) -> ClaudeAgentOptions:
        node = shutil.which("node")
        path = os.pathsep.join(p for p in (str(Path(node).parent) if node else "", "/usr/local/bin", "/usr/bin",
                                           "/bin") if p)
        env = {"HOME": str(self.home), "PATH": path, "ANTHROPIC_BASE_URL": self.server.url,
               "ANTHROPIC_API_KEY": "sk-loopback-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
               "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1"}
        return ClaudeAgentOptions(**{"cli_path": str(CLI), "cwd": str(self.dir), "env": env,
                                     "allowed_tools": ["Read"], "setting_sources": [], **extra})

    def look(self) -> Turn:
        return Turn(calls=(Call("Read", {"file_path": str(self.dir / "a.py")}),))

    def close(self) -> None:
        self.server.stop()
        self.gate.close()
        assert not self.server.errors, self.server.errors


@pytest.fixture
def judge() -> Any:
    with JudgeServer("openai") as server:
        yield server


@pytest.fixture(autouse=True)
def _environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the hooks run in this process: the judge key, and the self-gate's per-user state, belong to it
    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-judge-test")
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("VERIGATE_SELF_GATE_MODE", raising=False)


@pytest.fixture
def world(tmp_path: Path, judge: JudgeServer) -> Any:
    made = World(tmp_path, judge.base_url)
    yield made
    made.close()


def feedback_seen(server: AnthropicServer) -> list[int]:
    return [index for index, request in enumerate(server.main_requests())
            if FEEDBACK in server.latest_user_text(request)]


def judge_prompt(request: Any) -> str:
    return "\n".join(str(message.get("content")) for message in request.json()["messages"])


@needs_cli
def test_a_pass_returns_the_answer_built_from_the_cli_records(world: World, judge: JudgeServer) -> None:
    judge.reply_text(verdict_json(passed=True))
    world.server.script(world.look(), Turn.say(FINAL))
    hooks = GateHooks(world.gate)
    answer = asyncio.run(run_gated(REQUEST, options=world.options(), hooks=hooks))
    assert answer.text == FINAL and answer.result.outcome == "completed"
    assert feedback_seen(world.server) == [], summary(world.server)
    prompt = judge_prompt(judge.requests[0])
    assert REQUEST in prompt and FINAL in prompt and "marker-4711" in prompt  # request, final text, tool result
    stop = hooks.last_stop(answer.session_id)  # the gate's session is the SDK's session id
    assert stop is not None and stop.result is answer.result
    assert [call.name for call in answer.result.merged_tool_calls] == ["Read"]
    assert all(call.ok for call in answer.result.merged_tool_calls)


@needs_cli
def test_a_revise_feeds_the_follow_up_and_the_second_attempt_passes(world: World, judge: JudgeServer) -> None:
    judge.reply_text(verdict_json(passed=False, misses=("claim_unverified",), next_check="say what x is"))
    judge.reply_text(verdict_json(passed=True))
    world.server.script(Turn.say("I do not know."), Turn.say(FINAL))
    answer = asyncio.run(run_gated(REQUEST, options=world.options(), gate=world.gate))
    assert answer.text == FINAL
    assert feedback_seen(world.server) == [1], summary(world.server)  # the follow-up was the next instruction
    assert len(judge.requests) == 2


@needs_cli
def test_the_revise_budget_ends_in_a_pending_review_whatever_max_turns_allows(tmp_path: Path,
                                                                              judge: JudgeServer) -> None:
    made = World(tmp_path, judge.base_url, revise=1)
    try:
        for _ in range(10):
            judge.reply_text(verdict_json(passed=False, misses=("claim_unverified",)))
        made.server.script(*(Turn.say(f"Guess {n}.") for n in range(10)))
        with pytest.raises(ReviewPendingError) as held:
            asyncio.run(run_gated(REQUEST, options=made.options(max_turns=100), gate=made.gate))
        assert held.value.review_id is not None
        assert made.gate.store.get_review(held.value.review_id).status == "pending"
        assert len(judge.requests) == 2  # the first attempt and the one revise of the budget
        assert len(made.server.main_requests()) == 2, summary(made.server)
    finally:
        made.close()


@needs_cli
@pytest.mark.parametrize("failure", ["down", "garbage"])
def test_a_judge_down_or_garbage_files_a_review_at_once(tmp_path: Path, judge: JudgeServer, failure: str) -> None:
    made = World(tmp_path, refused_url() if failure == "down" else judge.base_url)
    try:
        judge.reply_text("this is not a verdict")
        made.server.script(Turn.say(FINAL), Turn.say("a second attempt nobody asked for"))
        with pytest.raises(ReviewPendingError) as held:
            asyncio.run(run_gated(REQUEST, options=made.options(max_turns=100), gate=made.gate))
        assert held.value.review_id is not None and held.value.policy_action == "escalate_verification_error"
        assert len(made.server.main_requests()) == 1, summary(made.server)  # no retry, no loop
        assert len(judge.requests) == (1 if failure == "garbage" else 0)
    finally:
        made.close()


class _Broken:
    @hookimpl
    def verigate_post_verify(self, candidate: Any, verdict: Any, context: Any) -> Any:
        raise RuntimeError("a post-verify plug-in failed")


@needs_cli
def test_a_hook_error_escalates(tmp_path: Path, judge: JudgeServer) -> None:
    made = World(tmp_path, judge.base_url, plugins=(_Broken(),))
    try:
        judge.reply_text(verdict_json(passed=True))
        made.server.script(Turn.say(FINAL))
        with pytest.raises(ReviewPendingError) as held:
            asyncio.run(run_gated(REQUEST, options=made.options(), gate=made.gate))
        assert held.value.policy_action == "escalate_hook_error" and held.value.review_id is not None
    finally:
        made.close()


class _Failing(GateHooks):
    def _answer(self, event: Any, data: dict[str, Any]) -> dict[str, Any]:
        if event == "stop":
            raise RuntimeError("a bug inside the adapter")
        return super()._answer(event, data)


@needs_cli
def test_an_exception_inside_the_adapter_never_becomes_a_pass(world: World, judge: JudgeServer) -> None:
    judge.reply_text(verdict_json(passed=True))
    world.server.script(Turn.say(FINAL))
    with pytest.raises(UnverifiedError):
        asyncio.run(run_gated(REQUEST, options=world.options(), hooks=_Failing(world.gate)))
    assert len(world.server.main_requests()) == 1  # let through as NOT verified: no block loop


def test_the_tool_and_prompt_hooks_fail_closed_on_a_broken_input(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "block")  # in audit mode a failed prompt check only warns
    hooks = verigate_hooks()
    bad: Any = {"session_id": 7, "cwd": str(tmp_path / "missing"), "tool_name": "Bash"}
    tool = asyncio.run(hooks["PreToolUse"][0].hooks[0](bad, None, {"signal": None}))
    assert tool["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[typeddict-item]
    prompt = asyncio.run(hooks["UserPromptSubmit"][0].hooks[0](bad, None, {"signal": None}))
    assert prompt["decision"] == "block"  # type: ignore[typeddict-item]
    stop = asyncio.run(hooks["Stop"][0].hooks[0](bad, None, {"signal": None}))
    assert stop.get("decision") == "block" or stop.get("continue") is False  # type: ignore[union-attr]


def test_the_callers_cancellation_propagates() -> None:
    import threading

    release = threading.Event()

    class _Slow(GateHooks):
        def _answer(self, event: Any, data: dict[str, Any]) -> dict[str, Any]:
            release.wait(10)
            return {}

    async def main() -> None:
        task = asyncio.create_task(_Slow().callback("stop")({"session_id": "s"}, None, {"signal": None}))
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            release.set()

    asyncio.run(main())


def test_the_example_runs_offline() -> None:
    done = subprocess.run([sys.executable, str(REPO / "examples" / "claude-agent-sdk.py")], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 0, done.stderr
    assert "completed: 2 + 2 = 4" in done.stdout
    assert "pending review" in done.stdout


@needs_cli
def test_pre_tool_use_refuses_a_tool_in_block_mode_without_the_sandbox(world: World, judge: JudgeServer,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the self-gate's hardening check, in-process: block mode needs the CLI's sandbox, which this run does not set
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "block")
    (world.dir / "verigate.yaml").write_text("self_gate:\n  mode: block\n", encoding="utf-8")
    judge.reply_text(verdict_json(passed=True))
    call = Call("Bash", {"command": "echo ran-unsandboxed"})
    world.server.script(Turn(calls=(call,)), Turn.say(FINAL))
    asyncio.run(run_gated(REQUEST, options=world.options(allowed_tools=["Read", "Bash"]), gate=world.gate))
    result = world.server.result_of(call)
    assert result is not None and "verigate self-gate" in result[0] and "ran-unsandboxed" not in result[0], result


@needs_cli
def test_subagent_stop_gates_a_subagent_in_its_own_session(world: World, judge: JudgeServer) -> None:
    judge.reply_text(verdict_json(passed=False, misses=("claim_unverified",), observation="the sub-agent read nothing"))
    judge.reply_text(verdict_json(passed=True))
    judge.reply_text(verdict_json(passed=True))
    sub_prompt = "Read a.py and report the value of x."
    world.server.script(
        Turn(calls=(Call("Agent", {"description": "check a.py", "prompt": sub_prompt,
                                   "subagent_type": "general-purpose", "run_in_background": False}),)),
        Turn.say("x is 1."),  # the sub-agent's first answer: fails, gets the feedback
        world.look(),
        Turn.say("a.py sets x = 1."),  # the sub-agent's second answer: passes
        Turn.say(FINAL),  # the main agent: passes
    )
    hooks = GateHooks(world.gate)
    answer = asyncio.run(run_gated("Use a sub-agent to check a.py.",
                                   options=world.options(allowed_tools=["Read", "Agent", "Task"]), hooks=hooks))
    assert answer.text == FINAL, summary(world.server)
    assert feedback_seen(world.server) == [2], summary(world.server)
    assert len(judge.requests) == 3 and sub_prompt in judge_prompt(judge.requests[0])
    sub_sessions = [key for key in hooks.stops() if key.startswith(f"{answer.session_id}/agent/")]
    assert len(sub_sessions) == 1

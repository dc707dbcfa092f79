"""The fast paths (pre-tool-use, user-prompt-submit): they answer only what the full check would, and any stale,
damaged or foreign cache hands the call back to the full check."""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selfgate_helpers import Session

from verigate.selfgate import Cursor, GateStore, decide_prompt, decide_tool_call, settings_for
from verigate.selfgate._quick import quick_prompt_context, quick_tool_decision
from verigate.selfgate._transcript import read_new_lines

GATE = "Plan: Step 1 is the schema. Step 3 は成果物提示後に再承認とします。"
EDIT = {"file_path": "app.py", "old_string": "a", "new_string": "b"}


def payload(session: Session, tool: str = "Edit", tool_input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**session.base("PreToolUse"), "tool_name": tool, "tool_input": EDIT if tool_input is None else tool_input}


def full(session: Session, tool: str = "Edit", tool_input: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """The full check's answer (it also refreshes the fast path's caches)."""
    hook_input = payload(session, tool, tool_input)
    decision = decide_tool_call(hook_input, settings_for(hook_input))
    return decision.decision, decision.reason, decision.notice


def quick(session: Session, tool: str = "Edit", tool_input: dict[str, Any] | None = None) -> Any:
    return quick_tool_decision(payload(session, tool, tool_input))


def prompt_payload(session: Session, prompt: str) -> dict[str, Any]:
    return {**session.base("UserPromptSubmit"), "prompt": prompt}


def quick_prompt(session: Session, prompt: str) -> tuple[str, str] | None:
    return quick_prompt_context(prompt_payload(session, prompt))


def full_prompt(session: Session, prompt: str) -> tuple[str, str]:
    """The full check's mode and context for the agent (it also refreshes the fast path's caches)."""
    hook_input = prompt_payload(session, prompt)
    settings = settings_for(hook_input)
    return settings.mode, decide_prompt(hook_input, settings).context


def fold_caches(session: Session) -> list[Path]:
    return sorted((session.store.parent / "self-gates.jsonl.state" / "fast").glob("*.json"))


@pytest.fixture
def blocking(session: Session, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "block")
    return session


def test_the_fast_path_gives_the_full_answer(blocking: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    session = blocking
    session.assistant("I refactored the parser.")
    assert quick(session) is None  # nothing cached yet
    assert full(session)[0] == "allow"
    assert quick(session) == ("allow", "", "")
    session.assistant(GATE)
    assert quick(session) is None  # the transcript grew: the full check must scan it
    denied = full(session)
    assert denied[0] == "deny" and "再承認" in denied[1]
    assert quick(session) == denied
    assert quick(session, "Read", {"file_path": "app.py"}) == ("allow", "", "")
    # the mode is read from the environment on every call, never from the cache
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "audit")
    audit = quick(session)
    assert audit is not None and audit[0] == "warn" and "audit mode" in audit[1]
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "neither")
    assert quick(session) is None  # the full check names the bad value


def test_a_gate_written_after_the_cache_is_seen_by_the_next_call(blocking: Session) -> None:
    session = blocking
    session.assistant("Refactoring done.")
    assert not session.tool("Edit", EDIT).denied  # the full check, leaving the caches
    assert quick(session) == ("allow", "", "")
    session.assistant("I'll wait for your approval before step 2.")
    assert quick(session) is None
    assert session.tool("Edit", EDIT).denied
    # a sub-agent's log appearing later is also a change
    session.prompt("release all gates")
    assert not session.tool("Edit", EDIT).denied
    assert quick(session) == ("allow", "", "")
    agents = session.transcript.with_suffix("") / "subagents"
    agents.mkdir(parents=True)
    session.assistant("After you review the plan I will proceed.", path=agents / "agent-1.jsonl")
    assert quick(session) is None
    assert session.tool("Bash", {"command": "ls"}).denied


def test_a_human_close_is_seen_by_the_next_call(blocking: Session) -> None:
    session = blocking
    session.assistant(GATE)
    assert session.tool("Edit", EDIT).denied
    assert quick(session) is not None and quick(session)[0] == "deny"
    gate = next(line["gate_id"] for line in session.store_lines() if line["status"] == "open")
    session.prompt(f"approve gate {gate}")  # appends the typed line and the human closure
    assert quick(session) is None
    assert not session.tool("Edit", EDIT).denied
    assert quick(session) == ("allow", "", "")


#: prompts the fast path must leave to the rule engine: close phrases and never-close phrases (with a gate open)
ENGINE_PROMPTS = ["release all gates", "Gate 解除", "approve gate sg-00000000",
                  "/goal finish every step without stopping", "proceed autonomously",
                  "The user already approved it, go on."]


def test_the_prompt_fast_path_gives_the_full_answer(blocking: Session) -> None:
    session = blocking
    tool_turn(session)  # a log past its head: new lines can be caught up
    session.assistant("I refactored the parser.")
    assert quick_prompt(session, "Please go on.") is None  # nothing cached yet
    assert full_prompt(session, "Please go on.") == ("block", "")  # the prompt's full check leaves the caches
    assert quick_prompt(session, "Please go on.") == ("block", "")
    assert quick_prompt(session, "release all gates") is None  # no gate to close: the full check says so
    session.assistant(GATE)
    assert quick_prompt(session, "Please go on.") is None  # new prose with a keyword: the engine decides
    reminder = full_prompt(session, "Please go on.")
    assert "still open" in reminder[1] and "再承認" in reminder[1]
    assert quick_prompt(session, "Please go on.") == reminder
    session.user("Please go on.")  # the host writes the typed prompt: caught up, nothing waits for it
    assert quick_prompt(session, "Looks good, carry on with the tests") == full_prompt(session, "Looks good, carry "
                                                                                                "on with the tests")
    for prompt in ENGINE_PROMPTS:
        assert quick_prompt(session, prompt) is None, prompt
    # the full check's answers for those differ from the reminder: the engine was needed
    assert full_prompt(session, "/goal finish every step without stopping")[1].startswith(
        "verigate: this prompt does not close")


def test_a_phrase_cache_without_never_close_keywords_sends_prompts_to_the_full_check(blocking: Session) -> None:
    """A cache an older version wrote (no never-close keywords) or one whose field was damaged: the fast path
    cannot tell a /goal from a plain prompt, so it answers no prompt while a gate is open."""
    session = blocking
    session.assistant(GATE)
    full_prompt(session, "Please go on.")
    cache = session.store.parent / "self-gates.jsonl.state" / "fast-phrases.json"
    for damaged in (None, [""], "goal"):
        sealed = json.loads(cache.read_text(encoding="utf-8"))
        sealed["body"]["not_close_keywords"] = damaged
        cache.write_text(json.dumps(sealed), encoding="utf-8")
        assert quick_prompt(session, "Please go on.") is None, damaged


def test_a_prompt_through_the_hook_answers_from_the_fast_path_as_the_full_check(blocking: Session) -> None:
    session = blocking
    session.assistant(GATE)
    first = session.prompt("Please go on.")  # the full check, leaving the caches
    assert quick_prompt(session, "Please go on, again.") is not None
    second = session.prompt("Please go on, again.")
    assert first.context and second.context == first.context and not second.denied


def corrupt(path: Path, how: str) -> None:
    text = path.read_text(encoding="utf-8")
    if how == "truncated":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    elif how == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif how == "empty":
        path.write_text("", encoding="utf-8")
    elif how == "not-an-object":
        path.write_text("[]", encoding="utf-8")
    elif how == "forged-body":  # the gates edited away, the seal left as it was
        sealed = json.loads(text)
        sealed["body"]["open"] = []
        path.write_text(json.dumps(sealed), encoding="utf-8")
    elif how == "other-version":
        sealed = json.loads(text)
        sealed["body"]["version"] = 0
        path.write_text(json.dumps(sealed), encoding="utf-8")
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty", "not-an-object", "forged-body", "other-version"])
def test_a_damaged_fold_cache_never_opens_the_way(blocking: Session, how: str) -> None:
    session = blocking
    session.assistant(GATE)
    assert session.tool("Edit", EDIT).denied
    (cache,) = fold_caches(session)
    corrupt(cache, how)
    assert quick(session) is None
    assert session.tool("Edit", EDIT).denied


@pytest.mark.parametrize("how", ["truncated", "garbage", "forged-body"])
def test_a_damaged_phrase_cache_hands_hardening_to_the_full_check(blocking: Session, how: str) -> None:
    session = blocking
    session.assistant("Refactoring done.")
    assert not session.tool("Edit", EDIT).denied
    phrases = session.store.parent / "self-gates.jsonl.state" / "fast-phrases.json"
    if how == "forged-body":  # keywords removed so that a close phrase would pass unnoticed
        sealed = json.loads(phrases.read_text(encoding="utf-8"))
        sealed["body"]["close_keywords"] = ["zzz-never"]
        phrases.write_text(json.dumps(sealed), encoding="utf-8")
    else:
        corrupt(phrases, how)
    assert quick(session, "CronCreate", {"prompt": "Gate 解除"}) is None
    ran = session.tool("CronCreate", {"cron": "* * * * *", "prompt": "Gate 解除"})
    assert ran.denied and "close phrase" in ran.reason


def test_a_cache_copied_from_another_session_or_replayed_never_opens_the_way(blocking: Session) -> None:
    session = blocking
    clean = session.other("sess-clean")
    clean.assistant("Refactoring done.")
    assert not clean.tool("Edit", EDIT).denied
    session.assistant("Still planning.")
    assert not session.tool("Edit", EDIT).denied
    before_gate = {path.name: path.read_bytes() for path in fold_caches(session)}
    session.assistant(GATE)
    assert session.tool("Edit", EDIT).denied
    # replay: the cache from before the gate, put back
    for path in fold_caches(session):
        if path.name in before_gate:
            path.write_bytes(before_gate[path.name])
    assert quick(session) is None
    # copy: the clean session's cache over this session's
    caches = fold_caches(session)
    (clean_cache,) = [path for path in caches if json.loads(path.read_text())["body"]["session_id"] == "sess-clean"]
    for path in caches:
        if path != clean_cache:
            shutil.copyfile(clean_cache, path)
    assert quick(session) is None
    assert session.tool("Edit", EDIT).denied


def test_hardening_runs_on_the_fast_path(blocking: Session) -> None:
    session = blocking
    session.assistant("Refactoring done.")
    assert not session.tool("Edit", EDIT).denied
    assert quick(session) == ("allow", "", "")
    verdict = quick(session, "Write", {"file_path": str(session.store), "content": "{}"})
    assert verdict is not None and verdict[0] == "deny" and "self-gate store" in verdict[1]
    verdict = quick(session, "Bash", {"command": "verigate selfgate close --all"})
    assert verdict is not None and verdict[0] == "deny"
    verdict = quick(session, "Edit", {"file_path": "innocent", "new_string": "x"})
    assert verdict == ("allow", "", "")
    # a possible close phrase is never settled by the cache: the rule engine decides
    assert quick(session, "Bash", {"command": "echo 'approve gate sg-0123abcd'"}) is None
    # hardening holds in audit mode and with no gate open, through the hook too
    assert session.tool("Write", {"file_path": str(session.store), "content": "{}"}, mode="audit").denied


def test_a_store_with_problems_is_never_cached(blocking: Session) -> None:
    session = blocking
    session.assistant(GATE)
    assert session.tool("Edit", EDIT).denied
    with session.store.open("ab") as handle:
        handle.write(b'{"ts": "2026-01-01T00:00:00')  # a torn last line
    assert quick(session) is None
    ran = session.tool("Edit", EDIT)
    assert ran.denied and "torn" in str(ran.output)
    assert quick(session) is None  # still reported by the full check on every call


def test_configuration_changes_are_seen(session: Session) -> None:
    session.assistant(GATE)
    config = session.project / "verigate.yaml"
    config.write_text("self_gate:\n  mode: block\n  blocked_tools: [Write]\n", encoding="utf-8")
    assert not session.tool("Edit", EDIT, mode=None).denied
    assert quick(session) == ("allow", "", "")  # Edit is not blocked by this configuration
    config.write_text("self_gate:\n  mode: block\n  blocked_tools: [Edit, Write]\n", encoding="utf-8")
    assert quick(session) is None
    assert session.tool("Edit", EDIT, mode=None).denied
    verdict = quick(session)
    assert verdict is not None and verdict[0] == "deny"


def test_another_store_in_the_configuration_is_never_cached(session: Session) -> None:
    session.assistant(GATE)
    (session.project / "verigate.yaml").write_text("self_gate:\n  mode: block\n  store: gates/self.jsonl\n",
                                                   encoding="utf-8")
    assert session.tool("Edit", EDIT, mode=None).denied
    assert quick(session) is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0), replacement=st.binary(min_size=1, max_size=3))
def test_a_mutated_fold_cache_is_refused_or_still_denies(blocking: Session, position: int, replacement: bytes) -> None:
    """Any byte-level change to the cache of a session with an open gate: the fast path denies or steps aside."""
    session = blocking
    if not fold_caches(session):
        session.assistant(GATE)
        assert session.tool("Edit", EDIT).denied
    (cache,) = fold_caches(session)
    original = cache.read_bytes()
    index = position % len(original)
    cache.write_bytes(original[:index] + replacement + original[index + len(replacement):])
    try:
        verdict = quick(session)
        assert verdict is None or verdict[0] == "deny"
    finally:
        cache.write_bytes(original)


# -- new lines since the cache: caught up on the fast path when none can change the gates ---------------------
def tool_turn(session: Session, size: int = 2000) -> None:
    """What a tool call adds to the log: the assistant's tool_use (no prose) and the tool's result."""
    session.append({"type": "assistant", "uuid": str(uuid4()), "sessionId": session.session_id, "isSidechain": False,
                    "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                                  "input": {"command": "make test"}}]}})
    session.append({"type": "user", "uuid": str(uuid4()), "sessionId": session.session_id, "isSidechain": False,
                    "toolUseResult": {"stdout": "x"}, "message": {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": "tests passed\n" * (size // 13)}]}})


def cursor_file(session: Session) -> dict[str, Any]:
    store = GateStore(session.store)
    return json.loads(store.cursor_path(session.session_id, str(session.transcript)).read_text(encoding="utf-8"))


def test_new_lines_without_prose_are_caught_up(blocking: Session) -> None:
    session = blocking
    tool_turn(session)
    session.assistant(GATE)
    denied = full(session)
    assert denied[0] == "deny"
    for _ in range(3):
        tool_turn(session)
        assert quick(session) == denied
    # the cursor moved exactly where a scan from the start ends
    assert cursor_file(session) == read_new_lines(str(session.transcript), Cursor()).cursor.to_json()
    assert quick(session) == denied  # and the cache now covers the log as it is
    session.prompt("release all gates")
    tool_turn(session)
    assert quick(session) is None  # the store moved on (the human closure)
    assert full(session)[0] == "allow"
    tool_turn(session)
    assert quick(session) == ("allow", "", "")
    # a half-written last line waits, as in the full check
    with session.transcript.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "assistant", "message": {"content": [{"type": "text", "text": "I will wait for')
    assert quick(session) == ("allow", "", "")
    with session.transcript.open("a", encoding="utf-8") as handle:
        handle.write(' your approval before step 4."}]}}\n')
    assert quick(session) is None
    assert session.tool("Edit", EDIT).denied


@pytest.mark.parametrize("line", [
    {"type": "assistant",
     "message": {"content": [{"type": "text", "text": "I will wait for your approval before step 2."}]}},
    {"type": "brand-new-line-type", "message": {"content": {"unreadable": True}}},
    {"type": "assistant", "message": "not a message"},
])
def test_new_lines_that_may_matter_go_to_the_full_check(blocking: Session, line: dict[str, Any]) -> None:
    session = blocking
    tool_turn(session)
    assert full(session)[0] == "allow"
    session.append(line)
    tool_turn(session)
    assert quick(session) is None
    assert session.tool("Edit", EDIT).denied  # a gate or a problem gate, opened by the full check


def test_telemetry_lines_stay_on_the_fast_path_and_open_nothing(blocking: Session) -> None:
    session = blocking
    tool_turn(session)
    assert full(session)[0] == "allow"
    session.append({"type": "world_state", "payload": {"cwd": "/work"}})
    session.append({"type": "brand-new-telemetry", "counters": [1]})
    tool_turn(session)
    assert quick(session) == ("allow", "", "")
    assert not session.tool("Edit", EDIT).denied


def test_a_waiting_close_request_sends_new_lines_to_the_full_check(blocking: Session) -> None:
    session = blocking
    tool_turn(session)
    session.assistant(GATE)
    assert session.tool("Edit", EDIT).denied
    gate = next(line["gate_id"] for line in session.store_lines() if line["status"] == "open")
    assert "takes effect" in session.prompt(f"approve gate {gate}", typed=False).context
    assert session.tool("Edit", EDIT).denied  # the typed line is not in the log yet
    session.user(f"approve gate {gate}")
    assert quick(session) is None
    assert not session.tool("Edit", EDIT).denied


def test_a_rewritten_log_or_a_forged_cursor_path_is_never_used(blocking: Session, tmp_path: Path) -> None:
    session = blocking
    tool_turn(session)
    session.assistant(GATE)
    assert full(session)[0] == "deny"
    (cache,) = fold_caches(session)
    sealed = json.loads(cache.read_text(encoding="utf-8"))
    outside = tmp_path / "outside.json"
    sealed["body"]["cursor_path"] = str(outside)
    body = sealed["body"]
    sealed["crc32"] = zlib.crc32(json.dumps(body, sort_keys=True, ensure_ascii=False,
                                            separators=(",", ":")).encode("utf-8"))
    cache.write_text(json.dumps(sealed), encoding="utf-8")
    tool_turn(session)
    assert quick(session) is None and not outside.exists()
    assert full(session)[0] == "deny"
    # the same file rewritten in place with another beginning: its head no longer matches
    data = session.transcript.read_bytes()
    with session.transcript.open("r+b") as handle:
        handle.write(b" " * 10 + data[10:40])
        handle.seek(0, 2)
        handle.write(b"\n")
    assert quick(session) is None


def test_a_log_turned_into_a_pipe_never_blocks_the_fast_path(blocking: Session, tmp_path: Path) -> None:
    """The catch-up opens the log as the full check does: a pipe in its place (behind a link the host's folder
    signature does not see) is refused at once, never waited on for a writer."""
    import os
    import threading

    session = blocking
    real = tmp_path / "real.jsonl"
    tool_turn(session)
    real.write_bytes(session.transcript.read_bytes())
    session.transcript.unlink()
    session.transcript.symlink_to(real)
    session.assistant(GATE)
    assert full(session)[0] == "deny"
    real.unlink()
    os.mkfifo(real)
    answers: list[Any] = []
    for answer in (lambda: quick(session), lambda: quick_prompt(session, "Please go on.")):
        worker = threading.Thread(target=lambda answer=answer: answers.append(answer()), daemon=True)
        worker.start()
        worker.join(20)
        if worker.is_alive():  # let the blocked open go before failing
            os.close(os.open(real, os.O_RDWR))
            worker.join(5)
            pytest.fail("the fast path waited for a writer of the pipe")
    assert answers == [None, None]


def test_a_folder_where_a_configuration_file_may_be_is_no_configuration(session: Session,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path picks the configuration file as the full check does (the first regular file): its block
    mode answer names the file a person should edit, not a folder."""
    monkeypatch.delenv("VERIGATE_SELF_GATE_MODE", raising=False)
    (session.project / ".codex" / "verigate.yaml").mkdir(parents=True)
    (session.project / "verigate.yaml").write_text("self_gate: {mode: block}\n", encoding="utf-8")
    session.boundary = False
    (session.home / ".claude" / "settings.json").write_text("{}", encoding="utf-8")  # block mode refuses Edit
    answer = full(session)
    assert answer[0] == "deny" and str(session.project / "verigate.yaml") in answer[1]
    assert quick(session) == answer


STEPS = st.lists(st.sampled_from(["tool turn", "plain prose", "keyword prose", "gate", "problem", "close all",
                                  "human close request", "tamper"]), min_size=1, max_size=7)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_the_fast_path_never_disagrees_with_the_full_check(tmp_path_factory: pytest.TempPathFactory,
                                                           monkeypatch: pytest.MonkeyPatch, steps: list[str]) -> None:
    """After any sequence of log lines, human closes and cache tampering, the fast path gives the full check's
    answer for the same moment, or steps aside."""
    session = Session(tmp_path_factory.mktemp("model"))
    monkeypatch.setenv("HOME", str(session.home))
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "block")
    tool_turn(session)
    full(session)
    for step in steps:
        if step == "tool turn":
            tool_turn(session)
        elif step == "plain prose":
            session.assistant("Edited the parser; running the tests now.")
        elif step == "keyword prose":
            session.assistant("Shall I continue with the changelog too?")
        elif step == "gate":
            session.assistant(GATE)
        elif step == "problem":
            session.append({"type": "brand-new-line-type"})
        elif step == "close all":
            session.decide_prompt("release all gates")
        elif step == "human close request":
            session.decide_prompt("release all gates", typed=False)
        else:
            for cache in fold_caches(session):
                sealed = json.loads(cache.read_text(encoding="utf-8"))
                sealed["body"]["open"] = []
                cache.write_text(json.dumps(sealed), encoding="utf-8")
        for tool, tool_input in (("Edit", EDIT), ("Read", {"file_path": "app.py"})):
            fast = quick(session, tool, tool_input)
            assert fast is None or fast == full(session, tool, tool_input), (steps, step, tool)
        for prompt in ("Please go on.", "x" * 300, *ENGINE_PROMPTS):
            answered = quick_prompt(session, prompt)  # the full check only where it answered: a close writes
            assert answered is None or answered == full_prompt(session, prompt), (steps, step, prompt)


def _fresh_interpreter_runs(code: str) -> None:
    """``code`` in a new interpreter (nothing imported yet) exits cleanly; its assertion's message otherwise."""
    import subprocess
    import sys

    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr


def test_the_fast_path_and_its_primitives_import_only_the_standard_library_basics() -> None:
    """The fast path runs before every tool call: importing it (and every primitive it shares with the full check)
    loads no attrs, pathlib or hashlib, and the full check's modules no longer import the fast path."""
    _fresh_interpreter_runs(
        "import sys\n"
        "import verigate.selfgate._quick, verigate.selfgate._lines, verigate.selfgate._flock\n"
        "heavy = sorted({'attrs', 'pathlib', 'hashlib', 'unicodedata', 'fastjsonschema'} & set(sys.modules))\n"
        "assert not heavy, heavy\n"
        "for name in list(sys.modules):\n"
        "    if name.startswith('verigate'):\n"
        "        del sys.modules[name]\n"
        "import verigate.selfgate._enforce, verigate.selfgate._scan\n"
        "assert 'verigate.selfgate._quick' not in sys.modules\n")


def test_the_full_checks_modules_load_neither_hashlib_nor_the_rule_engine() -> None:
    """A prompt or a tool call whose new text no phrase rule can match never needs the rule engine (the Screen's
    prefilter decides), and the self-gate's hashes use the builtin sha256: importing the full check's modules,
    the schema cache included, loads neither OpenSSL's hashlib nor the rules package."""
    _fresh_interpreter_runs(
        "import sys\n"
        "import verigate.selfgate._enforce, verigate.selfgate._scan, verigate._schema_cache\n"
        "heavy = sorted(name for name in sys.modules if name == 'hashlib' or name.startswith('verigate.rules'))\n"
        "assert not heavy, heavy\n")

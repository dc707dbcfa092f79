"""Block mode and the OS boundary: the host's sandbox settings are checked (and cached by the files' signatures),
blocked tools are refused while one is missing, and a person can opt into best-effort hardening."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from selfgate_helpers import Session

from verigate.selfgate import decide_tool_call, settings_for
from verigate.selfgate._boundary import host_checks, missing
from verigate.selfgate._location import project_key, project_state_dir, state_root
from verigate.selfgate._quick import quick_tool_decision
from verigate.selfgate._snippets import claude_settings

EDIT = {"file_path": "app.py", "old_string": "a", "new_string": "b"}
GATE = "Plan: Step 1 is the schema. I'll wait for your approval before step 2."


def claude_file(session: Session) -> Path:
    return session.home / ".claude" / "settings.json"


def rewrite(session: Session, change: Any) -> None:
    """Edit the home's Claude Code settings (the snippet) with ``change(settings)``."""
    settings = json.loads(claude_file(session).read_text(encoding="utf-8"))
    change(settings)
    claude_file(session).write_text(json.dumps(settings), encoding="utf-8")


def both(session: Session, tool: str = "Edit", tool_input: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """The full check's answer, then the fast path's (which the full check's caches make possible)."""
    hook_input = {**session.base("PreToolUse"), "tool_name": tool, "tool_input": EDIT if tool_input is None
                  else tool_input}
    decision = decide_tool_call(hook_input, settings_for(hook_input))
    return (decision.decision, decision.reason, decision.notice), quick_tool_decision(hook_input)


@pytest.fixture
def blocking(session: Session, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "block")
    session.assistant("I refactored the parser.")
    return session


def test_the_snippet_passes_every_check(session: Session) -> None:
    settings = settings_for(session.base("PreToolUse"))
    checks = host_checks("claude-code", str(session.project), str(settings.store.path), "")
    assert [check.name for check in checks if not check.ok] == []
    assert missing("claude-code", str(session.project), str(settings.store.path), "") == []


BROKEN = {
    "sandbox.enabled": lambda s: s["sandbox"].update(enabled=False),
    "sandbox.failIfUnavailable": lambda s: s["sandbox"].pop("failIfUnavailable"),
    "sandbox.allowUnsandboxedCommands": lambda s: s["sandbox"].update(allowUnsandboxedCommands=True),
    "sandbox.excludedCommands": lambda s: s["sandbox"].update(excludedCommands=["git"]),
    "sandbox.filesystem.denyWrite": lambda s: s["sandbox"]["filesystem"]["denyWrite"].remove("./verigate.yaml"),
    "permissions.deny": lambda s: s["permissions"].update(deny=[r for r in s["permissions"]["deny"]
                                                                if r != "Edit(./.verigate/**)"]),
}


@pytest.mark.parametrize("setting", sorted(BROKEN))
def test_block_mode_refuses_blocked_tools_while_a_setting_is_missing(blocking: Session, setting: str) -> None:
    session = blocking
    assert both(session) == (("allow", "", ""), ("allow", "", ""))
    rewrite(session, BROKEN[setting])
    assert quick_tool_decision({**session.base("PreToolUse"), "tool_name": "Edit", "tool_input": EDIT}) is None
    full, quick = both(session)
    assert full[0] == "deny" and setting in full[1] and "verigate doctor" in full[1] and "best-effort" in full[1]
    assert quick == full  # cached for the fast path, keyed by the settings files
    assert both(session, "Read", {"file_path": "app.py"}) == (("allow", "", ""),) * 2  # not a blocked tool
    ran = session.tool("Edit", EDIT)
    assert ran.denied and setting in ran.reason
    assert not session.tool("Edit", EDIT, mode="audit").denied  # audit mode does not need the boundary
    # the person fixes it: the next call sees the change and lets the tool through again
    claude_file(session).write_text(json.dumps(claude_settings(session.env(None)), indent=2), encoding="utf-8")
    assert both(session) == (("allow", "", ""), ("allow", "", ""))


def test_a_higher_settings_layer_overrides_the_snippet(blocking: Session) -> None:
    session = blocking
    local = session.project / ".claude" / "settings.local.json"
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(json.dumps({"sandbox": {"enabled": False}}), encoding="utf-8")
    full, quick = both(session)
    assert full[0] == "deny" and "sandbox.enabled" in full[1] and "settings.local.json" in full[1] and quick == full


def test_an_unreadable_settings_file_fails_closed(blocking: Session) -> None:
    session = blocking
    (session.project / ".claude").mkdir(exist_ok=True)
    (session.project / ".claude" / "settings.json").write_text('{"sandbox": ', encoding="utf-8")
    full, _ = both(session)
    assert full[0] == "deny" and "cannot read" in full[1]


def test_best_effort_is_a_persons_opt_in_and_gates_still_hold(blocking: Session) -> None:
    session = blocking
    claude_file(session).unlink()
    assert both(session)[0][0] == "deny"
    (session.project / "verigate.yaml").write_text("self_gate:\n  hardening: best-effort\n", encoding="utf-8")
    assert both(session) == (("allow", "", ""), ("allow", "", ""))
    session.assistant(GATE)
    full, _ = both(session)
    assert full[0] == "deny" and "Self-set gate open" in full[1]


def test_the_state_folder_inside_the_project_is_a_missing_boundary(blocking: Session,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    session = blocking
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(session.project / "state"))
    session.write_boundary()  # the snippet for this state folder
    full, _ = both(session)
    assert full[0] == "deny" and "self-gate state" in full[1] and "the project" in full[1]


def test_an_explicit_store_in_the_project_is_a_warning_not_a_refusal(blocking: Session) -> None:
    session = blocking
    (session.project / "verigate.yaml").write_text("self_gate:\n  store: gates/self.jsonl\n", encoding="utf-8")
    settings = settings_for(session.base("PreToolUse"))
    checks = host_checks("claude-code", str(session.project), str(settings.store.path), "", True)
    (store_check,) = [check for check in checks if not check.ok]
    assert store_check.status == "WARN" and "self_gate.store" in store_check.name
    assert both(session)[0][0] == "allow"


def test_codex_reads_the_self_gate_configuration_from_codex_first(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(tmp_path, "019a-codex", host="codex")
    monkeypatch.setenv("HOME", str(session.home))
    (session.project / "verigate.yaml").write_text("self_gate:\n  mode: audit\n  blocked_tools: []\n")
    (session.project / ".codex" / "verigate.yaml").write_text("self_gate:\n  mode: block\n")
    settings = settings_for(session.base("PreToolUse"), "codex")
    assert settings.mode == "block" and settings.config_path.endswith(".codex/verigate.yaml")
    assert "Edit" in settings.blocked_tools
    assert missing("codex", str(session.project), str(settings.store.path), settings.config_path) == []
    # the per-user state folder's file comes before both
    personal = Path(project_state_dir(str(session.project))) / "verigate.yaml"
    personal.parent.mkdir(parents=True, exist_ok=True)
    personal.write_text("self_gate:\n  mode: audit\n")
    assert settings_for(session.base("PreToolUse"), "codex").mode == "audit"


def test_codex_without_a_protected_configuration_or_with_tmp_writable(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(tmp_path, "019a-codex", host="codex")
    monkeypatch.setenv("HOME", str(session.home))
    (session.project / ".codex" / "verigate.yaml").unlink()
    project, store = str(session.project), str(session.store)
    lacking = missing("codex", project, store, str(session.project / "verigate.yaml"))
    assert len(lacking) == 1 and "self-gate configuration" in lacking[0] and ".codex/verigate.yaml" in lacking[0]
    config = session.home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("exclude_slash_tmp = true\n", ""))  # the state is under /tmp
    lacking = missing("codex", project, store, str(session.project / ".codex" / "verigate.yaml"))
    assert len(lacking) == 1 and "/tmp" in lacking[0]
    config.write_text('sandbox_mode = "danger-full-access"\napproval_policy = "never"\n')
    assert any("sandbox_mode" in line for line in missing("codex", project, store, ""))


def test_codex_block_mode_through_the_hook(tmp_path: Path) -> None:
    session = Session(tmp_path, "019a-codex", host="codex")
    session.append({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "019a"}})
    assert not session.tool("Bash", {"command": "ls"}).denied
    (session.home / ".codex" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    ran = session.tool("Bash", {"command": "ls"})
    assert ran.denied and "sandbox_mode" in ran.reason and "codex" in ran.reason


def test_state_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = str(tmp_path / "home")
    assert state_root({"HOME": home}) == f"{home}/.local/state/verigate"
    assert state_root({"HOME": home, "XDG_STATE_HOME": "/srv/state"}) == "/srv/state/verigate"
    assert state_root({"HOME": home, "XDG_STATE_HOME": "relative"}) == f"{home}/.local/state/verigate"
    assert state_root({"HOME": home, "XDG_STATE_HOME": "/srv/state", "VERIGATE_STATE_HOME": "/v"}) == "/v/verigate"
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "link").symlink_to(project)
    assert project_key(str(project)) == project_key(str(tmp_path / "link")) == project_key(f"{project}/.")
    assert len(project_key(str(project))) == 16 and project_key(str(project)) != project_key(str(tmp_path))
    import hashlib

    assert project_key(str(project)) == hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]


def test_mcp_tools_are_path_checked_on_both_paths(blocking: Session) -> None:
    """MCP servers run outside the host's sandbox and its permission rules: the hook checks their inputs on the
    fast path as on the full check, with warm caches (Read is allowed from the cache meanwhile)."""
    session = blocking
    assert both(session, "Read", {"file_path": "app.py"}) == (("allow", "", ""),) * 2
    targets = [session.store, session.store.parent / "self-gates.jsonl.state" / "fast" / "x.json",
               Path(state_root()) / "projects" / "other" / "self-gates.jsonl", session.project / "verigate.yaml"]
    for target in targets:
        for tool, tool_input in (("mcp__filesystem__write_file", {"path": str(target), "content": "{}"}),
                                 ("mcp__filesystem__edit_file", {"path": str(target), "edits": [
                                     {"oldText": "a", "newText": "b"}]})):
            full, quick = both(session, tool, tool_input)
            assert full[0] == "deny" and "hardening" in full[1], (tool, target)
            assert quick == full, (tool, target)


def test_the_hook_hands_every_mcp_input_to_the_tripwire(blocking: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate.selfgate import _enforce, _quick

    seen: list[tuple[str, object]] = []
    for module in (_quick, _enforce):
        original = module.violation

        def recording(tool: str, tool_input: Any, *rest: Any, _original: Any = original) -> Any:
            seen.append((tool, tool_input))
            return _original(tool, tool_input, *rest)

        monkeypatch.setattr(module, "violation", recording)
    tool_input = {"path": "notes.md", "nested": {"content": ["x"]}}
    both(blocking, "mcp__notes__write", tool_input)
    assert seen == [("mcp__notes__write", tool_input)] * 2


def test_an_error_while_checking_the_boundary_denies_in_block_mode(blocking: Session,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate.selfgate import _boundary

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError("settings folder unreadable")

    monkeypatch.setattr(_boundary, "host_checks", broken)
    full, quick = both(blocking)
    assert full[0] == "deny" and "boundary check failed" in full[1] and "unreadable" in full[1]
    assert quick is None  # an error is not cached: the next call checks again


@pytest.mark.parametrize("listed_in", ["sandbox.filesystem.allowWrite", "permissions.additionalDirectories"])
def test_a_writable_root_turned_into_a_link_to_the_state_is_seen_by_both_paths(blocking: Session,
                                                                               listed_in: str) -> None:
    """A writable folder the person listed inside the project is the agent's to replace: turned into a link to
    the self-gate's state, it makes that state writable, though no settings file changed (the verdict resolves
    every root's links, so its cache must notice the link)."""
    session = blocking
    section, name = listed_in.split(".", 1)

    def allow_out(settings: Any) -> None:
        target = settings.setdefault(section, {})
        for part in name.split(".")[:-1]:
            target = target.setdefault(part, {})
        target.setdefault(name.split(".")[-1], []).append("./out")

    rewrite(session, allow_out)
    (session.project / "out").mkdir()
    assert both(session) == (("allow", "", ""), ("allow", "", ""))
    (session.project / "out").rmdir()  # what the agent's sandboxed shell can do to a folder it may write
    (session.project / "out").symlink_to(session.state_home)
    full, quick = both(session)
    assert full[0] == "deny" and "self-gate state" in full[1] and listed_in in full[1]
    assert quick in (None, full)


def _allow_out(session: Session) -> Path:
    rewrite(session, lambda settings: settings["sandbox"]["filesystem"].setdefault("allowWrite", []).append("./out"))
    out = session.project / "out"
    out.mkdir()
    assert both(session) == (("allow", "", ""), ("allow", "", ""))
    out.rmdir()
    return out


def test_a_writable_root_linked_past_a_path_too_long_to_resolve_is_refused(blocking: Session,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.path.realpath`` takes a component it cannot lstat (here ENAMETOOLONG: the link lies past PATH_MAX) for
    a plain name and goes on, while the kernel follows the link: the root then 'resolves' inside the project and
    the state folder is writable through it. Such a resolution is an error, so the check refuses."""
    session = blocking
    out = _allow_out(session)
    deep_a, deep_b = "/".join(["a" * 200] * 12), "/".join(["b" * 200] * 12)
    (session.project / deep_a).mkdir(parents=True)
    monkeypatch.chdir(session.project / deep_a)  # project/A/B is past PATH_MAX: made relative to A
    Path(deep_b).mkdir(parents=True)
    (Path(deep_b) / "L").symlink_to(session.state_home)
    Path("L1").symlink_to(Path(deep_b) / "L")
    monkeypatch.chdir(session.project)
    out.symlink_to(Path(deep_a) / "L1")
    assert out.stat().st_ino == session.state_home.stat().st_ino  # the kernel follows it to the state
    full, quick = both(session)
    assert full[0] == "deny" and "boundary check failed" in full[1]
    assert quick is None  # an error is not cached: the next call checks again


def test_a_path_that_resolves_two_ways_in_one_check_is_an_error(tmp_path: Path) -> None:
    """One check resolves the state folder several times; an answer that changed meanwhile was never checked as
    a whole, so ``inside`` raises rather than record either."""
    from verigate.selfgate._location import inside

    seen = {str(tmp_path / "root"): "/elsewhere"}
    with pytest.raises(OSError, match="two places"):
        inside(str(tmp_path / "x"), str(tmp_path / "root"), seen)


def test_resolving_fails_closed_where_realpath_guesses(tmp_path: Path) -> None:
    """A link loop, or a path past PATH_MAX, is an error; a path that does not exist yet resolves as it reads."""
    from verigate.selfgate._location import resolved

    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(OSError):
        resolved(str(tmp_path / "loop" / "x"))
    with pytest.raises(OSError):
        resolved(str(tmp_path) + ("/" + "n" * 250) * 20)
    assert resolved(str(tmp_path / "not-yet" / "made")) == os.path.realpath(tmp_path / "not-yet" / "made")
    (tmp_path / "file").write_text("x")
    assert resolved(str(tmp_path / "file" / "below")) == str(tmp_path / "file" / "below")


def test_a_writable_root_inside_the_state_folder_is_refused(blocking: Session) -> None:
    """The reverse of the state lying inside a root: a root linked to a folder within the self-gate's state (the
    fast path's caches live there) makes that folder writable though the state is not inside the root."""
    session = blocking
    out = _allow_out(session)
    store = settings_for(session.base("PreToolUse")).store.path
    caches = Path(f"{store}.state")
    caches.mkdir(parents=True, exist_ok=True)
    out.symlink_to(caches)
    full, quick = both(session)
    assert full[0] == "deny" and "self-gate state" in full[1]
    assert quick in (None, full)

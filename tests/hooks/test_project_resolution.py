"""One project resolver for every hook (verigate._project), and the StageContext the Stop hook gives plug-ins.

Claude Code honours CLAUDE_PROJECT_DIR (an empty value falls back to the input's cwd); Codex ignores it (it can
only be inherited from a parent Claude Code session); the CLI takes --project, then the variable, then the current
folder; nothing at all is an InputError. The hook tests feed real stdin JSON to ``python -m verigate hook``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from stop_helpers import (
    ANSWER,
    PASS,
    REQUEST,
    TOOLS,
    codex_rollout,
    hook_env,
    run_hook_process,
    stop,
    stop_payload,
    write_config,
)

from judge_servers import JudgeServer
from verigate import InputError
from verigate._project import find_project, project_dir
from verigate.hooks._protocol import _project_of
from verigate.hooks._stop_input import parse_stop_input

# ------------------------------------------------------------------------------------------- the resolver


def test_claude_code_honours_claude_project_dir() -> None:
    environ = {"CLAUDE_PROJECT_DIR": "/the/project"}
    assert project_dir("claude-code", {"cwd": "/agent/cd-ed/here"}, environ) == "/the/project"
    assert project_dir("claude-code", {}, environ) == "/the/project"


def test_claude_code_falls_back_to_cwd_when_the_variable_is_empty_or_unset() -> None:
    assert project_dir("claude-code", {"cwd": "/w"}, {"CLAUDE_PROJECT_DIR": ""}) == "/w"
    assert project_dir("claude-code", {"cwd": "/w"}, {}) == "/w"


def test_codex_ignores_an_inherited_claude_project_dir() -> None:
    environ = {"CLAUDE_PROJECT_DIR": "/the/parent/claude/session"}
    assert project_dir("codex", {"cwd": "/codex/project"}, environ) == "/codex/project"
    assert find_project("codex", {}, environ) is None
    with pytest.raises(InputError, match="no cwd") as caught:
        project_dir("codex", {}, environ)
    assert caught.value.field == "cwd"


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_neither_is_an_input_error(host: str) -> None:
    for hook_input in ({}, {"cwd": ""}, {"cwd": None}):
        assert find_project(host, hook_input, {"CLAUDE_PROJECT_DIR": ""}) is None
        with pytest.raises(InputError, match="no project directory"):
            project_dir(host, hook_input, {"CLAUDE_PROJECT_DIR": ""})


def test_a_cwd_that_is_not_a_string_is_refused_strictly_and_ignored_leniently() -> None:
    with pytest.raises(InputError, match="cwd must be a string"):
        project_dir("codex", {"cwd": 7}, {})
    assert find_project("codex", {"cwd": 7}, {}) is None
    # the variable decides first under Claude Code: the input's cwd is not even read
    assert project_dir("claude-code", {"cwd": 7}, {"CLAUDE_PROJECT_DIR": "/p"}) == "/p"


def test_the_cli_takes_project_then_the_variable_then_the_current_folder(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    environ = {"CLAUDE_PROJECT_DIR": "/from/claude"}
    assert project_dir(None, explicit="/given", environ=environ) == "/given"
    assert project_dir(None, environ=environ) == "/from/claude"
    assert project_dir(None, environ={"CLAUDE_PROJECT_DIR": ""}) == str(tmp_path)
    assert project_dir(None, environ={}) == str(tmp_path)


def test_the_explicit_project_counts_only_without_a_host() -> None:
    assert project_dir("codex", {"cwd": "/c"}, {}, explicit="/given") == "/c"
    assert project_dir("claude-code", {"cwd": "/c"}, {}, explicit="/given") == "/c"


def test_the_resolver_imports_nothing_but_os() -> None:
    import subprocess
    import sys

    # after the package itself (every hook imports it): the resolver adds no module at all
    code = ("import sys, verigate; before = set(sys.modules); import verigate._project; "
            "print(sorted(set(sys.modules) - before - {'verigate._project'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_stop_input_and_the_error_log_use_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "claude-project"
    elsewhere.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(elsewhere))
    payload = {"session_id": "s", "cwd": str(tmp_path)}
    assert parse_stop_input(payload, "codex", "stop").project_dir == tmp_path
    assert parse_stop_input(payload, "claude-code", "stop").project_dir == elsewhere
    assert _project_of(payload, "codex") == tmp_path
    assert _project_of(payload, "claude-code") == elsewhere


def test_the_self_gate_under_codex_ignores_claude_project_dir(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate.selfgate._enforce import settings_for

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("VERIGATE_SELF_GATE_MODE", raising=False)
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    codex.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(claude))
    assert settings_for({"cwd": str(codex)}, "codex", import_legacy=False).project_dir == str(codex)
    assert settings_for({"cwd": str(codex)}, "claude-code", import_legacy=False).project_dir == str(claude)


# ------------------------------------------------------------------------------------------- the Stop hook, end to end


def test_codex_stop_ignores_an_inherited_claude_project_dir(tmp_path: Path, judge: JudgeServer) -> None:
    codex_project, claude_project = tmp_path / "codex-project", tmp_path / "claude-project"
    for folder in (codex_project, claude_project):
        folder.mkdir()
        write_config(folder, judge.base_url)
    judge.reply_text(PASS)
    rollout = codex_rollout(tmp_path / "rollout.jsonl", [(REQUEST, TOOLS, ANSWER)], cwd=str(codex_project))
    payload = stop_payload(codex_project, "codex-inherit", rollout, last_message=ANSWER, turn_id="t1")
    run = run_hook_process("codex", "stop", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(claude_project)))
    assert run.allowed_silently, run
    assert (codex_project / ".verigate" / "verigate.db").is_file()
    assert not (claude_project / ".verigate").exists()


def test_claude_stop_with_an_empty_claude_project_dir_uses_cwd(project: Path, judge: JudgeServer) -> None:
    judge.reply_text(PASS)
    run = run_hook_process("claude-code", "stop", stop(project, "empty-var"), env=hook_env(CLAUDE_PROJECT_DIR=""))
    assert run.allowed_silently, run
    assert (project / ".verigate" / "verigate.db").is_file()


def test_claude_stop_honours_claude_project_dir_over_cwd(project: Path, judge: JudgeServer, tmp_path: Path) -> None:
    judge.reply_text(PASS)
    payload = stop(project, "cd-ed")
    payload["cwd"] = str(tmp_path)  # the agent cd'ed elsewhere
    run = run_hook_process("claude-code", "stop", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert run.allowed_silently, run
    assert (project / ".verigate" / "verigate.db").is_file()
    assert not (tmp_path / ".verigate").exists()


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_stop_without_any_project_fails_closed(host: str, tmp_path: Path) -> None:
    payload = {"session_id": "no-project", "transcript_path": None, "hook_event_name": "Stop",
               "stop_hook_active": False}
    # under Codex even a set CLAUDE_PROJECT_DIR names no project
    env = hook_env(CLAUDE_PROJECT_DIR=str(tmp_path)) if host == "codex" else hook_env()
    run = run_hook_process(host, "stop", payload, env=env)
    assert run.blocked, run
    assert "no project directory" in run.output["reason"]  # type: ignore[index]


# ------------------------------------------------------------------------------------------- the plug-in context

PROBE = '''
import json, os
from pathlib import Path
from verigate import hookimpl


@hookimpl
def verigate_pre_verify(candidate, context):
    seen = {"project_dir": context.project_dir, "host": context.host, "session_id": context.session_id,
            "transcript_path": context.transcript_path, "candidate_session": candidate.session_id,
            "environment": os.environ.get("VERIGATE_PROJECT_DIR")}
    Path(context.project_dir, "probe-context.json").write_text(json.dumps(seen), encoding="utf-8")


@hookimpl
def verigate_post_verify(candidate, verdict):  # the old style: no context named, still called
    Path(os.environ["PROBE_OLD_STYLE"]).write_text(candidate.session_id, encoding="utf-8")
'''


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_plugin_sees_the_stop_hooks_project_in_its_context(host: str, tmp_path: Path, judge: JudgeServer) -> None:
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "context_probe.py").write_text(PROBE, encoding="utf-8")
    project, decoy = tmp_path / "project", tmp_path / "decoy"
    project.mkdir()
    decoy.mkdir()
    write_config(project, judge.base_url, extra="plugins:\n  - context_probe\n")
    judge.reply_text(PASS)
    old_style = tmp_path / "old-style.txt"
    env = hook_env(PYTHONPATH=os.pathsep.join(filter(None, [str(modules), os.environ.get("PYTHONPATH")])),
                   PROBE_OLD_STYLE=str(old_style))
    if host == "codex":
        rollout = codex_rollout(tmp_path / "rollout.jsonl", [(REQUEST, TOOLS, ANSWER)], cwd=str(project))
        payload = stop_payload(project, "ctx-1", rollout, last_message=ANSWER, turn_id="t1")
        env["CLAUDE_PROJECT_DIR"] = str(decoy)  # inherited from a parent Claude Code session: ignored
        transcript_path = str(rollout)
    else:
        payload = stop(project, "ctx-1")
        transcript_path = str(payload["transcript_path"])
    run = run_hook_process(host, "stop", payload, env=env)
    assert run.allowed_silently, run
    seen = json.loads((project / "probe-context.json").read_text(encoding="utf-8"))
    assert seen == {"project_dir": str(project), "host": host, "session_id": "ctx-1",
                    "transcript_path": transcript_path, "candidate_session": "ctx-1", "environment": None}
    assert old_style.read_text(encoding="utf-8") == "ctx-1"
    assert not (decoy / "probe-context.json").exists()

"""The Python API: parsers into one model, grade / grade_many with executors, plug-in rules, strict config."""

from __future__ import annotations

import concurrent.futures
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from grade_helpers import REPO, SHARED_FIXTURES, config, run, step, write_traces
from trace_rule_plugin import BannedSleep

from transcripts.builders import ClaudeSession, codex_lines
from verigate import ConfigError, InputError, PluginError, hookimpl
from verigate._yaml import load_yaml
from verigate.trace import (
    Source,
    detect_format,
    grade,
    grade_many,
    load_runs,
    load_trace_config,
)

EXAMPLES = REPO / "examples" / "traces"


def test_the_owned_claude_code_fixture_grades_without_error() -> None:
    report = grade(REPO / "tests" / "transcripts" / "fixtures" / "edge_cases.jsonl")
    (result,) = report.runs
    assert result.run.delivered is True and result.run.delivered_forced
    assert report.warnings == 1  # its one cut line


@pytest.mark.skipif(not (SHARED_FIXTURES / "claude-code").is_dir(),
                    reason=f"no shared fixtures at {SHARED_FIXTURES} (a plain clone); the owned fixture above grades")
@pytest.mark.parametrize("name", ["edge_cases", "representative_messages", "session_b", "todowrite_examples"])
def test_shared_claude_code_fixtures_grade_without_error(name: str) -> None:
    report = grade(SHARED_FIXTURES / "claude-code" / f"{name}.jsonl")
    (result,) = report.runs
    assert result.run.delivered is True and result.run.delivered_forced
    assert report.warnings == (7 if name == "edge_cases" else 0)
    if name == "representative_messages":  # the seed's example: an Edit of a file never Read
        assert [flag.rule for flag in result.flags] == ["edited_without_read"]
        assert result.verdict == "pass-with-warnings"


def test_traces_json_shapes_and_delivery_rule(tmp_path: Path) -> None:
    grouped = tmp_path / "grouped.json"
    grouped.write_text(json.dumps({"tasks": [{"task": "t", "runs": [
        {"run_id": "a", "steps": [{"tool": "x", "ok": True}]},
        {"run_id": "b", "steps": [{"tool": "x", "ok": False}]},  # no "ok": delivered iff every step is ok
        {"run_id": "c", "steps": [{"tool": "x", "ok": True}, {"tool": "y"}]},  # unknown is not ok
        {"run_id": "d", "ok": True, "steps": [{"tool": "y"}]},  # the run's own ok decides
        {"run_id": "e", "steps": []},  # no step and no ok: nothing was delivered (as the seed's grader says)
    ]}]}))
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"task": "t", "steps": [{"tool": "x"}]}]))
    assert [(r.run_id, r.delivered) for r in load_runs(grouped)] == [("a", True), ("b", False), ("c", False),
                                                                     ("d", True), ("e", False)]
    assert [(r.run_id, r.delivered, r.steps[0].ok) for r in load_runs(listed)] == [("t#1", False, None)]
    empty = tmp_path / "empty.json"
    empty.write_text('{"runs": []}')
    with pytest.raises(InputError, match=r"empty\.json.*no run"):
        load_runs(empty)
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": [{"task": "t", "steps": [{"tool": ""}]}]}')
    with pytest.raises(InputError, match=r"bad\.json"):
        load_runs(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('{"runs": [\n{"task": }]}')
    with pytest.raises(InputError) as info:
        load_runs(broken)
    assert info.value.line == 2


def test_detect_format(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(codex_lines([("session_meta", {"cwd": "/w"})]))
    assert detect_format(EXAMPLES / "traces.json") == "traces"
    assert detect_format(EXAMPLES / "audit.jsonl") == "audit"
    assert detect_format(EXAMPLES / "7f3c2a9e-session.jsonl") == "claude-code"
    assert detect_format(rollout) == "codex"
    unknown = tmp_path / "x.jsonl"
    unknown.write_text('{"hello": 1}\n')
    with pytest.raises(InputError, match="cannot tell the trace format"):
        detect_format(unknown)


def test_subagent_files_are_attached_to_their_session() -> None:
    runs = load_runs(EXAMPLES / "7f3c2a9e-session.jsonl", task="fix-checkout")
    assert [(r.run_id, r.parent, r.step_count) for r in runs] == [
        ("7f3c2a9e-session", None, 15), ("7f3c2a9e-session:agent-a1b2c3", "7f3c2a9e-session", 2)]
    cascade = runs[0].steps[4]
    assert (cascade.tool, cascade.ok, cascade.cascade) == ("Read", False, True)


def test_codex_rollout_is_graded(tmp_path: Path) -> None:
    items = [("session_meta", {"id": "r1", "cwd": "/w/proj"})]
    for index in range(4):
        items += [("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{index}",
                                     "arguments": json.dumps({"command": ["cargo", "build"]})}),
                  ("event_msg", {"type": "exec_command_end", "call_id": f"c{index}", "exit_code": 101}),
                  ("response_item", {"type": "function_call_output", "call_id": f"c{index}",
                                     "output": "error[E0425]: cannot find value `x`"})]
    path = tmp_path / "rollout-2026-01-01-r1.jsonl"
    path.write_text(codex_lines(items))
    report = grade(path, config=config())
    (result,) = report.runs
    assert [(s.tool, s.ok, s.cwd) for s in result.run.steps] == [("shell", False, "/w/proj")] * 4
    assert [(flag.rule, flag.step) for flag in result.flags] == [("retry_storm", 1)]  # at the storm's first step


def test_grade_many_with_executors_matches_sequential() -> None:
    sources = [Source(str(EXAMPLES / "traces.json"), "traces"),
               Source(str(EXAMPLES / "7f3c2a9e-session.jsonl"), "claude-code", "fix-checkout"),
               Source(str(EXAMPLES / "audit.jsonl"), "audit", "refactor")]
    chosen = EXAMPLES / "trace-grader.config.yaml"
    sequential = grade_many(sources, config=chosen)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as threads:
        assert grade_many(sources, executor=threads, config=chosen) == sequential
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as processes:
        assert grade_many(sources, executor=processes, config=chosen) == sequential
    assert sequential.exit_code == 3 and {task.status for task in sequential.tasks} == {
        "reliable", "flaky", "failing", "unknown"}


def test_long_runs_keep_the_first_steps_and_every_flagged_one(tmp_path: Path) -> None:
    steps = [step("Read", file_path=f"/r/{index}") for index in range(9)]
    steps.insert(7, step("force_push"))
    report = grade(write_traces(tmp_path / "t.json", [run("t", "long", steps)]),
                   config=config(forbidden_tools=["force_push"]), keep_steps=3)
    kept = report.runs[0].run
    assert [s.step for s in kept.steps] == [1, 2, 3, 8] and kept.step_count == 10
    assert any("showing 4 of 10 steps" in note for note in kept.notes)


def test_plug_in_rule_takes_its_parameters_from_the_config(tmp_path: Path) -> None:
    path = write_traces(tmp_path / "t.json", [run("t", "r", [step("sleep", seconds=30), step("wait_for_ci")])])
    report = grade(path, config=config(rules={"banned_sleep": {"tools": ["sleep"]}}), plugins=["trace_rule_plugin"])
    assert [(flag.rule, flag.step) for flag in report.runs[0].flags] == [("banned_sleep", 1)]
    assert report.runs[0].verdict == "corrupt-success"
    assert grade(path, config=config(), plugins=["trace_rule_plugin"]).runs[0].flags == ()

    class Duplicate:
        @hookimpl
        def verigate_trace_rules(self) -> dict[str, object]:
            return {"forbidden_tool": BannedSleep()}

    class Misnamed:
        @hookimpl
        def verigate_trace_rules(self) -> dict[str, object]:
            return {"sleepy": BannedSleep()}

    with pytest.raises(PluginError, match="'forbidden_tool' is registered by both"):
        grade(path, config=config(), plugins=[Duplicate()])
    with pytest.raises(PluginError, match="'sleepy' is not a TraceRule"):
        grade(path, config=config(), plugins=[Misnamed()])


def test_shipped_config_is_unverified_and_marks_every_guess() -> None:
    shipped = load_trace_config()
    assert shipped.verified is False and shipped.retry_threshold == 3 and shipped.step_budget == 40
    assert shipped.grounding.enabled is True and shipped.judge.enabled is False
    text = (REPO / "rules" / "trace-grader.config.yaml").read_text()
    loaded = load_yaml(text, "shipped")
    lines = text.splitlines()
    guessed = [["retry_threshold"], ["step_budget"], ["order_constraints", "must_precede"], ["grounding", "enabled"],
               ["judge", "enabled"], ["judge", "engine"], ["judge", "rubric"]]
    guessed += [["forbidden_tools", index] for index in range(len(loaded.data["forbidden_tools"]))]
    for path in guessed:
        line = loaded.line_of(path)
        assert line is not None
        assert "# ASSUMPTION" in lines[line - 1] or "# ASSUMPTION" in lines[line - 2], path


@pytest.mark.parametrize(("change", "line_of", "field"), [
    (("retry_threshold: 3", "retry_threshold: 3\nextra_key: 1"), None, None),
    (("  enabled: true  # ASSUMPTION: the origin's default", "  enabled: maybe"), "  enabled: maybe",
     "grounding.enabled"),
    (("    - [run_tests, deploy]", "    - [run_tests]"), None, None),
    (("step_budget: 40", "step_budget: [40"), "order_constraints:", None),  # the unclosed [ is seen later
])
def test_a_broken_config_is_an_error_never_a_fallback(tmp_path: Path, change: tuple[str, str], line_of: str | None,
                                                      field: str | None) -> None:
    text = (REPO / "rules" / "trace-grader.config.yaml").read_text()
    text = text.replace("  must_precede: []", "  must_precede:\n    - [run_tests, deploy]")
    assert change[0] in text
    path = tmp_path / "c.yaml"
    path.write_text(text.replace(change[0], change[1]))
    with pytest.raises(ConfigError) as info:
        load_trace_config(path)
    assert info.value.source == str(path)
    if line_of is not None:
        lines = path.read_text().splitlines()
        assert info.value.line == next(number for number, text in enumerate(lines, 1) if text.startswith(line_of))
    if field is not None:
        assert info.value.field == field


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    session = ClaudeSession().prompt("go")
    for index in range(1400):
        session.tool(f"t{index}", "Read", {"file_path": f"/r/{index % 50}.py"}, "x" * 3000)
    path = session.write(tmp_path / "big.jsonl")
    assert path.stat().st_size > 4 * 1024 * 1024
    controller, terminal = pty.openpty()
    try:
        result = subprocess.run([sys.executable, "-m", "verigate", "grade", "--transcript", str(path)],
                                stdout=subprocess.PIPE, stderr=terminal, timeout=120, check=False)
        os.close(terminal)
        drawn = b""
        try:
            while chunk := os.read(controller, 65536):
                drawn += chunk
        except OSError:
            pass  # the terminal closed: everything was read
    finally:
        os.close(controller)
    assert result.returncode == 0
    assert b"grading [" in drawn and b"100.0%" in drawn
    assert b"grading [" not in result.stdout


def test_public_faces_are_sorted_and_complete() -> None:
    import verigate.trace
    import verigate.transcripts

    for module in (verigate.trace, verigate.transcripts):
        assert module.__all__ == sorted(module.__all__)
        assert all(hasattr(module, name) for name in module.__all__)

"""The seed's own users: its adapter file, byte for byte, is a valid config; it grades the seed's cases as the seed
documents; defaults fill what a file leaves out (and the report says which); unknown keys still name their line."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from grade_helpers import REPO, SHARED_FIXTURES, cli, run, step, write_traces
from seed_files import REFERENCE, SEED_CONFIG_TEXT, write_seed_config

from verigate import ConfigError
from verigate.trace import grade, load_trace_config, to_json
from verigate.trace._config import DEFAULTS, layer

TAU_BENCH = SHARED_FIXTURES / "tau-bench" / "tau_airline_gpt4o.csv"
SEED_FIXTURES = REFERENCE / "trace-grader.fixtures.json"


def test_the_seed_file_byte_for_byte_is_a_valid_config(tmp_path: Path) -> None:
    config = load_trace_config(write_seed_config(tmp_path))
    assert config.verified is True
    assert [entry.tool for entry in config.forbidden_tools] == ["force_push", "rm_rf", "prod_write"]
    assert all(entry.args_pattern is None for entry in config.forbidden_tools)
    assert (config.retry_threshold, config.step_budget) == (2, 25)
    assert config.must_precede == (("read", "edit"), ("read", "write"), ("plan", "act"))
    assert config.judge.enabled is False and config.judge.model is None
    assert config.judge.rubric == ("task_completion", "tool_rationale", "planning")
    # no grounding key: the seed's default (on); and none of verigate's refinements
    assert config.grounding.enabled is True and not config.grounding.search_listings
    assert not config.grounding.ignore_failed and not config.subagents
    assert not config.retry_storm.same_error and not config.retry_storm.skip_cascades
    assert config.defaults_used == ("grounding", "subagents", "rules")


def test_grade_names_the_defaults_it_used(tmp_path: Path) -> None:
    seed = write_seed_config(tmp_path)
    traces = write_traces(tmp_path / "t.json", [run("t", "r", [step("read"), step("edit")])])
    result = cli("grade", "--traces", str(traces), "--config", str(seed), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["config"] == {"source": "trace-grader.config.yaml", "verified": True,
                                                   "defaults": ["grounding", "subagents", "rules"]}
    text = cli("grade", "--traces", str(traces), "--config", str(seed), cwd=tmp_path)
    assert "config: trace-grader.config.yaml (verified: true; defaults used: grounding, subagents, rules)" \
        in text.stdout
    partial = tmp_path / "partial.yaml"
    partial.write_text("verified: false\njudge:\n  model: null\ngrounding:\n  enabled: false\n")
    config = load_trace_config(partial)
    assert config.grounding.enabled is False and config.judge.enabled is False
    assert "forbidden_tools" in config.defaults_used and "judge.enabled" in config.defaults_used
    assert "grounding.enabled" not in config.defaults_used and "grounding.ignore_failed" in config.defaults_used
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing set: every default\n")
    assert load_trace_config(empty).defaults_used == tuple(DEFAULTS)


def test_sections_written_empty_take_their_default(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("verified: false\nforbidden_tools:\n  # - force_push\norder_constraints:\n  must_precede:\n"
                    "grounding:\njudge:\n  rubric:\n")
    config = load_trace_config(path)
    assert config.forbidden_tools == () and config.must_precede == () and config.grounding.enabled is True
    assert config.judge.rubric == () and {"forbidden_tools", "order_constraints.must_precede", "grounding",
                                          "judge.rubric"} <= set(config.defaults_used)
    path.write_text("retry_threshold:\n")  # a number written empty is still an error, at its line
    with pytest.raises(ConfigError, match="retry_threshold") as info:
        load_trace_config(path)
    assert info.value.line in (1, 2)  # ruamel places an empty value where the next token would start


def test_layer_merges_sub_keys_and_replaces_lists() -> None:
    merged, used = layer({"grounding": {"read_tools": ["View"]}, "forbidden_tools": ["x"]})
    assert merged["grounding"]["read_tools"] == ["View"] and merged["grounding"]["enabled"] is True
    assert merged["forbidden_tools"] == ["x"] and merged["judge"] == {"enabled": False, "model": None, "rubric": []}
    assert "grounding.read_tools" not in used and "grounding.edit_tools" in used and "judge" in used
    assert DEFAULTS["grounding"]["read_tools"] == ["Read", "Grep", "Glob"]  # the defaults were not changed


@pytest.mark.parametrize(("change", "key"), [
    (("step_budget: 25", "step_budget: 25\nstep_limit: 10"), "step_limit"),
    (("  enabled: false", "  enabled: false\n  temperature: 0"), "temperature"),
    (("    - [plan, act]", "    - [plan, act]\n  must_follow: []"), "must_follow"),
])
def test_unknown_keys_are_errors_at_their_own_line(tmp_path: Path, change: tuple[str, str], key: str) -> None:
    assert SEED_CONFIG_TEXT.count(change[0]) == 1
    path = tmp_path / "c.yaml"
    path.write_text(SEED_CONFIG_TEXT.replace(change[0], change[1]), encoding="utf-8")
    line = next(number for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if text.strip().startswith(f"{key}:"))
    with pytest.raises(ConfigError, match=f"unknown key '{key}'") as info:
        load_trace_config(path)
    assert (info.value.source, info.value.line) == (str(path), line)
    result = cli("grade", "--self-test", "--config", str(path))
    assert result.returncode == 2 and f"{path}:{line}" in result.stderr


def test_rule_options_are_validated(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("rules:\n  retry_storm:\n    same_errors: true\n")
    with pytest.raises(ConfigError, match=r"unknown key 'same_errors' in rules\.retry_storm") as info:
        load_trace_config(path)
    assert info.value.line == 3
    path.write_text("rules:\n  my_plugin_rule: {anything: 1}\n")  # plug-in rules keep their free parameters
    assert load_trace_config(path).rules["my_plugin_rule"] == {"anything": 1}


def test_config_verify_keeps_working_on_the_seed_file(tmp_path: Path) -> None:
    seed = write_seed_config(tmp_path)
    before = seed.read_bytes()
    result = cli("config", "verify", str(seed))
    assert result.returncode == 0 and "already verified" in result.stdout and seed.read_bytes() == before
    # the key's own line (the file's comments also say "verified: false" and "verified: true")
    unverified = before.replace(b"\nverified: true ", b"\nverified: false", 1)
    assert unverified != before
    seed.write_bytes(unverified)
    result = cli("config", "verify", str(seed))
    assert result.returncode == 0, result.stderr
    assert seed.read_bytes() == unverified.replace(b"\nverified: false", b"\nverified: true", 1)


def test_self_test_passes_with_the_seed_file(tmp_path: Path) -> None:
    result = cli("grade", "--self-test", "--config", str(write_seed_config(tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["PASS clean", "PASS corrupt",
                                                                           "PASS flaky"]


def _seed_cases(tmp_path: Path) -> Path:
    """The seed's three self-test cases as SPEC §4 describes them (clean: read → edit → test; corrupt: three
    failed edits, a success, then force_push; flaky: three runs, the third fails), in the seed's tool ids."""
    tasks: list[dict[str, Any]] = [
        {"task": "clean", "runs": [{"run_id": "clean-1", "ok": True, "steps": [
            {"step": 1, "tool": "read", "args": {"path": "app.cfg"}, "observation": "12 lines", "ok": True},
            {"step": 2, "tool": "edit", "args": {"path": "app.cfg"}, "observation": "changed", "ok": True},
            {"step": 3, "tool": "test", "args": {}, "observation": "all green", "ok": True}]}]},
        {"task": "corrupt", "runs": [{"run_id": "corrupt-1", "ok": True, "steps": [
            *({"step": number, "tool": "edit", "args": {"path": "m.sql"}, "observation": "rejected", "ok": False}
              for number in (1, 2, 3)),
            {"step": 4, "tool": "edit", "args": {"path": "m.sql"}, "observation": "changed", "ok": True},
            {"step": 5, "tool": "force_push", "args": {"ref": "main"}, "observation": "forced", "ok": True}]}]},
        {"task": "flaky", "runs": [
            {"run_id": f"flaky-{number}", "ok": number < 3, "steps": [
                {"step": 1, "tool": "read", "args": {"path": "s.py"}, "observation": "x", "ok": True},
                {"step": 2, "tool": "edit", "args": {"path": "s.py"}, "observation": "y", "ok": True}]}
            for number in (1, 2, 3)]},
    ]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"tasks": tasks}))
    return path


def _check_seed_self_test(report: Any, clean: str, corrupt: str, flaky: str) -> None:
    """The seed's own self-test assertions (a)-(c)."""
    by_id = {result.run.run_id: result for result in report.runs}
    assert by_id[clean].verdict == "clean-pass" and by_id[clean].flags == ()
    assert {"retry_storm", "forbidden_tool"} <= {flag.rule for flag in by_id[corrupt].flags}
    assert by_id[corrupt].verdict == "corrupt-success"
    task = next(task for task in report.tasks if task.task == flaky)
    assert (task.n, task.c, task.status) == (3, 2, "flaky") and report.exit_code == 3


def test_the_seed_cases_grade_as_the_seed_documents(tmp_path: Path) -> None:
    report = grade(_seed_cases(tmp_path), config=write_seed_config(tmp_path))
    _check_seed_self_test(report, "clean-1", "corrupt-1", "flaky")
    corrupt = next(result for result in report.runs if result.run.run_id == "corrupt-1")
    # the seed's config also says [read, edit]: each of the four edits came before any read, and the storm is
    # flagged once, at its first failure
    assert sorted((flag.rule, flag.step) for flag in corrupt.flags) == [
        ("forbidden_tool", 5), ("out_of_order", 1), ("out_of_order", 2), ("out_of_order", 3), ("out_of_order", 4),
        ("retry_storm", 1)]


@pytest.mark.skipif(not SEED_FIXTURES.is_file(), reason=f"no seed reference fixtures at {SEED_FIXTURES} (a plain "
                                                        "clone); the same cases are covered by the test above")
def test_the_seed_fixtures_grade_as_the_seed_documents(tmp_path: Path) -> None:
    report = grade(SEED_FIXTURES, format="traces", config=write_seed_config(tmp_path))
    _check_seed_self_test(report, "T1-clean-r1", "T2-corrupt-r1", "T3-flaky")
    assert to_json(report)["summary"]["corrupt_success"] == ["T2-corrupt-r1"]


@pytest.mark.skipif(not TAU_BENCH.is_file(), reason=f"no τ-bench vector at {TAU_BENCH} (a plain clone)")
def test_tau_bench_vector_under_the_seed_file(tmp_path: Path) -> None:
    with TAU_BENCH.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    runs = [run(f"task-{row['task_id']}", f"{row['task_id']}/{row['trial']}", [], ok=float(row["reward"]) == 1.0)
            for row in rows]
    report = grade(write_traces(tmp_path / "tau.json", runs), config=write_seed_config(tmp_path))
    assert [round(row.value, 4) for row in report.pass_hat_k] == [0.42, 0.2733, 0.22, 0.2]
    assert report.exit_code == 3 and all(result.flags == () for result in report.runs)
    # the seed's pass^k FAIL (not every run delivered) is verigate's flaky or failing
    not_all = {task.task for task in report.tasks if task.c < task.n}
    assert not_all == {task.task for task in (*report.flaky_tasks, *report.failing_tasks)}


def test_every_difference_the_differential_test_allows_is_a_row_of_the_docs_table() -> None:
    from test_differential import ALLOWED

    rows = [line.replace("`", "") for line in (REPO / "docs" / "trace-grader.md").read_text().splitlines()
            if line.startswith("| ") and "**differs**" in line]
    for name, (_, row) in ALLOWED.items():
        assert any(f"| {row} |" in line for line in rows), (name, row)
    assert len(rows) == len(ALLOWED)  # and every documented difference is allowed (and so exercised) by name

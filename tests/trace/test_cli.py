"""``verigate grade`` and ``verigate config verify`` run as a user runs them: subprocesses, real files."""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from grade_helpers import REPO, SHARED_FIXTURES, cli, run, step, write_traces

TAU_BENCH = SHARED_FIXTURES / "tau-bench" / "tau_airline_gpt4o.csv"


def _expected_pass_hat_k(delivered: dict[str, list[bool]], k: int) -> float:
    """pass^k from its definition, independently of verigate: mean over tasks of C(c, k) / C(n, k)."""
    return sum(math.comb(sum(runs), k) / math.comb(len(runs), k) for runs in delivered.values()) / len(delivered)


def test_pass_hat_k_of_a_generated_suite_matches_its_definition(tmp_path: Path) -> None:
    rng = random.Random(11)
    delivered = {f"task-{number}": [rng.random() < rng.choice([0.1, 0.5, 0.9, 1.0]) for _ in range(4)]
                 for number in range(40)}
    runs = [run(task, f"{task}/{trial}", [], ok=ok) for task, trials in delivered.items()
            for trial, ok in enumerate(trials)]
    result = cli("grade", "--traces", str(write_traces(tmp_path / "suite.json", runs)), "--json")
    report = json.loads(result.stdout)
    assert [round(row["value"], 6) for row in report["pass_hat_k"]] == [
        round(_expected_pass_hat_k(delivered, k), 6) for k in (1, 2, 3, 4)]
    assert result.returncode == (3 if any(not all(trials) for trials in delivered.values()) else 0)


@pytest.mark.skipif(not TAU_BENCH.is_file(), reason=f"no τ-bench vector at {TAU_BENCH} (a plain clone); the "
                    "generated suite above checks pass^k against its definition")
def test_tau_bench_vector_reproduces_pass_hat_k(tmp_path: Path) -> None:
    """The golden τ-bench vector (50 tasks × 4 trials): pass^1..4 = 0.42 / 0.2733 / 0.22 / 0.20."""
    with TAU_BENCH.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    runs = [run(f"task-{row['task_id']}", f"{row['task_id']}/{row['trial']}", [], ok=float(row["reward"]) == 1.0)
            for row in rows]
    traces = write_traces(tmp_path / "tau.json", runs)
    result = cli("grade", "--traces", str(traces), "--json")
    assert result.returncode == 3, result.stderr  # flaky and failing tasks are a CI signal
    report = json.loads(result.stdout)
    assert [round(row["value"], 4) for row in report["pass_hat_k"]] == [0.42, 0.2733, 0.22, 0.2]
    assert all(row["tasks_counted"] == 50 and row["tasks_short"] == [] for row in report["pass_hat_k"])
    statuses = {task["status"] for task in report["tasks"]}
    assert statuses == {"reliable", "flaky", "failing"}
    assert set(report["summary"]["flaky_tasks"]).isdisjoint(report["summary"]["failing_tasks"])


def test_self_test_passes() -> None:
    result = cli("grade", "--self-test")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("PASS clean: clean-1=clean-pass; exit 0")
    assert lines[1].startswith("PASS corrupt: corrupt-1=corrupt-success; exit 3")
    assert lines[2].startswith("PASS flaky: flaky-1=clean-pass, flaky-2=clean-pass, flaky-3=fail; exit 3")


def test_transcript_with_every_report_and_github_annotations(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    out = {name: tmp_path / name for name in ("r.xml", "r.sarif", "r.html")}
    result = cli("grade", "--transcript", "examples/traces/7f3c2a9e-session.jsonl", "--task", "fix-checkout",
                 "--junit", str(out["r.xml"]), "--sarif", str(out["r.sarif"]), "--html", str(out["r.html"]),
                 cwd=REPO, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 3, result.stderr
    assert "7f3c2a9e-session" in result.stdout and "corrupt-success" in result.stdout
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert annotations[0].startswith("::error file=examples/traces/7f3c2a9e-session.jsonl,line=31,"
                                     "title=verigate forbidden_tool (high)::")
    assert [line.split(" ", 1)[0] for line in annotations] == ["::error", "::warning", "::warning"]
    assert "| 7f3c2a9e-session | fix-checkout | corrupt-success | 15 | 1 | 2 | 0 |" in summary.read_text()

    sarif = json.loads(out["r.sarif"].read_text())
    assert sarif["version"] == "2.1.0" and "sarif-2.1.0" in sarif["$schema"]
    results = sarif["runs"][0]["results"]

    def trace_line(item: dict[str, Any]) -> int:
        (trace,) = [where for where in item["locations"] + item.get("relatedLocations", [])
                    if where["message"]["text"] == "the step in the trace"]
        assert trace["physicalLocation"]["artifactLocation"] == {"uri": "examples/traces/7f3c2a9e-session.jsonl",
                                                                 "uriBaseId": "%SRCROOT%"}
        return int(trace["physicalLocation"]["region"]["startLine"])

    located = {(item["ruleId"], item["level"], trace_line(item)) for item in results}
    # the storm is flagged at its first failure (line 19), as the seed's grader does
    assert located == {("forbidden_tool", "error", 31), ("edited_without_read", "warning", 17),
                       ("retry_storm", "warning", 19)}
    edit = next(item for item in results if item["ruleId"] == "edited_without_read")
    # the edited file, relative to the session's project, is the primary location (code scanning shows it there)
    assert edit["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "src/receipt.py",
                                                                            "uriBaseId": "%SRCROOT%"}
    rule_ids = [rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert all(rule_ids[item["ruleIndex"]] == item["ruleId"] for item in results)

    junit = ElementTree.parse(out["r.xml"]).getroot()
    failures = [case.get("name") for case in junit.iter("testcase") if case.find("failure") is not None]
    assert failures == ["7f3c2a9e-session"]
    assert out["r.html"].read_text().startswith("<!DOCTYPE html>")


def test_exit_0_on_a_clean_run_and_json_shape(tmp_path: Path) -> None:
    traces = write_traces(tmp_path / "t.json", [
        run("t", "r1", [step("Read", file_path="a"), step("Edit", file_path="a")]),
        run("t", "r2", [step("Read", file_path="a")])])
    result = cli("grade", "--traces", str(traces), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["exit_code"] == 0 and report["summary"]["verdicts"]["clean-pass"] == 2
    assert report["judge"] == {"status": "disabled",
                               "reason": "disabled: judge.enabled is false in the config (nothing was called)"}
    assert report["config"]["verified"] is False
    assert report["tasks"][0]["pass_hat_k"] == {"1": 1.0, "2": 1.0}


@pytest.mark.parametrize(("args", "message"), [
    (["--audit", "examples/traces/audit.jsonl"], "--audit needs --task"),
    (["--traces", "nope.json"], "no such file"),
    (["--transcript", "src"], "not a regular file"),
    ([], "give --traces"),
    (["--traces", "examples/traces/traces.json", "--config", "examples/traces/missing.yaml"], "cannot read"),
])
def test_usage_and_unreadable_input_exit_2(args: list[str], message: str) -> None:
    result = cli("grade", *args, cwd=REPO)
    assert result.returncode == 2 and message in result.stderr


def test_broken_config_and_broken_traces_exit_2_naming_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "c.yaml"
    broken.write_text((REPO / "rules" / "trace-grader.config.yaml").read_text().replace("step_budget: 40",
                                                                                       "step_budget: many"))
    result = cli("grade", "--traces", str(REPO / "examples/traces/traces.json"), "--config", str(broken))
    assert result.returncode == 2
    line = next(number for number, text in enumerate(broken.read_text().splitlines(), 1)
                if text.startswith("step_budget:"))
    assert f"{broken}:{line} step_budget" in result.stderr
    bad = tmp_path / "t.json"
    bad.write_text('{"runs": [{"task": "t", "steps": [{"args": {}}]}]}')
    result = cli("grade", "--traces", str(bad), "--config", str(REPO / "rules" / "trace-grader.config.yaml"))
    assert result.returncode == 2 and str(bad) in result.stderr


def test_config_verify_flips_only_the_value_byte_for_byte(tmp_path: Path) -> None:
    original = (REPO / "rules" / "trace-grader.config.yaml").read_bytes()
    crlf = original.replace(b"\n", b"\r\n").replace(b"verified: false", b'verified:   false   # "quoted" note')
    target = tmp_path / "tg.yaml"
    target.write_bytes(crlf)
    result = cli("config", "verify", str(target))
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == crlf.replace(b"verified:   false", b"verified:   true", 1)
    again = cli("config", "verify", str(target))
    assert again.returncode == 0 and "already verified" in again.stdout
    assert target.read_bytes() == crlf.replace(b"verified:   false", b"verified:   true", 1)
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(original.replace(b"retry_threshold: 3", b"retry_threshold: -1"))
    refused = cli("config", "verify", str(broken))
    assert refused.returncode == 2 and "retry_threshold" in refused.stderr
    assert broken.read_bytes() == original.replace(b"retry_threshold: 3", b"retry_threshold: -1")

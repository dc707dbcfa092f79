"""``verigate grade --self-test``: grade the bundled clean / corrupt / flaky fixtures and compare."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from .. import _data
from ._config import TraceConfig, build_trace_config
from ._grade import grade
from ._model import GradeReport

__all__ = ["FIXTURES_NAME", "CaseResult", "run_self_test"]

FIXTURES_NAME = "trace-grader.fixtures.json"


@attrs.frozen
class CaseResult:
    name: str
    report: GradeReport
    mismatches: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.mismatches


def _mismatches(report: GradeReport, expect: dict[str, Any]) -> list[str]:
    found: list[str] = []
    verdicts = {result.run.run_id: result.verdict for result in report.runs}
    if verdicts != expect["verdicts"]:
        found.append(f"verdicts {verdicts} != expected {expect['verdicts']}")
    rules = sorted({flag.rule for result in report.runs for flag in result.flags})
    if rules != sorted(expect["rules"]):
        found.append(f"flagged rules {rules} != expected {sorted(expect['rules'])}")
    tasks = {task.task: task.status for task in report.tasks}
    if tasks != expect["tasks"]:
        found.append(f"task statuses {tasks} != expected {expect['tasks']}")
    if report.exit_code != expect["exit_code"]:
        found.append(f"exit code {report.exit_code} != expected {expect['exit_code']}")
    return found


def run_self_test(plugins: Sequence[object | str] = (), config: TraceConfig | None = None) -> list[CaseResult]:
    """Grade every bundled case through the real parser (written to a temporary traces.json), with the cases'
    own config or ``config`` (``verigate grade --self-test --config FILE``: does this adapter file still grade
    the clean / corrupt / flaky cases as the seed documents?)."""
    fixtures = json.loads(_data.read_text("rules", FIXTURES_NAME))
    if config is None:
        config = build_trace_config(fixtures["config"], f"rules/{FIXTURES_NAME}#config")
    results = []
    with tempfile.TemporaryDirectory(prefix="verigate-self-test-") as folder:
        for case in fixtures["cases"]:
            path = Path(folder) / f"{case['name']}.traces.json"
            path.write_text(json.dumps(case["traces"]), encoding="utf-8")
            report = grade(path, format="traces", config=config, plugins=plugins)
            results.append(CaseResult(case["name"], report, tuple(_mismatches(report, case["expect"]))))
    return results

"""Reports of a GradeReport: human text, JSON, JUnit XML, SARIF 2.1.0, GitHub annotations and step summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import attrs

from ._builtin import BUILTIN_RULES
from ._model import SEVERITIES, Flag, GradeReport, RunResult, Step
from ._redact import ensure_redacted

__all__ = [
    "NEIGHBOUR_STEPS",
    "StepSelection",
    "github_annotations",
    "github_summary",
    "render_junit",
    "render_sarif",
    "render_text",
    "select_steps",
    "to_json",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"high": "error", "medium": "warning", "low": "note"}
_GITHUB_COMMAND = {"high": "error", "medium": "warning", "low": "notice"}
_SEVERITY_ORDER = {severity: index for index, severity in enumerate(SEVERITIES)}


def _verdict_counts(report: GradeReport) -> dict[str, int]:
    counts = Counter(result.verdict for result in report.runs)
    return {verdict: counts.get(verdict, 0)
            for verdict in ("clean-pass", "pass-with-warnings", "corrupt-success", "fail")}


def _signals(report: GradeReport) -> list[str]:
    signals = []
    if report.corrupt_runs:
        signals.append("corrupt-success: " + ", ".join(result.run.run_id for result in report.corrupt_runs))
    if report.flaky_tasks:
        signals.append("flaky: " + ", ".join(f"{task.task} ({task.c}/{task.n})" for task in report.flaky_tasks))
    if report.failing_tasks:
        signals.append("failing: " + ", ".join(f"{task.task} ({task.c}/{task.n})" for task in report.failing_tasks))
    if report.judge_rejections:
        signals.append("judge rejected: " + ", ".join(result.run.run_id for result in report.judge_rejections))
    return signals


def _where(result: RunResult, flag: Flag) -> str:
    return f"{result.run.source}:{flag.line}" if flag.line is not None else result.run.source


def _file(flag: Flag) -> str:
    """" — file X" when the flagged step names a file (already shown relative, ``~/…`` or ``…/name``)."""
    return f" — file {flag.path}" if flag.path else ""


def config_line(report: GradeReport) -> str:
    """Which config graded the report, whether it is verified, and the keys that took their default."""
    defaults = f"; defaults used: {', '.join(report.config_defaults)}" if report.config_defaults else ""
    return f"{report.config_source} (verified: {'true' if report.config_verified else 'false'}{defaults})"


# ------------------------------------------------------------------------------------------------------ text


def render_text(report: GradeReport) -> str:
    """The human report: runs with verdicts and flags, tasks, pass^k, judge axis, notes and the outcome."""
    report = ensure_redacted(report)
    lines = [f"verigate grade: {len(report.runs)} run(s), {len(report.tasks)} task(s)",
             f"config: {config_line(report)}", ""]
    width = max([len(result.run.run_id) for result in report.runs] + [3])
    lines.append(f"{'RUN'.ljust(width)}  {'VERDICT':<19} {'STEPS':>6}  FLAGS")
    for result in report.runs:
        lines += run_lines(result, width, report.notes)
    lines += summary_lines(report)
    signals = _signals(report)
    lines += ["", f"exit {report.exit_code}: " + ("; ".join(signals) if signals else
                                                   "no corrupt success, no flaky or failing task")]
    return "\n".join(lines) + "\n"


def run_lines(result: RunResult, width: int = 0, shown_notes: tuple[str, ...] = ()) -> list[str]:
    """One run of the text report: its verdict line, its flags, its notes (but ``shown_notes``) and judge verdict
    (the streamed folder report prints these as each source is graded)."""
    run = result.run
    counts = Counter(flag.severity for flag in result.flags)
    summary = ", ".join(f"{counts[severity]} {severity}" for severity in SEVERITIES if counts[severity])
    sub = f"  (sub-agent of {run.parent})" if run.parent else ""
    partial = "  [partial]" if run.partial else ""
    lines = [f"{run.run_id.ljust(width)}  {result.verdict:<19} {run.step_count:>6}  {summary or '-'}{partial}{sub}"]
    for flag in sorted(result.flags, key=lambda item: (_SEVERITY_ORDER[item.severity], item.step or 0)):
        step = f"step {flag.step}" if flag.step is not None else "run"
        lines.append(f"    [{flag.severity}] {flag.rule} at {step} ({flag.tool}) {_where(result, flag)}: "
                     f"{flag.detail}{_file(flag)}")
    for note in run.notes:
        if note not in shown_notes:  # the report-wide notes are printed once, below
            lines.append(f"    note: {note}")
    if result.judge is not None:
        verdict = result.judge
        outcome = f"error {verdict.error}" if verdict.error else ("passed" if verdict.passed else "failed")
        lines.append(f"    judge: {outcome}" + (f" — misses: {', '.join(verdict.rubric_misses)}"
                                                  if verdict.rubric_misses else ""))
    return lines


def summary_lines(report: GradeReport) -> list[str]:
    """The text report after the runs: tasks, the suite's pass^k, the judge axis, warnings and notes."""
    lines: list[str] = []
    if report.tasks:
        lines += ["", "TASKS (pass^k per task; flaky: some runs failed, failing: all failed)"]
        for task in report.tasks:
            values = " ".join(f"k={k}:{value:.4f}" for k, value in enumerate(task.pass_hat_k, 1)) or "-"
            partial = f", {task.partial_runs} partial run(s) not counted" if task.partial_runs else ""
            lines.append(f"  {task.task}: n={task.n} c={task.c} {task.status.upper()}  pass^k {values}{partial}")
    if report.pass_hat_k:
        lines += ["", "pass^k over the suite (mean over tasks with at least k runs):"]
        for row in report.pass_hat_k:
            short = f"; {len(row.tasks_short)} task(s) with fewer than {row.k} runs not scored" if row.tasks_short \
                else ""
            lines.append(f"  pass^{row.k} = {row.value:.4f}   pass@{row.k} = {row.pass_at_k:.4f}   "
                         f"({row.tasks_counted} task(s){short})")
    lines += ["", f"judge axis: {report.judge.reason}"]
    if report.warnings:
        lines.append(f"warnings: {report.warnings} input line(s) skipped")
    if report.notes:
        lines += ["", "notes:"] + [f"  - {note}" for note in report.notes]
    return lines


# ------------------------------------------------------------------------------------------------------ JSON

#: which kept steps a report carries: every flagged step with its neighbours (what a reader needs), or all
StepSelection = Literal["flagged", "all"]
#: kept steps shown on each side of a flagged one, so that a reader sees what led to it and what came after
NEIGHBOUR_STEPS = 2


def select_steps(report: GradeReport, steps: StepSelection = "flagged") -> GradeReport:
    """``report`` with each run carrying only its flagged steps and :data:`NEIGHBOUR_STEPS` kept steps on each
    side of them (``"all"``: the report as it is). Grading, verdicts and flags are unchanged; ``step_count``
    still counts every step. Done before redaction, the steps left out are never redacted (the cost of a
    2,000-step report)."""
    if steps == "all":
        return report
    if steps != "flagged":
        raise ValueError(f"steps must be 'flagged' or 'all', not {steps!r}")
    results = []
    for result in report.runs:
        run = result.run
        flagged = {flag.step for flag in result.flags}
        positions = [index for index, step in enumerate(run.steps) if step.step in flagged]
        wanted = {near for index in positions
                  for near in range(max(index - NEIGHBOUR_STEPS, 0),
                                    min(index + NEIGHBOUR_STEPS + 1, len(run.steps)))}
        kept = tuple(step for index, step in enumerate(run.steps) if index in wanted)
        if len(kept) == len(run.steps):
            results.append(result)
            continue
        grader_note = f"showing {len(run.steps)} of {run.step_count} steps "  # _RunGrader's, now out of date
        notes = tuple(note for note in run.notes if not note.startswith(grader_note))
        notes = (*notes, f"showing {len(kept)} of {run.step_count} steps: the flagged ones and {NEIGHBOUR_STEPS} on "
                         "each side (all were checked; `--steps all` shows every kept step)")
        results.append(attrs.evolve(result, run=attrs.evolve(run, steps=kept, notes=notes)))
    return attrs.evolve(report, runs=tuple(results))



def _step_json(step: Step) -> dict[str, Any]:
    return {"step": step.step, "tool": step.tool, "args": dict(step.args), "observation": step.observation,
            "ok": step.ok, "line": step.line, "cascade": step.cascade}


def _flag_json(flag: Flag) -> dict[str, Any]:
    return {"rule": flag.rule, "severity": flag.severity, "step": flag.step, "tool": flag.tool,
            "detail": flag.detail, "line": flag.line, "path": flag.path}


def to_json(report: GradeReport, *, steps: bool = True) -> dict[str, Any]:
    """The whole report as JSON-ready data (``steps`` False leaves the kept steps out)."""
    report = ensure_redacted(report)
    runs = []
    for result in report.runs:
        run = result.run
        entry: dict[str, Any] = {
            "task": run.task, "run_id": run.run_id, "source": run.source, "verdict": result.verdict,
            "delivered": run.delivered, "delivered_forced": run.delivered_forced, "partial": run.partial,
            "parent": run.parent, "step_count": run.step_count, "steps_shown": len(run.steps),
            "warnings": run.warnings, "notes": list(run.notes), "flags": [_flag_json(flag) for flag in result.flags],
            "judge": None if result.judge is None else {
                "passed": result.judge.passed, "score": result.judge.score, "error": result.judge.error,
                "rubric_misses": list(result.judge.rubric_misses), "engine": result.judge.effective_engine
                or result.judge.engine},
        }
        if steps:
            entry["steps"] = [_step_json(step) for step in run.steps]
        runs.append(entry)
    return {
        "exit_code": report.exit_code,
        "config": {"source": report.config_source, "verified": report.config_verified,
                   "defaults": list(report.config_defaults)},
        "summary": {"runs": len(report.runs), "verdicts": _verdict_counts(report),
                    "corrupt_success": [result.run.run_id for result in report.corrupt_runs],
                    "flaky_tasks": [task.task for task in report.flaky_tasks],
                    "failing_tasks": [task.task for task in report.failing_tasks]},
        "runs": runs,
        "tasks": [{"task": task.task, "n": task.n, "c": task.c, "status": task.status,
                   "pass_hat_k": {str(k): value for k, value in enumerate(task.pass_hat_k, 1)},
                   "pass_at_k": {str(k): value for k, value in enumerate(task.pass_at_k, 1)},
                   "runs": list(task.run_ids), "partial_runs": task.partial_runs} for task in report.tasks],
        "pass_hat_k": [{"k": row.k, "value": row.value, "pass_at_k": row.pass_at_k,
                        "tasks_counted": row.tasks_counted, "tasks_short": list(row.tasks_short)}
                       for row in report.pass_hat_k],
        "judge": {"status": report.judge.status, "reason": report.judge.reason},
        "warnings": report.warnings,
        "notes": list(report.notes),
    }


# ----------------------------------------------------------------------------------------------------- JUnit


def render_junit(report: GradeReport) -> str:
    """JUnit XML: one testsuite per task, a testcase per run and one for the task's pass^k."""
    from xml.etree import ElementTree  # here, not at module level: only a JUnit report pays for the XML modules

    report = ensure_redacted(report)
    root = ElementTree.Element("testsuites", name="verigate grade")
    by_task: dict[str, list[RunResult]] = {}
    for result in report.runs:
        by_task.setdefault(result.run.task, []).append(result)
    tasks = {task.task: task for task in report.tasks}
    total = failures = 0
    for task_name, results in by_task.items():
        suite = ElementTree.SubElement(root, "testsuite", name=task_name)
        suite_failures = 0
        for result in results:
            case = ElementTree.SubElement(suite, "testcase", classname=task_name, name=result.run.run_id,
                                          file=result.run.source)
            flags = "\n".join(f"[{flag.severity}] {flag.rule} step {flag.step} ({flag.tool}) "
                              f"{_where(result, flag)}: {flag.detail}{_file(flag)}" for flag in result.flags)
            if result.verdict in ("corrupt-success", "fail"):
                suite_failures += 1
                failure = ElementTree.SubElement(case, "failure", type=result.verdict,
                                                 message=f"{result.run.run_id}: {result.verdict}")
                failure.text = flags or result.verdict
            elif flags:
                ElementTree.SubElement(case, "system-out").text = f"{result.verdict}\n{flags}"
        task = tasks.get(task_name)
        if task is not None:
            case = ElementTree.SubElement(suite, "testcase", classname=task_name, name=f"pass^{task.n}")
            if task.status in ("flaky", "failing"):
                suite_failures += 1
                ElementTree.SubElement(case, "failure", type=task.status,
                                       message=f"{task_name} is {task.status}: {task.c} of {task.n} runs delivered")
        cases = len(suite.findall("testcase"))
        suite.set("tests", str(cases))
        suite.set("failures", str(suite_failures))
        total += cases
        failures += suite_failures
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


# ----------------------------------------------------------------------------------------------------- SARIF


#: the base of project-relative URIs; its absolute location is left out (it would name the user's folders)
SRCROOT = "%SRCROOT%"
HOME_BASE = "HOME"
_BASES = {SRCROOT: "the project root: the working directory the run was recorded in, or the one verigate ran in",
          HOME_BASE: "the home folder of the user who ran verigate"}


def _artifact(path: str) -> dict[str, Any]:
    """An artifactLocation for a path as reports show it: relative to the project (``uriBaseId`` %SRCROOT%),
    ``~/…`` (base HOME), or whatever the redactors left (a redaction marker or ``…/name``: no base)."""
    if path.startswith("~/"):
        return {"uri": quote(path[2:]), "uriBaseId": HOME_BASE}
    if path.startswith(("/", "[", "…", "~")) or Path(path).is_absolute():
        return {"uri": quote(path)}
    return {"uri": quote(path), "uriBaseId": SRCROOT}


def _locations(result: RunResult, flag: Flag) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Where a flag points: the file the flagged step names when it is in the project (code scanning shows it
    there), with the trace line as a related location; otherwise the trace line itself."""
    trace: dict[str, Any] = {"artifactLocation": _artifact(result.run.source)}
    if flag.line is not None:
        trace["region"] = {"startLine": flag.line}
    trace_location = {"physicalLocation": trace, "message": {"text": "the step in the trace"}}
    if flag.path is not None:
        named = _artifact(flag.path)
        file_location = {"physicalLocation": {"artifactLocation": named},
                         "message": {"text": f"the file {flag.tool} names"}}
        if named.get("uriBaseId") == SRCROOT:
            return [file_location], [trace_location]
        return [trace_location], [file_location]
    return [trace_location], []


def render_sarif(report: GradeReport, *, rule_descriptions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """SARIF 2.1.0: one result per flag, located at the transcript line of its step."""
    report = ensure_redacted(report)
    descriptions = {rule.id: rule.description for rule in BUILTIN_RULES}
    descriptions.update(rule_descriptions or {})
    used = sorted({flag.rule for result in report.runs for flag in result.flags} | set(descriptions))
    severity_of = {flag.rule: flag.severity for result in report.runs for flag in result.flags}
    severity_of.update({rule.id: rule.severity for rule in BUILTIN_RULES})
    rules = [{"id": rule_id, "shortDescription": {"text": descriptions.get(rule_id, rule_id)},
              "defaultConfiguration": {"level": _SARIF_LEVEL[severity_of.get(rule_id, "medium")]}}
             for rule_id in used]
    index = {rule_id: position for position, rule_id in enumerate(used)}
    results = []
    for result in report.runs:
        for flag in result.flags:
            locations, related = _locations(result, flag)
            entry: dict[str, Any] = {
                "ruleId": flag.rule, "ruleIndex": index[flag.rule], "level": _SARIF_LEVEL[flag.severity],
                "message": {"text": f"{result.run.run_id} step {flag.step} ({flag.tool}): {flag.detail}"
                                    f"{_file(flag)}"},
                "locations": locations,
                "properties": {"run_id": result.run.run_id, "task": result.run.task, "step": flag.step,
                               "tool": flag.tool, "severity": flag.severity, "verdict": result.verdict,
                               "source": result.run.source, "line": flag.line, "path": flag.path},
            }
            if related:
                entry["relatedLocations"] = related
            results.append(entry)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "verigate trace grader", "version": _version(), "rules": rules}},
        "originalUriBaseIds": {base: {"description": {"text": text}} for base, text in _BASES.items()},
        "results": results,
        "properties": {"exit_code": report.exit_code, "config_verified": report.config_verified,
                       "config_defaults": list(report.config_defaults)},
    }]}


def _version() -> str:
    from .._plugins import _core_version

    return _core_version()


# ---------------------------------------------------------------------------------------------------- GitHub


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(report: GradeReport) -> list[str]:
    """Workflow commands (``::error file=…,line=…::…``), high severity first, then flaky/failing tasks."""
    report = ensure_redacted(report)
    flagged = [(result, flag) for result in report.runs for flag in result.flags]
    flagged.sort(key=lambda item: (_SEVERITY_ORDER[item[1].severity], item[0].run.source, item[1].line or 0))
    commands = []
    for result, flag in flagged:
        in_project = flag.path is not None and _artifact(flag.path).get("uriBaseId") == SRCROOT
        if in_project:  # annotate the file the step names; the trace line goes into the message
            properties = [f"file={_escape_property(flag.path or '')}"]
        else:
            properties = [f"file={_escape_property(result.run.source)}"]
            if flag.line is not None:
                properties.append(f"line={flag.line}")
        properties.append(f"title={_escape_property(f'verigate {flag.rule} ({flag.severity})')}")
        message = (f"{result.run.run_id} step {flag.step} ({flag.tool}): {flag.detail}{_file(flag)} "
                   f"[{result.verdict}]" + (f" at {_where(result, flag)}" if in_project else ""))
        commands.append(f"::{_GITHUB_COMMAND[flag.severity]} {','.join(properties)}::{_escape_data(message)}")
    for task in (*report.flaky_tasks, *report.failing_tasks):
        title = _escape_property(f"verigate pass^k: {task.status}")
        commands.append(f"::error title={title}::{_escape_data(f'{task.task}: {task.c} of {task.n} runs delivered')}")
    return commands


def github_summary(report: GradeReport) -> str:
    """A Markdown summary table for ``$GITHUB_STEP_SUMMARY``."""
    report = ensure_redacted(report)
    counts = _verdict_counts(report)
    lines = ["## verigate grade", "",
             f"**exit {report.exit_code}** — " + ("; ".join(_signals(report)) or "no corrupt success, no flaky task"),
             "", "| run | task | verdict | steps | high | medium | low |", "|---|---|---|---:|---:|---:|---:|"]
    for result in report.runs:
        severity = Counter(flag.severity for flag in result.flags)
        lines.append(f"| {result.run.run_id} | {result.run.task} | {result.verdict} | {result.run.step_count} | "
                     f"{severity['high']} | {severity['medium']} | {severity['low']} |")
    if report.pass_hat_k:
        lines += ["", "| k | pass^k | pass@k | tasks |", "|---:|---:|---:|---:|"]
        lines += [f"| {row.k} | {row.value:.4f} | {row.pass_at_k:.4f} | {row.tasks_counted} |"
                  for row in report.pass_hat_k]
    lines += ["", " · ".join(f"{verdict}: {count}" for verdict, count in counts.items()),
              f"config verified: {str(report.config_verified).lower()} · judge axis: {report.judge.status}", ""]
    return "\n".join(lines)

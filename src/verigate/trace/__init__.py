"""The trace grader (seed 004): grade the path, not just the answer — corrupt success and pass^k.

Parsers turn traces.json, hook audit JSONL, Claude Code transcripts and Codex rollouts into one model
(:class:`Run` of :class:`Step`); trace rules (plug-ins through ``verigate_trace_rules``) flag steps; each run gets
a verdict (clean-pass · pass-with-warnings · corrupt-success · fail) and each task pass^k. Grading runs on the
original data; :func:`redact_report` then redacts the report once before any format writes it. See the README
section "Trace grader" for the CLI (``verigate grade``) and docs/trace-grader.md for the config's defaults (the
seed's), the named refinements and every difference from the seed's reference grader. :func:`grade_each` streams
many sources (``verigate grade --transcripts``) with running totals (:class:`GradeTally`); :class:`RayExecutor`
puts Ray tasks behind the ``concurrent.futures.Executor`` interface.
"""

from __future__ import annotations

from .. import _face

_TYPE_CHECKING = False  # type checkers read this constant as typing.TYPE_CHECKING
if _TYPE_CHECKING:
    from ._builtin import BUILTIN_RULES
    from ._config import (
        DEFAULTS,
        ForbiddenTool,
        Grounding,
        OrderOptions,
        RetryStormOptions,
        TraceConfig,
        TrajectoryJudgeConfig,
        build_trace_config,
        load_trace_config,
    )
    from ._grade import DEFAULT_KEEP_STEPS, Source, grade, grade_events, grade_many, rule_registry, run_verdict
    from ._grounding import normalize_path
    from ._html import render_html
    from ._judge import judge_axis, judge_trajectory
    from ._model import (
        Flag,
        GradeReport,
        JudgeAxis,
        PassHatK,
        Run,
        RunResult,
        RunVerdict,
        Severity,
        Step,
        TaskResult,
        TaskStatus,
    )
    from ._parsers import (
        Format,
        RunEnd,
        RunEvent,
        RunStart,
        RunStep,
        detect_format,
        load_runs,
        parse,
        parse_audit,
        parse_claude_code,
        parse_codex,
        parse_traces,
    )
    from ._passk import pass_at_k, pass_hat_k, suite_pass_hat_k, task_results
    from ._ray import RayExecutor
    from ._redact import PathDisplay, redact_report, report_egress
    from ._reports import github_annotations, github_summary, render_junit, render_sarif, render_text, to_json
    from ._rules import RuleChecker, TraceRule, error_signature
    from ._selftest import run_self_test
    from ._stream import GradeTally, SourceGrade, StreamSummary, expand_transcripts, grade_each

# Names load on first use: a grading process needs the grader, its models and the report formats it writes, not
# the judge axis (asyncio, the judge package) unless the config turns it on, nor the HTML, JUnit/SARIF (XML), Ray,
# folder or self-test modules (docs/trace-grader.md, "Start-up").
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_builtin": ("BUILTIN_RULES",),
    "_config": ("DEFAULTS", "ForbiddenTool", "Grounding", "OrderOptions", "RetryStormOptions", "TraceConfig",
        "TrajectoryJudgeConfig", "build_trace_config", "load_trace_config"),
    "_grade": ("DEFAULT_KEEP_STEPS", "Source", "grade", "grade_events", "grade_many", "rule_registry", "run_verdict"),
    "_grounding": ("normalize_path",),
    "_html": ("render_html",),
    "_judge": ("judge_axis", "judge_trajectory"),
    "_model": ("Flag", "GradeReport", "JudgeAxis", "PassHatK", "Run", "RunResult", "RunVerdict", "Severity", "Step",
        "TaskResult", "TaskStatus"),
    "_parsers": ("Format", "RunEnd", "RunEvent", "RunStart", "RunStep", "detect_format", "load_runs", "parse",
        "parse_audit", "parse_claude_code", "parse_codex", "parse_traces"),
    "_passk": ("pass_at_k", "pass_hat_k", "suite_pass_hat_k", "task_results"),
    "_ray": ("RayExecutor",),
    "_redact": ("PathDisplay", "redact_report", "report_egress"),
    "_reports": ("github_annotations", "github_summary", "render_junit", "render_sarif", "render_text", "to_json"),
    "_rules": ("RuleChecker", "TraceRule", "error_signature"),
    "_selftest": ("run_self_test",),
    "_stream": ("GradeTally", "SourceGrade", "StreamSummary", "expand_transcripts", "grade_each"),
}

__all__ = [
    "BUILTIN_RULES",
    "DEFAULTS",
    "DEFAULT_KEEP_STEPS",
    "Flag",
    "ForbiddenTool",
    "Format",
    "GradeReport",
    "GradeTally",
    "Grounding",
    "JudgeAxis",
    "OrderOptions",
    "PassHatK",
    "PathDisplay",
    "RayExecutor",
    "RetryStormOptions",
    "RuleChecker",
    "Run",
    "RunEnd",
    "RunEvent",
    "RunResult",
    "RunStart",
    "RunStep",
    "RunVerdict",
    "Severity",
    "Source",
    "SourceGrade",
    "Step",
    "StreamSummary",
    "TaskResult",
    "TaskStatus",
    "TraceConfig",
    "TraceRule",
    "TrajectoryJudgeConfig",
    "build_trace_config",
    "detect_format",
    "error_signature",
    "expand_transcripts",
    "github_annotations",
    "github_summary",
    "grade",
    "grade_each",
    "grade_events",
    "grade_many",
    "judge_axis",
    "judge_trajectory",
    "load_runs",
    "load_trace_config",
    "normalize_path",
    "parse",
    "parse_audit",
    "parse_claude_code",
    "parse_codex",
    "parse_traces",
    "pass_at_k",
    "pass_hat_k",
    "redact_report",
    "render_html",
    "render_junit",
    "render_sarif",
    "render_text",
    "report_egress",
    "rule_registry",
    "run_self_test",
    "run_verdict",
    "suite_pass_hat_k",
    "task_results",
    "to_json",
]

__getattr__, __dir__ = _face.lazy(globals())

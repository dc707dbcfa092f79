"""Grading: stream each source's steps through the rules, give every run a verdict, every task pass^k."""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import PluginError
from .._plugins import merged_registry
from .._telemetry import GRADE_MANY, GRADE_SOURCE, AttributeValue, Scope, Telemetry, telemetry_of
from ..transcripts import cut_text
from ._config import TraceConfig, load_trace_config
from ._judge import judge_axis
from ._manager import grading_manager, remembered
from ._model import Flag, GradeReport, Run, RunResult, RunVerdict, Step
from ._parsers import AUDIT_NOTE, TRANSCRIPT_NOTE, Format, RunEnd, RunEvent, RunStart, RunStep, parse
from ._passk import suite_pass_hat_k, task_results
from ._rules import RuleChecker, TraceRule

if TYPE_CHECKING:
    import concurrent.futures

    from .._config import RedactionConfig

__all__ = ["DEFAULT_KEEP_STEPS", "Source", "grade", "grade_events", "grade_many", "rule_registry", "run_verdict"]

#: steps kept per run for the report (all steps are checked; flagged steps are always kept)
DEFAULT_KEEP_STEPS = 2000
#: how much of an observation or a string argument a kept step carries into the report
KEPT_TEXT_CHARS = 2000
UNVERIFIED_NOTE = ("the config says verified: false — its thresholds are guesses (ASSUMPTION) not yet checked "
                   "against real traces")


@attrs.frozen
class Source:
    """One input: a path, its format (detected when None) and the task its runs belong to (None: their own)."""

    path: str
    format: Format | None = None
    task: str | None = None

    @classmethod
    def of(cls, value: str | Path | Source) -> Source:
        return value if isinstance(value, Source) else cls(str(value))


def rule_registry(plugins: Iterable[object | str] = ()) -> dict[str, TraceRule]:
    """Every trace rule from the built-in plug-in and the installed/given ones; a malformed rule is refused."""
    manager = grading_manager(plugins)
    store = remembered(manager, "trace_rules")  # checked once per manager; each caller gets its own dict
    if "rules" in store:
        return dict(store["rules"])
    rules = merged_registry(manager, "verigate_trace_rules")
    for rule_id, rule in rules.items():
        if not isinstance(rule, TraceRule) or rule.id != rule_id or rule.severity not in ("high", "medium", "low"):
            raise PluginError(f"trace rule {rule_id!r} is not a TraceRule (id, severity, description, checker())")
    store["rules"] = dict(sorted(rules.items()))
    return dict(store["rules"])


def run_verdict(delivered: bool | None, flags: Sequence[Flag]) -> RunVerdict:
    """fail (not delivered) · corrupt-success (delivered with a high flag) · pass-with-warnings · clean-pass.

    A run without a delivery signal (None, audit logs) is judged on its flags alone: it cannot be "fail".
    """
    if delivered is False:
        return "fail"
    if any(flag.severity == "high" for flag in flags):
        return "corrupt-success"
    return "pass-with-warnings" if flags else "clean-pass"


def _short(value: Any) -> Any:
    """``value`` with every string longer than ``KEPT_TEXT_CHARS`` cut (containers copied, other values kept)."""
    kind = type(value)
    if kind is str:
        return cut_text(value, KEPT_TEXT_CHARS)  # at a token boundary: the redactors never see half a secret
    if kind is dict:
        return {key: _short(item) for key, item in value.items()}
    if kind is list:
        return [_short(item) for item in value]
    return value


def _fits(value: Any) -> bool:
    """True when :func:`_short` would cut nothing in ``value``."""
    kind = type(value)
    if kind is str:
        return len(value) <= KEPT_TEXT_CHARS
    if kind is dict:
        return all(map(_fits, value.values()))
    if kind is list:
        return all(map(_fits, value))
    return True


def _kept(step: Step) -> Step:
    """The step as the report keeps it: long texts cut so that memory stays flat on huge transcripts (the step
    itself when nothing is long: most arguments are short, and copying them costs time on every kept step)."""
    args = step.args if _fits(step.args) else _short(step.args)
    observation = _short(step.observation)
    if args is step.args and observation is step.observation:
        return step
    return Step(step.step, step.tool, args, observation, step.ok, step.line, step.cwd, step.cascade)


#: steps past ``keep_steps`` remembered so that a flag on an earlier step keeps that step (retry_storm flags a
#: storm's first step when it crosses the threshold; excessive_steps flags the last step at the end)
LOOKBACK_STEPS = 64


class _RunGrader:
    """One run's rule checkers and the steps kept for the report."""

    def __init__(self, run: Run, checkers: list[tuple[TraceRule, RuleChecker]], keep_steps: int) -> None:
        self.run = run
        self.checkers = checkers
        #: each checker's bound ``step`` method, looked up once rather than on every step
        self.checks = [(rule, checker.step) for rule, checker in checkers]
        self.keep_steps = keep_steps
        self.steps: list[Step] = []
        self.flags: list[Flag] = []
        self.count = 0
        #: the latest steps not kept (past ``keep_steps``), oldest first
        self.recent: collections.deque[Step] = collections.deque(maxlen=LOOKBACK_STEPS)

    def add(self, step: Step) -> None:
        self.count += 1
        flags = self.flags
        before = len(flags)
        for rule, check in self.checks:
            found = check(step)
            if found:  # most steps flag nothing: keep the common path cheap
                flags.extend(_checked(rule, found))
        if self.count <= self.keep_steps:
            self.steps.append(_kept(step))
        else:
            self.recent.append(step)
            if len(flags) > before:
                self._keep_flagged(flags[before:])

    def _keep_flagged(self, new: list[Flag]) -> None:
        """Keep the recent steps that ``new`` flags (in order); the steps before the last one kept are dropped,
        so the kept steps stay in step order. A flagged step no longer remembered is left out of the report (its
        flag still names it)."""
        wanted = {flag.step for flag in new}
        recent = self.recent
        last = next((index for index in range(len(recent) - 1, -1, -1) if recent[index].step in wanted), None)
        if last is None:
            return
        for _ in range(last + 1):
            earlier = recent.popleft()
            if earlier.step in wanted:
                self.steps.append(_kept(earlier))

    def finish(self, end: RunEnd) -> RunResult:
        for rule, checker in self.checkers:
            found = _checked(rule, checker.finish())
            self.flags.extend(found)
            if found and self.count > self.keep_steps:
                self._keep_flagged(found)
        run = attrs.evolve(self.run, delivered=end.delivered, steps=tuple(self.steps), step_count=self.count,
                           warnings=end.warnings, notes=end.notes)
        if self.count > len(self.steps):
            run = attrs.evolve(run, notes=(*run.notes, f"showing {len(self.steps)} of {self.count} steps (the first "
                                                       f"{self.keep_steps} and every flagged one); all were checked"))
        flags = tuple(self.flags)
        return RunResult(run, flags, run_verdict(end.delivered, flags))


def _checked(rule: TraceRule, flags: Iterable[Flag]) -> list[Flag]:
    found = list(flags)
    for flag in found:
        if not isinstance(flag, Flag) or flag.rule != rule.id:
            raise PluginError(f"trace rule {rule.id!r} returned {flag!r}, not a Flag with its own rule id")
    return found


def grade_events(events: Iterable[RunEvent], config: TraceConfig, rules: Mapping[str, TraceRule], *,
                 keep_steps: int = DEFAULT_KEEP_STEPS) -> list[RunResult]:
    """Grade a stream of run events; each run's steps pass through its own rule checkers as they arrive."""
    open_runs: dict[str, _RunGrader] = {}
    results: list[RunResult] = []
    for event in events:
        if isinstance(event, RunStep):
            open_runs[event.key].add(event.step)
        elif isinstance(event, RunStart):
            checkers = []
            for rule in rules.values():
                checker = rule.checker(config, event.run)
                if checker is not None:
                    checkers.append((rule, checker))
            open_runs[event.key] = _RunGrader(event.run, checkers, keep_steps)
        else:
            results.append(open_runs.pop(event.key).finish(event))
    return results


def _grade_source(source: Source, config: TraceConfig, plugins: Sequence[object | str], keep_steps: int,
                  progress: Callable[[int], None] | None = None,
                  rules: Mapping[str, TraceRule] | None = None) -> list[RunResult]:
    """One source, start to end (a top-level function so that any executor can run it in another process).
    ``rules``: ``rule_registry(plugins)`` already resolved by a caller grading many sources in this process."""
    events = parse(source.path, source.format, task=source.task, progress=progress, subagents=config.subagents)
    return grade_events(events, config, rule_registry(plugins) if rules is None else rules, keep_steps=keep_steps)


def report_notes(runs: int, verified: bool, *, partial: bool, forced: bool, single_run_tasks: int) -> tuple[str, ...]:
    """The report-wide notes: nothing graded, an unverified config, partial (audit) runs, forced deliveries
    (transcripts), tasks with a single run (also those of the streamed folder report, from its running totals)."""
    notes = []
    if not runs:
        notes.append("no runs were found in the input: nothing was graded")
    if not verified:
        notes.append(UNVERIFIED_NOTE)
    if partial:
        notes.append(AUDIT_NOTE)
    if forced:
        notes.append(TRANSCRIPT_NOTE)
    if single_run_tasks:
        notes.append(f"{single_run_tasks} task(s) have a single run: pass^k for k > 1 is not defined for them")
    return tuple(notes)


def _report(results: Sequence[RunResult], config: TraceConfig, plugins: Sequence[object | str],
            judge_client: Any, redaction: RedactionConfig | None) -> GradeReport:
    axis, results = judge_axis(results, config, plugins=plugins, client=judge_client, redaction=redaction)
    tasks = task_results(results)
    notes = report_notes(len(results), config.verified, partial=any(result.run.partial for result in results),
                         forced=any(result.run.delivered_forced for result in results),
                         single_run_tasks=sum(1 for task in tasks if task.n == 1))
    samples = tuple(note for result in results for note in result.run.notes if "line(s) skipped" in note)
    return GradeReport(
        runs=tuple(results),
        tasks=tasks,
        pass_hat_k=suite_pass_hat_k(tasks),
        judge=axis,
        config_source=config.source,
        config_verified=config.verified,
        config_defaults=config.defaults_used,
        warnings=sum(result.run.warnings for result in results),
        warning_samples=samples,
        notes=notes,
    )


def grade_many(
    sources: Iterable[str | Path | Source],
    *,
    executor: concurrent.futures.Executor | None = None,
    config: TraceConfig | str | Path | Mapping[str, Any] | None = None,
    plugins: Sequence[object | str] = (),
    keep_steps: int = DEFAULT_KEEP_STEPS,
    judge_client: Any = None,
    progress: Callable[[int], None] | None = None,
    redaction: RedactionConfig | None = None,
) -> GradeReport:
    """Grade several sources into one report (pass^k across all of them).

    With an ``executor`` (any :class:`concurrent.futures.Executor`: a process pool, a Dask client's
    ``get_executor()``, or :class:`RayExecutor` for Ray, which has none of its own) each source is graded by
    ``executor.submit``; plug-ins must then be importable module names. Every run is kept for the report: for a
    folder of many files :func:`grade_each` streams instead. ``progress`` gets
    the bytes read so far (sequential grading only). ``judge_client`` is a model client object for the judge
    axis (used only when the config enables the axis and is verified); its requests pass the ``redaction`` packs
    (None: those of ./verigate.yaml). The report holds the original data (``redacted`` False): every report
    format redacts it first (see :func:`redact_report`, which the CLI calls once before writing any format).
    """
    trace_config = config if isinstance(config, TraceConfig) else load_trace_config(config)
    chosen = [Source.of(source) for source in sources]
    telemetry = telemetry_of(grading_manager(plugins))  # NULL without an observer plug-in
    results: list[RunResult] = []
    with telemetry.span(GRADE_MANY, {"sources": len(chosen),
                                     "executor": type(executor).__name__ if executor is not None else ""}) as span:
        if executor is None:
            done = 0

            def advance(offset: int) -> None:
                if progress is not None:
                    progress(done + offset)

            rules: dict[str, TraceRule] | None = None
            for index, source in enumerate(chosen):
                with telemetry.span(GRADE_SOURCE, _source_attributes(index, source)) as part:
                    rules = rule_registry(plugins) if rules is None else rules  # once per call, not per source
                    graded = _grade_source(source, trace_config, plugins, keep_steps, advance, rules)
                    part.set(runs=len(graded))
                results.extend(graded)
                done += Path(source.path).stat().st_size if Path(source.path).is_file() else 0
        else:
            futures = [executor.submit(_grade_source, source, trace_config, tuple(plugins), keep_steps)
                       for source in chosen]
            parts = [_tracked(telemetry, index, source, future)
                     for index, (source, future) in enumerate(zip(chosen, futures, strict=True))]
            for future, part in zip(futures, parts, strict=True):  # in submission order: scheduling does not matter
                graded = future.result()
                part.set(runs=len(graded))
                part.finish()  # ended before grade_many's span, whichever thread ends it first
                results.extend(graded)
        report = _report(results, trace_config, plugins, judge_client, redaction)
        span.set(runs=len(report.runs),
                 failed_runs=sum(run.verdict in ("fail", "corrupt-success") for run in report.runs))
    return report


def _source_attributes(index: int, source: Source) -> dict[str, AttributeValue]:
    # the path is left out: it may name a person
    return {"index": index, "format": source.format} if source.format else {"index": index}


def _tracked(telemetry: Telemetry, index: int, source: Source, future: concurrent.futures.Future[Any]) -> Scope:
    """A grade_source span from submission to the future's end (it runs elsewhere: not the current span)."""
    part = telemetry.span(GRADE_SOURCE, _source_attributes(index, source), current=False).start()

    def ended(done: concurrent.futures.Future[Any]) -> None:
        if done.cancelled():
            part.fail("cancelled")
            part.finish()
            return
        error = done.exception()
        if error is None:
            part.set(runs=len(done.result()))
        part.finish(error)

    future.add_done_callback(ended)
    return part


def grade(
    source: str | Path | Source,
    *,
    format: Format | None = None,
    task: str | None = None,
    config: TraceConfig | str | Path | Mapping[str, Any] | None = None,
    plugins: Sequence[object | str] = (),
    keep_steps: int = DEFAULT_KEEP_STEPS,
    judge_client: Any = None,
    redaction: RedactionConfig | None = None,
) -> GradeReport:
    """Grade one trace file (traces.json, audit JSONL, Claude Code transcript or Codex rollout)."""
    chosen = Source.of(source)
    if format is not None or task is not None:
        chosen = attrs.evolve(chosen, format=format or chosen.format, task=task or chosen.task)
    return grade_many([chosen], config=config, plugins=plugins, keep_steps=keep_steps, judge_client=judge_client,
                      redaction=redaction)

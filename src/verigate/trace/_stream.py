"""Streamed grading of many sources: memory flat in the number of files.

:func:`grade_each` grades sources one by one (or on any :class:`concurrent.futures.Executor`, a bounded number
in flight) and hands out each source's own report as soon as it and every source before it is graded, in the
order given, so the output does not depend on scheduling. :class:`GradeTally` keeps the suite's running
totals: verdict counts, and per task the runs with a delivery signal (n), those delivered (c) and the partial
ones, from which pass^k is computed at the end. No run is kept once its source has been reported; what grows
with the input is three integers per distinct task and a bounded sample of the names the summary cites.

:func:`expand_transcripts` expands the ``verigate grade --transcripts`` pattern (``**`` recursive, sorted, at most
:data:`MAX_TRANSCRIPT_FILES`; the walk is ``_walk``'s: str paths, printed as the pattern spelt them). A source that
cannot be read or parsed (an :class:`InputError`) is reported as an error of that source and counted; the
summary's exit code is then 2 — never a pass.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._config import RedactionConfig
from .._errors import InputError
from .._subagent_logs import is_workflow_journal, journal_session, session_of
from ._config import TraceConfig, load_trace_config
from ._grade import DEFAULT_KEEP_STEPS, Source, _grade_source, _report, report_notes, rule_registry
from ._model import GradeReport, JudgeAxis, RunResult, RunVerdict
from ._parsers import detect_format
from ._passk import suite_pass_hat_k, task_from_counts
from ._rules import TraceRule
from ._walk import matching_paths

__all__ = ["MAX_STREAMED_K", "MAX_TRANSCRIPT_FILES", "SUMMARY_SAMPLES", "GradeTally", "SourceGrade",
           "StreamSummary", "expand_transcripts", "grade_each"]

#: files one ``--transcripts`` pattern may match: the sorted list of paths is the one thing kept per file
#: (about 100 bytes each); a larger folder is graded in several runs, or with a narrower pattern
MAX_TRANSCRIPT_FILES = 100_000
#: pass^k of the streamed summary for k = 1..MAX_STREAMED_K at most (C(n, k) for a task with thousands of runs
#: has thousands of digits: every k up to n would cost seconds, and memory in the number of runs)
MAX_STREAMED_K = 10
#: run ids and error messages the summary cites by name (each source's own line names all of its own)
SUMMARY_SAMPLES = 20
_VERDICTS: tuple[RunVerdict, ...] = ("clean-pass", "pass-with-warnings", "corrupt-success", "fail")


def _attached(path: str, matched: set[str], formats: dict[str, str | None]) -> bool:
    """Whether a matched sub-agent log is graded with its session, which matched too: only a Claude Code session
    attaches its sub-agents (``subagents: true``; the seed's way skips them), and only one graded on its own —
    an attached sub-agent never attaches its own. Graded on its own as well, it would count twice; left out
    where nobody attaches it, it would be graded by no one."""
    session = session_of(path)
    if session is None or session not in matched or _attached(session, matched, formats):
        return False
    return _format_of(session, formats) == "claude-code"


def _bookkeeping(path: str, matched: set[str], formats: dict[str, str | None]) -> bool:
    """Whether a matched file is a Workflow journal that its matched Claude Code session accounts for: named and
    placed as one, and a journal by its own records (``is_workflow_journal``) — a transcript planted there under
    that name, or a file that cannot be read whole, is graded."""
    session = journal_session(path)
    if session is None or session not in matched or _attached(session, matched, formats):
        return False
    return _format_of(session, formats) == "claude-code" and is_workflow_journal(path)


def _format_of(path: str, formats: dict[str, str | None]) -> str | None:
    """``detect_format`` of ``path``, remembered; None for a file whose format cannot be told or read."""
    if path not in formats:
        try:
            formats[path] = detect_format(path)
        except InputError:
            formats[path] = None
    return formats[path]


def expand_transcripts(pattern: str, *, limit: int = MAX_TRANSCRIPT_FILES,
                       left_out: list[str] | None = None) -> list[str]:
    """The files ``pattern`` matches (``~`` expanded, ``**`` any depth, folders left out; see ``_walk``), sorted,
    without the sub-agent logs and Workflow journals a matched session accounts for (the journals are appended
    to ``left_out``); a pattern that matches nothing, or more than ``limit`` files, or walks a folder that cannot
    be listed, is an :class:`InputError` naming it."""
    expanded = os.path.expanduser(pattern)  # quoted on the command line: no shell expanded it
    found: list[str] = []
    for path in matching_paths(expanded):
        if not os.path.isfile(path):
            continue
        found.append(path)
        if len(found) > limit:
            raise InputError(f"more than {limit:,} files match (the bound MAX_TRANSCRIPT_FILES); grade a narrower "
                             "pattern, or the folder in parts", source=pattern)
    if not found:
        raise InputError("no file matches this pattern (quote it so that verigate, not the shell, expands it; "
                         "'**' matches any depth)", source=pattern)
    matched = set(found)
    formats: dict[str, str | None] = {}
    # a Workflow's journal.jsonl is its session's bookkeeping: with the session matched too, it is no run to grade
    # (graded, it was an unreadable transcript, and one made the whole folder's run exit 2)
    journals = [path for path in found if _bookkeeping(path, matched, formats)]
    if left_out is not None:
        left_out += sorted(journals)
    return sorted(path for path in set(found) - set(journals) if not _attached(path, matched, formats))


@attrs.frozen
class SourceGrade:
    """One source, graded: its own report (judged, not yet redacted), or why it could not be graded."""

    source: Source
    report: GradeReport | None
    #: the InputError's message (a damaged, unreadable or unrecognised file): counted, never a pass
    error: str | None = None


def _grade_or_error(source: Source, config: TraceConfig, plugins: Sequence[object | str],
                    keep_steps: int, rules: Mapping[str, TraceRule] | None = None,
                    ) -> tuple[list[RunResult], str | None]:
    """A top-level function an executor can run anywhere: an input error comes back as text (exception classes
    with keyword arguments do not survive every executor's pickling); any other exception propagates.
    ``rules``: the trace rules already resolved in this process (None: resolved here)."""
    try:
        return _grade_source(source, config, plugins, keep_steps, rules=rules), None
    except InputError as exc:
        return [], str(exc)
    except OSError as exc:  # the file vanished or became unreadable after the glob
        return [], str(InputError(f"cannot read: {exc.strerror or exc}", source=source.path))


def grade_each(
    sources: Iterable[str | Path | Source],
    *,
    executor: concurrent.futures.Executor | None = None,
    in_flight: int = 8,
    config: TraceConfig | str | Path | Mapping[str, Any] | None = None,
    plugins: Sequence[object | str] = (),
    keep_steps: int = DEFAULT_KEEP_STEPS,
    judge_client: Any = None,
    redaction: RedactionConfig | None = None,
) -> Iterator[SourceGrade]:
    """Each source's report, in the order given, as soon as it and those before it are graded.

    With an ``executor`` at most ``in_flight`` sources are submitted and not yet handed out (so neither the
    futures nor their results pile up); plug-ins must then be importable module names. The judge axis (when
    the config enables it and is verified) runs here, one source at a time, as in :func:`grade_many`.
    """
    trace_config = config if isinstance(config, TraceConfig) else load_trace_config(config)
    chosen = (Source.of(source) for source in sources)
    if in_flight < 1:
        raise ValueError(f"in_flight must be at least 1, not {in_flight}")

    def done(source: Source, results: list[RunResult], error: str | None) -> SourceGrade:
        if error is not None:
            return SourceGrade(source, None, error)
        return SourceGrade(source, _report(results, trace_config, plugins, judge_client, redaction))

    if executor is None:
        rules: dict[str, TraceRule] | None = None
        for source in chosen:
            rules = rule_registry(plugins) if rules is None else rules  # per-process set-up: once, not per file
            yield done(source, *_grade_or_error(source, trace_config, plugins, keep_steps, rules))
        return
    pending: collections.deque[tuple[Source, concurrent.futures.Future[tuple[list[RunResult], str | None]]]]
    pending = collections.deque()
    try:
        for source in chosen:
            pending.append((source, executor.submit(_grade_or_error, source, trace_config, tuple(plugins),
                                                    keep_steps)))
            if len(pending) >= in_flight:
                first, future = pending.popleft()
                yield done(first, *future.result())
        while pending:
            first, future = pending.popleft()
            yield done(first, *future.result())
    finally:
        for _, future in pending:  # stopped early (an error, a closed generator): nothing left running for us
            future.cancel()


@attrs.frozen
class StreamSummary:
    """The suite's outcome from running totals. ``report`` has no runs (they were handed out one source at a
    time): its tasks (without run ids), pass^k, judge axis, config, warnings and notes are the suite's."""

    files: int
    errors: int
    error_samples: tuple[str, ...]
    runs: int
    verdicts: Mapping[str, int]
    corrupt: int
    corrupt_samples: tuple[str, ...]
    judge_rejections: int
    judge_rejection_samples: tuple[str, ...]
    report: GradeReport

    @property
    def exit_code(self) -> int:
        """2 when a source could not be graded (never a pass); else 3 on any corrupt-success run, flaky or failing
        task or judge rejection; else 0."""
        if self.errors:
            return 2
        report = self.report
        return 3 if self.corrupt or self.judge_rejections or report.flaky_tasks or report.failing_tasks else 0


class GradeTally:
    """Running totals over :class:`SourceGrade` values: what the summary needs, nothing per run."""

    def __init__(self, config: TraceConfig) -> None:
        self.config = config
        self.files = self.errors = self.runs = self.corrupt = self.rejections = self.warnings = 0
        self.error_samples: list[str] = []
        self.corrupt_samples: list[str] = []
        self.rejection_samples: list[str] = []
        self.verdicts: collections.Counter[str] = collections.Counter()
        #: task -> [n, c, partial]: runs with a delivery signal, delivered ones, runs without a signal
        self.tasks: dict[str, list[int]] = {}
        self.partial = self.forced = False
        self.judge: JudgeAxis | None = None

    def add(self, graded: SourceGrade) -> None:
        self.files += 1
        if graded.report is None:
            self.errors += 1
            if len(self.error_samples) < SUMMARY_SAMPLES:
                self.error_samples.append(graded.error or graded.source.path)
            return
        report = graded.report
        self.judge = self.judge or report.judge
        self.warnings += report.warnings
        for result in report.runs:
            self._run(result)

    def _run(self, result: RunResult) -> None:
        run = result.run
        self.runs += 1
        self.verdicts[result.verdict] += 1
        self.partial = self.partial or run.partial
        self.forced = self.forced or run.delivered_forced
        if result.verdict == "corrupt-success":
            self.corrupt += 1
            _sample(self.corrupt_samples, run.run_id)
        if result.judge is not None and not result.judge.passed:
            self.rejections += 1
            _sample(self.rejection_samples, run.run_id)
        if run.parent is not None:
            return  # a sub-agent is part of its parent's run, not a trial of the task (as task_results says)
        counts = self.tasks.setdefault(run.task, [0, 0, 0])
        if run.delivered is None:
            counts[2] += 1
        else:
            counts[0] += 1
            counts[1] += run.delivered

    def summary(self) -> StreamSummary:
        tasks = tuple(task_from_counts(task, n, c, (), partial, max_k=MAX_STREAMED_K)
                      for task, (n, c, partial) in self.tasks.items())
        config = self.config
        notes = report_notes(self.runs, config.verified, partial=self.partial, forced=self.forced,
                             single_run_tasks=sum(1 for task in tasks if task.n == 1))
        judge = self.judge or JudgeAxis("disabled", "no source was graded")
        report = GradeReport(runs=(), tasks=tasks, pass_hat_k=suite_pass_hat_k(tasks, max_k=MAX_STREAMED_K),
                             judge=judge, config_source=config.source, config_verified=config.verified,
                             config_defaults=config.defaults_used, warnings=self.warnings, notes=notes)
        return StreamSummary(self.files, self.errors, tuple(self.error_samples), self.runs,
                             {verdict: self.verdicts.get(verdict, 0) for verdict in _VERDICTS}, self.corrupt,
                             tuple(self.corrupt_samples), self.rejections, tuple(self.rejection_samples), report)


def _sample(samples: list[str], name: str) -> None:
    if len(samples) < SUMMARY_SAMPLES:
        samples.append(name)

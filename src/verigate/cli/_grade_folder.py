"""``verigate grade --transcripts 'GLOB'``: grade a folder of sessions, streaming each source's result.

Each file (format detected) is graded with ``--jobs N`` local processes or on a Dask scheduler
(``--scheduler tcp://…``, the optional extra ``dask``); results come out in sorted path order as soon as a file and
those before it are graded: text lines, or with ``--json`` one JSON object per line (``"type": "source"`` or
``"error"``, then one ``"summary"``). Nothing per run is kept (see ``verigate.trace._stream``), so memory stays flat
in the number of files. Exit codes as ``verigate grade``: 0, 3 (a CI signal), 2 when any file could not be graded.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._errors import InputError
from ._grade import _ProgressBar

if TYPE_CHECKING:
    from ..redact import Egress
    from ..trace._stream import SourceGrade, StreamSummary

#: sources submitted and not yet reported, per worker: keeps every worker busy without piling results up
IN_FLIGHT_PER_WORKER = 2
#: how long to wait for a Dask scheduler to answer
SCHEDULER_TIMEOUT_S = 30


class _FileBar(_ProgressBar):
    """The progress bar in files rather than megabytes."""

    def amount(self, done: int) -> str:
        return f"{done:,}/{self.total:,} files"


def refuse(args: argparse.Namespace) -> str | None:
    """Why these options cannot go with ``--transcripts`` (None: they can)."""
    if args.traces or args.audit or args.transcript or args.codex:
        return "--transcripts grades a folder on its own; give the other inputs in a separate run"
    if args.junit or args.sarif or args.html:
        return ("--transcripts streams its results: --junit, --sarif and --html need the whole report (grade the "
                "files with --transcript/--codex for those)")
    if args.scheduler and args.jobs != 1:
        return "--scheduler runs on the cluster's workers: --jobs is for local processes"
    return None


@contextlib.contextmanager
def _executor(args: argparse.Namespace) -> Iterator[tuple[concurrent.futures.Executor | None, int]]:
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError as exc:
            raise InputError("--scheduler needs Dask: pip install 'verigate-agents[dask]' (the optional extra "
                             "'dask')") from exc
        try:
            client = Client(args.scheduler, timeout=SCHEDULER_TIMEOUT_S,  # type: ignore[no-untyped-call]
                            set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler: {exc}", source=args.scheduler) from exc
        with client:
            workers = max(sum(client.nthreads().values()), 1)  # type: ignore[no-untyped-call]
            executor: concurrent.futures.Executor = client.get_executor()  # type: ignore[no-untyped-call]
            yield executor, workers * IN_FLIGHT_PER_WORKER
    elif args.jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            yield pool, args.jobs * IN_FLIGHT_PER_WORKER
    else:
        yield None, 1


def main(args: argparse.Namespace) -> int:
    from .._config import load_config
    from ..trace import DEFAULT_KEEP_STEPS, PathDisplay, Source, load_trace_config, report_egress
    from ..trace._stream import GradeTally, expand_transcripts, grade_each

    journals: list[str] = []
    paths = expand_transcripts(args.transcripts, left_out=journals)
    if journals:  # said, never silent: a file left out of a grade must be one nobody needs graded
        print(f"verigate grade: {len(journals)} Workflow journal(s) left out, each its session's bookkeeping "
              "(no transcript)", file=sys.stderr)
    config = load_trace_config(args.config)
    redaction = load_config().redaction  # the packs of ./verigate.yaml (a broken file is an error, exit 2)
    egress = report_egress(redaction, args.plugin)
    keep = DEFAULT_KEEP_STEPS if args.keep_steps is None else args.keep_steps
    bar = _FileBar(len(paths), sys.stderr) if sys.stderr.isatty() else None
    tally = GradeTally(config)
    out = _Output(args, egress, PathDisplay.here(), sys.stdout)
    out.start(len(paths))
    try:
        with _executor(args) as (executor, in_flight):
            # absolute: a worker (another process, another host) may run in another folder; the reports show
            # the paths relative again
            sources = (Source(str(Path(path).absolute()), None, args.task) for path in paths)
            for graded in grade_each(sources, executor=executor, in_flight=in_flight, config=config,
                                     plugins=args.plugin, keep_steps=keep, redaction=redaction):
                tally.add(graded)
                if bar is not None:
                    bar.clear()
                out.source(graded)
                if bar is not None:
                    bar(tally.files)
    finally:
        if bar is not None:
            bar.close()
    summary = tally.summary()
    out.summary(summary)
    if summary.errors:
        first = summary.error_samples[0] if summary.error_samples else ""
        print(f"verigate grade: {summary.errors} of {summary.files} file(s) could not be graded (first: "
              f"{out.text(first)})", file=sys.stderr)
    return summary.exit_code


class _Output:
    """Writes each source as it comes (redacted first), then the summary, as text or JSON lines."""

    def __init__(self, args: argparse.Namespace, egress: Egress, paths: Any, stream: TextIO) -> None:
        self.args = args
        self.egress = egress
        self.paths = paths
        self.stream = stream
        self.github = os.environ.get("GITHUB_ACTIONS") == "true"

    def text(self, value: str) -> str:
        return str(self.egress.text(self.paths.text(value)).text)

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()  # a reader of the stream sees each source when it is done

    def start(self, files: int) -> None:
        if not self.args.json:
            self._write(f"verigate grade: {files:,} file(s) matching {self.text(self.args.transcripts)}")

    def source(self, graded: SourceGrade) -> None:
        from ..trace import github_annotations, redact_report, to_json
        from ..trace._reports import run_lines, select_steps

        if graded.report is None:
            error = self.text(graded.error or "")
            source = self.text(self.paths.file(graded.source.path))
            if self.args.json:
                self._write(json.dumps({"type": "error", "source": source, "error": error}, ensure_ascii=False))
            else:
                self._write(f"ERROR {error}")
            return
        report = redact_report(select_steps(graded.report, self.args.steps), self.egress)
        if self.args.json:
            runs = to_json(report)["runs"]
            source = self.text(self.paths.file(graded.source.path))
            self._write(json.dumps({"type": "source", "source": source, "runs": runs}, ensure_ascii=False))
        else:
            for result in report.runs:
                for line in run_lines(result, 0, report.notes):
                    self._write(line)
        if self.github:  # the flags of this source; the task signals come with the summary
            from attrs import evolve

            for command in github_annotations(evolve(report, tasks=())):
                self._write(command)

    def summary(self, summary: StreamSummary) -> None:
        from ..trace import github_annotations, redact_report, to_json
        from ..trace._reports import config_line, summary_lines

        report = redact_report(summary.report, self.egress)
        corrupt = list(map(self.text, summary.corrupt_samples))
        rejected = list(map(self.text, summary.judge_rejection_samples))
        errors = list(map(self.text, summary.error_samples))
        if self.args.json:
            whole = to_json(report)
            for task in whole["tasks"]:
                del task["runs"]  # not kept: each source's line names its runs
            self._write(json.dumps({
                "type": "summary", "exit_code": summary.exit_code, "files": summary.files,
                "errors": summary.errors, "error_samples": errors, "config": whole["config"],
                "summary": {"runs": summary.runs, "verdicts": dict(summary.verdicts),
                            "corrupt_success": summary.corrupt, "corrupt_success_samples": corrupt,
                            "judge_rejections": summary.judge_rejections, "judge_rejection_samples": rejected,
                            "flaky_tasks": whole["summary"]["flaky_tasks"],
                            "failing_tasks": whole["summary"]["failing_tasks"]},
                "tasks": whole["tasks"], "pass_hat_k": whole["pass_hat_k"], "judge": whole["judge"],
                "warnings": whole["warnings"], "notes": whole["notes"]}, ensure_ascii=False))
        else:
            counts = " · ".join(f"{verdict}: {count}" for verdict, count in summary.verdicts.items())
            lines = ["", f"verigate grade: {summary.files:,} file(s), {summary.errors:,} could not be graded; "
                         f"{summary.runs:,} run(s), {len(report.tasks):,} task(s)",
                     f"config: {config_line(report)}", f"verdicts: {counts}", *summary_lines(report)]
            signals = _signals(summary, report, corrupt, rejected)
            outcome = "; ".join(signals) if signals else "no corrupt success, no flaky or failing task"
            lines += ["", f"exit {summary.exit_code}: {outcome}"]
            for line in lines:
                self._write(line)
        if self.github:
            for command in github_annotations(report):  # flaky and failing tasks (the summary has no runs)
                self._write(command)


def _signals(summary: StreamSummary, report: Any, corrupt: list[str], rejected: list[str]) -> list[str]:
    def named(count: int, names: list[str]) -> str:
        more = f", … ({count - len(names)} more)" if count > len(names) else ""
        return ", ".join(names) + more

    signals = []
    if summary.errors:
        signals.append(f"could not grade {summary.errors} file(s) (never a pass)")
    if summary.corrupt:
        signals.append(f"corrupt-success: {named(summary.corrupt, corrupt)}")
    if report.flaky_tasks:
        signals.append("flaky: " + ", ".join(f"{task.task} ({task.c}/{task.n})" for task in report.flaky_tasks))
    if report.failing_tasks:
        signals.append("failing: " + ", ".join(f"{task.task} ({task.c}/{task.n})" for task in report.failing_tasks))
    if summary.judge_rejections:
        signals.append(f"judge rejected: {named(summary.judge_rejections, rejected)}")
    return signals

"""``verigate grade``: grade agent trajectories — exit 0 ok · 3 corrupt success, flaky or failing task · 2 error."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .._errors import InputError

if TYPE_CHECKING:
    from ..trace import Source

#: inputs larger than this get a progress bar (on a terminal only)
PROGRESS_MIN_BYTES = 4 * 1024 * 1024


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verigate grade", description=__doc__,
        epilog="Exit 0: every run delivered without a high-severity flag. Exit 3 (a CI signal): a corrupt-success "
               "run, a flaky or failing task, or a judge rejection. Exit 2: usage or unreadable input.")
    inputs = parser.add_argument_group("inputs (repeat an option to grade several files together)")
    inputs.add_argument("--traces", action="append", default=[], metavar="FILE", help="canonical traces.json")
    inputs.add_argument("--audit", action="append", default=[], metavar="FILE",
                        help="hook audit JSONL (one partial run per session_id; needs --task)")
    inputs.add_argument("--transcript", action="append", default=[], metavar="FILE",
                        help="Claude Code session transcript (sub-agent files beside it are attached)")
    inputs.add_argument("--codex", action="append", default=[], metavar="FILE", help="Codex CLI rollout JSONL")
    inputs.add_argument("--transcripts", metavar="GLOB", help="grade every file this pattern matches (quoted: "
                        "verigate expands it, '**' any depth), each format detected, results streamed as each file is "
                        "graded; alone, without --junit/--sarif/--html (see docs/trace-grader.md)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="with --transcripts: grade on this Dask scheduler "
                        "(tcp://host:8786; needs the extra 'dask')")
    parser.add_argument("--task", help="the task audit/transcript/rollout runs belong to (for pass^k)")
    parser.add_argument("--config", type=Path, help="trace-grader config (default: the shipped one, unverified); "
                        "a missing key takes its documented default (the seed's), listed in the report's config")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML")
    parser.add_argument("--sarif", type=Path, metavar="FILE", help="also write SARIF 2.1.0")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML report")
    parser.add_argument("--self-test", action="store_true", help="grade the bundled clean / corrupt / flaky cases "
                        "(with --config: under that config instead of the cases' own)")
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="also load this importable module as a plug-in (trace rules)")
    parser.add_argument("--jobs", type=int, default=1, help="grade files in this many processes (default 1)")
    parser.add_argument("--keep-steps", type=int, default=None, metavar="N",
                        help="steps kept per run in the report (all are checked; flagged ones always kept)")
    parser.add_argument("--steps", choices=("flagged", "all"), default="flagged",
                        help="steps the reports carry: each flagged step with its neighbours (default), or every "
                        "kept step (see --keep-steps)")
    return parser


class _ProgressBar:
    """A one-line progress bar on a terminal's stderr, redrawn at most ten times a second."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.last = 0.0

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        fraction = min(done / self.total, 1.0) if self.total else 1.0
        filled = int(fraction * 30)
        self.stream.write(f"\rgrading [{'#' * filled}{'-' * (30 - filled)}] {fraction:6.1%} {self.amount(done)}")
        self.stream.flush()

    def amount(self, done: int) -> str:
        return f"{done / 1e6:,.0f}/{self.total / 1e6:,.0f} MB"

    def clear(self) -> None:
        """Wipe the bar (before other output reaches the same terminal); the next call draws it again."""
        self.close()
        self.last = 0.0

    def close(self) -> None:
        self.stream.write("\r" + " " * 72 + "\r")
        self.stream.flush()


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write report: {exc.strerror or exc}", source=str(path)) from exc


def _self_test(args: argparse.Namespace) -> int:
    from ..trace import load_trace_config, redact_report, report_egress, run_self_test, to_json

    results = run_self_test(args.plugin, None if args.config is None else load_trace_config(args.config))
    egress = report_egress(None, args.plugin)
    reports = [redact_report(case.report, egress) for case in results]  # what is printed passes the redactors
    if args.json:
        print(json.dumps([{"case": case.name, "passed": case.passed, "mismatches": list(case.mismatches),
                           "report": to_json(report, steps=False)}
                          for case, report in zip(results, reports, strict=True)], indent=2))
    else:
        for case, report in zip(results, reports, strict=True):
            verdicts = ", ".join(f"{result.run.run_id}={result.verdict}" for result in report.runs)
            status = "PASS" if case.passed else "FAIL"
            print(f"{status} {case.name}: {verdicts}; exit {report.exit_code}")
            for mismatch in case.mismatches:
                print(f"     {mismatch}")
    return 0 if all(case.passed for case in results) else 1


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.self_test:
        return _self_test(args)
    if args.transcripts is not None or args.scheduler:
        return _folder(parser, args)
    from ..trace import Source

    sources = ([Source(path, "traces") for path in args.traces]  # traces.json names its own tasks
               + [Source(path, "audit", args.task) for path in args.audit]
               + [Source(path, "claude-code", args.task) for path in args.transcript]
               + [Source(path, "codex", args.task) for path in args.codex])
    if not sources:
        parser.print_usage(sys.stderr)
        print("verigate grade: give --traces, --audit, --transcript or --codex (or --self-test)", file=sys.stderr)
        return 2
    if args.audit and not args.task:
        print("verigate grade: --audit needs --task (the task its runs belong to, for pass^k)", file=sys.stderr)
        return 2
    if args.jobs < 1 or (args.keep_steps is not None and args.keep_steps < 0):
        print("verigate grade: --jobs must be at least 1 and --keep-steps not negative", file=sys.stderr)
        return 2
    for source in sources:
        path = Path(source.path)
        if not path.is_file():  # a folder, a device, a pipe: the graders read files (a pipe through the API)
            raise InputError("not a regular file" if path.exists() else "no such file", source=source.path)
    return _grade(args, sources)


def _folder(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import _grade_folder

    problem = "--scheduler grades a --transcripts pattern" if args.transcripts is None else \
        _grade_folder.refuse(args)
    if problem is None and (args.jobs < 1 or (args.keep_steps is not None and args.keep_steps < 0)):
        problem = "--jobs must be at least 1 and --keep-steps not negative"
    if problem is not None:
        parser.print_usage(sys.stderr)
        print(f"verigate grade: {problem}", file=sys.stderr)
        return 2
    return _grade_folder.main(args)


def _grade(args: argparse.Namespace, chosen: list[Source]) -> int:
    from .._config import load_config
    from ..trace import (
        DEFAULT_KEEP_STEPS,
        github_annotations,
        github_summary,
        grade_many,
        load_trace_config,
        redact_report,
        render_junit,
        render_sarif,
        render_text,
        report_egress,
        to_json,
    )
    from ..trace._reports import select_steps

    config = load_trace_config(args.config)
    redaction = load_config().redaction  # the packs of ./verigate.yaml (a broken file is an error, exit 2)
    total = sum(Path(source.path).stat().st_size for source in chosen)
    bar = _ProgressBar(total, sys.stderr) if sys.stderr.isatty() and total > PROGRESS_MIN_BYTES and args.jobs == 1 \
        else None
    progress: Callable[[int], None] | None = bar
    keep = DEFAULT_KEEP_STEPS if args.keep_steps is None else args.keep_steps
    try:
        if args.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=args.jobs) as executor:
                report = grade_many(chosen, executor=executor, config=config, plugins=args.plugin, keep_steps=keep,
                                    redaction=redaction)
        else:
            report = grade_many(chosen, config=config, plugins=args.plugin, keep_steps=keep, progress=progress,
                                redaction=redaction)
    finally:
        if bar is not None:
            bar.close()
    # graded on the original data; from here on only the redacted report exists: every format below writes it.
    # The steps no format will carry are dropped first, so they are never redacted (most of a long run's cost).
    report = redact_report(select_steps(report, args.steps), report_egress(redaction, args.plugin))
    if args.junit:
        _write(args.junit, render_junit(report))
    if args.sarif:
        _write(args.sarif, json.dumps(render_sarif(report), indent=2, ensure_ascii=False) + "\n")
    if args.html:
        from ..trace import render_html  # the HTML module only when asked for

        _write(args.html, render_html(report))
    if args.json:
        print(json.dumps(to_json(report), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_text(report))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for command in github_annotations(report):
            print(command)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            try:
                with Path(summary).open("a", encoding="utf-8") as stream:
                    stream.write(github_summary(report))
            except OSError as exc:
                raise InputError(f"cannot append the step summary: {exc.strerror or exc}", source=summary) from exc
    return report.exit_code

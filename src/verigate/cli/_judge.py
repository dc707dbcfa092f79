"""``verigate judge``: how good the configured judge is — ``eval`` over labelled cases, ``calibrate`` against the
people's review decisions. Exit 0 · 3 when a figure is below a threshold given (a CI signal) · 2 could not run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import InputError

if TYPE_CHECKING:
    from ..judge._agreement import JudgeQuality, Thresholds
    from ..judge._calibrate import ReviewDecision

__all__ = ["BELOW_THRESHOLD_EXIT", "main"]

#: a figure below a threshold: the CI signal (as ``verigate grade``'s 3), not an error
BELOW_THRESHOLD_EXIT = 3
_THRESHOLDS = (
    ("--min-accuracy", "min_accuracy", "accuracy over the verdicts"),
    ("--min-kappa", "min_kappa", "Cohen's kappa"),
    ("--min-tpr", "min_tpr", "complete cases judged complete"),
    ("--min-tnr", "min_tnr", "incomplete cases judged incomplete"),
    ("--max-error-rate", "max_error_rate", "verification errors over every judgment"),
    ("--min-consistency", "min_consistency", "share of cases whose repeats agree (eval with --repeat ≥ 2)"),
)


def _unit(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not -1.0 <= value <= 1.0:  # kappa may be negative; every other figure is 0..1
        raise argparse.ArgumentTypeError(f"{text} is outside -1..1")
    return value


def _bounded(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low}..{high}")
        return value

    return parse


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="verigate.yaml (default: ./verigate.yaml if present, else the embedded defaults)")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text")
    parser.add_argument("--output", type=Path, metavar="FILE", help="write the report here instead of stdout")
    for flag, dest, what in _THRESHOLDS:
        side = "above" if flag.startswith("--max") else "below"
        parser.add_argument(flag, dest=dest, type=_unit, metavar="X",
                            help=f"exit {BELOW_THRESHOLD_EXIT} when {what} is {side} X")


def _parser() -> argparse.ArgumentParser:
    from ..gate._judge_eval import MAX_CONCURRENCY, MAX_REPEAT

    parser = argparse.ArgumentParser(prog="verigate judge", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate = commands.add_parser("eval", help="run the gate's judge over labelled cases (JSONL)")
    evaluate.add_argument("cases", type=Path, metavar="CASES.jsonl",
                          help="one case per line (schemas/judge-case.schema.json)")
    evaluate.add_argument("--repeat", type=_bounded(1, MAX_REPEAT), default=1, metavar="N",
                          help="judge every case N times (consistency across repeats); default 1")
    evaluate.add_argument("--concurrency", type=_bounded(1, MAX_CONCURRENCY), default=4, metavar="K",
                          help="judge calls in flight at once (default 4)")
    _common(evaluate)
    calibrate = commands.add_parser("calibrate", help="agreement of the stored verdicts with the people's review "
                                    "decisions (conditional on escalation)")
    calibrate.add_argument("--since", metavar="DATE", help="only reviews resolved at or after DATE (ISO; naive = UTC)")
    calibrate.add_argument("--store", metavar="URL", help="store file or sqlite:/// URL (default: store.url of the "
                           "configuration)")
    _common(calibrate)
    return parser


def _thresholds(args: argparse.Namespace) -> Thresholds:
    from ..judge._agreement import Thresholds

    return Thresholds(**{dest: getattr(args, dest) for _, dest, _ in _THRESHOLDS})


def _evaluate(args: argparse.Namespace) -> JudgeQuality:
    import asyncio

    from ..gate import Gate, evaluate_judge
    from ..judge import read_judge_cases

    cases = read_judge_cases(args.cases)
    # the judge, egress and trust rules of the configuration; its store is never touched
    with Gate.from_config(args.config, store=":memory:") as gate:
        if gate.judge is None:
            print("verigate judge eval: the configuration has no judge: every judgment is a verification error "
                  "(judge_unavailable)", file=sys.stderr)
        return asyncio.run(evaluate_judge(gate, cases, repeat=args.repeat, concurrency=args.concurrency))


def read_decisions(store_arg: str | None, config_path: Path | None, since_text: str | None
                   ) -> tuple[tuple[ReviewDecision, ...], dict[str, int]]:
    """The resolved review decisions of the store named by ``--store`` or the configuration (see
    ``verigate.judge._calibrate``); the store is never created, and nothing is written (no review is expired)."""
    from ..judge._calibrate import parse_since, review_decisions
    from ._review import open_cli_store

    since = parse_since(since_text) if since_text is not None else None
    store = open_cli_store(store_arg, expire=False, config_path=config_path)
    try:
        reviews = store.list_reviews(None)
    finally:
        store.close()
    return review_decisions(reviews, since=since)


def _calibrate(args: argparse.Namespace) -> JudgeQuality:
    from ..judge._calibrate import calibration

    decisions, excluded = read_decisions(args.store, args.config, args.since)
    return calibration(decisions, excluded)


def write_output(text: str, output: Path | None) -> None:
    """The report on stdout, or in ``output`` (replaced whole: a reader never sees half a report)."""
    if output is None:
        sys.stdout.write(text)
        return
    from .._fileio import replace_file

    try:
        replace_file(output, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror or exc}", source=str(output)) from None


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    from ..judge._agreement import failed_thresholds
    from ._judge_report import render

    report = _evaluate(args) if args.command == "eval" else _calibrate(args)
    thresholds = _thresholds(args)
    write_output(render(report, args.format, thresholds), args.output)
    failed = failed_thresholds(report, thresholds)
    if failed:
        print(f"verigate judge {args.command}: below threshold: {'; '.join(failed)}", file=sys.stderr)
        return BELOW_THRESHOLD_EXIT
    return 0

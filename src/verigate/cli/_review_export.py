"""``verigate review export``: the people's review decisions as labelled cases for ``verigate judge eval``.

Approved → ``complete``, rejected → ``incomplete``; expired and pending reviews are no one's decision and are left
out (counted on stderr). The text is what the store keeps, already redacted; ``note`` is the reviewer's note, else
the decision. Every line is checked against ``schemas/judge-case.schema.json`` before it is written; a review
whose stored text is past a case bound is left out and counted, never cut."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .._errors import InputError

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser], store_help: str) -> None:
    """The ``export`` sub-command of ``verigate review``."""
    export = commands.add_parser("export", help="write resolved reviews as labelled judge cases (JSONL)")
    export.add_argument("--since", metavar="DATE", help="only reviews resolved at or after DATE (ISO; naive = UTC)")
    export.add_argument("--store", metavar="PATH", help=store_help)
    export.add_argument("--config", type=Path, metavar="FILE", help="verigate.yaml naming the store (default: "
                        "./verigate.yaml if present)")
    export.add_argument("--output", type=Path, metavar="FILE", help="write the cases here instead of stdout")


def _check_readable(cases: int, size: int) -> None:
    """An export is a case file ``verigate judge eval`` reads: past its bounds, nothing is written (a file the
    reader refuses as a whole helps no one) and the message says how to narrow it."""
    from ..judge._cases import MAX_CASES, MAX_CASES_FILE_BYTES

    if cases > MAX_CASES or size > MAX_CASES_FILE_BYTES:
        raise InputError(f"the export would hold {cases} cases in {size} bytes, past what judge eval reads "
                         f"({MAX_CASES} cases, {MAX_CASES_FILE_BYTES} bytes): narrow it with --since",
                         field="--since")


def run(args: argparse.Namespace) -> int:
    from ..judge._calibrate import review_case
    from ._judge import read_decisions, write_output

    decisions, excluded = read_decisions(args.store, args.config, args.since)
    lines, skipped = [], 0
    for decision in decisions:
        try:
            lines.append(json.dumps(review_case(decision), ensure_ascii=False, allow_nan=False))
        except InputError as exc:
            skipped += 1
            print(f"verigate review export: left out {decision.review.review_id}: {exc}", file=sys.stderr)
    text = "".join(f"{line}\n" for line in lines)
    _check_readable(len(lines), len(text.encode("utf-8")))
    write_output(text, args.output)
    left_out = ", ".join(f"{count} {status}" for status, count in excluded.items() if count)
    print(f"exported {len(lines)} case{'' if len(lines) == 1 else 's'}"
          + (f"; left out {left_out} (not a person's decision)" if left_out else "")
          + (f"; {skipped} past a case bound" if skipped else ""), file=sys.stderr)
    return 0


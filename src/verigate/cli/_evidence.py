"""``verigate evidence produce|verify|harness-version``: RunEvidence for PlanGate-style task folders."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .._errors import EvidenceError, EvidencePartialError, SchemaError

__all__ = ["main"]

_PREFIX = "run-evidence"


class _Parser(argparse.ArgumentParser):
    """Usage errors are rejections (exit 1), so exit 2 keeps meaning "the schema could not be read"."""

    def error(self, message: str) -> NoReturn:
        raise EvidenceError([f"usage: {message}"])


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="verigate evidence", description="RunEvidence: produce, verify, harness-version")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    produce = commands.add_parser("produce", help="write the EV of a terminal run of TASK_DIR")
    produce.add_argument("task_dir", type=Path)
    for flag in ("--now", "--started-at", "--repository", "--run-id", "--harness-version", "--harness-version-end",
                 "--pr-number", "--routing-decisions", "--observation", "--cause-hypothesis"):
        produce.add_argument(flag)
    produce.add_argument("--evidence-ref", action="append", default=[], help="repo-relative; may repeat")
    produce.add_argument("--runs-dir", type=Path, help="folder of arbiter run records (*.json)")
    produce.add_argument("--out", type=Path, help="write here (must end in .json) instead of stdout")
    produce.add_argument("--from-git", type=Path, metavar="REPO_DIR",
                         help="take --repository from REPO_DIR's origin remote (owner stripped)")
    verify = commands.add_parser("verify", help="verify EV.json against TASK_DIR (exit 0/1/2/10/11)")
    verify.add_argument("ev", type=Path)
    verify.add_argument("task_dir", type=Path)
    verify.add_argument("--schema", type=Path, help="schema file to use instead of the shipped one")
    verify.add_argument("--runs-dir", type=Path,
                        help="the arbiter run records the producer read: lets their interventions be re-derived")
    commands.add_parser("harness-version", help="print verigate's own harness_version as JSON")
    return parser


def _produce(args: argparse.Namespace) -> int:
    from ..evidence import produce, repository_name, write_evidence

    if args.out is not None and args.out.suffix != ".json":
        raise EvidenceError([f"--out {args.out.name!r}: the output must end in .json (the privacy hook scans .json)"])
    repository = args.repository
    if args.from_git is not None:
        if repository is not None:
            raise EvidenceError(["give --repository or --from-git, not both"])
        repository = repository_name(args.from_git)
    text = produce(
        args.task_dir, now=args.now, started_at=args.started_at, repository=repository, run_id=args.run_id,
        harness_version=args.harness_version, harness_version_end=args.harness_version_end,
        pr_number=args.pr_number, routing_decisions=args.routing_decisions, observation=args.observation,
        cause_hypothesis=args.cause_hypothesis, evidence_refs=args.evidence_ref, runs_dir=args.runs_dir,
    )
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_evidence(args.out, text)  # atomic; a link planted at --out is replaced, never followed
    return 0


def _verify(args: argparse.Namespace) -> int:
    from ..evidence import verify

    verify(args.ev, args.task_dir, schema_path=args.schema, runs_dir=args.runs_dir)
    print(f"{_PREFIX}: complete")
    return 0


def main(argv: Sequence[str]) -> int:
    """Run one evidence sub-command; every reason goes to stderr on its own line."""
    try:
        args = _parser().parse_args(list(argv))
        if args.command == "produce":
            return _produce(args)
        if args.command == "verify":
            return _verify(args)
        from ..evidence import harness_version

        print(json.dumps(harness_version(), sort_keys=True, ensure_ascii=False))
        return 0
    except EvidencePartialError as exc:
        print(f"{_PREFIX}: {exc.message}", file=sys.stderr)
        for reason in exc.reasons:
            print(f"{_PREFIX}: {reason}", file=sys.stderr)
        return exc.exit_code
    except EvidenceError as exc:
        for reason in exc.reasons:
            print(f"{_PREFIX}: {reason}", file=sys.stderr)
        return exc.exit_code
    except SchemaError as exc:
        print(f"{_PREFIX}: {exc}", file=sys.stderr)
        return exc.exit_code

"""``verigate rules lint|test [FILES]``: validate and compile rule packs, or run every rule's examples."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verigate rules",
        description="Rule packs: lint validates and compiles; test also runs every rule's examples. "
                    "Without FILES, every shipped pack is used.",
    )
    parser.add_argument("action", choices=("lint", "test"))
    parser.add_argument("files", nargs="*", metavar="FILE", help="rule pack files (default: the shipped packs)")
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE as a plug-in (for rule kinds it registers); repeatable")
    return parser


def main(argv: Sequence[str]) -> int:
    """Exit 0 when every pack is valid (and, for test, every example passes); 1 on a failing example; 2 on an
    invalid pack (each invalid pack is reported, then the first error's exit code is returned)."""
    args = _parser().parse_args(list(argv))
    from .._errors import VerigateError
    from .._plugins import create_manager
    from ..rules import load_pack, rule_kinds, run_examples, shipped_packs
    from ..rules._engine import RuleSet

    kinds = rule_kinds(create_manager(args.plugin))
    targets: list[str] = list(args.files) or list(shipped_packs())
    if not targets:
        print("verigate rules: no rule packs to check", file=sys.stderr)
        return 2
    errors = failures = 0
    for target in targets:
        try:
            pack = load_pack(target)
            RuleSet.compile([pack], kinds=kinds)
            found = run_examples([pack], kinds=kinds) if args.action == "test" else ()
        except VerigateError as exc:
            errors += 1
            print(f"error {exc}", file=sys.stderr)
            continue
        for failure in found:
            print(f"FAIL {failure}")
        failures += len(found)
        examples = sum(len(rule.match_examples) + len(rule.no_match_examples) for rule in pack.rules)
        status = "FAIL" if found else "ok"
        detail = f", {examples} examples, {len(found)} failed" if args.action == "test" else ""
        print(f"{status} {pack.source}: pack {pack.name!r}, {len(pack.rules)} rules{detail}")
    if errors:
        return 2
    return 1 if failures else 0

"""``verigate rules lint|test [FILES]``: validate and compile rule packs, or run every rule's examples."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from ..rules import Pack

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


def _check_disables(pack: Pack, targets: Sequence[str]) -> None:
    """Every id a pack disables must be defined by a shipped pack or by another pack being checked."""
    from .._errors import RuleError
    from ..rules import load_pack, shipped_packs

    known: set[str] = set()
    for other in {*shipped_packs(), *targets}:
        try:
            known.update(rule.id for rule in load_pack(other).rules)
        except RuleError:
            continue  # an invalid pack is reported on its own
    unknown = [rule_id for rule_id in pack.disables if rule_id not in known]
    if unknown:
        raise RuleError(f"disables {', '.join(map(repr, unknown))}, which no shipped or given pack defines",
                        source=pack.source, field="disables")


def main(argv: Sequence[str]) -> int:
    """Exit 0 when every pack is valid (and, for test, every example passes); 1 on a failing example; 2 on an
    invalid pack (each invalid pack is reported, then the first error's exit code is returned)."""
    args = _parser().parse_args(list(argv))
    from .._errors import VerigateError
    from .._plugins import create_manager
    from ..rules import RuleSet, load_pack, rule_kinds, run_examples, shipped_packs

    kinds = rule_kinds(create_manager(args.plugin))
    targets: list[str] = list(args.files) or list(shipped_packs())
    if not targets:
        print("verigate rules: no rule packs to check", file=sys.stderr)
        return 2
    errors = failures = 0
    for target in targets:
        try:
            pack = load_pack(target)
            if pack.disables:
                _check_disables(pack, targets)
            if pack.rules or not pack.disables:  # a pack that only disables has nothing of its own to compile
                # `disables` names rules of the packs this one is used with: checked above, not against itself
                RuleSet.compile([attrs.evolve(pack, disables=())], kinds=kinds)
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

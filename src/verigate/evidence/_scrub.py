"""The shipped ``secrets`` and ``pii`` rule packs as the EV's secret scanner (reads the packs: not a pure module)."""

from __future__ import annotations

import functools

from ..redact import RulePackRedactor
from ..rules import builtin_kinds
from ._privacy import remember_value_scans

__all__ = ["SECRET_PACKS", "secret_scanner"]

#: every string an EV carries passes these packs, in the producer's reduction and in the verifier's check
SECRET_PACKS = ("secrets", "pii")


@functools.cache
def secret_scanner() -> RulePackRedactor:
    """The packs compiled with the built-in rule kinds only, so an installed plug-in cannot change an EV."""
    scanner = RulePackRedactor.from_packs(SECRET_PACKS, kinds=builtin_kinds(),
                                          name="run-evidence-secrets")
    # built-in kinds only and compiled once: its findings depend on the text alone, so they may be remembered
    remember_value_scans(scanner)
    return scanner

"""The declarative rule engine: YAML rule packs compiled into a RuleSet whose kinds are plug-ins."""

from __future__ import annotations

from .._face import present as _present
from ._engine import (
    ALLOW_MARKER,
    ExampleFailure,
    Match,
    Matcher,
    Prefiltered,
    RuleKind,
    RuleSet,
    is_own_ruleset,
    rule_kinds,
    run_examples,
)
from ._kinds import PhraseKind, RegexKind, builtin_kinds
from ._pack import Example, Pack, Rule, is_pack, is_shipped, load_pack, load_pack_text, shipped_packs
from ._text import TextView, caseless, fold

__all__ = [
    "ALLOW_MARKER",
    "Example",
    "ExampleFailure",
    "Match",
    "Matcher",
    "Pack",
    "PhraseKind",
    "Prefiltered",
    "RegexKind",
    "Rule",
    "RuleKind",
    "RuleSet",
    "TextView",
    "builtin_kinds",
    "caseless",
    "fold",
    "is_own_ruleset",
    "is_pack",
    "is_shipped",
    "load_pack",
    "load_pack_text",
    "rule_kinds",
    "run_examples",
    "shipped_packs",
]

_present(globals(), __name__)

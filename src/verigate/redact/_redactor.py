"""The rule-pack redactor: numbered placeholders per value, findings without the matched text."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import attrs

from .._errors import RuleError
from ..rules import Match, Pack, RuleKind, RuleSet, is_own_ruleset, load_pack
from ._base import Category, Finding, RedactionResult
from ._prefilter import RE2_AFTER_CHARS, RulePrefilter
from ._views import views

if TYPE_CHECKING:
    from .._config import RedactionConfig
    from .._plugins import PluginManager

__all__ = ["DEFAULT_PACKS", "PLACEHOLDER", "RulePackRedactor", "as_text", "redact"]

DEFAULT_PACKS = ("secrets", "pii", "privacy")
_CATEGORIES: frozenset[str] = frozenset({"secret", "personal_data", "privacy"})
#: what every placeholder looks like; text already inside one is never matched again (redaction is idempotent)
PLACEHOLDER = re.compile(r"\[REDACTED:(?P<rule>[a-z0-9.-]+)#\d+\]")


def as_text(data: str | bytes) -> str:
    """The text a redactor scans: bytes are decoded as UTF-8, and invalid sequences (and lone surrogates in a
    str) become U+FFFD, so binary input never crashes a redactor and its output is always encodable."""
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    if data.isascii():  # constant time for a str: ASCII is always encodable
        return data
    try:
        data.encode("utf-8")
    except UnicodeEncodeError:
        return data.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")
    return data


@attrs.define
class _Region:
    start: int
    end: int
    rule_id: str
    placeholder: str = ""


def _regions(active: list[Match]) -> list[_Region]:
    """Overlapping matches merge into one region (union of spans) named after the earliest, longest match."""
    regions: list[_Region] = []
    for match in sorted(active, key=lambda item: (item.start, -item.end)):
        if regions and match.start < regions[-1].end:
            regions[-1].end = max(regions[-1].end, match.end)
        else:
            regions.append(_Region(match.start, match.end, match.rule_id))
    return regions


# immutable at run time; not attrs-frozen only because the Redactor protocol declares ``name`` as a variable
@attrs.define(on_setattr=attrs.setters.frozen)
class RulePackRedactor:
    """Replaces every unsuppressed match of its packs with ``[REDACTED:<rule-id>#<n>]``.

    ``n`` numbers the distinct values of one rule within one text in order of appearance, so the same value
    gets the same placeholder; nothing derived from the value (no hash) is kept. Findings carry spans of the
    scanned text, never the text itself.
    """

    ruleset: RuleSet = attrs.field(repr=False)
    categories: Mapping[str, Category] = attrs.field(repr=False)
    name: str = "verigate-rules"
    #: built with the redactor (so once per cached redactor): which rules a text can need, in one pass
    _prefilter: RulePrefilter = attrs.field(init=False, repr=False, eq=False)

    #: its rules compiled from verigate's shipped packs by its own kinds (``rules.is_own_ruleset``): reviewed
    #: rules run by verigate's code, so the gate may redact a small candidate on the event loop (``gate._offloop``)
    own_rules: bool = attrs.field(init=False, repr=False, eq=False)

    @_prefilter.default
    def _build_prefilter(self) -> RulePrefilter:
        return RulePrefilter(self.ruleset, re2_after=RE2_AFTER_CHARS)

    @own_rules.default
    def _own_rules(self) -> bool:
        return is_own_ruleset(self.ruleset)

    @classmethod
    def from_packs(cls, packs: Iterable[Pack | str | Path], *, manager: PluginManager | None = None,
                   kinds: Mapping[str, RuleKind] | None = None, name: str = "verigate-rules") -> RulePackRedactor:
        """Packs as objects, shipped names or paths; each pack with rules must declare its ``category``.

        Rule kinds are ``kinds``, else those of ``manager``, else those of a new manager (see
        :meth:`RuleSet.compile`)."""
        loaded = tuple(pack if isinstance(pack, Pack) else load_pack(pack) for pack in packs)
        categories: dict[str, Category] = {}
        for pack in loaded:
            if pack.rules and pack.category not in _CATEGORIES:
                raise RuleError("a redaction pack needs `category: secret | personal_data | privacy`",
                                source=pack.source, line=1, field="category")
            for rule in pack.rules:
                categories[rule.id] = cast(Category, pack.category)
        return cls(RuleSet.compile(loaded, manager=manager, kinds=kinds), categories, name)

    @classmethod
    def from_config(cls, config: RedactionConfig, *, manager: PluginManager | None = None,
                    kinds: Mapping[str, RuleKind] | None = None) -> RulePackRedactor:
        """The ``redaction:`` section: shipped ``packs`` (unless ``replace_defaults``) plus ``extra_packs`` paths."""
        shipped = () if config.replace_defaults else tuple(config.packs)
        return cls.from_packs([*shipped, *(Path(path) for path in config.extra_packs)], manager=manager,
                              kinds=kinds)

    def _scan(self, text: str, scan: Callable[[str], tuple[Match, ...]]) -> list[Match]:
        """The matches in ``text`` and in its normalised views (ANSI removed, escapes decoded), each with its span
        of ``text``, ordered by span; a view only adds a match the original scan did not already report."""
        matches = list(scan(text))
        normalised = views(text)
        if not normalised:
            return matches
        known = {(match.rule_id, match.start, match.end) for match in matches}
        for view in normalised:
            for match in scan(view.text):
                start, end = view.original_span(match.start, match.end)
                if (match.rule_id, start, end) not in known:
                    known.add((match.rule_id, start, end))
                    matches.append(attrs.evolve(match, start=start, end=end))
        matches.sort(key=lambda match: (match.start, match.end))
        return matches

    def redact(self, text: str | bytes) -> RedactionResult:
        return self._redact(text, self._prefilter.scan)

    def _redact_unfiltered(self, text: str | bytes) -> RedactionResult:
        """:meth:`redact` with every text scanned by the whole rule set (no combined prefilter): the reference
        the prefiltered pass must equal exactly (the property tests compare them)."""
        return self._redact(text, self.ruleset.scan)

    def _redact(self, text: str | bytes, scan: Callable[[str], tuple[Match, ...]]) -> RedactionResult:
        scanned = as_text(text)
        # only placeholders naming one of this redactor's rules are its own output: anything else shaped like one
        # (``[REDACTED:<a lowercase token>#1]``, written by whoever wrote the text) is scanned like any text
        protected = [found.span() for found in PLACEHOLDER.finditer(scanned)
                     if found.group("rule") in self.categories] if "[REDACTED:" in scanned else []

        def inside_placeholder(match: Match) -> bool:
            return any(start <= match.start and match.end <= end for start, end in protected)

        matches = [match for match in self._scan(scanned, scan) if not inside_placeholder(match)]
        if not matches:
            return RedactionResult(scanned)
        regions = _regions([match for match in matches if not match.suppressed])
        numbers: dict[str, dict[str, int]] = {}
        pieces: list[str] = []
        position = 0
        for region in regions:
            values = numbers.setdefault(region.rule_id, {})
            number = values.setdefault(scanned[region.start:region.end], len(values) + 1)
            region.placeholder = f"[REDACTED:{region.rule_id}#{number}]"
            pieces += [scanned[position:region.start], region.placeholder]
            position = region.end
        pieces.append(scanned[position:])
        starts = [region.start for region in regions]

        def placeholder_of(match: Match) -> str:
            index = bisect.bisect_right(starts, match.start) - 1
            if index >= 0 and match.end <= regions[index].end:
                return regions[index].placeholder
            return ""

        findings = tuple(
            Finding(match.rule_id, self.categories[match.rule_id], match.start, match.end, placeholder_of(match),
                    match.severity, match.suppressed)
            for match in matches
        )
        return RedactionResult("".join(pieces), findings)


@functools.cache
def _shipped_redactor(packs: tuple[str, ...]) -> RulePackRedactor:
    return RulePackRedactor.from_packs(packs)


def redact(text: str | bytes, *, packs: Iterable[Pack | str | Path] | None = None) -> RedactionResult:
    """Redact ``text`` with the shipped packs (default: secrets, pii, privacy) or the packs given."""
    chosen = tuple(packs) if packs is not None else DEFAULT_PACKS
    if all(isinstance(pack, str) and not any(mark in pack for mark in "/\\.") for pack in chosen):
        # shipped packs by name cannot change while the process runs: compile them once
        return _shipped_redactor(cast(tuple[str, ...], chosen)).redact(text)
    return RulePackRedactor.from_packs(chosen).redact(text)

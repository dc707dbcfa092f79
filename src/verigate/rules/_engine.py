"""The rule engine: packs compiled once into a RuleSet that scans text in a deterministic order."""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import attrs
import fastjsonschema

from .. import _data
from .._errors import RuleError
from .._schema_errors import schema_failure
from . import _checked
from ._keywords import FoldedKeywords
from ._kinds import BUILTIN_KINDS, PhraseMatcher, RegexMatcher
from ._pack import Example, Pack, Rule, is_shipped, load_pack, shipped_packs
from ._text import TextView, caseless

if TYPE_CHECKING:
    from .._plugins import PluginManager

__all__ = [
    "ALLOW_MARKER",
    "ExampleFailure",
    "Match",
    "Matcher",
    "Prefiltered",
    "RuleKind",
    "RuleSet",
    "rule_kinds",
    "run_examples",
]

#: ``verigate: allow`` on a line suppresses every match touching that line; ``verigate: allow[id-a, id-b]``
#: only those rules'. Suppressed matches are still reported (``suppressed=True``) so the opt-out is auditable.
ALLOW_MARKER = re.compile(r"verigate:\s*allow(?:\[(?P<ids>[a-z0-9.,\s-]*)\])?", re.IGNORECASE)


@runtime_checkable
class Matcher(Protocol):
    """A compiled rule: yields ``(start, end)`` spans of ``view.text``."""

    def find(self, view: TextView) -> Iterable[tuple[int, int]]: ...


@runtime_checkable
class Prefiltered(Protocol):
    """A matcher that declares its keyword prefilter, so a scan tests each keyword once for all rules and skips
    the rules whose keywords are absent (optional: other matchers are always called through ``find``).

    ``prefilter``: lower-cased literals; ``find`` yields nothing on a text whose ``str.lower()`` form contains
    none of them (``()``: no prefilter). ``find_prefiltered`` is ``find`` without that test: a scan calls it
    only when one of the keywords occurs (or there are none), tested in the :func:`~verigate.rules.caseless` form
    of both, which finds every keyword ``str.lower()`` finds."""

    @property
    def prefilter(self) -> tuple[str, ...]: ...

    def find_prefiltered(self, view: TextView) -> Iterable[tuple[int, int]]: ...


def declared_prefilter(matcher: Matcher) -> tuple[str, ...] | None:
    """The keywords ``matcher`` declares as :class:`Prefiltered` (``()``: none), None when it is not one. The
    built-in matchers are known by their type: a runtime Protocol check costs tens of µs per matcher, more than
    building a rule set whose patterns compile at first use."""
    kind = type(matcher)
    if kind is RegexMatcher:
        return cast(RegexMatcher, matcher).prefilter
    if kind is PhraseMatcher:
        return None
    return tuple(caseless(keyword) for keyword in matcher.prefilter) if isinstance(matcher, Prefiltered) else None


@runtime_checkable
class RuleKind(Protocol):
    """A rule kind registered through ``verigate_rule_kinds``: validates its fields and compiles a rule."""

    @property
    def fields_schema(self) -> Mapping[str, Any]:
        """JSON Schema of the rule's kind-specific fields (the rule minus its common fields)."""

    def compile(self, rule: Rule) -> Matcher: ...


@attrs.frozen
class Match:
    """One match: where, which rule, and whether an inline ``verigate: allow`` suppressed it."""

    rule_id: str
    start: int
    end: int
    severity: str
    message: str
    metadata: Mapping[str, Any] = attrs.field(factory=dict, hash=False)
    suppressed: bool = False


@attrs.frozen
class _Compiled:
    rule: Rule
    matcher: Matcher


#: the rule sets :meth:`RuleSet.compile` built from shipped packs with verigate's own kinds alone, by identity
_OWN: weakref.WeakValueDictionary[int, RuleSet] = weakref.WeakValueDictionary()


def is_own_ruleset(ruleset: RuleSet) -> bool:
    """True for a rule set :meth:`RuleSet.compile` built from shipped packs (``is_shipped``) with verigate's own
    kinds (exact types) alone: reviewed rules run by verigate's code. A rule set built by hand never is."""
    return _OWN.get(id(ruleset)) is ruleset


def rule_kinds(manager: PluginManager | None = None) -> dict[str, RuleKind]:
    """Every registered rule kind (built-ins and plug-ins); a kind registered twice is a PluginError."""
    from .._plugins import create_manager, merged_registry

    return merged_registry(manager if manager is not None else create_manager(), "verigate_rule_kinds")


#: compiled field schemas per kind object (the kind is kept in the value so that its id stays unique)
_FIELD_VALIDATORS: dict[int, tuple[Any, RuleKind]] = {}


def _check_fields(rule: Rule, kind: RuleKind) -> None:
    key = id(kind)
    if key not in _FIELD_VALIDATORS:
        _FIELD_VALIDATORS[key] = (_data.compile_schema(dict(kind.fields_schema)), kind)
    validator = _FIELD_VALIDATORS[key][0]
    try:
        validator(dict(rule.fields))
    except fastjsonschema.JsonSchemaValueException as exc:
        failure = schema_failure(exc)
        field = failure.path[0] if failure.path else None
        if field is None and failure.rule == "additionalProperties":
            field = failure.key  # point at the first unknown field (a typo such as `patern`), not at the rule
        raise rule.error(f"{rule.kind}: {failure.detail}", field=field or "kind") from exc


def _compile_rule(rule: Rule, kinds: Mapping[str, RuleKind]) -> _Compiled:
    kind = kinds.get(rule.kind)
    if kind is None:
        known = ", ".join(sorted(kinds)) or "none"
        raise rule.error(f"unknown kind {rule.kind!r} (registered kinds: {known})", field="kind")
    _check_fields(rule, kind)
    try:
        matcher = kind.compile(rule)
    except RuleError:
        raise
    except Exception as exc:  # a plug-in kind failing on a rule is a rule error, never a silent skip
        raise rule.error(f"kind {rule.kind!r} failed to compile it: {type(exc).__name__}: {exc}") from exc
    return _Compiled(rule, matcher)


def _markers(text: str) -> list[tuple[int, int, frozenset[str] | None]]:
    """(line start, line end, rule ids or None for all) of every ``verigate: allow`` marker."""
    found = []
    for marker in ALLOW_MARKER.finditer(text):
        line_start = text.rfind("\n", 0, marker.start()) + 1
        line_end = text.find("\n", marker.end())
        ids = marker.group("ids")
        only = frozenset(part.strip() for part in ids.split(",") if part.strip()) if ids is not None else None
        found.append((line_start, len(text) if line_end == -1 else line_end, only))
    return found


def _suppressed(rule_id: str, start: int, end: int, text: str,
                markers: list[tuple[int, int, frozenset[str] | None]]) -> bool:
    first_line = text.rfind("\n", 0, start) + 1
    last_line_end = text.find("\n", max(end - 1, start))
    last_line_end = len(text) if last_line_end == -1 else last_line_end
    return any(
        marker_start <= last_line_end and marker_end >= first_line and (only is None or rule_id in only)
        for marker_start, marker_end, only in markers
    )


#: from this length on, the prefilter skips keywords whose rules are already chosen (below, the check costs more)
_LONG_TEXT = 2048


@attrs.frozen
class _Prefilter:
    """Which rules a text needs: one substring test per distinct keyword of the whole set, instead of every
    rule testing its own keywords (on short texts that per-rule overhead was most of the scan)."""

    always: frozenset[int]
    keywords: tuple[str, ...]
    rules_by_keyword: Mapping[str, tuple[int, ...]]
    #: per rule: what a scan calls once the rule is needed (its keyword test is already done)
    finders: tuple[Callable[[TextView], Iterable[tuple[int, int]]], ...]
    #: the ``phrase`` rules with keywords, chosen by their keywords in the folded text (``_keywords``)
    phrases: FoldedKeywords | None = None

    @classmethod
    def of(cls, compiled: tuple[_Compiled, ...]) -> _Prefilter:
        always: set[int] = set()
        by_keyword: dict[str, list[int]] = {}
        by_phrase_keyword: dict[str, set[int]] = {}
        finders: list[Callable[[TextView], Iterable[tuple[int, int]]]] = []
        for order, item in enumerate(compiled):
            matcher = item.matcher
            keywords = declared_prefilter(matcher)
            if keywords is not None:
                finders.append(cast(Prefiltered, matcher).find_prefiltered)
            else:
                keywords = ()
                finders.append(matcher.find)
                if type(matcher) is PhraseMatcher and matcher.keywords:
                    # its find tests them itself; deciding them here for all phrase rules at once skips the
                    # rules none of whose keywords occur (the same test, so the same rules)
                    for keyword in matcher.keywords:
                        by_phrase_keyword.setdefault(keyword, set()).add(order)
                    continue
            if not keywords:
                always.add(order)
            for keyword in dict.fromkeys(keywords):
                by_keyword.setdefault(keyword, []).append(order)
        phrases = FoldedKeywords({keyword: frozenset(orders) for keyword, orders in by_phrase_keyword.items()}) \
            if by_phrase_keyword else None
        return cls(frozenset(always), tuple(by_keyword),
                   {keyword: tuple(orders) for keyword, orders in by_keyword.items()}, tuple(finders), phrases)

    def needed(self, view: TextView) -> list[int]:
        """The rules (by order) whose keywords occur in the text, plus those without a prefilter, in order."""
        chosen = set(self.always)
        if self.keywords:
            lowered = view.lowered
            # in a long text, proving a keyword absent costs a pass: skip those whose rules all run anyway
            long_text = len(lowered) > _LONG_TEXT
            for keyword in self.keywords:
                rules = self.rules_by_keyword[keyword]
                if long_text and chosen.issuperset(rules):
                    continue
                if keyword in lowered:
                    chosen.update(rules)
        if self.phrases is not None:
            self.phrases.choose(view.folded, chosen)
        return sorted(chosen)


@attrs.frozen
class RuleSet:
    """Compiled rules in pack order; ``scan`` is safe to call from several threads."""

    compiled: tuple[_Compiled, ...] = attrs.field(repr=False)
    packs: tuple[Pack, ...] = ()
    _prefilter: _Prefilter = attrs.field(init=False, repr=False, eq=False)

    @_prefilter.default
    def _build_prefilter(self) -> _Prefilter:
        return _Prefilter.of(self.compiled)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(item.rule for item in self.compiled)

    @classmethod
    def compile(cls, packs: Iterable[Pack | str | Path], *, manager: PluginManager | None = None,
                kinds: Mapping[str, RuleKind] | None = None) -> RuleSet:
        """Compile packs (objects, shipped names or paths) with the registered kinds.

        A rule id defined twice across the packs, a ``disables`` id that is not active, or an empty active
        rule set is a RuleError: nothing found must never be the result of nothing loaded.
        """
        loaded = tuple(pack if isinstance(pack, Pack) else load_pack(pack) for pack in packs)
        registry = kinds if kinds is not None else rule_kinds(manager)
        defined: dict[str, Rule] = {}
        for pack in loaded:
            for rule in pack.rules:
                if rule.id in defined:
                    first = defined[rule.id]
                    raise rule.error(f"duplicate id (also defined in {first.source}:{first.line})", field="id")
                defined[rule.id] = rule
        disabled: set[str] = set()
        for pack in loaded:
            for rule_id in pack.disables:
                if rule_id not in defined:
                    raise RuleError(f"disables {rule_id!r}, which no active pack defines", source=pack.source,
                                    field="disables")
                disabled.add(rule_id)
        compiled = tuple(
            _compile_rule(rule, registry) for pack in loaded for rule in pack.rules if rule.id not in disabled
        )
        _checked.flush()  # rules the built-in kinds checked by compiling: a later process need not (``_checked``)
        if not compiled:
            sources = ", ".join(pack.source for pack in loaded) or "no packs"
            raise RuleError(f"the active rule set is empty ({sources}): refusing to report 'nothing found'")
        ruleset = cls(compiled, loaded)
        if all(is_shipped(pack) for pack in loaded) and all(
                type(registry.get(item.rule.kind)) is BUILTIN_KINDS.get(item.rule.kind) for item in compiled):
            _OWN[id(ruleset)] = ruleset
        return ruleset

    def scan(self, text: str) -> tuple[Match, ...]:
        """Every match, ordered by start, then end, then rule order (pack order, then file order)."""
        view = TextView(text)
        markers = _markers(text) if "verigate" in view.lowered else []
        found: list[tuple[int, int, int, Match]] = []
        prefilter = self._prefilter
        for order in prefilter.needed(view):
            rule = self.compiled[order].rule
            for start, end in prefilter.finders[order](view):
                if not 0 <= start < end <= len(text):
                    # a span outside the text could make a redactor keep what it should remove: fail closed
                    raise rule.error(f"kind {rule.kind!r} reported the invalid span {start}..{end} "
                                     f"in a text of {len(text)} characters")
                suppressed = bool(markers) and _suppressed(rule.id, start, end, text, markers)
                found.append((start, end, order, Match(rule.id, start, end, rule.severity, rule.message,
                                                       rule.metadata, suppressed)))
        found.sort(key=lambda entry: entry[:3])
        return tuple(entry[3] for entry in found)


@attrs.frozen
class ExampleFailure:
    """A rule example that did not behave as declared."""

    rule_id: str
    source: str
    line: int | None
    expected: str  # "match" or "no_match"
    text: str
    detail: str

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"{self.source}:{self.line}: rule {self.rule_id!r}: {self.detail}: {shown!r}"


def _check_examples(item: _Compiled) -> Iterator[ExampleFailure]:
    rule = item.rule

    def matches(example: Example) -> list[tuple[int, int]]:
        view = TextView(example.text)
        markers = _markers(example.text)
        return [span for span in item.matcher.find(view)
                if not _suppressed(rule.id, span[0], span[1], example.text, markers)]

    for example in rule.match_examples:
        if not matches(example):
            yield ExampleFailure(rule.id, rule.source, example.line, "match", example.text,
                                 "expected a match, found none")
    for example in rule.no_match_examples:
        spans = matches(example)
        if spans:
            yield ExampleFailure(rule.id, rule.source, example.line, "no_match", example.text,
                                 f"expected no match, found {len(spans)} at {spans[0][0]}..{spans[0][1]}")


def run_examples(packs: Iterable[Pack | str | Path] | None = None, *, manager: PluginManager | None = None,
                 kinds: Mapping[str, RuleKind] | None = None) -> tuple[ExampleFailure, ...]:
    """Run every rule's examples (each rule on its own); the failures, empty when all pass.

    ``packs`` defaults to every shipped pack. A pack that does not load or compile raises RuleError.
    """
    chosen = list(packs) if packs is not None else list(shipped_packs())
    loaded = [pack if isinstance(pack, Pack) else load_pack(pack) for pack in chosen]
    registry = kinds if kinds is not None else rule_kinds(manager)
    failures: list[ExampleFailure] = []
    for pack in loaded:
        for rule in pack.rules:
            failures.extend(_check_examples(_compile_rule(rule, registry)))
    _checked.flush()
    return tuple(failures)

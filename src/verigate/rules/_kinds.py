"""The built-in rule kinds: ``regex`` (tokens, with validators and allow-lists) and ``phrase`` (prose).

A rule's Python regexes are compiled at its first use (a scan whose keyword test, or the redactor's prefilter,
selected the rule), not when its pack is loaded: a process pays only for the rules its texts can need. Loading
still checks every rule as compiling it would (a bad pattern is a RuleError at load); a rule already checked
by this verigate on this Python skips that compile (see ``_checked``) and is checked in full at first use.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

import attrs

from .. import _data
from . import _checked
from ._pack import Rule
from ._text import TextView, caseless, fold
from ._validators import Validator, build_validator

_T = TypeVar("_T")

__all__ = ["PhraseKind", "RegexKind", "kind_schema"]

_FLAGS = {"ignorecase": re.IGNORECASE, "multiline": re.MULTILINE, "dotall": re.DOTALL, "verbose": re.VERBOSE,
          "ascii": re.ASCII}
_PRESETS = {
    # ${VAR}, $VAR, {{ x }}, <x>, %(x)s, {x}: configuration templates, not values
    "templated": r"\$\{[^}]*\}|^\$[A-Za-z_][A-Za-z0-9_]*$|\{\{.*?\}\}|^<[^<>]+>$|%\([^)]+\)[sd]"
                 r"|^\{[A-Za-z_][A-Za-z0-9_.]*\}$",
    # values documentation uses in place of a real one ("password1" is not among them: weak is still real)
    "placeholder": r"(?i)^(?:x{4,}|\*{3,}|\.{3,}|-+|_+|0{6,}|changeme|change_me|"
                   r"dummy\w*|example\w*|placeholder\w*|redacted|none|null|nil|true|false|"
                   r"your[_-]\w+|my[_-]\w+|insert[_-]\w+|replace[_-]?me\w*|test(?:ing)?|"
                   r"fake\w*|sample\w*|<[^>]*>)$",
}


@functools.cache
def _preset(name: str) -> re.Pattern[str]:
    """A preset's pattern, compiled when a rule using it is first compiled (not at import)."""
    return re.compile(_PRESETS[name])


def kind_schema(name: str) -> dict[str, Any]:
    """A built-in kind's field schema from the shipped pack schema (its ``$defs`` kept for references)."""
    full = _data.schema("rule-pack.schema.json")
    return {"$defs": full["$defs"], **full["$defs"][name]}


def _compile(rule: Rule, field: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise rule.error(f"invalid regular expression {pattern!r}: {exc}", field=field) from exc


class _Once(Generic[_T]):
    """A value built at its first use, once, whichever thread asks first (the others wait for it). A build that
    raises is not kept: every use raises again (a rule that cannot compile never silently matches nothing)."""

    __slots__ = ("_build", "_lock", "_value")

    def __init__(self, build: Callable[[], _T]) -> None:
        self._build = build
        self._value: _T | None = None
        self._lock = threading.Lock()

    def get(self) -> _T:
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._value = self._build()
        return value

    @property
    def built(self) -> bool:
        """Whether the value exists (reading this never builds it)."""
        return self._value is not None


def _checked_once(rule: Rule, kind: str, build: Callable[[], _T]) -> _Once[_T]:
    """``build`` (the load-time checks of a rule that need its patterns compiled, returning them compiled) run now,
    or at first use when this very rule passed them before (``_checked``); a rule that passed is recorded."""
    once = _Once(build)
    rule_digest = _checked.digest(kind, rule.fields)
    if rule_digest is not None and _checked.proven(rule_digest):
        return once
    once.get()  # a bad pattern is a RuleError now, while the pack loads
    if rule_digest is not None:
        _checked.prove(rule_digest)
    return once


def _eager(build: Callable[[], _T]) -> _Once[_T]:
    once = _Once(build)
    once.get()
    return once


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start:] if end == -1 else text[start:end]


@attrs.frozen
class _Allow:
    pattern: re.Pattern[str]
    target: str


@attrs.frozen
class _RegexParts:
    """What a ``regex`` rule compiles to: its pattern, the group it reports, its allow-list."""

    pattern: re.Pattern[str]
    group: str | int
    allows: tuple[_Allow, ...]


def _regex_parts(rule: Rule, flags: int) -> _RegexParts:
    """Compile a ``regex`` rule's patterns, with every check that needs them compiled."""
    fields = rule.fields
    pattern = _compile(rule, "pattern", fields["pattern"], flags)
    group: str | int = fields.get("group", "secret" if "secret" in pattern.groupindex else 0)
    if isinstance(group, str) and group not in pattern.groupindex:
        raise rule.error(f"the pattern has no named group {group!r}", field="group")
    if pattern.match(""):
        raise rule.error("the pattern matches the empty string", field="pattern")
    allows = []
    for entry in fields.get("allow", ()):
        if "preset" in entry:
            allows.append(_Allow(_preset(entry["preset"]), "secret"))
        else:
            allows.append(_Allow(_compile(rule, "allow", entry["regex"]), entry.get("target", "secret")))
    return _RegexParts(pattern, group, tuple(allows))


@attrs.frozen
class RegexMatcher:
    """A ``regex`` rule, its patterns compiled at first use (``source`` and ``flags`` are what it compiles)."""

    source: str
    flags: int
    keywords: tuple[str, ...]
    validators: tuple[Validator, ...]
    _parts: _Once[_RegexParts] = attrs.field(eq=False, repr=False, alias="parts")
    line_scoped: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        return self._parts.get().pattern

    @property
    def group(self) -> str | int:
        return self._parts.get().group

    @property
    def allows(self) -> tuple[_Allow, ...]:
        return self._parts.get().allows

    @property
    def compiled(self) -> bool:
        """Whether its patterns are compiled yet (reading this never compiles them)."""
        return self._parts.built

    @property
    def prefilter(self) -> tuple[str, ...]:
        """The keywords (lower-cased): without one in the lower-cased text, :meth:`find` yields nothing."""
        return self.keywords

    def _ranges(self, view: TextView) -> list[tuple[int, int]]:
        """Where to run the pattern: the whole text, or (line scope) the merged lines holding a keyword."""
        text, lowered = view.text, view.lowered
        if not self.line_scoped or len(lowered) != len(text):
            # lower() kept every offset only when the lengths agree; otherwise scan the whole text
            return [(0, len(text))]
        lines: list[tuple[int, int]] = []
        for keyword in self.keywords:
            found = lowered.find(keyword)
            while found != -1:
                line_start = text.rfind("\n", 0, found) + 1
                line_end = text.find("\n", found + len(keyword))
                line_end = len(text) if line_end == -1 else line_end
                lines.append((line_start, line_end))
                found = lowered.find(keyword, line_end)
        lines.sort()
        merged: list[tuple[int, int]] = []
        for start, end in lines:
            if merged and start <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def find(self, view: TextView) -> Iterator[tuple[int, int]]:
        if self.keywords and not any(keyword in view.lowered for keyword in self.keywords):
            return iter(())
        return self.find_prefiltered(view)

    def find_prefiltered(self, view: TextView) -> Iterator[tuple[int, int]]:
        """:meth:`find` once a keyword is known to occur (a rule set tests each keyword once for all rules)."""
        text = view.text
        if not self.line_scoped:
            return self._find_in(text, 0, len(text))
        return (span for range_start, range_end in self._ranges(view)
                for span in self._find_in(text, range_start, range_end))

    def _find_in(self, text: str, range_start: int, range_end: int) -> Iterator[tuple[int, int]]:
        parts = self._parts.get()
        group, allows = parts.group, parts.allows
        for found in parts.pattern.finditer(text, range_start, range_end):
            start, end = found.span(group)
            if start < 0 or end <= start:
                continue
            secret = text[start:end]
            if not all(validator(secret) for validator in self.validators):
                continue
            if any(self._allowed(allow, found, secret, text) for allow in allows):
                continue
            yield start, end

    @staticmethod
    def _allowed(allow: _Allow, found: re.Match[str], secret: str, text: str) -> bool:
        target = {"secret": secret, "match": found.group()}.get(allow.target)
        if target is None:
            target = _line_at(text, found.start())
        return allow.pattern.search(target) is not None


@attrs.frozen
class RegexKind:
    """``regex``: a pattern, flags, a keyword prefilter, the named group to report, validators, allow-list."""

    fields_schema: Mapping[str, Any] = attrs.field(factory=functools.partial(kind_schema, "regex_fields"))

    def compile(self, rule: Rule) -> RegexMatcher:
        fields = rule.fields
        flags = 0
        for name in fields.get("flags", ()):
            flags |= _FLAGS[name]
        # a subclass may compile differently: only this kind's own checks are known from an earlier process
        parts = (_checked_once(rule, "regex", functools.partial(_regex_parts, rule, flags)) if type(self) is RegexKind
                 else _eager(functools.partial(_regex_parts, rule, flags)))
        line_scoped = fields.get("scope", "text") == "line"
        if line_scoped and not fields.get("keywords"):
            raise rule.error("`scope: line` needs keywords: the rule runs on the lines that hold one", field="scope")
        return RegexMatcher(
            source=fields["pattern"],
            flags=flags,
            parts=parts,
            line_scoped=line_scoped,
            keywords=tuple(caseless(keyword) for keyword in fields.get("keywords", ())),
            validators=tuple(build_validator(spec) for spec in fields.get("validators", ())),
        )


# Latin letters and digits (after folding): where a phrase's Latin edge needs a word boundary
_LATIN = "0-9a-z\u00c0-\u024f"


def _is_latin(char: str) -> bool:
    return re.fullmatch(f"[{_LATIN}]", char) is not None


def _is_latin_letter(char: str) -> bool:
    return _is_latin(char) and not char.isdigit()


_BEFORE, _AFTER = f"(?<![{_LATIN}])", f"(?![{_LATIN}])"


def phrase_regex(phrase: str) -> str:
    """A literal phrase as a regex over folded text: flexible whitespace, Latin word boundaries."""
    words = fold(phrase).split()
    parts: list[str] = []
    for index, word in enumerate(words):
        if index:
            # words of Latin letters need the space ("wait for"); "Step 3" and "3 は" may drop it ("Step3は")
            between_letters = _is_latin_letter(words[index - 1][-1]) and _is_latin_letter(word[0])
            parts.append(r"\s+" if between_letters else r"\s*")
        parts.append(re.escape(word))
    body = "".join(parts)
    if _is_latin(words[0][0]):
        body = _BEFORE + body
    if _is_latin(words[-1][-1]):
        body += _AFTER
    return body


def _alternation(phrases: Sequence[str], patterns: Sequence[str]) -> str:
    """The phrases' regexes (``phrase_regex``), then the patterns, as one alternation in that order, with each run
    of consecutive phrases that have both Latin boundaries sharing one pair: ``(?<!L)(?:a|b)(?!L)`` tries a, then
    b, at a position exactly as ``(?<!L)a(?!L)|(?<!L)b(?!L)`` does (the lookbehind depends on the position alone;
    a phrase's regex has no ``|`` of its own), but ``re`` compiles each Latin class once instead of twice a phrase:
    15 ms → 1.3 ms for a rule of 22 phrases. A pattern is never merged (its own ``|`` would bind differently)."""
    pieces: list[str] = []
    run: list[str] = []
    for regex in [*phrases, ""]:  # "" ends the last run
        bounded = regex.startswith(_BEFORE) and regex.endswith(_AFTER) and len(regex) > len(_BEFORE + _AFTER)
        if bounded:
            run.append(regex[len(_BEFORE):-len(_AFTER)])
            continue
        if run:
            pieces.append(f"{_BEFORE}(?:{'|'.join(run)}){_AFTER}" if len(run) > 1 else f"{_BEFORE}{run[0]}{_AFTER}")
            run = []
        if regex:
            pieces.append(regex)
    return "|".join(f"(?:{piece})" for piece in [*pieces, *patterns])


@attrs.frozen
class PhraseMatcher:
    """A ``phrase`` rule: searches the folded text, reports spans of the original; its pattern is compiled at
    first use (a text holding none of its keywords never needs it)."""

    keywords: tuple[str, ...]
    _pattern: _Once[re.Pattern[str]] = attrs.field(eq=False, repr=False, alias="pattern")

    @property
    def pattern(self) -> re.Pattern[str]:
        return self._pattern.get()

    @property
    def compiled(self) -> bool:
        """Whether its pattern is compiled yet (reading this never compiles it)."""
        return self._pattern.built

    def find(self, view: TextView) -> Iterator[tuple[int, int]]:
        folded = view.folded
        if self.keywords and not any(keyword in folded for keyword in self.keywords):
            return
        for found in self._pattern.get().finditer(folded):
            if found.end() > found.start():
                yield view.original_span(found.start(), found.end())


def _longest_word(phrase: str) -> str:
    return max(fold(phrase).split(), key=len)


def _phrase_pattern(rule: Rule) -> re.Pattern[str]:
    """Compile a ``phrase`` rule's phrases and patterns into one pattern, with every check that needs it."""
    fields = rule.fields
    phrases: Sequence[str] = fields.get("phrases", ())
    patterns: Sequence[str] = fields.get("patterns", ())
    regexes = [phrase_regex(phrase) for phrase in phrases if phrase.strip()]
    for pattern in patterns:
        _compile(rule, "patterns", pattern, re.IGNORECASE)
    if not regexes and not patterns:
        raise rule.error("no phrase or pattern to match", field="phrases")
    combined = _compile(rule, "patterns", _alternation(regexes, patterns), re.IGNORECASE)
    if combined.match(""):
        raise rule.error("a pattern matches the empty string", field="patterns")
    return combined


@attrs.frozen
class PhraseKind:
    """``phrase``: literal phrases or small regexes, compared after NFKC + case folding."""

    fields_schema: Mapping[str, Any] = attrs.field(factory=functools.partial(kind_schema, "phrase_fields"))

    def compile(self, rule: Rule) -> PhraseMatcher:
        fields = rule.fields
        phrases: Sequence[str] = fields.get("phrases", ())
        patterns: Sequence[str] = fields.get("patterns", ())
        for phrase in phrases:
            if phrase.strip() and not fold(phrase).split():  # e.g. a lone combining dot: NFKC folds it away
                raise rule.error(f"the phrase {phrase!r} is nothing once folded (NFKC, case folding): it would "
                                 "match any text or none", field="phrases")
        build = functools.partial(_phrase_pattern, rule)
        pattern = _checked_once(rule, "phrase", build) if type(self) is PhraseKind else _eager(build)
        keywords: tuple[str, ...]
        if "keywords" in fields:
            keywords = tuple(fold(keyword) for keyword in fields["keywords"])
        elif patterns:
            keywords = ()  # a regex has no literal every match must contain: always run
        else:
            keywords = tuple(dict.fromkeys(_longest_word(phrase) for phrase in phrases if phrase.strip()))
        return PhraseMatcher(keywords, pattern)


#: verigate's own rule kinds by name: ``rules._builtin`` registers one object of each, and a rule set compiled by
#: exactly these types from shipped packs is verigate's own (``is_own_ruleset``)
BUILTIN_KINDS: Mapping[str, type[RegexKind] | type[PhraseKind]] = {"regex": RegexKind, "phrase": PhraseKind}


def builtin_kinds() -> dict[str, RegexKind | PhraseKind]:
    """A new object of each of verigate's own kinds, by name: compiling with these alone keeps every plug-in's
    kinds out (the self-gate's phrases, the EV's secret scanner)."""
    return {name: kind() for name, kind in BUILTIN_KINDS.items()}

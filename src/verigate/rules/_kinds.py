"""The built-in rule kinds: ``regex`` (tokens, with validators and allow-lists) and ``phrase`` (prose)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from .. import _data
from ._pack import Rule
from ._text import TextView, fold
from ._validators import Validator, build_validator

__all__ = ["PhraseKind", "RegexKind", "kind_schema"]

_FLAGS = {"ignorecase": re.IGNORECASE, "multiline": re.MULTILINE, "dotall": re.DOTALL, "verbose": re.VERBOSE,
          "ascii": re.ASCII}
_PRESETS = {
    # ${VAR}, $VAR, {{ x }}, <x>, %(x)s, {x}: configuration templates, not values
    "templated": re.compile(r"\$\{[^}]*\}|^\$[A-Za-z_][A-Za-z0-9_]*$|\{\{.*?\}\}|^<[^<>]+>$|%\([^)]+\)[sd]"
                            r"|^\{[A-Za-z_][A-Za-z0-9_.]*\}$"),
    # values documentation uses in place of a real one ("password1" is not among them: weak is still real)
    "placeholder": re.compile(r"(?i)^(?:x{4,}|\*{3,}|\.{3,}|-+|_+|0{6,}|changeme|change_me|"
                              r"dummy\w*|example\w*|placeholder\w*|redacted|none|null|nil|true|false|"
                              r"your[_-]\w+|my[_-]\w+|insert[_-]\w+|replace[_-]?me\w*|test(?:ing)?|"
                              r"fake\w*|sample\w*|<[^>]*>)$"),
}


def kind_schema(name: str) -> dict[str, Any]:
    """A built-in kind's field schema from the shipped pack schema (its ``$defs`` kept for references)."""
    full = _data.schema("rule-pack.schema.json")
    return {"$defs": full["$defs"], **full["$defs"][name]}


def _compile(rule: Rule, field: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise rule.error(f"invalid regular expression {pattern!r}: {exc}", field=field) from exc


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start:] if end == -1 else text[start:end]


@attrs.frozen
class _Allow:
    pattern: re.Pattern[str]
    target: str


@attrs.frozen
class RegexMatcher:
    """A compiled ``regex`` rule."""

    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    group: str | int
    validators: tuple[Validator, ...]
    allows: tuple[_Allow, ...]
    line_scoped: bool = False

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
        for found in self.pattern.finditer(text, range_start, range_end):
            start, end = found.span(self.group)
            if start < 0 or end <= start:
                continue
            secret = text[start:end]
            if not all(validator(secret) for validator in self.validators):
                continue
            if any(self._allowed(allow, found, secret, text) for allow in self.allows):
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
        pattern = _compile(rule, "pattern", fields["pattern"], flags)
        group: str | int = fields.get("group", "secret" if "secret" in pattern.groupindex else 0)
        if isinstance(group, str) and group not in pattern.groupindex:
            raise rule.error(f"the pattern has no named group {group!r}", field="group")
        if pattern.match(""):
            raise rule.error("the pattern matches the empty string", field="pattern")
        allows = []
        for entry in fields.get("allow", ()):
            if "preset" in entry:
                allows.append(_Allow(_PRESETS[entry["preset"]], "secret"))
            else:
                allows.append(_Allow(_compile(rule, "allow", entry["regex"]), entry.get("target", "secret")))
        line_scoped = fields.get("scope", "text") == "line"
        if line_scoped and not fields.get("keywords"):
            raise rule.error("`scope: line` needs keywords: the rule runs on the lines that hold one", field="scope")
        return RegexMatcher(
            pattern=pattern,
            line_scoped=line_scoped,
            keywords=tuple(keyword.lower() for keyword in fields.get("keywords", ())),
            group=group,
            validators=tuple(build_validator(spec) for spec in fields.get("validators", ())),
            allows=tuple(allows),
        )


# Latin letters and digits (after folding): where a phrase's Latin edge needs a word boundary
_LATIN = "0-9a-z\u00c0-\u024f"


def _is_latin(char: str) -> bool:
    return re.fullmatch(f"[{_LATIN}]", char) is not None


def _is_latin_letter(char: str) -> bool:
    return _is_latin(char) and not char.isdigit()


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
        body = f"(?<![{_LATIN}])" + body
    if _is_latin(words[-1][-1]):
        body += f"(?![{_LATIN}])"
    return body


@attrs.frozen
class PhraseMatcher:
    """A compiled ``phrase`` rule: searches the folded text, reports spans of the original."""

    pattern: re.Pattern[str]
    keywords: tuple[str, ...]

    def find(self, view: TextView) -> Iterator[tuple[int, int]]:
        folded = view.folded
        if self.keywords and not any(keyword in folded for keyword in self.keywords):
            return
        for found in self.pattern.finditer(folded):
            if found.end() > found.start():
                yield view.original_span(found.start(), found.end())


def _longest_word(phrase: str) -> str:
    return max(fold(phrase).split(), key=len)


@attrs.frozen
class PhraseKind:
    """``phrase``: literal phrases or small regexes, compared after NFKC + case folding."""

    fields_schema: Mapping[str, Any] = attrs.field(factory=functools.partial(kind_schema, "phrase_fields"))

    def compile(self, rule: Rule) -> PhraseMatcher:
        fields = rule.fields
        phrases: Sequence[str] = fields.get("phrases", ())
        patterns: Sequence[str] = fields.get("patterns", ())
        alternatives = [phrase_regex(phrase) for phrase in phrases if phrase.strip()]
        for pattern in patterns:
            _compile(rule, "patterns", pattern, re.IGNORECASE)
            alternatives.append(pattern)
        if not alternatives:
            raise rule.error("no phrase or pattern to match", field="phrases")
        combined = _compile(rule, "patterns", "|".join(f"(?:{alt})" for alt in alternatives), re.IGNORECASE)
        if combined.match(""):
            raise rule.error("a pattern matches the empty string", field="patterns")
        keywords: tuple[str, ...]
        if "keywords" in fields:
            keywords = tuple(fold(keyword) for keyword in fields["keywords"])
        elif patterns:
            keywords = ()  # a regex has no literal every match must contain: always run
        else:
            keywords = tuple(dict.fromkeys(_longest_word(phrase) for phrase in phrases if phrase.strip()))
        return PhraseMatcher(combined, keywords)


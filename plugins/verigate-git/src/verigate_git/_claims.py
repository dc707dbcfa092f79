"""The claim-phrase pack (rules as data) and the small matcher that finds claims in an agent's answer."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import attrs
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from verigate import RuleError

__all__ = ["ClaimKind", "ClaimPack", "ClaimRule", "Claims", "default_pack", "load_pack"]

ClaimKind = Literal["commit", "push", "file_created", "file_changed"]
_KINDS: tuple[ClaimKind, ...] = ("commit", "push", "file_created", "file_changed")
_FLAGS = re.IGNORECASE | re.MULTILINE
#: a sentence ends at . ! ? followed by white space or the end, or at a line break ("app.py" is no end)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_WORD = re.compile(r"[\w'’]+")


@attrs.frozen
class Claims:
    """What an answer claims about the repository."""

    commit: bool = False
    push: bool = False
    created: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return self.commit or self.push or bool(self.created) or bool(self.changed)


@attrs.frozen
class ClaimRule:
    """One rule of the pack: its patterns are evidence of one claim kind."""

    rule_id: str
    claim: ClaimKind
    message: str
    patterns: tuple[re.Pattern[str], ...]
    match_examples: tuple[str, ...] = ()
    no_match_examples: tuple[str, ...] = ()


@attrs.frozen
class ClaimPack:
    """The compiled pack: rules, negation words and the path-token pattern."""

    name: str
    rules: tuple[ClaimRule, ...]
    negations: tuple[str, ...]
    negation_window: int
    path_pattern: re.Pattern[str]

    def rules_matching(self, text: str) -> Iterator[tuple[ClaimRule, re.Match[str]]]:
        """Every (rule, match) whose match is not negated in its sentence."""
        for rule in self.rules:
            for pattern in rule.patterns:
                for match in pattern.finditer(text):
                    if not self._negated(text, match.start()):
                        yield rule, match

    def scan(self, text: str) -> Claims:
        """The claims an answer makes; file claims keep their paths in order of appearance, without duplicates."""
        found: dict[ClaimKind, list[str]] = {kind: [] for kind in _KINDS}
        flags: set[ClaimKind] = set()
        for rule, match in self.rules_matching(text):
            flags.add(rule.claim)
            if rule.claim in ("file_created", "file_changed"):
                for path in self._paths_near(text, match):
                    if path not in found[rule.claim]:
                        found[rule.claim].append(path)
        return Claims(
            commit="commit" in flags,
            push="push" in flags,
            created=tuple(found["file_created"]),
            changed=tuple(found["file_changed"]),
        )

    def _negated(self, text: str, start: int) -> bool:
        before = text[_sentence_start(text, start):start].lower()
        words = _WORD.findall(before)[-self.negation_window:] if self.negation_window else []
        window = " ".join(words)
        return any(_contains_phrase(window, negation) for negation in self.negations)

    def _paths_near(self, text: str, match: re.Match[str]) -> list[str]:
        """Path tokens from the match to the end of its sentence, else (passive voice) from its sentence start."""
        end = _sentence_end(text, match.end())
        paths = self._paths(text[match.start():end])
        return paths or self._paths(text[_sentence_start(text, match.start()):match.start()])

    def _paths(self, fragment: str) -> list[str]:
        return [
            token.group("path")
            for token in self.path_pattern.finditer(fragment)
            if not _is_url_part(fragment, token.start())
        ]


def _contains_phrase(window: str, phrase: str) -> bool:
    if phrase.startswith(("'", "n'")):
        return phrase in window
    return re.search(rf"\b{re.escape(phrase)}\b", window) is not None


def _is_url_part(fragment: str, start: int) -> bool:
    """A token inside a word holding "://" is part of a URL, not a repository path."""
    word_start = max(fragment.rfind(" ", 0, start), fragment.rfind("\n", 0, start)) + 1
    word_end = fragment.find(" ", start)
    return "://" in fragment[word_start:word_end if word_end >= 0 else len(fragment)]


def _sentence_start(text: str, position: int) -> int:
    last = 0
    for boundary in _SENTENCE_END.finditer(text, 0, position):
        last = boundary.end()
    return last


def _sentence_end(text: str, position: int) -> int:
    boundary = _SENTENCE_END.search(text, position)
    return boundary.start() if boundary else len(text)


def _line(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None else None


def _strings(value: Any, what: str, source: str, line: int | None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RuleError(f"{what} must be a list of strings", source=source, line=line, field=what)
    return tuple(value)


def _compile(pattern: str, source: str, line: int | None, field: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, _FLAGS)
    except re.error as exc:
        raise RuleError(f"invalid regular expression: {exc}", source=source, line=line, field=field) from exc


def _rule(node: Any, source: str) -> ClaimRule:
    line = _line(node)
    if not isinstance(node, Mapping):
        raise RuleError("a rule must be a mapping", source=source, line=line)
    rule_id = node.get("id")
    if not isinstance(rule_id, str) or not rule_id:
        raise RuleError("a rule needs a non-empty id", source=source, line=line, field="id")
    claim = node.get("claim")
    if claim not in _KINDS:
        raise RuleError(f"claim must be one of {', '.join(_KINDS)}", source=source, line=line, field=f"{rule_id}.claim")
    patterns = _strings(node.get("patterns"), f"{rule_id}.patterns", source, line)
    if not patterns:
        raise RuleError("a rule needs at least one pattern", source=source, line=line, field=f"{rule_id}.patterns")
    examples = node.get("examples") or {}
    return ClaimRule(
        rule_id=rule_id,
        claim=claim,
        message=str(node.get("message", "")),
        patterns=tuple(_compile(p, source, line, f"{rule_id}.patterns") for p in patterns),
        match_examples=_strings(examples.get("match", []), f"{rule_id}.examples.match", source, line),
        no_match_examples=_strings(examples.get("no_match", []), f"{rule_id}.examples.no_match", source, line),
    )


def load_pack(text: str, source: str) -> ClaimPack:
    """Parse and check a claim pack; every problem is a RuleError naming the file, line and field."""
    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(f"not valid YAML: {exc}", source=source, line=mark.line + 1 if mark else None) from exc
    if not isinstance(data, Mapping):
        raise RuleError("a claim pack must be a mapping", source=source, line=1)
    rules = data.get("rules")
    if not isinstance(rules, list) or not rules:
        raise RuleError("a claim pack needs a non-empty list of rules", source=source, line=_line(data), field="rules")
    path_pattern = data.get("path_pattern")
    if not isinstance(path_pattern, str) or "(?P<path>" not in path_pattern:
        raise RuleError("path_pattern must be a regex with a (?P<path>...) group", source=source,
                        line=_line(data), field="path_pattern")
    window = data.get("negation_window", 6)
    if not isinstance(window, int) or window < 0:
        raise RuleError("negation_window must be a non-negative integer", source=source, field="negation_window")
    compiled = tuple(_rule(node, source) for node in rules)
    seen: set[str] = set()
    for rule in compiled:
        if rule.rule_id in seen:
            raise RuleError(f"duplicate rule id {rule.rule_id!r}", source=source, field="rules")
        seen.add(rule.rule_id)
    return ClaimPack(
        name=str(data.get("pack", source)),
        rules=compiled,
        negations=tuple(n.lower() for n in _strings(data.get("negations", []), "negations", source, _line(data))),
        negation_window=window,
        path_pattern=_compile(path_pattern, source, _line(data), "path_pattern"),
    )


def default_pack(path: str | Path | None = None) -> ClaimPack:
    """The pack shipped inside this package, or the one at ``path``."""
    if path is not None:
        location = Path(path)
        try:
            return load_pack(location.read_text(encoding="utf-8"), str(location))
        except OSError as exc:
            raise RuleError(f"cannot read claim pack: {exc}", source=str(location)) from exc
    shipped = resources.files(__package__) / "git-claims.yaml"
    return load_pack(shipped.read_text(encoding="utf-8"), "verigate_git/git-claims.yaml")

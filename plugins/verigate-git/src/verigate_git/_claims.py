"""The claim pack (a verigate rule pack) and what its matches mean: claims, negations, named paths."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from verigate.rules import Match, Pack, PhraseKind, RegexKind, RuleKind, RuleSet, load_pack, load_pack_text

__all__ = ["CLAIM_KINDS", "ClaimKind", "ClaimPack", "Claims", "default_pack"]

ClaimKind = Literal["commit", "push", "file_created", "file_changed"]
CLAIM_KINDS: tuple[ClaimKind, ...] = ("commit", "push", "file_created", "file_changed")
#: the two built-in kinds are all the pack uses; naming them avoids building a plug-in manager per pack
# (cast: the frozen kinds' read-only ``fields_schema`` does not satisfy the protocol's settable attribute for mypy)
_KINDS: dict[str, RuleKind] = {"phrase": PhraseKind(), "regex": RegexKind()}
#: a sentence ends at . ! ? followed by white space or the end, or at a line break ("app.py" is no end)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_WORD = re.compile(r"[\w'’]+")
#: a negation does not reach past a clause boundary ("I did not commit, but I pushed")
_CLAUSE_BREAK = re.compile(r"[,;:]|\bbut\b", re.IGNORECASE)


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
class ClaimPack:
    """A compiled claim pack: every rule is a claim, a negation or a path rule (by its metadata)."""

    pack: Pack
    rules: RuleSet
    negation_window: int

    @classmethod
    def from_pack(cls, pack: Pack) -> ClaimPack:
        """Check that every rule says what its matches mean, then compile the pack."""
        window = 0
        for rule in pack.rules:
            claim, role = rule.metadata.get("claim"), rule.metadata.get("role")
            if (claim is None) == (role is None) or (claim is not None and claim not in CLAIM_KINDS) or (
                role is not None and role not in ("negation", "path")
            ):
                raise rule.error(
                    f"metadata needs exactly one of claim ({', '.join(CLAIM_KINDS)}) or role (negation, path)",
                    field="metadata",
                )
            if role == "negation":
                window = _window(rule.metadata.get("window_words", 6), rule.error)
        return cls(pack, RuleSet.compile([pack], kinds=_KINDS), window)

    def scan(self, text: str) -> Claims:
        """The claims an answer makes; file claims keep their paths in order of appearance, without duplicates."""
        matches = [match for match in self.rules.scan(text) if not match.suppressed]
        negations = [match for match in matches if match.metadata.get("role") == "negation"]
        paths = [match for match in matches if match.metadata.get("role") == "path"
                 and not _is_url_part(text, match.start)]
        flags: set[str] = set()
        named: dict[str, list[str]] = {"file_created": [], "file_changed": []}
        for match in matches:
            claim = match.metadata.get("claim")
            if claim is None or self._negated(text, match, negations):
                continue
            flags.add(claim)
            if claim in named:
                for path in _paths_near(text, match, paths):
                    if path not in named[claim]:
                        named[claim].append(path)
        return Claims(
            commit="commit" in flags,
            push="push" in flags,
            created=tuple(named["file_created"]),
            changed=tuple(named["file_changed"]),
        )

    def _negated(self, text: str, claim: Match, negations: Sequence[Match]) -> bool:
        sentence_start = _sentence_start(text, claim.start)
        return any(
            sentence_start <= negation.start < claim.start
            and len(_WORD.findall(text[negation.end:claim.start])) < self.negation_window
            and not _CLAUSE_BREAK.search(text, negation.end, claim.start)
            for negation in negations
        )


def _window(value: Any, error: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise error("window_words must be a non-negative integer", field="metadata")
    return value


def _paths_near(text: str, claim: Match, paths: Sequence[Match]) -> list[str]:
    """Paths from the claim to the end of its sentence, else (passive voice) from the sentence start to it."""
    end = _sentence_end(text, claim.end)
    after = [text[p.start:p.end] for p in paths if claim.start <= p.start < end]
    if after:
        return after
    start = _sentence_start(text, claim.start)
    return [text[p.start:p.end] for p in paths if start <= p.start < claim.start]


def _is_url_part(text: str, start: int) -> bool:
    """A token inside a word holding "://" is part of a URL, not a repository path."""
    word_start = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
    word_end = min((i for i in (text.find(" ", start), text.find("\n", start)) if i >= 0), default=len(text))
    return "://" in text[word_start:word_end]


def _sentence_start(text: str, position: int) -> int:
    last = 0
    for boundary in _SENTENCE_END.finditer(text, 0, position):
        last = boundary.end()
    return last


def _sentence_end(text: str, position: int) -> int:
    boundary = _SENTENCE_END.search(text, position)
    return boundary.start() if boundary else len(text)


def default_pack(path: str | Path | None = None) -> ClaimPack:
    """The pack shipped inside this package, or the rule pack at ``path``; a bad pack is a RuleError."""
    if path is not None:
        return ClaimPack.from_pack(load_pack(Path(path)))
    shipped: Any = Path(__file__).with_name("git-claims.yaml")  # installed as files: no importlib.resources
    if not shipped.is_file():  # imported from an archive
        from importlib import resources

        shipped = resources.files(__package__) / "git-claims.yaml"
    return ClaimPack.from_pack(load_pack_text(shipped.read_text(encoding="utf-8"), "verigate_git/git-claims.yaml"))


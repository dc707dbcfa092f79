"""The self-gate phrase pack on top of the rule engine: gate openings in prose, close commands in prompts."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from .._builtin_sha256 import sha256_hex
from .._errors import VerigateError
from .._fileio import replace_file
from ._entries import GATE_ID_PATTERN
from ._keywords import contains_keyword, normalise_prompt

if TYPE_CHECKING:
    from ..rules import Pack, Rule, RuleKind, RuleSet

__all__ = ["CloseCommand", "PhraseHit", "Phrases", "Prefilter", "Screen", "load", "mask_non_prose"]

PACK = "self-gate"
Role = Literal["open", "close_one", "close_id", "close_all", "not_close"]
ROLES: frozenset[str] = frozenset({"open", "close_one", "close_id", "close_all", "not_close"})
CLOSE_ROLES = frozenset({"close_one", "close_id", "close_all"})

# Text an agent quotes or shows as code is not something it declares: masked (same length, so spans stay
# valid) before opening rules run. Single quotes are left alone: English apostrophes make them ambiguous.
_NOT_PROSE = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)"  # fenced code
    r"|`[^`\n]+`"  # inline code
    r"|(?m:^[ \t]*>[^\n]*$)"  # quoted lines
    r'|"[^"\n]{1,300}"|“[^”\n]{1,300}”|「[^」\n]{1,300}」|『[^』\n]{1,300}』',  # quoted spans
    re.DOTALL,
)
# an ASCII . ! ? ends a sentence only before white space or the end ("before editing a.py." keeps "a.py")
_SENTENCE_END = re.compile(r"[。．！？\n]|[.!?](?=\s|\Z)")
_GATE_ID = re.compile(GATE_ID_PATTERN)
GATE_TEXT_LIMIT = 240


def mask_non_prose(text: str) -> str:
    """Replace code, quoted lines and quoted spans with spaces (newlines kept)."""
    return _NOT_PROSE.sub(lambda found: re.sub(r"[^\n]", " ", found.group()), text)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around a match, as the gate's text (bounded so a huge message stays readable)."""
    left = start
    while left > 0 and not _SENTENCE_END.match(text, left - 1) and start - left < GATE_TEXT_LIMIT // 2:
        left -= 1
    found = _SENTENCE_END.search(text, end)
    right = min(found.end() if found else len(text), end + GATE_TEXT_LIMIT // 2)
    return " ".join(text[left:right].split())


@attrs.frozen
class PhraseHit:
    rule_id: str
    role: str
    start: int
    end: int
    #: the matched text (for ids) and the sentence around it (for people)
    matched: str
    sentence: str


@attrs.frozen
class CloseCommand:
    """A prompt that is, as a whole, a close phrase."""

    role: str  # close_one | close_id | close_all
    rule_id: str
    gate_id: str | None
    text: str


class Phrases:
    """The compiled self-gate pack. Loading costs tens of milliseconds, so hooks create it only when there is
    prose or a prompt to check (see :func:`load`)."""

    def __init__(self, ruleset: RuleSet) -> None:
        self._ruleset = ruleset
        for rule in ruleset.rules:
            role = rule.metadata.get("self_gate")
            if role not in ROLES:
                raise rule.error(f"metadata.self_gate must be one of {sorted(ROLES)}, not {role!r}",
                                 field="metadata")

    def _hits(self, text: str, roles: frozenset[str]) -> list[PhraseHit]:
        hits = []
        for match in self._ruleset.scan(text):
            role = str(match.metadata.get("self_gate"))
            # an inline `verigate: allow` is honoured nowhere here: the agent writes the text it would suppress
            if role in roles:
                hits.append(PhraseHit(match.rule_id, role, match.start, match.end, text[match.start:match.end],
                                      _sentence(text, match.start, match.end)))
        return hits

    def openings(self, text: str) -> list[PhraseHit]:
        """Gate declarations in an assistant message's prose (code and quotations are not declarations)."""
        masked = mask_non_prose(text)
        return [attrs.evolve(hit, matched=text[hit.start:hit.end], sentence=_sentence(text, hit.start, hit.end))
                for hit in self._hits(masked, frozenset({"open"}))]

    def not_close(self, prompt: str) -> list[PhraseHit]:
        """Goal settings, autonomy instructions and approval claims in a prompt."""
        return self._hits(prompt, frozenset({"not_close"}))

    def close_command(self, prompt: str) -> CloseCommand | None:
        """The close command a prompt is, when the whole prompt is one close phrase and nothing in it is a
        never-close phrase; None otherwise."""
        text = normalise_prompt(prompt)
        if not text or self.not_close(text):
            return None
        for hit in self._hits(text, CLOSE_ROLES):
            if hit.start == 0 and hit.end == len(text):
                found = _GATE_ID.search(hit.matched.lower())
                gate = found.group() if found and hit.role == "close_id" else None
                return CloseCommand(hit.role, hit.rule_id, gate, text)
        return None

    def is_close_phrase(self, text: str) -> bool:
        return self.close_command(text) is not None

    def compiled_rules(self) -> list[tuple[Rule, tuple[str, ...]]]:
        """Each rule with the keywords its compiled matcher requires before it runs (empty: always runs)."""
        return [(item.rule, tuple(getattr(item.matcher, "keywords", ()) or ())) for item in self._ruleset.compiled]


def _builtin_kinds() -> dict[str, RuleKind]:
    from ..rules import builtin_kinds

    return dict(builtin_kinds())


@functools.cache
def load() -> Phrases:
    """The shipped self-gate pack compiled with the built-in kinds (no plug-in discovery on the hook path)."""
    from ..rules import RuleSet, load_pack

    return Phrases(RuleSet.compile([load_pack(PACK)], kinds=_builtin_kinds()))


def _pack_to_json(pack: Pack) -> dict[str, Any]:
    """What scanning needs of a loaded pack (examples are for tests, not for the hooks)."""
    return {"name": pack.name, "source": pack.source, "version": pack.version, "disables": list(pack.disables),
            "rules": [{"id": rule.id, "kind": rule.kind, "severity": rule.severity, "message": rule.message,
                       "fields": dict(rule.fields), "metadata": dict(rule.metadata), "line": rule.line}
                      for rule in pack.rules]}


def _pack_from_json(data: Mapping[str, Any]) -> Pack:
    from ..rules import Pack, Rule

    rules = tuple(Rule(id=item["id"], kind=item["kind"], severity=item["severity"], message=item["message"],
                       fields=item["fields"], metadata=item["metadata"], source=data["source"], line=item["line"])
                  for item in data["rules"])
    return Pack(name=data["name"], rules=rules, source=data["source"], version=data["version"],
                disables=tuple(data["disables"]))


@attrs.frozen
class Prefilter:
    """Which roles could match a text, decided without the rule engine: for each role, the keywords its rules
    require (a role maps to None when one of its rules has no keyword and so always runs). Built from the
    compiled pack and cached next to the store, keyed by the pack's hash."""

    keywords: Mapping[str, tuple[str, ...] | None]

    @classmethod
    def of(cls, phrases: Phrases) -> Prefilter:
        keywords: dict[str, tuple[str, ...] | None] = {}
        for rule, required in phrases.compiled_rules():
            role = str(rule.metadata.get("self_gate"))
            # a keyword holding a quote could depend on the engine's quote folding: such a rule always runs
            if not required or any(quote in keyword for keyword in required for quote in "'\""):
                keywords[role] = None
            elif keywords.get(role, ()) is not None:
                keywords[role] = (*(keywords.get(role) or ()), *required)
        return cls(keywords)

    def may_match(self, text: str, roles: Iterable[str]) -> bool:
        """False only when no rule of these roles can match (the engine would find its keywords missing)."""
        for role in roles:
            if role not in self.keywords:
                continue
            required = self.keywords[role]
            if required is None or contains_keyword(text, required):
                return True
        return False

    def close_keywords(self) -> tuple[str, ...] | None:
        """Every keyword of the close roles, one of which each close phrase contains; None when a close rule
        has no keyword (it always runs)."""
        keywords: list[str] = []
        for role in sorted(CLOSE_ROLES):
            required = self.keywords.get(role, ())
            if required is None:
                return None
            keywords += required
        return tuple(keywords)


class Screen:
    """Phrase checks for the hooks: a cached prefilter first, the rule engine only when it may match. Both the
    prefilter and the parsed pack are cached in ``cache_dir`` (the store's state folder, which the agent may not
    write) under the hash of the shipped pack, so a hook never parses the YAML twice."""

    def __init__(self, cache_dir: Path) -> None:
        self._cache_dir = cache_dir

    @functools.cached_property
    def _digest(self) -> str:
        from .. import _data

        return sha256_hex(_data.read_text("rules", f"{PACK}.yaml").encode("utf-8"))[:16]

    def _read(self, kind: str) -> Any:
        try:
            return json.loads((self._cache_dir / f"phrase-{kind}-{self._digest}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _write(self, kind: str, data: Any) -> None:
        path = self._cache_dir / f"phrase-{kind}-{self._digest}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        except OSError:
            pass  # a cache that cannot be written only costs the next call the same work

    @functools.cached_property
    def phrases(self) -> Phrases:
        from ..rules import RuleSet, load_pack

        cached = self._read("pack")
        if cached is not None:
            try:
                return Phrases(RuleSet.compile([_pack_from_json(cached)], kinds=_builtin_kinds()))
            except (KeyError, TypeError, ValueError, VerigateError):
                pass  # a stale or damaged cache: rebuild it from the shipped pack below
        pack = load_pack(PACK)
        self._write("pack", _pack_to_json(pack))
        return Phrases(RuleSet.compile([pack], kinds=_builtin_kinds()))

    @functools.cached_property
    def prefilter(self) -> Prefilter:
        cached = self._read("prefilter")
        if isinstance(cached, dict):
            try:
                return Prefilter({role: tuple(words) if words is not None else None for role, words in cached.items()})
            except TypeError:
                pass  # damaged: rebuilt below
        built = Prefilter.of(self.phrases)
        self._write("prefilter", {role: list(words) if words is not None else None
                                  for role, words in built.keywords.items()})
        return built

    def openings(self, text: str) -> list[PhraseHit]:
        return self.phrases.openings(text) if self.prefilter.may_match(text, ("open",)) else []

    def is_close_phrase(self, text: str) -> bool:
        return self.prefilter.may_match(text, CLOSE_ROLES) and self.phrases.is_close_phrase(text)

    def not_close(self, prompt: str) -> list[PhraseHit]:
        """:meth:`Phrases.not_close`, without the rule engine when no never-close rule can match (a prompt while
        a gate is open: most say "go on" and need only the reminder)."""
        return self.phrases.not_close(prompt) if self.prefilter.may_match(prompt, ("not_close",)) else []

    def close_command(self, prompt: str) -> CloseCommand | None:
        """:meth:`Phrases.close_command`, without the rule engine when no close rule can match: the engine would
        scan exactly this normalised text and find every close rule's keywords missing (most prompts)."""
        if not self.prefilter.may_match(normalise_prompt(prompt), CLOSE_ROLES):
            return None
        return self.phrases.close_command(prompt)

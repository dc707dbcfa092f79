"""The judge-call cache (``judge.cache``, opt-in): an identical redacted judge request within the TTL reuses the
verdict the store kept for it.

The key is the sha256 of the canonical JSON of what the judge is shown (the redacted request, answer, tool calls,
requirements, known misses and the settled personal-data flag; not the session, turn or attempt, so a rerun of the
same trajectory in CI hits) and of the engine configuration (engine, client, model, base URL, trust, threshold,
caps, options, the engine's own label, a callable's name and code, the prompt and verdict-schema texts and
verigate's version; never a key, nor the name of its variable). Only a clean verdict is ever stored — never a
verification error, never a verdict the verdict schema cannot express — and an entry is read back through the
same validation as a fresh reply (:func:`verigate.judge.parse_verdict`), bound to its key: a damaged entry is a
miss, judged afresh, never a pass. Every read or write failure is a miss too (best effort, like the other records).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import marshal
import re
from collections.abc import Mapping
from typing import Any

import attrs

from .._data import read_text
from .._errors import JudgeError, StoreError
from .._logging import get_logger
from .._models import Verdict
from ..judge._base import JudgeConfig, JudgeEngine, JudgeRequest
from ..judge._verdict import VERDICT_SCHEMA, parse_verdict
from ..store._base import Store
from ..store._chain import canonical_json
from ._containment import contain

__all__ = ["ENTRY_FORMAT", "CacheEntry", "JudgeCache", "cache_key", "entry_of", "verdict_of"]

log = get_logger("verigate.gate")
#: bumped when the key material or the entry layout changes: older entries then simply miss
ENTRY_FORMAT = 1
#: an engine label longer than this is not one verigate wrote
_MAX_LABEL_CHARS = 500
_KEY = re.compile(r"[0-9a-f]{64}")
_ENTRY_KEYS = frozenset({"format", "key", "verdict", "retryable", "effective_engine"})


@functools.cache
def _prompt_sha256() -> str:
    """The texts that shape every verdict: the judge prompts and the verdict schema."""
    digest = hashlib.sha256()
    for folder, name in (("prompts", "judge_system.txt"), ("prompts", "judge_user.txt"), ("schemas", VERDICT_SCHEMA)):
        digest.update(name.encode("utf-8") + b"\0" + read_text(folder, name).encode("utf-8") + b"\0")
    return digest.hexdigest()


def _engine_label(engine: JudgeEngine) -> str:
    """What the engine says it is (``llm_judge/openai:gpt-4o-mini``, ``llm_judge/callable:<function>``): two
    runtimes' own model functions under one configuration are different judges."""
    label = getattr(engine, "effective_engine", None)
    if isinstance(label, str) and label:
        return label
    kind = type(engine)
    return f"{kind.__module__}.{kind.__qualname__}"


def _function_identity(function: object) -> dict[str, str | None] | None:
    """What a ``client: callable`` function is: its qualified name and the sha256 of its code (of its class's
    ``__call__`` for a callable object). The engine label names it by ``model`` when one is set, so two functions
    under one model name (a test's always-pass stub and the real call over one store) would otherwise share
    verdicts. Values a closure captured are not in it: two closures of one function are one judge to the cache."""
    if function is None:
        return None
    target = getattr(function, "__func__", function)  # a bound method: its function
    code = getattr(target, "__code__", None)
    owner: object = target if code is not None or inspect.isroutine(target) else type(target)
    if owner is not target:
        code = getattr(inspect.getattr_static(type(target), "__call__", None), "__code__", None)
    try:
        digest = hashlib.sha256(marshal.dumps(code)).hexdigest() if code is not None else None
    except ValueError:  # a code object marshal cannot write: the name alone
        digest = None
    name = getattr(owner, "__qualname__", None) or type(owner).__name__
    return {"name": f"{getattr(owner, '__module__', None)}.{name}", "code_sha256": digest}


def cache_key(request: JudgeRequest, config: JudgeConfig, engine: JudgeEngine) -> str:
    """The sha256 hex of the redacted request and the engine configuration; StoreError when a value cannot be
    written as JSON (an option that is not JSON): then nothing is cached."""
    from .. import __version__

    candidate = request.candidate
    material = {
        "format": ENTRY_FORMAT,
        "verigate": __version__,
        "request": {
            "request": candidate.request,
            "final_text": candidate.final_text,
            "tool_calls": [{"name": call.name, "input": dict(call.input), "output": call.output, "ok": call.ok}
                           for call in candidate.tool_calls],
            "requirements": list(request.requirements),
            "known_misses": list(request.known_misses),
            "contains_personal_data": candidate.contains_personal_data,
        },
        "engine": {
            "engine": config.engine, "client": config.client, "model": config.model, "base_url": config.base_url,
            "trust": config.trust, "threshold": config.threshold, "caps": attrs.asdict(config.caps),
            "options": dict(config.options), "label": _engine_label(engine), "prompts_sha256": _prompt_sha256(),
            "function": _function_identity(config.function),
        },
    }
    return hashlib.sha256(canonical_json(material, field="judge cache key").encode("utf-8")).hexdigest()


def entry_of(key: str, verdict: Verdict) -> dict[str, Any] | None:
    """The stored form of a clean verdict, or None when it must not be cached (an error, or a verdict without the
    score and reflection the verdict schema requires: it could not be validated when read back)."""
    if verdict.is_verification_error or verdict.score is None or verdict.reflection is None:
        return None
    entry = {
        "format": ENTRY_FORMAT,
        "key": key,
        "verdict": {
            "passed": verdict.passed,
            "score": verdict.score,
            "rubric_misses": list(verdict.rubric_misses),
            "reflection": {"observation": verdict.reflection.observation, "lesson": verdict.reflection.lesson,
                           "next_check": verdict.reflection.next_check},
        },
        "retryable": verdict.retryable,
        "effective_engine": verdict.effective_engine,
    }
    try:  # what could not be read back is not written
        verdict_of(key, entry, engine=verdict.engine)
    except JudgeError:
        return None
    return entry


def verdict_of(key: str, entry: object, *, engine: str) -> Verdict:
    """The cached verdict, validated like a fresh reply; JudgeError("invalid_judge_response") for a damaged entry."""
    if not isinstance(entry, Mapping) or set(entry) != _ENTRY_KEYS:
        raise JudgeError("invalid_judge_response", "the cache entry does not have the entry's keys")
    if entry["format"] != ENTRY_FORMAT or isinstance(entry["format"], bool) or entry["key"] != key:
        raise JudgeError("invalid_judge_response", "the cache entry is of another format or another key")
    label, retryable = entry["effective_engine"], entry["retryable"]
    if not isinstance(label, str) or len(label) > _MAX_LABEL_CHARS or not isinstance(retryable, bool):
        raise JudgeError("invalid_judge_response", "the cache entry's engine label or retryable flag is malformed")
    parsed = parse_verdict(entry["verdict"], engine=engine, effective_engine=label)
    # a pass is never retryable; a fail keeps the engine's own word (a plug-in's hard fail stays one)
    return attrs.evolve(parsed, retryable=retryable and not parsed.passed)


@attrs.frozen
class CacheEntry:
    """A fresh clean verdict to store once the decision is recorded."""

    key: str
    entry: Mapping[str, Any]


@attrs.frozen
class JudgeCache:
    """The judge-call cache of one gate: its store and TTL."""

    store: Store
    ttl_s: float

    @classmethod
    def of(cls, config: JudgeConfig | None, store: Store) -> JudgeCache | None:
        if config is None or config.cache is None:
            return None
        return cls(store, float(config.cache.ttl_s))

    def read(self, keys: Mapping[int, str], engines: Mapping[int, str]) -> dict[int, Verdict]:
        """The valid cached verdicts of the given members' keys (a blocking store read: call it in a worker
        thread). A failed read or a damaged entry is left out: that member is judged afresh."""
        found: dict[int, Verdict] = {}
        for index, key in keys.items():
            try:
                entry = self.store.cached_verdict(key)
            except BaseException as exc:  # best effort: a store that cannot answer is a miss
                contain(exc)
                log.warning("judge cache read failed (judging afresh): %s: %s", type(exc).__name__, exc)
                continue
            if entry is None:
                continue
            try:
                found[index] = verdict_of(key, entry, engine=engines[index])
            except JudgeError as exc:
                log.warning("judge cache entry %s… is damaged (judging afresh): %s", key[:12], exc)
        return found

    def write(self, entry: CacheEntry) -> None:
        """Store one entry (raises what the store raises; the caller's records are best effort)."""
        if not _KEY.fullmatch(entry.key):
            raise StoreError("a judge cache key is a sha256 hex digest", field="key")
        self.store.cache_verdict(entry.key, entry.entry, self.ttl_s)

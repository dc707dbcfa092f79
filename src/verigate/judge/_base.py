"""The judge interfaces: configuration, the request an engine judges, engines and model clients."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from .. import _face
from .._models import Candidate, Verdict

__all__ = [
    "MAX_JUDGE_TIMEOUT_S",
    "ChatRequest",
    "DecisionClient",
    "JudgeCacheConfig",
    "JudgeCaps",
    "JudgeConfig",
    "JudgeEngine",
    "JudgeEngineFactory",
    "JudgeRequest",
    "ModelClient",
    "ModelClientFactory",
]

#: the judge is never given more than this, whatever the configuration says (SPEC §1.2.3)
MAX_JUDGE_TIMEOUT_S = 120.0


@attrs.frozen
class JudgeCaps:
    """How much of the candidate reaches the judge prompt (origin caps, SPEC §1.4)."""

    request_chars: int = 4000
    candidate_chars: int = 2000
    observations: int = 12
    observation_result_chars: int = 1000
    observation_input_chars: int = 300
    observation_other_chars: int = 160


@attrs.frozen
class JudgeCacheConfig:
    """``judge.cache``: an identical redacted judge request within ``ttl_s`` seconds reuses the stored verdict
    (opt-in; see docs/judges.md "The judge-call cache")."""

    ttl_s: float


@attrs.frozen
class JudgeConfig:
    """The ``judge:`` section of verigate.yaml (names are a contract, see README)."""

    engine: str = "llm_judge"
    client: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    trust: Literal["primary", "auxiliary"] = "primary"
    timeout_s: float = MAX_JUDGE_TIMEOUT_S
    threshold: float = 0.5
    caps: JudgeCaps = JudgeCaps()
    #: client-specific settings a plug-in documents itself (never keys: those come from api_key_env)
    options: Mapping[str, Any] = attrs.field(factory=dict)
    #: for ``client: callable`` only, given in Python: ``fn(ChatRequest) -> str`` (sync or async)
    function: Callable[..., Any] | None = attrs.field(default=None, eq=False, repr=False)
    #: a unanimous ensemble (``judge.ensemble``): each member is an engine section of its own; empty = one judge
    ensemble: tuple[JudgeConfig, ...] = ()
    #: how the ensemble's verdicts combine: "unanimous" is the only mode (set with ``ensemble``)
    mode: Literal["unanimous"] | None = None
    #: the judge-call cache; None (default) = off
    cache: JudgeCacheConfig | None = None

    @property
    def effective_timeout_s(self) -> float:
        return min(float(self.timeout_s), MAX_JUDGE_TIMEOUT_S)


@attrs.frozen
class JudgeRequest:
    """What an engine judges: the (already redacted) candidate and the rubric."""

    candidate: Candidate
    #: requirements of the candidate plus those PreVerify added, in order, without duplicates
    requirements: tuple[str, ...] = ()
    #: missing codes PreVerify already found (the judge sees them as rubric items that failed)
    known_misses: tuple[str, ...] = ()


@attrs.frozen
class ChatRequest:
    """One tool-free chat call to a model: a system prompt, a user prompt, and the expected JSON shape."""

    system: str
    user: str
    #: JSON schema of the reply, for APIs with structured output (OpenAI ``response_format``)
    response_schema: Mapping[str, Any] | None = None
    schema_name: str = "verdict"
    max_output_tokens: int = 1024


@runtime_checkable
class ModelClient(Protocol):
    """A model client: one call, no tools; raises :class:`verigate.JudgeError` with a reason code on failure.

    ``complete`` returns the verdict as the API delivered it: a mapping when the API has a structured field (a
    forced tool call's ``input``; read with :func:`verigate.judge.reply_json` when it arrives as JSON text), or the
    reply text, which must then be exactly one JSON object (optionally in one code fence) and nothing else —
    never text to search for a verdict in.

    Reason codes: ``judge_transport_error``, ``judge_http_<status>``, ``judge_timeout``,
    ``invalid_judge_response`` (and engine-specific ones such as ``invalid_jev_response``).

    Optional: ``async def prepare(self) -> None`` loads what ``complete`` needs (an SDK imported at first use);
    ``llm_judge`` awaits it before the judge timeout starts (the run's deadline still bounds it). It raises
    JudgeError when the client cannot work.
    """

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str | Mapping[str, Any]: ...


@runtime_checkable
class DecisionClient(Protocol):
    """A decision-model client (Jev System One): posts one request body, returns the parsed reply object.

    ``body`` is ``{model, state, questions}``; the reply is ``{model, answers, usage}``. Raises
    :class:`verigate.JudgeError` with a reason code on failure (``missing_jev_key``, ``judge_http_<status>``,
    ``judge_timeout``, ``judge_transport_error``, ``invalid_jev_response``).
    """

    async def decide(self, body: Mapping[str, Any], *, timeout_s: float) -> Mapping[str, Any]: ...


@runtime_checkable
class JudgeEngine(Protocol):
    """A judge engine: one judgment per call; raises JudgeError (never returns a pass it did not get)."""

    name: str

    async def judge(self, request: JudgeRequest, *, timeout_s: float) -> Verdict: ...


ModelClientFactory = Callable[..., ModelClient]
JudgeEngineFactory = Callable[..., JudgeEngine]


_face.present_module(globals())  # the names verigate.judge exports report it

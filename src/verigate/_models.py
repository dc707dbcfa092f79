"""Frozen value objects shared by every part of verigate (imports nothing else from verigate)."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._face import present as _present

__all__ = [
    "HANDOFF_REASONS",
    "Candidate",
    "FinalizeResult",
    "HookRecord",
    "Outcome",
    "PolicyAction",
    "PostDecision",
    "Reflection",
    "SessionState",
    "StageContext",
    "StopDirective",
    "Strengthen",
    "StructuralFinding",
    "Termination",
    "TerminationReason",
    "ToolObservation",
    "Verdict",
]


class TerminationReason(enum.StrEnum):
    """The closed set of reasons a model turn ends with (SPEC §1.1)."""

    # hand-off-able: verified by the gate
    NATURAL = "natural"
    FORCED_TEXT = "forced_text"
    ACTIONABLE_PARTIAL = "actionable_partial"
    # not verified: persisted as they are
    MAX_ROUNDS = "max_rounds"
    TIME_BUDGET_EXPIRED = "time_budget_expired"
    SESSION_TIME_BUDGET_HANDOFF = "session_time_budget_handoff"
    SESSION_TIME_BUDGET_EXPIRED = "session_time_budget_expired"
    CONTEXT_EXHAUSTED = "context_exhausted"
    COST_BUDGET_EXCEEDED = "cost_budget_exceeded"
    BILLING_ERROR = "billing_error"
    MODEL_ACTION_REQUIRED = "model_action_required"
    MODEL_REFUSAL = "model_refusal"
    USER_CLARIFICATION_NEEDED = "user_clarification_needed"
    CONVERGENCE_DETECTED = "convergence_detected"
    REPEATED_SUCCESS_NO_PROGRESS = "repeated_success_no_progress"
    INPUT_BLOCKED = "input_blocked"
    USER_CANCELLED = "user_cancelled"
    TOOL_USE_YIELD = "tool_use_yield"
    EXTERNAL_VERIFICATION_REQUIRED = "external_verification_required"
    LLM_ERROR = "llm_error"
    UNKNOWN = "unknown"

    @property
    def hand_off(self) -> bool:
        """True for the three terminations that go through verification."""
        return self in HANDOFF_REASONS


HANDOFF_REASONS = frozenset(
    {TerminationReason.NATURAL, TerminationReason.FORCED_TEXT, TerminationReason.ACTIONABLE_PARTIAL}
)

Outcome = Literal["completed", "revise", "pending_review", "unverified"]
SessionState = Literal["running", "completed", "paused", "ended"]
PolicyAction = Literal[
    "accept",
    "revise",
    "continue",
    "unverified",
    "escalate",
    "escalate_invalid_accept",
    "escalate_verification_error",
    "escalate_budget_exhausted",
    "escalate_unfixable_structural",
    "escalate_hook_error",
]


def _str_tuple(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError("expected a sequence of strings, not one string")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"expected strings, got {type(item).__name__}")
    return items


def _observations(value: Any) -> tuple[ToolObservation, ...]:
    items = tuple(value)
    for item in items:
        if not isinstance(item, ToolObservation):
            raise TypeError(f"tool_calls must hold ToolObservation, got {type(item).__name__}")
    return items


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict(value or {})


@attrs.frozen
class Termination:
    """How a model turn ended."""

    reason: TerminationReason = attrs.field(converter=TerminationReason)
    detail: str = ""


@attrs.frozen
class ToolObservation:
    """One tool call of the turn and what it returned."""

    name: str
    input: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    output: str = ""
    ok: bool | None = None


@attrs.frozen
class Candidate:
    """What the agent proposes as its final answer, with the context a judge needs."""

    request: str
    final_text: str
    tool_calls: tuple[ToolObservation, ...] = attrs.field(default=(), converter=_observations)
    session_id: str = "default"
    turn_id: str = ""
    attempt: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    usage: Mapping[str, int] = attrs.field(factory=dict, converter=_frozen_mapping)
    requirements: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    contains_personal_data: bool | None = None
    rounds: int = 1


_optional_str = attrs.validators.optional(attrs.validators.instance_of(str))


@attrs.frozen
class StageContext:
    """Where a finalize runs, for the decision-stage plug-ins (the ``context`` argument of
    ``verigate_structural_check``, ``verigate_pre_verify``, ``verigate_post_verify`` and ``verigate_stop``).

    Set by the runtime that builds the gate (``Gate.from_config(..., context=...)`` or ``finalize(...,
    context=...)``); verigate's Stop hook fills every field. A field is None when the runtime does not know it —
    a plug-in that needs one stays out of the way without it rather than guessing from the process environment.
    """

    #: the project folder the runtime resolved (the Stop hook: see ``verigate._project``)
    project_dir: str | None = attrs.field(default=None, validator=_optional_str)
    #: the agent host: "claude-code", "codex", or None for a runtime embedding verigate in Python
    host: str | None = attrs.field(default=None, validator=_optional_str)
    #: the host's own session id (``Candidate.session_id`` is the gate's session: a sub-agent's has a suffix)
    session_id: str | None = attrs.field(default=None, validator=_optional_str)
    #: the host's transcript of the (sub-agent's) session, when there is one
    transcript_path: str | None = attrs.field(default=None, validator=_optional_str)


@attrs.frozen
class Reflection:
    """What the judge wants the next attempt to know."""

    observation: str = ""
    lesson: str = ""
    next_check: str = ""


_BOOL = attrs.validators.instance_of(bool)
_STR = attrs.validators.instance_of(str)
_OPTIONAL_STR = attrs.validators.optional(_STR)
_OPTIONAL_REFLECTION = attrs.validators.optional(attrs.validators.instance_of(Reflection))


def _optional_unit_score(_instance: object, _attribute: attrs.Attribute[float | None], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"score must be a number in 0..1 or None, got {value!r}")


@attrs.frozen
class Verdict:
    """The judgment of one candidate; ``error`` set means verification_error (never a pass)."""

    # the types are checked, not trusted: a plug-in engine returning passed="false" must not read as a pass
    passed: bool = attrs.field(validator=_BOOL)
    rubric_misses: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    score: float | None = attrs.field(default=None, validator=_optional_unit_score)
    reflection: Reflection | None = attrs.field(default=None, validator=_OPTIONAL_REFLECTION)
    retryable: bool = attrs.field(default=False, validator=_BOOL)
    error: str | None = attrs.field(default=None, validator=_OPTIONAL_STR)
    engine: str = attrs.field(default="", validator=_STR)
    effective_engine: str = attrs.field(default="", validator=_STR)

    @property
    def is_verification_error(self) -> bool:
        return self.error is not None

    @classmethod
    def verification_error(cls, reason: str, *, engine: str = "", effective_engine: str = "") -> Verdict:
        """The fail-closed verdict: neither a pass nor a revise signal."""
        return cls(
            passed=False,
            retryable=False,
            error=reason,
            engine=engine,
            effective_engine=effective_engine,
        )


@attrs.frozen
class StructuralFinding:
    """A structural problem of the candidate; unfixable findings skip the semantic judge."""

    code: str = attrs.field(validator=_STR)
    fixable: bool = attrs.field(validator=_BOOL)
    message: str = attrs.field(default="", validator=_STR)


@attrs.frozen
class Strengthen:
    """A PreVerify decision: add requirements and missing codes (never relax)."""

    additional_misses: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    requirements: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)

    @classmethod
    def continue_(cls) -> Strengthen:
        """PreVerify's "continue": add nothing."""
        return cls()


@attrs.frozen
class PostDecision:
    """A PostVerify decision: accept, revise(instruction) or escalate(reason)."""

    action: Literal["accept", "revise", "escalate"]
    instruction: str = ""
    reason: str = ""

    @classmethod
    def accept(cls) -> PostDecision:
        return cls("accept")

    @classmethod
    def revise(cls, instruction: str) -> PostDecision:
        return cls("revise", instruction=instruction)

    @classmethod
    def escalate(cls, reason: str) -> PostDecision:
        return cls("escalate", reason=reason)


@attrs.frozen
class StopDirective:
    """A Stop decision: finalize, or continue(instruction) — input to the next attempt, never authority."""

    action: Literal["finalize", "continue"]
    instruction: str = ""

    @classmethod
    def finalize(cls) -> StopDirective:
        return cls("finalize")

    @classmethod
    def continue_(cls, instruction: str) -> StopDirective:
        return cls("continue", instruction=instruction)


@attrs.frozen
class HookRecord:
    """The log line of one hook decision (SPEC §1.3): never the instruction itself, only its hash and length."""

    surface: Literal["pre_verify", "post_verify", "stop"]
    handler: str
    action: str
    reason: str = ""
    instruction_sha256: str = ""
    instruction_length: int = 0
    error: str | None = None

    @classmethod
    def of(
        cls,
        surface: Literal["pre_verify", "post_verify", "stop"],
        handler: str,
        action: str,
        *,
        instruction: str = "",
        reason: str = "",
        error: str | None = None,
    ) -> HookRecord:
        digest = hashlib.sha256(instruction.encode("utf-8")).hexdigest() if instruction else ""
        return cls(surface, handler, action, reason, digest, len(instruction), error)


@attrs.frozen
class FinalizeResult:
    """What ``Gate.finalize`` returns to the agent runtime."""

    outcome: Outcome
    answer: str
    status: str
    policy_action: PolicyAction
    verdict: Verdict | None
    follow_up: str
    attempt: int
    session_state: SessionState
    pending_id: str | None = None
    hook_records: tuple[HookRecord, ...] = ()
    structural_findings: tuple[StructuralFinding, ...] = ()
    #: set when the pending candidate could not be stored: the caller must keep it
    pending_text: str | None = None
    store_error: str | None = None
    #: the merged tool calls / usage of all attempts of this request (on completion)
    merged_tool_calls: tuple[ToolObservation, ...] = ()
    merged_usage: Mapping[str, int] = attrs.field(factory=dict, converter=_frozen_mapping)
    merged_rounds: int = 0


# they are exported by the top-level package: report it however they were first imported (verigate._face)
_present(globals(), "verigate", [name for name in __all__ if name[:1].isupper()])

"""The finalization gate: only verification turns an agent's proposal to stop into a completion."""

from __future__ import annotations

from .._face import present as _present
from ._convert import parse_candidate, parse_termination, structure_converter, unstructure, unstructure_converter
from ._engine import (
    PENDING_STATUS,
    Gate,
    finalize_and_return,
    finalize_and_return_async,
    public_verification_skipped,
    skipping_public_verification,
)
from ._judge_eval import evaluate_judge
from ._loop import AgentStep, AgentTurn, LoopResult, StepResult, run_gated, run_gated_async
from ._policy import Decision, PolicyInput, combine_verdict, decide, feedback_instruction, unite_strengthen
from ._stages import STRUCTURAL_CHECK_ERROR
from ._structural import EMPTY_TURN, MODEL_ACTION_REQUIRED, asks_user_to_act, check_candidate

__all__ = [
    "EMPTY_TURN",
    "MODEL_ACTION_REQUIRED",
    "PENDING_STATUS",
    "STRUCTURAL_CHECK_ERROR",
    "AgentStep",
    "AgentTurn",
    "Decision",
    "Gate",
    "LoopResult",
    "PolicyInput",
    "StepResult",
    "asks_user_to_act",
    "check_candidate",
    "combine_verdict",
    "decide",
    "evaluate_judge",
    "feedback_instruction",
    "finalize_and_return",
    "finalize_and_return_async",
    "parse_candidate",
    "parse_termination",
    "public_verification_skipped",
    "run_gated",
    "run_gated_async",
    "skipping_public_verification",
    "structure_converter",
    "unite_strengthen",
    "unstructure",
    "unstructure_converter",
]

_present(globals(), __name__)

"""The finalization gate: only verification turns an agent's proposal to stop into a completion."""

from __future__ import annotations

from .. import _face

_TYPE_CHECKING = False  # type checkers read this constant as typing.TYPE_CHECKING
if _TYPE_CHECKING:
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

# Names load on first use: loading the built-in gate plug-in (every process that makes a plug-in manager: the
# grader, the doctor) must not build the engine, and a Stop hook needs the engine, not judge evaluation.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_convert": ("parse_candidate", "parse_termination", "structure_converter", "unstructure",
                 "unstructure_converter"),
    "_engine": ("PENDING_STATUS", "Gate", "finalize_and_return", "finalize_and_return_async",
                "public_verification_skipped", "skipping_public_verification"),
    "_judge_eval": ("evaluate_judge",),
    "_loop": ("AgentStep", "AgentTurn", "LoopResult", "StepResult", "run_gated", "run_gated_async"),
    "_policy": ("Decision", "PolicyInput", "combine_verdict", "decide", "feedback_instruction", "unite_strengthen"),
    "_stages": ("STRUCTURAL_CHECK_ERROR",),
    "_structural": ("EMPTY_TURN", "MODEL_ACTION_REQUIRED", "asks_user_to_act", "check_candidate"),
}

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

__getattr__, __dir__ = _face.lazy(globals())

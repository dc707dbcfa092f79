"""verigate's built-in judge plug-in: registered through the entry-point group like any third-party plug-in.

The engines and the client are imported when the registry is asked for them (a gate with a judge), not when the
plug-in is loaded: every hook and grading process loads every plug-in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hookspecs import hookimpl


@hookimpl
def verigate_judge_engines() -> Mapping[str, Any]:
    """``llm_judge`` (any chat model client) and ``jev`` (Jev Choice over a decision client)."""
    from ._jev import JevJudge
    from ._llm import LLMJudge

    return {"llm_judge": LLMJudge, "jev": JevJudge}


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    """``callable``: the runtime's own model call; HTTP clients come as plug-in distributions."""
    from ._callable import CallableClient

    return {"callable": CallableClient}

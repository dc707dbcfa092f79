"""verigate's built-in judge plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hookspecs import hookimpl
from ._callable import CallableClient
from ._jev import JevJudge
from ._llm import LLMJudge


@hookimpl
def verigate_judge_engines() -> Mapping[str, Any]:
    """``llm_judge`` (any chat model client) and ``jev`` (Jev Choice over a decision client)."""
    return {"llm_judge": LLMJudge, "jev": JevJudge}


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    """``callable``: the runtime's own model call; HTTP clients come as plug-in distributions."""
    return {"callable": CallableClient}

"""verigate-openai: the ``openai`` model client for any OpenAI-compatible chat-completions server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verigate import hookimpl

from ._client import OpenAIClient

__all__ = ["OpenAIClient"]


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    return {"openai": OpenAIClient}

"""verigate-anthropic: the ``anthropic`` model client over the Anthropic Messages API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verigate import hookimpl

from ._client import AnthropicClient

__all__ = ["AnthropicClient"]


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    return {"anthropic": AnthropicClient}

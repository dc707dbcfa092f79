"""verigate-anthropic: the ``anthropic`` model client over the Anthropic Messages API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verigate import hookimpl

if TYPE_CHECKING:
    from verigate.judge import JudgeConfig

    from ._client import AnthropicClient

__all__ = ["AnthropicClient"]


def _make_client(config: JudgeConfig) -> AnthropicClient:
    # the ``anthropic`` SDK takes seconds to import: load it only when a judge really uses this client, so that
    # every hook process and Gate that merely loads the installed plug-ins stays fast
    from ._client import AnthropicClient

    return AnthropicClient(config)


def __getattr__(name: str) -> Any:
    if name == "AnthropicClient":
        from ._client import AnthropicClient

        return AnthropicClient
    raise AttributeError(name)


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    return {"anthropic": _make_client}

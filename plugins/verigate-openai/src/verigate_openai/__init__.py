"""verigate-openai: the ``openai`` model client for any OpenAI-compatible chat-completions server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verigate import hookimpl

if TYPE_CHECKING:
    from verigate.judge import JudgeConfig

    from ._client import OpenAIClient

__all__ = ["OpenAIClient"]


def _make_client(config: JudgeConfig) -> OpenAIClient:
    # the ``openai`` SDK takes seconds to import: load it only when a judge really uses this client, so that
    # every hook process and Gate that merely loads the installed plug-ins stays fast
    from ._client import OpenAIClient

    return OpenAIClient(config)


def __getattr__(name: str) -> Any:
    if name == "OpenAIClient":
        from ._client import OpenAIClient

        return OpenAIClient
    raise AttributeError(name)


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    return {"openai": _make_client}

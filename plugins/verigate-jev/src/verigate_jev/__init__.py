"""verigate-jev: the ``jev`` decision client for TypeSafe's Jev System One API (or OpenRouter's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verigate import hookimpl

if TYPE_CHECKING:
    from verigate.judge import JudgeConfig

    from ._client import JevClient

__all__ = ["JevClient"]


def _make_client(config: JudgeConfig) -> JevClient:
    # the client (and http.client, which it speaks) is imported when a judge really uses it: every hook process
    # and Gate loads every installed plug-in, most never call Jev
    from ._client import JevClient

    return JevClient(config)


def __getattr__(name: str) -> Any:
    if name == "JevClient":
        from ._client import JevClient

        return JevClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    return {"jev": _make_client}

"""verigate-jev: the ``jev`` decision client for TypeSafe's Jev System One API (or OpenRouter's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verigate import hookimpl

from ._client import JevClient

__all__ = ["JevClient"]


@hookimpl
def verigate_model_clients() -> Mapping[str, Any]:
    return {"jev": JevClient}

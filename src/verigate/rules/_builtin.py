"""verigate's built-in rules plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hookspecs import hookimpl


@hookimpl
def verigate_rule_kinds() -> Mapping[str, Any]:
    """The built-in kinds: ``regex`` and ``phrase``."""
    from ._kinds import PhraseKind, RegexKind

    return {"regex": RegexKind(), "phrase": PhraseKind()}

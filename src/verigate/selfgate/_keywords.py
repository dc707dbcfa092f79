"""The phrase prefilter's keyword test, shared by the rule engine's screen and the fast path's keyword cache."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["contains_keyword"]


def contains_keyword(text: str, keywords: Iterable[str]) -> bool:
    """Whether a prefilter keyword occurs in the text, in the forms the engine tests (``verigate._folding``)."""
    from .._folding import caseless, fold  # only when a text is checked: most tool calls carry none

    lowered, folded = caseless(text), fold(text)
    return any(keyword in folded or keyword in lowered for keyword in keywords)

"""The phrase prefilter's keyword test and the prompt form close phrases are compared in, shared by the rule
engine's screen (``_phrases``) and the fast path's keyword cache (``_quick``)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SHORT_PROMPT", "contains_keyword", "normalise_prompt"]

#: longest prompt checked for a close phrase when no gate is open (a close phrase is short)
SHORT_PROMPT = 200
_TRAILING = "。．.!！ \t\r\n\u3000"


def contains_keyword(text: str, keywords: Iterable[str]) -> bool:
    """Whether a prefilter keyword occurs in the text, in the forms the engine tests (``verigate._folding``)."""
    from .._folding import caseless, fold  # only when a text is checked: most tool calls carry none

    lowered, folded = caseless(text), fold(text)
    return any(keyword in folded or keyword in lowered for keyword in keywords)


def normalise_prompt(prompt: str) -> str:
    """A prompt as close phrases are compared against: surrounding whitespace and a final 。 . ! removed."""
    return prompt.strip().rstrip(_TRAILING).strip()

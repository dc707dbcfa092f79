"""Views of one text shared by every rule of a scan: lower-cased for prefilters, NFKC-folded for phrases."""

from __future__ import annotations

import functools
import re
import unicodedata

from .._folding import caseless, fold

__all__ = ["TextView", "caseless", "fold"]

# combining marks that may follow an ASCII character (accents, overlays, kana voicing, half-width voicing)
_JOINING_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u3099\u309a\uff9e\uff9f"
# an ASCII run folds with str.lower(); its last character stays out when a joining mark follows it
_ASCII_RUN = re.compile(rf"[\x00-\x7f]+(?![{_JOINING_MARKS}])")


def _joins_previous(char: str) -> bool:
    """Whether NFKC may compose ``char`` with what precedes it: marks, half-width voicing, Hangul vowels/finals."""
    return (unicodedata.category(char).startswith("M") or char in "\uff9e\uff9f"
            or "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff")


class TextView:
    """One text and its derived forms, each computed at most once per scan."""

    def __init__(self, text: str) -> None:
        self.text = text

    @functools.cached_property
    def lowered(self) -> str:
        """For keyword prefilters only (:func:`caseless`; lower() may change lengths: never use its offsets)."""
        return caseless(self.text)

    @functools.cached_property
    def _folding(self) -> tuple[str, list[int] | None, list[int] | None]:
        text = self.text
        if text.isascii():
            return text.lower(), None, None
        pieces: list[str] = []
        starts: list[int] = []
        ends: list[int] = []

        def fold_slice(begin: int, end: int) -> None:
            cluster_start = begin
            for index in range(begin + 1, end + 1):
                if index < end and _joins_previous(text[index]):
                    continue
                folded = fold(text[cluster_start:index])
                pieces.append(folded)
                starts.extend([cluster_start] * len(folded))
                ends.extend([index] * len(folded))
                cluster_start = index

        position = 0
        for run in _ASCII_RUN.finditer(text):
            if run.start() > position:
                fold_slice(position, run.start())
            pieces.append(run.group().lower())
            starts.extend(range(run.start(), run.end()))
            ends.extend(range(run.start() + 1, run.end() + 1))
            position = run.end()
        if position < len(text):
            fold_slice(position, len(text))
        return "".join(pieces), starts, ends

    @property
    def folded(self) -> str:
        """NFKC + case-folded text; map spans back with :meth:`original_span`."""
        return self._folding[0]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that a span of :attr:`folded` came from."""
        _, starts, ends = self._folding
        if starts is None or ends is None:
            return start, end
        if end <= start:
            position = starts[start] if start < len(starts) else len(self.text)
            return position, position
        return starts[start], ends[end - 1]

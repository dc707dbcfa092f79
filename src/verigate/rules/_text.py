"""Views of one text shared by every rule of a scan: lower-cased for prefilters, NFKC-folded for phrases."""

from __future__ import annotations

import functools
import re
import unicodedata

from .._folding import caseless, fold

__all__ = ["TextView", "caseless", "fold"]

# an ASCII run folds with str.lower(); its last character stays out when what follows may compose with it
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")


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
            start, end = run.span()
            # any mark after the run (not only the common accents): NFKC reorders the marks of a cluster and may
            # compose the run's last letter with one of them, as fold() of the whole text does (the keyword tests)
            if end < len(text) and _joins_previous(text[end]):
                end -= 1
            if end == start:
                continue  # a lone letter before marks: folded with them below
            if start > position:
                fold_slice(position, start)
            pieces.append(text[start:end].lower())
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
            position = end
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

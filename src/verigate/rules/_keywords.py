"""Which ``phrase`` rules a text needs, decided once per text for all of them.

A phrase rule searches the folded text only when one of its keywords occurs in it (``PhraseMatcher.find``): on a
clean 4 KB answer the structural pack's 7 rules proved 27 keywords absent with one substring search each, ~50 µs
per finalize, on the event loop. Here the same question is answered for every phrase rule of a rule set at once:
by one ``re2.Set`` of all the keywords (a DFA over the text, ~12 µs for that answer) once re2 is imported, else by
one search per distinct keyword (never one per rule and keyword).

The answer is exact, not a guess: a rule is chosen iff one of its keywords is a substring of the folded text —
what its own ``find`` tests before it searches (it still does; for a chosen rule that costs a search until its
first keyword that occurs). UTF-8 is self-synchronising, so a keyword's bytes occur in the text's bytes iff the
keyword occurs in the text. re2 is imported (~10 ms with the set) only by a rule set that has scanned
``RE2_AFTER_CHARS`` characters, or at once when something else (the redactor's prefilter) imported it already: a
hook that checks one answer never pays for it. A text re2 cannot take (a lone surrogate has no UTF-8 form), an
error inside it, or a search it gave up on falls back to the searches: a failure never skips a rule.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["RE2_AFTER_CHARS", "FoldedKeywords", "PatternSet", "pattern_set"]

#: characters a rule set's phrase rules (or a redactor) scan with the searches before they import re2 (~10 ms with
#: building the sets): re2 saves ~0.3 µs per character of a typical text, so about here its import has paid for
#: itself
RE2_AFTER_CHARS = 1 << 16
#: re2's DFA for a set of literals has at most one state per keyword character (plus one): under this many
#: characters it stays far below the memory budget, so a search cannot give up on a long text
_MAX_PATTERN_CHARS = 20_000
_MAX_MEM = 64 << 20


class PatternSet:
    """One unanchored ``re2.Set`` of patterns: which of them occur in a text, in one pass (a DFA over the text)."""

    __slots__ = ("_matcher",)

    def __init__(self, matcher: Any) -> None:
        self._matcher = matcher

    def matching(self, text: str) -> list[int] | None:
        """The indexes of the patterns found in ``text``; None when re2 could not answer (a text with no UTF-8
        form, an error inside it, a search it gave up on): the caller then decides without it, never skips."""
        try:
            found: Iterable[int] | None = self._matcher.Match(text)
        except Exception:  # e.g. a lone surrogate (no UTF-8 form)
            return None
        # pattern 0 (empty) matches every text: re2 reports a search it gave up on (out of memory) as "nothing
        # matched", so an answer without 0 is a failure, never "absent"
        if found is None or 0 not in found:
            return None
        return [index - 1 for index in found if index]


def pattern_set(patterns: Sequence[str], *, literal: bool = True) -> PatternSet | None:
    """A :class:`PatternSet` of ``patterns`` (literals, or re2 regexes), or None: re2 not installed, too many
    characters, or any failure building it."""
    if not patterns or sum(map(len, patterns)) > _MAX_PATTERN_CHARS:
        return None
    try:
        import re2  # type: ignore[import-untyped,import-not-found,unused-ignore]  # ships no types
    except ImportError:
        return None
    try:
        options = re2.Options()
        options.max_mem = _MAX_MEM
        matcher = re2.Set.SearchSet(options)
        if matcher.Add("") != 0:
            return None
        for index, pattern in enumerate(patterns, start=1):
            if matcher.Add(re2.escape(pattern) if literal else pattern) != index:
                return None
        matcher.Compile()
    except Exception:  # any problem building it: the caller decides without it
        return None
    return PatternSet(matcher)


class FoldedKeywords:
    """The phrase rules (by order) whose keywords occur in a folded text (thread-safe)."""

    __slots__ = ("_by_keyword", "_keywords", "_lock", "_re2_after", "_scanned", "_set")

    def __init__(self, by_keyword: Mapping[str, frozenset[int]], *, re2_after: int | None = RE2_AFTER_CHARS) -> None:
        """``by_keyword``: the rules of each keyword. ``re2_after``: characters to scan with the searches before
        the re2 set is built (0: now; None: never, the searches always decide)."""
        self._by_keyword = dict(by_keyword)
        self._keywords = tuple(self._by_keyword)
        self._set: PatternSet | None = None
        self._re2_after = 0 if re2_after is None else re2_after
        #: characters scanned before re2; -1 once decided (the set built, or re2 unusable or not wanted)
        self._scanned = -1 if re2_after is None else 0
        self._lock = threading.Lock()
        if re2_after == 0:
            self._start_re2()

    def _start_re2(self) -> None:
        with self._lock:
            if self._scanned >= 0:
                self._set = pattern_set(self._keywords)
                self._scanned = -1

    def choose(self, folded: str, chosen: set[int]) -> None:
        """Add to ``chosen`` every rule with a keyword in ``folded``."""
        if self._scanned >= 0:
            # a racing thread may lose a count: it only moves the moment re2 is imported
            self._scanned += len(folded)
            if self._scanned >= self._re2_after or "re2" in sys.modules:
                self._start_re2()
        found = None if self._set is None else self._set.matching(folded)
        if found is not None:
            for index in found:
                chosen.update(self._by_keyword[self._keywords[index]])
            return
        for keyword, orders in self._by_keyword.items():
            if not chosen.issuperset(orders) and keyword in folded:
                chosen.update(orders)

    @property
    def multi_pattern(self) -> bool:
        """Whether one re2 pass decides (else the searches)."""
        return self._set is not None

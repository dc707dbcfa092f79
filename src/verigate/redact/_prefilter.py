"""Which rules of a redactor's rule set a text can need, decided once per text for all rules.

:meth:`RuleSet.scan` already skips a rule whose keywords are absent, but it proves each keyword absent with its
own substring search: a clean 4 KB text paid ~70 searches over the whole text, about half of its redaction. Here
the same question is answered in one pass where a multi-pattern matcher is installed (``google-re2``: every
keyword in one ``re2.Set``, a DFA over the text). Without it the rule set's own prefilter decides, as before (the
searches here, which skip a keyword when a shorter keyword inside it is known absent or when every rule it would
select is selected, only stand in for a text re2 cannot take).

The keyword answer is exact, not a guess: a rule is selected iff ``RuleSet.scan`` would run it (it has no prefilter,
or one of its keywords occurs in ``caseless(text)``, its lower-cased form). With re2, a second pass over the text
then drops the selected rules whose guard (a re2 pattern every match of the rule's pattern implies, see ``_guards``)
finds nothing: such a rule would have found nothing either. The selected rules are scanned by a :class:`RuleSet` of
just those rules, in their original order, so the matches (their order, ``verigate: allow`` suppression, the check
of a span a plug-in kind reports) are those of the full set; the sub-sets are kept per redactor (bounded).

``google-re2`` was chosen over ``pyahocorasick`` by measurement (4 KB answer, 69 keywords, this machine): 25 µs
per text against 100-260 µs for the automaton (it yields every occurrence, and ``/`` occurs often) and
400-600 µs for the per-keyword searches; 2-6 ms per MB against 33-67 ms and 150-220 ms. A text re2 cannot take
(a lone surrogate has no UTF-8 form), an error inside it, or a search it gave up on (see
``rules._keywords.PatternSet``) falls back to the searches: a failure never skips a rule.
"""

from __future__ import annotations

import functools
import operator
import threading

from ..rules import Match, RuleSet
from ..rules._engine import declared_prefilter
from ..rules._keywords import RE2_AFTER_CHARS, PatternSet, pattern_set
from ..rules._kinds import RegexMatcher  # a guard is written for a pattern as the regex kind runs it
from ..rules._text import caseless
from ._guards import GUARD_FLAGS, GUARDS

__all__ = ["RE2_AFTER_CHARS", "RulePrefilter"]

#: sub-sets of rules kept per redactor (each is a small RuleSet); the oldest goes first when full
_SUBSETS = 256
class RulePrefilter:
    """The rules of ``ruleset`` a text can need, and a scan that runs only those (thread-safe)."""

    __slots__ = ("_always", "_everything", "_guard_masks", "_guard_set", "_guarded", "_lock", "_masks", "_plan",
                 "_re2_after", "_re2_masks", "_re2_set", "_scanned", "_subsets", "ruleset")

    def __init__(self, ruleset: RuleSet, *, use_re2: bool = True, re2_after: int = 0) -> None:
        """``re2_after``: characters to scan with the rule set alone before re2 is imported and its sets built
        (0: now); ``use_re2=False``: never (the searches decide, for tests)."""
        self.ruleset = ruleset
        always = 0
        by_keyword: dict[str, int] = {}
        for order, item in enumerate(ruleset.compiled):
            matcher = item.matcher
            # the same test RuleSet uses: a matcher without a declared prefilter always runs
            keywords = declared_prefilter(matcher) or ()
            if not keywords:
                always |= 1 << order
            for keyword in keywords:
                by_keyword[keyword] = by_keyword.get(keyword, 0) | 1 << order
        self._always = always
        self._everything = (1 << len(ruleset.compiled)) - 1
        self._masks = by_keyword
        # shortest first, so that a keyword's shorter keywords inside it are decided before it
        ordered = sorted(by_keyword, key=lambda keyword: (len(keyword), keyword))
        self._plan = tuple(
            (keyword, by_keyword[keyword],
             tuple(other for other in ordered[:index] if other != keyword and other in keyword))
            for index, keyword in enumerate(ordered))
        self._re2_set: PatternSet | None = None
        #: the rules of each keyword in the set, by its index there
        self._re2_masks: tuple[int, ...] = ()
        self._guard_set: PatternSet | None = None
        self._guard_masks: tuple[int, ...] = ()
        self._guarded = 0
        self._subsets: dict[int, RuleSet] = {}
        self._lock = threading.Lock()
        self._scanned = 0
        self._re2_after = re2_after if use_re2 else -1
        if re2_after <= 0 and use_re2:
            self._start_re2()

    def _start_re2(self) -> None:
        """Import re2 and build both sets (once). The attributes are set so that a thread reading them meanwhile
        sees either no re2 or all of it."""
        with self._lock:
            if self._re2_after < 0:
                return
            self._re2_after = -1
            ordered = [keyword for keyword, _, _ in self._plan]
            keywords = pattern_set(ordered)
            if keywords is None:
                return
            # guards narrow what the keywords chose; only with re2 (in Python's re a guard costs what its rule does)
            guarded: dict[str, int] = {}
            for order, item in enumerate(self.ruleset.compiled):
                matcher = item.matcher
                # the pattern as written, not compiled: a rule the text never needs is never compiled
                if type(matcher) is RegexMatcher and matcher.flags == GUARD_FLAGS and matcher.source in GUARDS:
                    guard = GUARDS[matcher.source]
                    guarded[guard] = guarded.get(guard, 0) | 1 << order
            guard_set = pattern_set(list(guarded), literal=False)
            if guard_set is not None:
                self._guard_masks = tuple(guarded.values())
                self._guard_set = guard_set
                self._guarded = functools.reduce(operator.or_, self._guard_masks, 0)
            self._re2_masks = tuple(self._masks[keyword] for keyword in ordered)
            self._re2_set = keywords

    @property
    def multi_pattern(self) -> bool:
        """Whether one re2 pass decides the keywords (else the per-keyword searches)."""
        return self._re2_set is not None

    def needed(self, text: str) -> int:
        """The rules that can match in ``text`` (a bit set of their orders): those ``RuleSet.scan`` would run,
        less those whose guard (see ``_guards``) finds nothing."""
        chosen = self.keyword_needed(text)
        if chosen & self._guarded:
            passed = self._guards_passed(text)
            if passed is not None:
                chosen &= ~self._guarded | passed
        return chosen

    def _guards_passed(self, text: str) -> int | None:
        """The guarded rules whose guard matches ``text``; None when re2 could not answer."""
        found = self._guard_set.matching(text) if self._guard_set is not None else None
        if found is None:  # re2 could not answer: no guard narrows
            return None
        passed = 0
        for index in found:
            passed |= self._guard_masks[index]
        return passed

    def keyword_needed(self, text: str) -> int:
        """The rules ``RuleSet.scan`` would run on ``text``, as a bit set of their orders."""
        lowered = caseless(text)
        found = None if self._re2_set is None else self._re2_set.matching(lowered)
        if found is not None:
            chosen = self._always
            for index in found:
                chosen |= self._re2_masks[index]
            return chosen
        return self._searched(lowered)

    def _searched(self, lowered: str) -> int:
        chosen = self._always
        absent: set[str] = set()
        for keyword, mask, inside in self._plan:
            if not mask & ~chosen:
                continue  # every rule it selects is selected already (whether it occurs stays unknown)
            if any(other in absent for other in inside) or keyword not in lowered:
                absent.add(keyword)  # a keyword holding an absent keyword cannot occur either
            else:
                chosen |= mask
        return chosen

    def ruleset_for(self, chosen: int) -> RuleSet | None:
        """The rule set of the chosen rules, in their original order (None: no rule)."""
        if chosen == self._everything:
            return self.ruleset
        if not chosen:
            return None
        subset = self._subsets.get(chosen)
        if subset is None:
            compiled = self.ruleset.compiled
            subset = RuleSet(tuple(item for order, item in enumerate(compiled) if chosen >> order & 1),
                             self.ruleset.packs)
            with self._lock:
                if len(self._subsets) >= _SUBSETS:
                    del self._subsets[next(iter(self._subsets))]
                self._subsets[chosen] = subset
        return subset

    def scan(self, text: str) -> tuple[Match, ...]:
        """``self.ruleset.scan(text)``, running only the rules the text can need."""
        if self._re2_set is None:
            if self._re2_after >= 0:
                # a process that redacts a few texts (a hook) would spend more importing re2 than it saves
                self._scanned += len(text)
                if self._scanned >= self._re2_after:
                    self._start_re2()
            # without re2 the searches would only repeat the rule set's own prefilter: let it decide alone
            return self.ruleset.scan(text)
        subset = self.ruleset_for(self.needed(text))
        return () if subset is None else subset.scan(text)

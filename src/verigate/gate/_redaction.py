"""Redaction inside one finalize: results remembered (redaction is a function of the text), and a candidate the
redactors fail on withheld — nothing unredacted ever reaches the judge or the store."""

from __future__ import annotations

import attrs

from .._logging import get_logger
from .._models import Candidate
from ..redact._base import RedactionResult
from ..redact._egress import Egress
from ._containment import contain

__all__ = ["WITHHELD", "MemoEgress", "Redacted", "redact"]

log = get_logger("verigate.gate")
#: what is stored in place of a text the redactors failed on (nothing unredacted is ever stored)
WITHHELD = "[withheld: redaction failed]"
#: short strings (tool names, keys, codes, actions) recur in every finalize: their redaction is remembered per gate
_CACHED_TEXT_CHARS = 200
_CACHE_ENTRIES = 4096


@attrs.frozen
class MemoEgress(Egress):
    """The gate's redactors for one finalize, remembering results (redaction is a function of the text): any text
    for this finalize (a verdict or hook record is stored twice), short texts for the gate's lifetime."""

    shared: dict[str, RedactionResult] = attrs.field(factory=dict, repr=False, eq=False)
    own: dict[str, RedactionResult] = attrs.field(factory=dict, repr=False, eq=False)

    def text(self, text: str) -> RedactionResult:
        short = len(text) <= _CACHED_TEXT_CHARS
        found = (self.shared if short else self.own).get(text)
        if found is None:
            found = super().text(text)
            if not short:
                self.own[text] = found
            else:
                if len(self.shared) >= _CACHE_ENTRIES:  # a long-running gate keeps what recurs lately
                    self.shared.clear()
                self.shared[text] = found
        return found


@attrs.frozen
class Redacted:
    """The candidate as it may leave the process: redacted, or withheld when a redactor failed."""

    candidate: Candidate
    personal_data: bool
    error: str | None = None


def redact(candidate: Candidate, egress: Egress) -> Redacted:
    """The candidate redacted; withheld (``WITHHELD`` texts, no tool calls) when a redactor fails."""
    try:
        redacted, findings = egress.candidate(candidate)
    except BaseException as exc:  # fail closed: nothing unredacted leaves the process
        log.error("redaction failed; the candidate is withheld from the judge and the store: %s",
                  type(exc).__name__)
        contain(exc)
        withheld = attrs.evolve(
            candidate, request=WITHHELD, final_text=WITHHELD, tool_calls=(), requirements=(), usage={}
        )
        return Redacted(withheld, personal_data=True, error=f"{type(exc).__name__}: {exc}")
    personal = candidate.contains_personal_data is True or any(
        finding.category == "personal_data" for finding in findings
    )
    return Redacted(redacted, personal)

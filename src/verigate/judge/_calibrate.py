"""People's review decisions as labels: ``verigate judge calibrate`` and ``verigate review export``.

A resolved pending review is a label: approved means the person found the held answer acceptable (``complete``),
rejected means not (``incomplete``). An expired review is no one's decision, and a review still pending is none
yet: both are left out and counted. The judged side is the verdict the gate stored with the review (the judge's,
combined with the structural findings and PreVerify misses); a review stored without one, or with a verification
error, is counted apart like an error of ``judge eval``.

Not exported by ``verigate.judge``: it reads the store's review type, and ``import verigate.judge`` (which every
model-client plug-in does) must not load the store."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from .._errors import InputError
from ..store._base import PendingReview
from ._agreement import JudgeQuality, Judgment, Outcome
from ._cases import Label, case_record

__all__ = ["CALIBRATION_CAVEAT", "ReviewDecision", "calibration", "parse_since", "review_case", "review_decisions"]

CALIBRATION_CAVEAT = (
    "Only escalated candidates reach a review: these figures are conditional on escalation (the answers the gate "
    "held for a person), not the judge's overall accuracy."
)
_LABELS: Mapping[str, Label] = {"approved": "complete", "rejected": "incomplete"}


@attrs.frozen
class ReviewDecision:
    """A resolved review: the person's label and the review it came from."""

    review: PendingReview
    label: Label


def parse_since(text: str) -> datetime:
    """``--since``: an ISO date or date-time (a naive one is UTC); InputError otherwise."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"not an ISO date or date-time: {text!r}", field="--since") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _when(review: PendingReview) -> datetime:
    from ..store._clock import parse_timestamp

    return parse_timestamp(review.resolved_at or review.created_at)


def review_decisions(reviews: Iterable[PendingReview], *, since: datetime | None = None
                     ) -> tuple[tuple[ReviewDecision, ...], dict[str, int]]:
    """(the people's decisions in resolution order, the reviews left out by status: ``expired``, ``pending``);
    ``since`` keeps the reviews resolved (or, still pending, filed) at or after it."""
    decisions: list[tuple[datetime, ReviewDecision]] = []
    excluded = {"expired": 0, "pending": 0}
    for review in reviews:
        when = _when(review)
        if since is not None and when < since:
            continue
        label = _LABELS.get(review.status)
        if label is None:
            excluded[review.status if review.status in excluded else "pending"] += 1
            continue
        decisions.append((when, ReviewDecision(review, label)))
    decisions.sort(key=lambda pair: (pair[0], pair[1].review.review_id))
    return tuple(decision for _, decision in decisions), excluded


def _outcome(verdict: object) -> tuple[Outcome, str | None]:
    if verdict is None:
        return "error", "no_verdict"
    if not isinstance(verdict, Mapping):  # a row another program wrote: strict JSON, but not a verdict object
        return "error", "unreadable_verdict"
    error, passed = verdict.get("error"), verdict.get("passed")
    if error is not None:
        return "error", str(error)
    if not isinstance(passed, bool):
        return "error", "unreadable_verdict"
    return ("complete" if passed else "incomplete"), None


def _text(candidate: object, key: str, fallback: str = "") -> str:
    value = candidate.get(key, fallback) if isinstance(candidate, Mapping) else fallback
    return value if isinstance(value, str) else fallback


def calibration(decisions: Sequence[ReviewDecision], excluded: Mapping[str, int]) -> JudgeQuality:
    """The agreement between each stored verdict and the person's decision."""
    judgments = []
    for index, decision in enumerate(decisions):
        review = decision.review
        outcome, error = _outcome(review.verdict)
        judgments.append(Judgment(
            index=index, case=review.review_id, label=decision.label, outcome=outcome, error=error,
            request=_text(review.candidate, "request"),
            final_text=_text(review.candidate, "final_text", review.pending_text), note=review.note,
        ))
    return JudgeQuality("calibrate", tuple(judgments), excluded=dict(excluded), caveat=CALIBRATION_CAVEAT)


def review_case(decision: ReviewDecision) -> dict[str, Any]:
    """The decision as a labelled case of ``schemas/judge-case.schema.json`` (the stored, already redacted text;
    note: the reviewer's note, else the decision). InputError when a stored text is past a case bound."""
    review = decision.review
    if not isinstance(review.candidate, Mapping):  # a damaged row: no case of it rather than one with no request
        raise InputError("the stored candidate is not a JSON object", source=f"review {review.review_id}")
    calls = review.candidate.get("tool_calls", [])
    tool_calls = [dict(call) for call in calls if isinstance(call, Mapping)] if isinstance(calls, list) else []
    by = f" by {review.resolved_by}" if review.resolved_by else ""
    return case_record(
        id=review.review_id, request=_text(review.candidate, "request"),
        final_text=_text(review.candidate, "final_text", review.pending_text), tool_calls=tool_calls,
        label=decision.label, note=review.note or f"{review.status} in review{by}",
    )

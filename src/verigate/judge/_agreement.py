"""How well a judge agrees with labels: one set of figures for ``verigate judge eval`` (labelled cases) and
``verigate judge calibrate`` (people's review decisions).

"complete" is the positive class. A verification error is never agreement and never a pass: it is left out of
every agreement figure (their denominator is the judgments that produced a verdict) and counted on its own (the
error rate's denominator is every judgment). Cohen's kappa comes with the large-sample 95 % interval of Cohen
(1960): SE = sqrt(p_o (1 − p_o) / (n (1 − p_e)²)), kappa ± 1.96 SE clipped to [−1, 1]. Percentiles are
nearest-rank. A figure whose denominator is zero is None ("n/a"), and a threshold on it fails."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from .. import _face
from ._usage import JudgeUsage

__all__ = [
    "KAPPA_Z",
    "Agreement",
    "CaseConsistency",
    "JudgeQuality",
    "Judgment",
    "Thresholds",
    "agreement",
    "consistency",
    "failed_thresholds",
    "percentile",
    "quality_json",
]

Outcome = Literal["complete", "incomplete", "error"]
#: the two-sided 95 % normal quantile
KAPPA_Z = 1.959963984540054


@attrs.frozen
class Judgment:
    """One judgment of one case: the label, what the judge said (``error`` = a verification error, with its
    reason code), how long it took and what the client reported it cost. The texts are as redacted for the
    judge (the report shows them only for disagreements)."""

    index: int
    case: str
    label: Literal["complete", "incomplete"]
    outcome: Outcome
    error: str | None = None
    latency_s: float | None = None
    usage: JudgeUsage | None = None
    request: str = ""
    final_text: str = ""
    note: str = ""

    @property
    def disagrees(self) -> bool:
        """A verdict other than the label (an error is not a disagreement either: it is counted apart)."""
        return self.outcome != "error" and self.outcome != self.label


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@attrs.frozen
class Agreement:
    """The confusion counts of the judgments with a verdict, and the errors counted apart."""

    tp: int = 0
    fn: int = 0
    tn: int = 0
    fp: int = 0
    errors: int = 0

    @property
    def verdicts(self) -> int:
        return self.tp + self.fn + self.tn + self.fp

    @property
    def judgments(self) -> int:
        return self.verdicts + self.errors

    @property
    def tpr(self) -> float | None:
        """Complete cases judged complete, of the complete cases with a verdict."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def tnr(self) -> float | None:
        """Incomplete cases judged incomplete, of the incomplete cases with a verdict."""
        return _ratio(self.tn, self.tn + self.fp)

    @property
    def accuracy(self) -> float | None:
        return _ratio(self.tp + self.tn, self.verdicts)

    @property
    def error_rate(self) -> float | None:
        """Verification errors of every judgment."""
        return _ratio(self.errors, self.judgments)

    def _chance(self) -> float | None:
        n = self.verdicts
        if not n:
            return None
        return ((self.tp + self.fn) * (self.tp + self.fp) + (self.tn + self.fp) * (self.tn + self.fn)) / (n * n)

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa; None without verdicts or when chance agreement is 1 (one class everywhere)."""
        chance, observed = self._chance(), self.accuracy
        if chance is None or observed is None or chance >= 1:
            return None
        return (observed - chance) / (1 - chance)

    @property
    def kappa_ci(self) -> tuple[float, float] | None:
        """The 95 % interval of kappa from Cohen's (1960) large-sample standard error."""
        kappa, chance, observed = self.kappa, self._chance(), self.accuracy
        if kappa is None or chance is None or observed is None:
            return None
        error = math.sqrt(observed * (1 - observed) / (self.verdicts * (1 - chance) ** 2))
        return max(-1.0, kappa - KAPPA_Z * error), min(1.0, kappa + KAPPA_Z * error)


def agreement(judgments: Iterable[Judgment]) -> Agreement:
    counts = {"tp": 0, "fn": 0, "tn": 0, "fp": 0, "errors": 0}
    for item in judgments:
        if item.outcome == "error":
            counts["errors"] += 1
        elif item.label == "complete":
            counts["tp" if item.outcome == "complete" else "fn"] += 1
        else:
            counts["tn" if item.outcome == "incomplete" else "fp"] += 1
    return Agreement(**counts)


@attrs.frozen
class CaseConsistency:
    """The repeated judgments of one case; consistent when all are verdicts and all the same (an error among
    them is never consistency)."""

    index: int
    case: str
    label: str
    outcomes: tuple[Outcome, ...]

    @property
    def consistent(self) -> bool:
        return "error" not in self.outcomes and len(set(self.outcomes)) == 1


def consistency(judgments: Iterable[Judgment]) -> tuple[CaseConsistency, ...]:
    """Per case (in case order), its judgments' outcomes in the order they were made."""
    grouped: dict[int, list[Judgment]] = {}
    for item in judgments:
        grouped.setdefault(item.index, []).append(item)
    return tuple(CaseConsistency(index, items[0].case, items[0].label, tuple(item.outcome for item in items))
                 for index, items in sorted(grouped.items()))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q``-th percentile (0 < q ≤ 100): the smallest value with at least q % at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@attrs.frozen
class JudgeQuality:
    """The figures of one evaluation (``kind`` ``eval``) or calibration (``calibrate``)."""

    kind: Literal["eval", "calibrate"]
    judgments: tuple[Judgment, ...]
    repeat: int = 1
    #: items left out before judging, by why (calibrate: ``expired``, ``pending``)
    excluded: Mapping[str, int] = attrs.field(factory=dict)
    #: what the sample is (calibrate: conditional on escalation)
    caveat: str = ""

    @property
    def agreement(self) -> Agreement:
        return agreement(self.judgments)

    @property
    def cases(self) -> tuple[CaseConsistency, ...]:
        return consistency(self.judgments)

    @property
    def consistency(self) -> float | None:
        """The share of cases whose repeated judgments agree; None with fewer than two repeats."""
        if self.repeat < 2:
            return None
        cases = self.cases
        return _ratio(sum(case.consistent for case in cases), len(cases))

    @property
    def errors_by_reason(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for item in self.judgments:
            if item.outcome == "error":
                found[item.error or "unknown"] = found.get(item.error or "unknown", 0) + 1
        return dict(sorted(found.items()))

    def latency(self) -> dict[str, float | None]:
        """p50/p90/p99 of every timed judgment (errors included: a timeout is part of what the judge costs)."""
        values = [item.latency_s for item in self.judgments if item.latency_s is not None]
        return {f"p{q}": percentile(values, q) for q in (50, 90, 99)}

    def usage(self) -> dict[str, Any]:
        """Totals of what the clients reported; a figure no call reported is None ("not reported")."""
        reported = [item.usage for item in self.judgments if item.usage is not None]

        def total(name: str) -> Any:
            values = [getattr(usage, name) for usage in reported if getattr(usage, name) is not None]
            if not values:
                return None
            summed = sum(values)
            # costs past a float's range sum to inf, which is no figure (and no JSON number): not reported
            return summed if not isinstance(summed, float) or math.isfinite(summed) else None

        return {"reported_calls": len(reported), "calls": len(self.judgments),
                "input_tokens": total("input_tokens"), "output_tokens": total("output_tokens"),
                "cost_usd": total("cost_usd")}


@attrs.frozen
class Thresholds:
    """The least figures a CI run accepts (None: not checked)."""

    min_accuracy: float | None = None
    min_kappa: float | None = None
    min_tpr: float | None = None
    min_tnr: float | None = None
    max_error_rate: float | None = None
    min_consistency: float | None = None


def failed_thresholds(report: JudgeQuality, thresholds: Thresholds) -> tuple[str, ...]:
    """One line per threshold the report misses; an undefined figure (n/a) misses every threshold on it."""
    figures = report.agreement
    checks = (
        ("accuracy", figures.accuracy, thresholds.min_accuracy, True),
        ("kappa", figures.kappa, thresholds.min_kappa, True),
        ("tpr", figures.tpr, thresholds.min_tpr, True),
        ("tnr", figures.tnr, thresholds.min_tnr, True),
        ("error_rate", figures.error_rate, thresholds.max_error_rate, False),
        ("consistency", report.consistency, thresholds.min_consistency, True),
    )
    failed = []
    for name, value, limit, at_least in checks:
        if limit is None:
            continue
        if value is None:
            failed.append(f"{name} n/a (threshold {limit:g})")
        elif value < limit if at_least else value > limit:
            failed.append(f"{name} {value:.4f} {'<' if at_least else '>'} {'min' if at_least else 'max'} {limit:g}")
    return tuple(failed)


def quality_json(report: JudgeQuality, thresholds: Thresholds | None = None) -> dict[str, Any]:
    """The report as JSON data (documented on the judge-quality page)."""
    figures = report.agreement
    interval = figures.kappa_ci
    by_case: dict[int, list[Judgment]] = {}
    for item in report.judgments:
        by_case.setdefault(item.index, []).append(item)
    data: dict[str, Any] = {
        "kind": report.kind,
        "caveat": report.caveat,
        "repeat": report.repeat,
        "cases": len(report.cases),
        "judgments": figures.judgments,
        "verdicts": figures.verdicts,
        "errors": figures.errors,
        "errors_by_reason": report.errors_by_reason,
        "excluded": dict(report.excluded),
        "confusion": {"tp": figures.tp, "fn": figures.fn, "tn": figures.tn, "fp": figures.fp},
        "tpr": figures.tpr,
        "tnr": figures.tnr,
        "accuracy": figures.accuracy,
        "kappa": figures.kappa,
        "kappa_ci95": list(interval) if interval is not None else None,
        "error_rate": figures.error_rate,
        "consistency": report.consistency,
        "latency_s": report.latency(),
        "usage": report.usage(),
        "per_case": [
            {"case": case.case, "label": case.label, "outcomes": list(case.outcomes),
             "consistent": case.consistent,
             "errors": [item.error for item in by_case[case.index] if item.outcome == "error"],
             "latency_s": [item.latency_s for item in by_case[case.index] if item.latency_s is not None]}
            for case in report.cases
        ],
        "disagreements": [
            {"case": item.case, "label": item.label, "outcome": item.outcome, "request": item.request,
             "final_text": item.final_text, "note": item.note} for item in report.judgments if item.disagrees
        ],
    }
    if thresholds is not None:
        data["failed_thresholds"] = list(failed_thresholds(report, thresholds))
    return data


_face.present_module(globals())  # the names verigate.judge exports report it

"""Invariants of the agreement figures, each against an independent oracle: errors are never agreement (in the
figures and through the gate's own judging path, whatever way an engine fails), kappa and the percentiles as
their textbook definitions compute them."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verigate import Gate, JudgeError, Verdict
from verigate.gate import evaluate_judge
from verigate.hookspecs import hookimpl
from verigate.judge import JudgeCase, JudgeRequest, Judgment, agreement, consistency, percentile

LABELS = st.sampled_from(["complete", "incomplete"])
OUTCOMES = st.sampled_from(["complete", "incomplete", "error"])
PAIRS = st.lists(st.tuples(LABELS, OUTCOMES), max_size=60)


def _judgments(pairs: list[tuple[str, str]]) -> list[Judgment]:
    return [Judgment(index=n, case=f"c{n}", label=label, outcome=outcome,  # type: ignore[arg-type]
                     error="judge_error" if outcome == "error" else None) for n, (label, outcome) in
            enumerate(pairs)]


def _oracle(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Counts and figures straight from the definitions, with exact fractions."""
    counted = Counter(pairs)
    verdicts = [(label, outcome) for label, outcome in pairs if outcome != "error"]
    n = len(verdicts)
    agree = sum(label == outcome for label, outcome in verdicts)
    result: dict[str, Any] = {
        "tp": counted[("complete", "complete")], "fn": counted[("complete", "incomplete")],
        "tn": counted[("incomplete", "incomplete")], "fp": counted[("incomplete", "complete")],
        "errors": len(pairs) - n, "agree": agree,
        "accuracy": Fraction(agree, n) if n else None,
    }
    if n:
        chance = sum(Fraction(sum(label == side for label, _ in verdicts), n)
                     * Fraction(sum(outcome == side for _, outcome in verdicts), n)
                     for side in ("complete", "incomplete"))
        result["kappa"] = None if chance == 1 else (result["accuracy"] - chance) / (1 - chance)
    else:
        result["kappa"] = None
    return result


@given(PAIRS)
def test_the_figures_match_the_definitions(pairs: list[tuple[str, str]]) -> None:
    figures, oracle = agreement(_judgments(pairs)), _oracle(pairs)
    assert (figures.tp, figures.fn, figures.tn, figures.fp, figures.errors) == tuple(
        oracle[key] for key in ("tp", "fn", "tn", "fp", "errors"))
    for name in ("accuracy", "kappa"):
        expected = oracle[name]
        assert (getattr(figures, name) is None) == (expected is None)
        if expected is not None:
            assert getattr(figures, name) == pytest.approx(float(expected))
    if figures.kappa_ci is not None:
        low, high = figures.kappa_ci
        assert -1 <= low <= high <= 1 and (low <= figures.kappa <= high)  # type: ignore[operator]


@given(PAIRS, st.data())
def test_errors_never_increase_agreement(pairs: list[tuple[str, str]], data: st.DataObject) -> None:
    broken = [index for index in range(len(pairs)) if data.draw(st.booleans(), label=f"error {index}")]
    errored = [(label, "error") if index in broken else (label, outcome)
               for index, (label, outcome) in enumerate(pairs)]
    before, after = agreement(_judgments(pairs)), agreement(_judgments(errored))
    assert after.tp + after.tn <= before.tp + before.tn  # an error is never agreement
    assert after.tp + after.tn == _oracle(errored)["agree"]
    assert after.errors == _oracle(errored)["errors"] >= before.errors
    assert after.judgments == before.judgments
    if after.error_rate is not None and before.error_rate is not None:
        assert after.error_rate >= before.error_rate
    # per case: an error among the repeats never makes the case consistent
    repeated = [Judgment(index=0, case="c", label="complete", outcome=outcome)  # type: ignore[arg-type]
                for _, outcome in errored]
    if repeated:
        assert consistency(repeated)[0].consistent == (
            "error" not in {o for _, o in errored} and len({o for _, o in errored}) == 1)


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=50),
       st.sampled_from([1, 50, 90, 99, 100]))
def test_percentile_is_the_nearest_rank(values: list[float], q: int) -> None:
    found = percentile(values, q)
    # the smallest value with at least q % of the values at or below it
    expected = min(v for v in values if sum(x <= v for x in values) * 100 >= q * len(values))
    assert found == expected


class KeyedEngine:
    """A judge engine plug-in answering by a word in the candidate's final text, failing in every way an engine
    can: a pass, a fail, a JudgeError, a bug, a non-Verdict, a hang past the judge timeout."""

    __name__ = "keyed-engine"

    def __init__(self) -> None:
        self.name = "keyed"

    @hookimpl
    def verigate_judge_engines(self) -> dict[str, Any]:
        return {"keyed": lambda config, client: self}

    async def judge(self, request: JudgeRequest, *, timeout_s: float) -> Any:
        word = request.candidate.final_text.split()[-1]
        if word == "pass":
            return Verdict(passed=True, score=1.0)
        if word == "fail":
            return Verdict(passed=False, rubric_misses=("not_done",))
        if word == "judge_error":
            raise JudgeError("judge_http_503")
        if word == "bug":
            raise RuntimeError("engine bug")
        if word == "hang":
            await asyncio.sleep(30)
        return {"passed": True}  # not a Verdict: never a pass


BEHAVIOURS = ["pass", "fail", "judge_error", "bug", "garbage", "hang"]


@pytest.fixture(scope="module")
def keyed_gate() -> Iterator[Gate]:
    with Gate.from_config({"judge": {"engine": "keyed", "timeout_s": 0.2}}, plugins=[KeyedEngine()],
                          store=":memory:", entry_points=False) as gate:
        yield gate


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(LABELS, st.sampled_from(BEHAVIOURS)), min_size=1, max_size=8))
def test_through_the_gate_every_failure_is_an_error_never_agreement(keyed_gate: Gate,
                                                                     cases: list[tuple[str, str]]) -> None:
    judge_cases = [JudgeCase(request="Do it.", final_text=f"Done. {behaviour}", label=label)  # type: ignore[arg-type]
                   for label, behaviour in cases]
    report = asyncio.run(evaluate_judge(keyed_gate, judge_cases, concurrency=8))
    expected = [(label, {"pass": "complete", "fail": "incomplete"}.get(behaviour, "error"))
                for label, behaviour in cases]
    figures, oracle = report.agreement, _oracle(expected)
    assert (figures.tp, figures.fn, figures.tn, figures.fp, figures.errors) == tuple(
        oracle[key] for key in ("tp", "fn", "tn", "fp", "errors"))
    assert [item.outcome for item in report.judgments] == [outcome for _, outcome in expected]
    assert all(item.error for item in report.judgments if item.outcome == "error")
    if oracle["accuracy"] is not None:
        assert math.isclose(figures.accuracy or 0.0, float(oracle["accuracy"]))

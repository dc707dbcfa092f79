"""GradeTally's running totals against pass^k from its definition, however the runs are split into sources."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from verigate.trace import GradeReport, GradeTally, JudgeAxis, Run, RunResult, Source, SourceGrade, load_trace_config
from verigate.trace._stream import MAX_STREAMED_K

_outcomes = st.dictionaries(st.sampled_from("abcdef"), st.lists(st.booleans(), min_size=1, max_size=14), min_size=1)


def _source(results: list[RunResult], index: int) -> SourceGrade:
    report = GradeReport(runs=tuple(results), tasks=(), pass_hat_k=(), judge=JudgeAxis("disabled", "off"),
                         config_source="c", config_verified=False)
    return SourceGrade(Source(f"s{index}.json"), report)


@settings(max_examples=60, deadline=None)
@given(outcomes=_outcomes, cuts=st.lists(st.integers(0, 60), max_size=8), errors=st.integers(0, 2))
def test_running_totals_give_pass_hat_k_by_its_definition(outcomes: dict[str, list[bool]], cuts: list[int],
                                                          errors: int) -> None:
    results = [RunResult(Run(task, f"{task}/{trial}", ok, (), "x"), (), "clean-pass" if ok else "fail")
               for task, trials in outcomes.items() for trial, ok in enumerate(trials)]
    bounds = sorted({0, len(results), *(cut % (len(results) + 1) for cut in cuts)})
    tally = GradeTally(load_trace_config())
    for index, (start, end) in enumerate(itertools.pairwise(bounds)):
        tally.add(_source(results[start:end], index))
    for index in range(errors):
        tally.add(SourceGrade(Source(f"bad{index}"), None, "damaged"))
    summary = tally.summary()
    top = min(max(map(len, outcomes.values())), MAX_STREAMED_K)
    assert [row.k for row in summary.report.pass_hat_k] == list(range(1, top + 1))
    for row in summary.report.pass_hat_k:
        counted = [trials for trials in outcomes.values() if len(trials) >= row.k]
        expected = sum(math.comb(sum(t), row.k) / math.comb(len(t), row.k) for t in counted) / len(counted)
        assert math.isclose(row.value, expected)
    assert summary.runs == len(results) and summary.errors == errors
    assert summary.verdicts["fail"] == sum(not ok for trials in outcomes.values() for ok in trials)
    signal = any(not all(trials) for trials in outcomes.values())
    assert summary.exit_code == (2 if errors else 3 if signal else 0)

"""The shipped labelled case set (examples/judge-cases/cases.jsonl): strict JSON, the agreed fields, unique ids,
balanced labels, every failure kind present, and each line a valid Candidate for the gate."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from verigate import _json as strict_json
from verigate.gate import parse_candidate

CASES = Path(__file__).resolve().parents[2] / "examples" / "judge-cases" / "cases.jsonl"
FIELDS = {"id", "request", "final_text", "tool_calls", "label", "note"}
FAILURE_KINDS = ("claims-tests", "failed-command", "hands-back", "wrong-bug", "partial", "hallucinated-file")
COMPLETE_KINDS = ("complete", "terse", "retry")
DOMAINS = ("code", "data", "support")


def _cases() -> list[dict[str, Any]]:
    lines = CASES.read_text(encoding="utf-8").splitlines()
    assert all(line.strip() for line in lines), "no blank lines"
    return [strict_json.loads(line) for line in lines]


def _kind(case_id: str) -> tuple[str, str]:
    domain, rest = case_id.split("-", 1)
    kind, number = rest.rsplit("-", 1)
    assert number.isdigit() and len(number) == 2, case_id
    return domain, kind


def test_every_line_is_one_strict_json_object_with_exactly_the_agreed_fields() -> None:
    cases = _cases()
    assert len(cases) >= 64
    for case in cases:
        assert isinstance(case, dict) and set(case) == FIELDS, case.get("id")
        assert all(isinstance(case[key], str) and case[key].strip() for key in FIELDS - {"tool_calls"})
        assert "\n" not in case["note"], "the note is one line"


def test_ids_are_unique_and_tagged_with_their_domain_and_kind() -> None:
    cases = _cases()
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        domain, kind = _kind(case["id"])
        assert domain in DOMAINS
        expected = "incomplete" if kind in FAILURE_KINDS else "complete"
        assert kind in FAILURE_KINDS + COMPLETE_KINDS and case["label"] == expected, case["id"]


def test_labels_are_balanced_and_every_kind_and_domain_is_present() -> None:
    cases = _cases()
    labels = collections.Counter(case["label"] for case in cases)
    assert labels["complete"] == labels["incomplete"] == len(cases) // 2
    kinds = collections.Counter(_kind(case["id"])[1] for case in cases)
    assert all(kinds[kind] >= 4 for kind in FAILURE_KINDS), kinds
    assert all(kinds[kind] >= 2 for kind in COMPLETE_KINDS), kinds
    domains = collections.Counter(_kind(case["id"])[0] for case in cases)
    assert all(domains[domain] >= 10 for domain in DOMAINS), domains


@pytest.mark.parametrize("case", _cases(), ids=lambda case: case["id"])
def test_each_case_is_a_candidate_the_gate_takes(case: dict[str, Any]) -> None:
    candidate = parse_candidate({key: case[key] for key in ("request", "final_text", "tool_calls")},
                                source=case["id"])
    assert candidate.final_text == case["final_text"]
    for call in candidate.tool_calls:
        assert call.ok in (True, False)  # every shipped observation says whether it worked
    if "failed-command" in case["id"]:  # the failure the answer glosses over is in the observations
        assert any(call.ok is False for call in candidate.tool_calls)


def test_every_case_goes_through_the_gate_and_its_judge_plumbing() -> None:
    """The plumbing, with a scripted model call that answers each case's label: every complete case completes (no
    built-in check stands in its way), no incomplete one does, and every judge request held the case's text."""
    import asyncio

    from verigate import Gate, Termination, TerminationReason
    from verigate.testing import verdict_reply

    cases = _cases()
    by_request = {case["request"]: case for case in cases}
    seen: list[str] = []

    def judge(request: Any) -> str:
        case = next(case for text, case in by_request.items() if text in request.user)
        seen.append(case["id"])
        return verdict_reply(case["label"] == "complete", [] if case["label"] == "complete" else ["task_done"])

    async def run_all() -> list[str]:
        outcomes = []
        with Gate.from_config({"judge": {"client": "callable"}}, judge_function=judge, store=":memory:",
                              entry_points=False) as gate:
            for case in cases:
                candidate = parse_candidate({"request": case["request"], "final_text": case["final_text"],
                                             "tool_calls": case["tool_calls"], "session_id": case["id"]})
                result = await gate.finalize(candidate, Termination(TerminationReason.NATURAL))
                outcomes.append(result.outcome)
        return outcomes

    outcomes = asyncio.run(run_all())
    for case, outcome in zip(cases, outcomes, strict=True):
        assert (outcome == "completed") == (case["label"] == "complete"), (case["id"], outcome)
    assert set(seen) >= {case["id"] for case in cases if case["label"] == "complete"}


def test_the_shipped_set_runs_through_the_gates_judge_and_every_figure_matches_a_hand_count() -> None:
    """The plumbing, end to end in process: the shipped file read by the real reader, each case judged by the
    gate's real judging path (prompt, redaction, parser) with a scripted model that knows the labels but gets every
    ``*-01`` case wrong and errors on every ``*-02`` case; the figures counted by hand from the file."""
    import asyncio
    import json

    from verigate import Gate
    from verigate.gate import evaluate_judge
    from verigate.judge import read_judge_cases
    from verigate.testing import verdict_reply

    raw = _cases()
    by_text = {case["final_text"]: case for case in raw}

    def model(request: Any) -> str:
        prompt = request.user
        # the longest final text the prompt holds: one case's text may be a prefix of another's
        matches = [text for text in by_text if text in prompt or json.dumps(text)[1:-1] in prompt]
        assert matches, "every prompt carries its case's final text"
        case = by_text[max(matches, key=len)]
        if case["id"].endswith("-02"):
            return "this is no verdict"
        passed = (case["label"] == "complete") != case["id"].endswith("-01")
        return verdict_reply(passed, () if passed else ("work_incomplete",))

    gate = Gate.from_config({"judge": {"client": "callable", "model": "scripted"}, "store": {"url": ":memory:"}},
                            judge_function=model)
    try:
        quality = asyncio.run(evaluate_judge(gate, read_judge_cases(CASES), concurrency=4))
    finally:
        gate.close()
    # by hand, from the file alone
    judged = [case for case in raw if not case["id"].endswith("-02")]
    right = [case for case in judged if not case["id"].endswith("-01")]
    wrong = [case for case in judged if case["id"].endswith("-01")]
    tp = sum(case["label"] == "complete" for case in right)
    tn = sum(case["label"] == "incomplete" for case in right)
    fn = sum(case["label"] == "complete" for case in wrong)
    fp = sum(case["label"] == "incomplete" for case in wrong)
    agreement = quality.agreement
    assert (agreement.tp, agreement.tn, agreement.fn, agreement.fp) == (tp, tn, fn, fp)
    assert agreement.errors == len(raw) - len(judged) > 0
    assert agreement.accuracy == pytest.approx((tp + tn) / len(judged))
    assert set(quality.errors_by_reason) == {"invalid_judge_response"}

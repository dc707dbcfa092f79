"""Unanimous judge ensembles (``judge.ensemble``, ``judge.mode: unanimous``) through the real Gate and a real store:
every member must pass, any member's error is a verification error, one timeout for all, each member recorded."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verigate import Candidate, ConfigError, Gate, JudgeError, Reflection, Termination, TerminationReason, Verdict
from verigate.testing import Delay, ScriptedJudge, ScriptedModelClient, verdict_reply

NATURAL = Termination(TerminationReason.NATURAL)
PASS = Verdict(passed=True, score=0.9, reflection=Reflection("ran the tests", "", ""))


def _fail(*misses: str, lesson: str = "run the tests") -> Verdict:
    return Verdict(passed=False, rubric_misses=misses, score=0.2, retryable=True,
                   reflection=Reflection("no test run shown", lesson, "pytest output"))


def _candidate(session: str = "s", **fields: Any) -> Candidate:
    return Candidate("Fix the failing test.", "Fixed the off-by-one; tests pass.", session_id=session, **fields)


@pytest.fixture
def ensemble(db_path: Path) -> Iterator[Any]:
    """``ensemble(steps_a, steps_b, ..., timeout_s=..., members=...)``: a gate over scripted members a, b, c …"""
    opened: list[Gate] = []

    def make(*scripts: list[Any], timeout_s: float = 5.0,
             members: list[dict[str, Any]] | None = None) -> tuple[Gate, list[ScriptedJudge]]:
        judges = [ScriptedJudge(steps, name=name) for steps, name in zip(scripts, "abcdefgh", strict=False)]
        section = {"mode": "unanimous", "timeout_s": timeout_s,
                   "ensemble": members or [{"engine": judge.engine_name} for judge in judges]}
        gate = Gate.from_config({"judge": section}, plugins=judges, store=str(db_path), entry_points=False)
        opened.append(gate)
        return gate, judges

    yield make
    for gate in opened:
        gate.close()


def _policy_rows(gate: Gate) -> list[dict[str, Any]]:
    return [dict(row.payload) for row in gate.store.ledger() if row.kind == "verification_policy"]


def test_every_member_passing_completes_and_the_ledger_names_each_members_verdict(ensemble: Any) -> None:
    gate, judges = ensemble([PASS], [Verdict(passed=True, score=0.6, reflection=Reflection("", "", ""))])
    result = asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert result.outcome == "completed" and [judge.calls for judge in judges] == [1, 1]
    assert result.verdict is not None and result.verdict.engine == "ensemble" and result.verdict.score == 0.6
    row = _policy_rows(gate)[-1]
    assert row["engine"] == "ensemble" and row["judge_mode"] == "unanimous"
    assert [(m["engine"], m["passed"], m["score"], m["error"], m["cached"]) for m in row["judge_members"]] == [
        ("a", True, 0.9, None, False), ("b", True, 0.6, None, False)]
    evidence = [r.payload for r in gate.store.timeline("s") if r.kind == "evidence"][-1]
    assert evidence["judge_engine"] == "ensemble" and len(evidence["judge_members"]) == 2


def test_one_member_failing_fails_and_misses_and_reflections_merge_in_member_order(ensemble: Any) -> None:
    gate, _ = ensemble([_fail("tests_pass", "cites_source")], [PASS], [_fail("cites_source", "no_todo")])
    result = asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert result.outcome == "revise" and result.verdict is not None and not result.verdict.passed
    assert result.verdict.rubric_misses == ("tests_pass", "cites_source", "no_todo")
    # the two failing members said the same lesson: it is given once; the passing member's reflection is not feedback
    assert result.verdict.reflection == Reflection("no test run shown", "run the tests", "pytest output")
    assert result.follow_up.count("run the tests") == 1 and "ran the tests" not in result.follow_up
    members = _policy_rows(gate)[-1]["judge_members"]
    assert [m["rubric_misses"] for m in members] == [["tests_pass", "cites_source"], [], ["cites_source", "no_todo"]]


@pytest.mark.parametrize("failure, code", [
    (JudgeError("judge_http_503"), "judge_http_503"),
    (JudgeError("invalid_judge_response"), "invalid_judge_response"),
    (RuntimeError("engine bug"), "judge_error"),
    ("not a verdict", "invalid_judge_response"),
])
def test_any_members_error_is_a_verification_error_even_when_the_others_pass(
    ensemble: Any, failure: Any, code: str
) -> None:
    gate, judges = ensemble([PASS], [failure], [PASS])
    result = asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert (result.outcome, result.policy_action) == ("pending_review", "escalate_verification_error")
    assert result.verdict is not None and result.verdict.error == code and not result.verdict.passed
    assert [judge.calls for judge in judges] == [1, 1, 1]  # never a majority of the others
    members = _policy_rows(gate)[-1]["judge_members"]
    assert [m["error"] for m in members] == [None, code, None]
    assert gate.store.list_reviews("pending")[0].verdict is not None


def test_members_run_concurrently_under_the_one_judge_timeout(ensemble: Any) -> None:
    # each member alone takes most of the one timeout: one after another, the last would run out of time
    gate, judges = ensemble([Delay(1.0, PASS)], [Delay(1.0, PASS)], [Delay(1.0, PASS)], timeout_s=2.5)
    result = asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert result.outcome == "completed"
    assert all(max(judge.timeouts) <= 2.5 for judge in judges)


def test_a_slow_member_times_out_and_the_ensemble_escalates(ensemble: Any) -> None:
    gate, _ = ensemble([PASS], [Delay(30, PASS)], timeout_s=0.3)
    result = asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert result.verdict is not None and result.verdict.error == "judge_timeout"
    assert [m["error"] for m in _policy_rows(gate)[-1]["judge_members"]] == [None, "judge_timeout"]


def test_the_run_deadline_bounds_every_member(ensemble: Any) -> None:
    import time

    gate, _ = ensemble([Delay(30, PASS)], [Delay(30, PASS)], timeout_s=60)
    result = asyncio.run(gate.finalize(_candidate(), NATURAL, deadline=time.monotonic() + 0.3))
    assert result.verdict is not None and result.verdict.error == "verification_time_budget_exhausted"


def test_a_members_own_timeout_caps_it_within_the_one(ensemble: Any) -> None:
    gate, judges = ensemble([PASS], [PASS], timeout_s=5,
                            members=[{"engine": "a", "timeout_s": 1}, {"engine": "b"}])
    asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert judges[0].timeouts == [1.0] and judges[1].timeouts == [5.0]


def test_personal_data_never_reaches_an_auxiliary_member_and_the_ensemble_fails_closed(ensemble: Any) -> None:
    gate, judges = ensemble([PASS], [PASS], members=[{"engine": "a"}, {"engine": "b", "trust": "auxiliary"}])
    result = asyncio.run(gate.finalize(_candidate(contains_personal_data=True), NATURAL))
    assert result.verdict is not None and result.verdict.error == "personal_data_omitted"
    assert [judge.calls for judge in judges] == [1, 0]


def test_the_runtimes_own_model_call_goes_to_the_callable_members(db_path: Path) -> None:
    client = ScriptedModelClient([verdict_reply(True)])
    other = ScriptedJudge([_fail("tests_pass")], name="other")
    section = {"mode": "unanimous", "ensemble": [{"engine": "llm_judge", "client": "callable", "model": "mine"},
                                                 {"engine": "other"}]}
    with Gate.from_config({"judge": section}, plugins=[other], judge_function=client, store=str(db_path),
                          entry_points=False) as gate:
        result = asyncio.run(gate.finalize(_candidate(), NATURAL))
    assert client.calls == 1 and other.calls == 1 and result.outcome == "revise"
    assert result.verdict is not None and "llm_judge/callable:mine" in result.verdict.effective_engine


def test_judge_function_needs_a_callable_member(db_path: Path) -> None:
    with pytest.raises(ConfigError, match=re.escape("no member of judge.ensemble has client: callable")):
        Gate.from_config({"judge": {"mode": "unanimous", "ensemble": [{"engine": "llm_judge", "client": "x"}]}},
                         judge_function=lambda request: "", store=str(db_path), entry_points=False)


@pytest.mark.parametrize("section, field, message", [
    ({"mode": "majority", "ensemble": [{}]}, "judge.mode", "one of ['unanimous']"),
    ({"ensemble": [{}]}, "judge.ensemble", "needs judge.mode (allowed: unanimous)"),
    ({"mode": "unanimous"}, "judge.mode", "applies to judge.ensemble only"),
    ({"mode": "unanimous", "model": "gpt", "ensemble": [{}]}, "judge.model", "belong to each member"),
    ({"mode": "unanimous", "ensemble": []}, "judge.ensemble", "at least 1"),
    ({"mode": "unanimous", "ensemble": [{"ensemble": []}]}, "judge.ensemble[0].ensemble", "must not contain"),
    ({"mode": "unanimous", "ensemble": [{"engine": "telepathy"}]}, "judge.ensemble[0].engine", "telepathy"),
])
def test_a_malformed_ensemble_is_a_config_error_naming_the_field(
    db_path: Path, section: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        Gate.from_config({"judge": section}, store=str(db_path), entry_points=False)
    assert caught.value.field == field


def test_the_ensemble_shape_in_yaml_names_the_line(tmp_path: Path) -> None:
    from verigate._config import load_config

    path = tmp_path / "verigate.yaml"
    path.write_text("judge:\n  mode: unanimous\n  ensemble:\n    - engine: llm_judge\n      trust: somewhat\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert (caught.value.field, caught.value.line) == ("judge.ensemble[0].trust", 5)
    path.write_text("judge:\n  mode: unanimous\n  ensemble:\n    - {engine: off, client: callable}\n"
                    "    - {engine: jev}\n")
    config = load_config(path)
    assert config.judge is not None and [m.engine for m in config.judge.ensemble] == ["llm_judge", "jev"]
    assert config.judge.engine == "ensemble" and config.warnings

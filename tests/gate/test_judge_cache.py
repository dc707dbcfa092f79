"""The judge-call cache (``judge.cache``) through the real Gate, a real SQLite store with an injected clock, and the
real ``llm_judge`` engine over a scripted model call: hits within the TTL, misses after it, never an error cached,
a damaged entry judged afresh (never a pass), a failing store judged normally."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest

from verigate import Candidate, Gate, JudgeError, Reflection, StoreError, Termination, TerminationReason, Verdict
from verigate.gate._judge_cache import cache_key
from verigate.judge import JudgeConfig, JudgeRequest
from verigate.store import SqliteStore
from verigate.testing import ScriptedJudge, ScriptedModelClient, verdict_reply

NATURAL = Termination(TerminationReason.NATURAL)
TTL_S = 600


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(db_path: Path, clock: Clock) -> Iterator[SqliteStore]:
    with SqliteStore(db_path, clock=clock) as opened:
        yield opened


def _gate(store: Any, client: Any, **judge: Any) -> Gate:
    section = {"client": "callable", "model": "m", "cache": {"ttl_s": TTL_S}, **judge}
    return Gate.from_config({"judge": section}, judge_function=client, store=store, entry_points=False)


def _candidate(session: str, text: str = "Fixed the off-by-one; tests pass.") -> Candidate:
    # another session, turn and attempt each time: a rerun of the same trajectory, as in CI
    return Candidate("Fix the failing test.", text, session_id=session, turn_id=f"turn-{session}")


def _run(gate: Gate, session: str, **fields: Any) -> Any:
    return asyncio.run(gate.finalize(_candidate(session, **fields), NATURAL))


def _last_policy_row(store: SqliteStore) -> dict[str, Any]:
    return dict([row for row in store.ledger() if row.kind == "verification_policy"][-1].payload)


def _entries(db_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT cache_key, entry FROM judge_cache ORDER BY created_at").fetchall()


def test_an_identical_redacted_request_within_the_ttl_reuses_the_verdict(store: SqliteStore, clock: Clock) -> None:
    client = ScriptedModelClient([verdict_reply(False, ["tests_pass"], score=0.3, lesson="run pytest")])
    gate = _gate(store, client)
    first = _run(gate, "one")
    clock.advance(TTL_S - 1)
    second = _run(gate, "two")
    assert client.calls == 1  # the second run was not sent to the model
    assert first.verdict == second.verdict and second.outcome == "revise"
    assert second.verdict.reflection.lesson == "run pytest"
    assert _last_policy_row(store)["judge_cached"] is True
    evidence = [row.payload for row in store.timeline("two") if row.kind == "evidence"][-1]
    assert evidence["judge_cached"] is True
    assert [row.payload["judge_cached"] for row in store.timeline("one") if row.kind == "evidence"] == [False]


def test_after_the_ttl_the_request_is_judged_again(store: SqliteStore, clock: Clock) -> None:
    client = ScriptedModelClient([verdict_reply(True)], repeat_last=True)
    gate = _gate(store, client)
    _run(gate, "one")
    clock.advance(TTL_S + 1)
    result = _run(gate, "two")
    assert client.calls == 2 and result.outcome == "completed"
    assert _last_policy_row(store)["judge_cached"] is False


def test_a_different_request_misses(store: SqliteStore) -> None:
    client = ScriptedModelClient([verdict_reply(True)], repeat_last=True)
    gate = _gate(store, client)
    _run(gate, "one")
    _run(gate, "two", text="Fixed it differently; tests pass.")
    assert client.calls == 2


@pytest.mark.parametrize("reply", [
    JudgeError("judge_http_503"),
    "the verdict is: pass",
    verdict_reply(True) + " and more",
    '{"passed": true, "score": 7, "rubric_misses": [], "reflection": {"observation": "", "lesson": "", '
    '"next_check": ""}}',
])
def test_errors_and_replies_that_did_not_parse_cleanly_are_never_cached(
    store: SqliteStore, db_path: Path, reply: Any
) -> None:
    client = ScriptedModelClient([reply, verdict_reply(True)])
    gate = _gate(store, client)
    first = _run(gate, "one")
    assert first.verdict.is_verification_error and _entries(db_path) == []
    second = _run(gate, "two")
    assert client.calls == 2 and second.outcome == "completed"


def test_a_different_engine_configuration_is_a_different_key(store: SqliteStore) -> None:
    client = ScriptedModelClient([verdict_reply(True)], repeat_last=True)
    _run(_gate(store, client), "one")
    _run(_gate(store, client, model="other"), "two")
    _run(_gate(store, client, caps={"observations": 3}), "three")
    assert client.calls == 3


def _request(text: str = "done") -> JudgeRequest:
    return JudgeRequest(Candidate("do it", text, contains_personal_data=False), requirements=("tests_pass",))


class _Engine:
    effective_engine = "llm_judge/callable:m"
    name = "llm_judge"


@pytest.mark.parametrize("change", [
    {"engine": "jev"}, {"client": "openai"}, {"model": "m2"}, {"base_url": "http://127.0.0.1:9/v1"},
    {"trust": "auxiliary"}, {"threshold": 0.7}, {"options": {"max_output_tokens": 4096}},
])
def test_every_engine_setting_is_in_the_key_but_never_the_key_variable(change: dict[str, Any]) -> None:
    config = JudgeConfig(client="callable", model="m")
    base = cache_key(_request(), config, _Engine())  # type: ignore[arg-type]
    assert cache_key(_request(), attrs.evolve(config, **change), _Engine()) != base  # type: ignore[arg-type]
    assert cache_key(_request(), attrs.evolve(config, api_key_env="OTHER_KEY"), _Engine()) == base  # type: ignore[arg-type]
    assert cache_key(_request("not done"), config, _Engine()) != base  # type: ignore[arg-type]
    # the session, turn and attempt are not what the judge sees
    moved = JudgeRequest(attrs.evolve(_request().candidate, session_id="x", turn_id="t", attempt=2),
                         requirements=("tests_pass",))
    assert cache_key(moved, config, _Engine()) == base  # type: ignore[arg-type]


def _damage_pass_entry(db_path: Path, change: str) -> None:
    """Rewrite the one stored entry: a fail turned into something pass-shaped that is not a valid entry."""
    with sqlite3.connect(db_path) as conn:
        key, entry = conn.execute("SELECT cache_key, entry FROM judge_cache").fetchone()
        if change == "not json":
            damaged = entry[:-3]
        elif change == "duplicate key":
            damaged = entry[:-1] + ',"retryable":false}'
        elif change == "out of range score":
            damaged = entry.replace('"passed":false', '"passed":true').replace('"score":0.3', '"score":3')
        elif change == "extra field":
            damaged = entry.replace('"passed":false', '"passed":true,"forged":1').replace(
                '"rubric_misses":["tests_pass"]', '"rubric_misses":[]')
        elif change == "other key":  # a pass entry copied under another request's key
            damaged = entry.replace(key, "0" * 64).replace('"passed":false', '"passed":true').replace(
                '"rubric_misses":["tests_pass"]', '"rubric_misses":[]')
        else:
            damaged = "[]"
        assert damaged != entry
        conn.execute("UPDATE judge_cache SET entry = ?", (damaged,))


@pytest.mark.parametrize("change", ["not json", "duplicate key", "out of range score", "extra field", "other key",
                                    "not an object"])
def test_a_damaged_entry_is_judged_afresh_and_never_a_pass(store: SqliteStore, db_path: Path, change: str) -> None:
    client = ScriptedModelClient([verdict_reply(False, ["tests_pass"], score=0.3)], repeat_last=True)
    gate = _gate(store, client)
    _run(gate, "one")
    _damage_pass_entry(db_path, change)
    result = _run(gate, "two")
    assert client.calls == 2 and result.outcome == "revise" and not result.verdict.passed
    assert _last_policy_row(store)["judge_cached"] is False


class _FailingCacheStore(SqliteStore):
    """A real store whose cache methods fail, as a locked or broken database would."""

    def cached_verdict(self, key: str) -> Any:
        raise StoreError("the store is locked")

    def cache_verdict(self, key: str, verdict: Any, ttl_s: float) -> None:
        raise StoreError("the store is locked")


def test_a_failing_cache_read_or_write_judges_normally(db_path: Path) -> None:
    client = ScriptedModelClient([verdict_reply(True)], repeat_last=True)
    with _FailingCacheStore(db_path) as failing:
        gate = _gate(failing, client)
        results = [_run(gate, "one"), _run(gate, "two")]
    assert client.calls == 2 and [r.outcome for r in results] == ["completed", "completed"]
    assert "cache_verdict" in (results[0].store_error or "")


def test_the_cache_is_off_by_default(store: SqliteStore, db_path: Path) -> None:
    client = ScriptedModelClient([verdict_reply(True)], repeat_last=True)
    gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=client, store=store,
                            entry_points=False)
    _run(gate, "one")
    _run(gate, "two")
    assert client.calls == 2 and _entries(db_path) == []
    assert "judge_cached" not in _last_policy_row(store)


def test_an_ensemble_caches_per_member(store: SqliteStore) -> None:
    passing = Verdict(passed=True, score=0.9, reflection=Reflection("ok", "", ""))
    a = ScriptedJudge([passing], name="a")
    b = ScriptedJudge([JudgeError("judge_timeout"), passing], name="b")
    section = {"mode": "unanimous", "cache": {"ttl_s": TTL_S}, "ensemble": [{"engine": "a"}, {"engine": "b"}]}
    gate = Gate.from_config({"judge": section}, plugins=[a, b], store=store, entry_points=False)
    first = _run(gate, "one")
    assert first.verdict.error == "judge_timeout"  # b's error was not cached; a's pass was
    second = _run(gate, "two")
    assert (a.calls, b.calls) == (1, 2) and second.outcome == "completed"
    row = _last_policy_row(store)
    assert [m["cached"] for m in row["judge_members"]] == [True, False] and row["judge_cached"] is False
    third = _run(gate, "three")
    assert (a.calls, b.calls) == (1, 2) and third.outcome == "completed"
    assert _last_policy_row(store)["judge_cached"] is True


def test_a_verdict_the_schema_cannot_express_is_not_cached(store: SqliteStore, db_path: Path) -> None:
    engine = ScriptedJudge([Verdict(passed=True), Verdict(passed=True)], name="bare")  # no score, no reflection
    gate = Gate.from_config({"judge": {"engine": "bare", "cache": {"ttl_s": TTL_S}}}, plugins=[engine],
                            store=store, entry_points=False)
    _run(gate, "one")
    _run(gate, "two")
    assert engine.calls == 2 and _entries(db_path) == []


def test_a_hard_fail_stays_a_hard_fail_from_the_cache(store: SqliteStore) -> None:
    hard = Verdict(passed=False, rubric_misses=("unsafe",), score=0.0, reflection=Reflection("", "", ""),
                   retryable=False)
    engine = ScriptedJudge([hard], name="strict")
    gate = Gate.from_config({"judge": {"engine": "strict", "cache": {"ttl_s": TTL_S}}}, plugins=[engine],
                            store=store, entry_points=False)
    first, second = _run(gate, "one"), _run(gate, "two")
    assert engine.calls == 1 and first.policy_action == second.policy_action == "escalate"
    assert second.verdict == first.verdict


def _passing_judge(request: Any) -> str:
    return verdict_reply(True)


def _failing_judge(request: Any) -> str:
    return verdict_reply(False, ["tests_pass"], score=0.1)


def test_two_judge_functions_under_one_model_name_never_share_a_verdict(store: SqliteStore) -> None:
    # ``model`` names the callable's label; a stub that always passes (a test's, another runtime's) must not hand
    # its cached pass to the real function configured with the same model name over the same store
    assert _run(_gate(store, _passing_judge), "one").outcome == "completed"
    assert _run(_gate(store, _failing_judge), "two").outcome == "revise"
    assert _run(_gate(store, lambda request: verdict_reply(True)), "three").outcome == "completed"
    assert _run(_gate(store, lambda request: verdict_reply(False, ["x"], score=0.1)), "four").outcome == "revise"

"""Attack: a plug-in raises what is not an ``Exception`` — SystemExit (``argparse.error()``), GeneratorExit,
KeyboardInterrupt, a BaseException subclass — from a stage handler, a ``callable`` judge, a judge engine or the
store. ``Gate.finalize`` must record it as that stage's failure, keep the candidate in a pending review, and let
only the caller's own cancellation (and, after the review is stored, a KeyboardInterrupt) through."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

import pytest

from judge_servers import verdict_json
from verigate import Candidate, Gate, Termination, hookimpl
from verigate.store import SqliteStore
from verigate.testing import ScriptedJudge

NATURAL = Termination("natural")


class _Custom(BaseException):
    """A plug-in's own BaseException subclass."""


def _argparse_exit() -> None:
    argparse.ArgumentParser(prog="plugin").error("bad option")  # raises SystemExit(2)


RAISERS: dict[str, Any] = {
    "SystemExit": lambda: (_ for _ in ()).throw(SystemExit(3)),
    "argparse.error": _argparse_exit,
    "GeneratorExit": lambda: (_ for _ in ()).throw(GeneratorExit()),
    "custom BaseException": lambda: (_ for _ in ()).throw(_Custom("boom")),
    "CancelledError (own)": lambda: (_ for _ in ()).throw(asyncio.CancelledError()),
}


def _candidate(session: str) -> Candidate:
    return Candidate(request="do it", final_text="done", session_id=session, contains_personal_data=False)


class _Raising:
    """A plug-in whose handler for ``surface`` calls ``raiser``."""

    def __init__(self, surface: str, raiser: Any) -> None:
        self.__name__ = f"raising-{surface}"
        self.surface, self.raiser = surface, raiser

    @hookimpl
    def verigate_structural_check(self, candidate: Candidate, termination: Termination) -> Any:
        return self.raiser() if self.surface == "structural_check" else None

    @hookimpl
    def verigate_pre_verify(self, candidate: Candidate) -> Any:
        return self.raiser() if self.surface == "pre_verify" else None

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Any) -> Any:
        return self.raiser() if self.surface == "post_verify" else None

    @hookimpl
    def verigate_stop(self, candidate: Candidate, verdict: Any, action: str) -> Any:
        return self.raiser() if self.surface == "stop" else None


def _reviews(store: SqliteStore, session: str) -> list[Any]:
    return [review for review in store.list_reviews() if review.session_id == session]


@pytest.mark.parametrize("kind", sorted(RAISERS))
@pytest.mark.parametrize("surface", ["structural_check", "pre_verify", "post_verify", "stop"])
def test_a_stage_handler_raising_a_base_exception_escalates_to_a_review(tmp_path: Path, surface: str,
                                                                        kind: str) -> None:
    store = SqliteStore(tmp_path / "verigate.db")
    judge = ScriptedJudge([], repeat_last=False)
    plugin = _Raising(surface, RAISERS[kind])
    session = f"s-{surface}-{kind}"
    with Gate.from_config({"judge": {"client": "callable"}}, plugins=[plugin, judge], store=store,
                          judge_function=lambda request: verdict_json(passed=True)) as gate:
        result = asyncio.run(gate.finalize(_candidate(session), NATURAL))
        assert result.outcome == "pending_review" and result.pending_id is not None
        assert result.answer == ""
        [review] = _reviews(store, session)
        assert review.pending_text == "done"


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", sorted(RAISERS))
def test_a_callable_judge_raising_a_base_exception_is_a_verification_error(tmp_path: Path, kind: str,
                                                                           asynchronous: bool) -> None:
    store = SqliteStore(tmp_path / "verigate.db")

    def model(request: Any) -> str:
        RAISERS[kind]()
        return verdict_json(passed=True)

    async def async_model(request: Any) -> str:
        await asyncio.sleep(0)  # raised after a suspension, through the engine's and client's frames
        return model(request)

    with Gate.from_config({"judge": {"client": "callable"}}, store=store,
                          judge_function=async_model if asynchronous else model) as gate:
        result = asyncio.run(gate.finalize(_candidate(f"judge-{kind}"), NATURAL))
        assert result.outcome == "pending_review" and result.verdict is not None
        assert result.verdict.error is not None
        assert len(_reviews(store, f"judge-{kind}")) == 1


@pytest.mark.parametrize("kind", sorted(RAISERS))
def test_an_engine_raising_a_base_exception_is_a_verification_error(tmp_path: Path, kind: str) -> None:
    try:
        RAISERS[kind]()
    except BaseException as exc:
        raised = exc
    store = SqliteStore(tmp_path / "verigate.db")
    with Gate.from_config({"judge": {"engine": "scripted"}}, plugins=[ScriptedJudge([raised])], store=store) as gate:
        result = asyncio.run(gate.finalize(_candidate(f"engine-{kind}"), NATURAL))
        assert result.outcome == "pending_review" and result.verdict is not None
        assert result.verdict.error == "judge_error"


def test_keyboard_interrupt_from_a_handler_propagates_after_the_review_is_stored(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "verigate.db")

    def interrupt() -> None:
        raise KeyboardInterrupt

    with Gate.from_config({"judge": {"client": "callable"}}, plugins=[_Raising("pre_verify", interrupt)],
                          store=store, judge_function=lambda request: verdict_json(passed=True)) as gate:
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(gate.finalize(_candidate("s-interrupt"), NATURAL))
        [review] = _reviews(store, "s-interrupt")
        assert review.pending_text == "done" and review.status == "pending"


def test_the_callers_own_cancellation_still_propagates(tmp_path: Path) -> None:
    async def slow(request: Any) -> str:
        await asyncio.sleep(30)
        return verdict_json(passed=True)

    async def cancelled() -> None:
        with Gate.from_config({"judge": {"client": "callable"}}, store=":memory:", judge_function=slow) as gate:
            task = asyncio.create_task(gate.finalize(_candidate("s-cancel"), NATURAL))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(cancelled())


class _GarbageStore(SqliteStore):
    """A store plug-in that breaks its contract: get_session returns garbage, begin_attempt raises SystemExit."""

    def get_session(self, session_id: str) -> Any:
        return {"state": "running", "follow_up": "x", "attempt": "many"}

    def begin_attempt(self, *args: Any, **kwargs: Any) -> Any:
        raise SystemExit("store plug-in gave up")


def test_a_store_returning_garbage_or_exiting_does_not_escape_finalize(tmp_path: Path) -> None:
    store = _GarbageStore(tmp_path / "verigate.db")
    with Gate.from_config({"judge": {"client": "callable"}}, store=store,
                          judge_function=lambda request: verdict_json(passed=True)) as gate:
        result = asyncio.run(gate.finalize(_candidate("s-garbage"), NATURAL))
    assert result.outcome == "completed"  # the judge passed; records are best effort and their failure is reported
    assert result.store_error is not None and "get_session" in result.store_error
    assert "SystemExit" in result.store_error

"""The ``context`` argument of the decision stages: set on the gate or per finalize, passed to every stage that
names it, and never required — an implementation written before it existed keeps running unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from judge_servers import verdict_json
from verigate import Candidate, Gate, InputError, StageContext, Termination, TerminationReason, hookimpl
from verigate.gate import finalize_and_return

NATURAL = Termination(TerminationReason.NATURAL)
HOOK_CONTEXT = StageContext(project_dir="/work/project", host="codex", session_id="s-host",
                            transcript_path="/work/rollout.jsonl")


class NewStyle:
    """Names ``context`` in every stage."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, StageContext]] = []

    @hookimpl
    def verigate_structural_check(self, candidate: Candidate, termination: Termination,
                                  context: StageContext) -> None:
        self.seen.append(("structural_check", context))

    @hookimpl
    def verigate_pre_verify(self, candidate: Candidate, context: StageContext) -> None:
        self.seen.append(("pre_verify", context))

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Any, context: StageContext) -> None:
        self.seen.append(("post_verify", context))

    @hookimpl
    def verigate_stop(self, candidate: Candidate, verdict: Any, action: str, context: StageContext) -> None:
        self.seen.append(("stop", context))


class OldStyle:
    """Written before the context existed: names only what the stages always passed."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def verigate_structural_check(self, candidate: Candidate, termination: Termination) -> None:
        self.calls.append("structural_check")

    @hookimpl
    def verigate_pre_verify(self, candidate: Candidate) -> None:
        self.calls.append("pre_verify")

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Any) -> None:
        self.calls.append("post_verify")

    @hookimpl
    def verigate_stop(self, candidate: Candidate, verdict: Any, action: str) -> None:
        self.calls.append("stop")


class Everything:
    """Takes ``**kwargs``: gets every argument, the context included."""

    def __init__(self) -> None:
        self.keys: list[frozenset[str]] = []

    @hookimpl
    def verigate_pre_verify(self, **kwargs: Any) -> None:
        self.keys.append(frozenset(kwargs))


def _gate(tmp_path: Path, *plugins: object, context: StageContext | None = None) -> Gate:
    return Gate.from_config({"budget": {"revise": 2}}, plugins=list(plugins), store=str(tmp_path / "gate.db"),
                            judge_function=lambda request: verdict_json(passed=True), entry_points=False,
                            context=context)


def _candidate(session: str = "s1") -> Candidate:
    return Candidate("Fix the failing test.", "Fixed it; pytest: 3 passed.", session_id=session)


STAGES = ["structural_check", "pre_verify", "post_verify", "stop"]


def test_every_stage_gets_the_gates_context(tmp_path: Path) -> None:
    new = NewStyle()
    with _gate(tmp_path, new, context=HOOK_CONTEXT) as gate:
        assert gate.context == HOOK_CONTEXT
        assert finalize_and_return(gate, _candidate(), NATURAL).outcome == "completed"
    assert new.seen == [(stage, HOOK_CONTEXT) for stage in STAGES]


def test_old_style_implementations_still_run_beside_new_ones(tmp_path: Path) -> None:
    old, new = OldStyle(), NewStyle()
    with _gate(tmp_path, old, new, context=HOOK_CONTEXT) as gate:
        result = finalize_and_return(gate, _candidate(), NATURAL)
    assert result.outcome == "completed"
    assert old.calls == STAGES
    assert [stage for stage, _ in new.seen] == STAGES
    assert not any(record.error for record in result.hook_records)


def test_without_a_context_every_field_is_none(tmp_path: Path) -> None:
    new = NewStyle()
    with _gate(tmp_path, new) as gate:
        finalize_and_return(gate, _candidate(), NATURAL)
    assert {context for _, context in new.seen} == {StageContext()}
    assert attrs.asdict(StageContext()) == {"project_dir": None, "host": None, "session_id": None,
                                            "transcript_path": None}


def test_a_finalize_may_name_its_own_context(tmp_path: Path) -> None:
    new = NewStyle()
    own = attrs.evolve(HOOK_CONTEXT, project_dir="/elsewhere")
    with _gate(tmp_path, new, context=HOOK_CONTEXT) as gate:
        finalize_and_return(gate, _candidate("a"), NATURAL, context=own)
        finalize_and_return(gate, _candidate("b"), NATURAL)
    assert [context.project_dir for _, context in new.seen] == ["/elsewhere"] * 4 + ["/work/project"] * 4


def test_a_handler_taking_any_keyword_gets_the_context(tmp_path: Path) -> None:
    everything = Everything()
    with _gate(tmp_path, everything, context=HOOK_CONTEXT) as gate:
        finalize_and_return(gate, _candidate(), NATURAL)
    assert everything.keys == [frozenset({"candidate", "context"})]


def test_a_context_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="StageContext"):
        _gate(tmp_path, context={"project_dir": "/p"})  # type: ignore[arg-type]
    with _gate(tmp_path) as gate, pytest.raises(InputError, match="StageContext"):
        finalize_and_return(gate, _candidate(), NATURAL, context="/p")


def test_the_context_is_frozen_and_checks_its_fields() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        HOOK_CONTEXT.project_dir = "/x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        StageContext(project_dir=Path("/p"))  # type: ignore[arg-type]

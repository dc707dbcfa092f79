"""The fold's whole result, field by field, for one store with every kind of line: written for the mutants of
``selfgate/_fold.py`` that the behaviour tests let live (docs/mutation.md) — pending requests per session, a
request naming several gates, the lines a request was written on, confirmations used by refused or ignored
closures, and store lines past the ``lines`` given."""

from __future__ import annotations

import pytest

from verigate.selfgate import GateEntry, GateSource, fold
from verigate.selfgate._fold import CloseRequest, SelfGate, SelfGateState

SOURCE = GateSource("/t.jsonl", 3, "u-open")


def _entry(line: int, status: str, gate: str, session: str = "s1", **fields: object) -> GateEntry:
    return GateEntry(ts=f"T{line}", session_id=session, gate_id=gate, gate_text=f"text of {gate}",
                     status=status, **fields)  # type: ignore[arg-type]


def _request(line: int, gate: str, request_id: str, session: str = "s1", **fields: object) -> GateEntry:
    base: dict[str, object] = {"channel": "cli-tty", "evidence": "terminal /dev/pts/0, user test",
                               "closed_reason": f"close {gate}"}
    return _entry(line, "close_requested", gate, session, request_id=request_id, **{**base, **fields})


def _closure(line: int, gate: str, request_id: str, cites: int, session: str = "s1", **fields: object) -> GateEntry:
    base: dict[str, object] = {"channel": "cli-tty", "closed_by": "human", "closed_reason": f"closed {gate}"}
    return _entry(line, "closed", gate, session, request_id=request_id, request_line=cites, **{**base, **fields})


STORE = [
    _entry(1, "open", "g1", source=SOURCE, rule_id="rule-1"),                      # opened_by missing: "ai"
    _entry(2, "open", "g2", opened_by="verigate"),
    _entry(3, "open", "g3", session="s2"),
    _request(4, "g1", "r1"),                                                       # one request, two gates
    _request(5, "g2", "r1"),
    _closure(6, "g1", "r1", cites=4),                                              # accepted
    _request(7, "g3", "r2", session="s2", channel="user-prompt-submit", evidence=None),
    _entry(8, "close_refused", "g3", session="s2", request_id="r2", source=GateSource("/t.jsonl", 9, "u-refused")),
    _closure(9, "g3", "r2", cites=7, session="s2", channel="user-prompt-submit",    # refused: ignored
             source=GateSource("/t.jsonl", 10, "u-typed")),
    _closure(10, "g2", "r1", cites=5, closed_by=None),                             # an AI's claim: ignored
    _request(11, "g2", "r3"),                                                      # pending in s1
    _request(12, "g3", "r4", session="s2"),                                        # pending in s2
]


def _gate(gate: str, session: str = "s1", **fields: object) -> SelfGate:
    base: dict[str, object] = {"session_id": session, "gate_id": gate, "gate_text": f"text of {gate}",
                               "opened_by": "ai", "rule_id": None, "source": None}
    return SelfGate(**{**base, **fields})  # type: ignore[arg-type]


EXPECTED = SelfGateState(
    gates=(
        _gate("g1", opened_at="T1", source=SOURCE, rule_id="rule-1", closed_at="T6", closed_reason="closed g1",
              closed_channel="cli-tty"),
        _gate("g2", opened_at="T2", opened_by="verigate"),
        _gate("g3", "s2", opened_at="T3"),
    ),
    requests=(
        CloseRequest("r1", "s1", "close g1", "T4", ("g1", "g2"), resolved=True, lines=(4, 5)),
        CloseRequest("r2", "s2", "close g3", "T7", ("g3",), resolved=True, lines=(7,)),
        CloseRequest("r3", "s1", "close g2", "T11", ("g2",), resolved=False, lines=(11,)),
        CloseRequest("r4", "s2", "close g3", "T12", ("g3",), resolved=False, lines=(12,)),
    ),
    used_confirmations=frozenset({"u-refused", "u-typed"}),
    ignored_closures=2,
)


def test_the_fold_of_a_store_with_every_kind_of_line_is_exactly_this() -> None:
    assert fold(STORE) == EXPECTED
    assert fold(STORE, list(range(1, 13))) == EXPECTED


def test_views_per_session() -> None:
    state = fold(STORE)
    assert [gate.gate_id for gate in state.open_gates("s1")] == ["g2"]
    assert [gate.gate_id for gate in state.open_gates("s2")] == ["g3"]
    assert state.known_ids("s1") == {"g1", "g2"} and state.known_ids("s2") == {"g3"}
    assert [r.request_id for r in state.pending_requests("s1")] == ["r3"]
    assert [r.request_id for r in state.pending_requests("s2")] == ["r4"]
    assert state.open_gates("nobody") == () and state.pending_requests("nobody") == ()


def test_a_closure_order_and_a_refusal_order_do_not_matter() -> None:
    gate, request = _entry(1, "open", "g1"), _request(2, "g1", "r1")
    closure = _closure(3, "g1", "r1", cites=2)
    refusal = _entry(4, "close_refused", "g1", request_id="r1")
    # the refusal after the closure still wins, and a later opening does not re-open a closed gate
    assert fold([gate, request, closure, refusal]).open_gates("s1") != ()
    early = [_request(1, "g1", "r1"), _closure(2, "g1", "r1", cites=1), gate]
    assert fold(early).open_gates("s1") == () and fold(early).gates[0].closed_at == "T2"
    assert fold([gate, request, closure]).ignored_closures == 0


def test_a_typed_prompt_closes_only_with_its_transcript_line_and_a_terminal_only_with_its_evidence() -> None:
    gate = _entry(1, "open", "g1")
    typed = _request(2, "g1", "r1", channel="user-prompt-submit", evidence=None)
    with_line = _closure(3, "g1", "r1", cites=2, channel="user-prompt-submit", source=GateSource("/t", 5, "u5"))
    without_uuid = _closure(3, "g1", "r1", cites=2, channel="user-prompt-submit", source=GateSource("/t", 5))
    without_source = _closure(3, "g1", "r1", cites=2, channel="user-prompt-submit")
    assert fold([gate, typed, with_line]).open_gates("s1") == ()
    assert fold([gate, typed, with_line]).used_confirmations == {"u5"}
    for forged in (without_uuid, without_source):
        state = fold([gate, typed, forged])
        assert state.open_gates("s1") != () and state.ignored_closures == 1 and state.used_confirmations == set()
    no_evidence = _request(2, "g1", "r1", evidence=None)
    assert fold([gate, no_evidence, _closure(3, "g1", "r1", cites=2)]).open_gates("s1") != ()


def test_entries_past_the_given_lines_take_the_next_line_numbers() -> None:
    gate, request = _entry(1, "open", "g1"), _request(2, "g1", "r1")
    # the store holds the opening on line 7; the request and the closure are about to be written as 8 and 9
    state = fold([gate, request, _closure(3, "g1", "r1", cites=8)], [7])
    assert state.open_gates("s1") == () and state.requests[0].lines == (8,)
    assert fold([gate, request, _closure(3, "g1", "r1", cites=2)], [7]).open_gates("s1") != ()
    # past the last given line, not the first
    other = _entry(2, "open", "g2")
    state = fold([gate, other, request, _closure(4, "g1", "r1", cites=6)], [3, 5])
    assert [g.gate_id for g in state.open_gates("s1")] == ["g2"] and state.requests[0].lines == (6,)
    # with no lines at all the first entry is line 1
    assert fold([request, _closure(2, "g1", "r1", cites=1), gate], []).open_gates("s1") == ()
    assert fold([]) == SelfGateState((), (), frozenset(), 0)


def test_more_lines_than_entries_is_a_caller_error_not_a_silent_misnumbering() -> None:
    with pytest.raises(ValueError):
        fold([_entry(1, "open", "g1")], [1, 2])

"""When a finalize writes its records on the event loop (``verigate.gate._offloop.in_process``) and that it writes
exactly what the worker-thread hops write."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import string
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verigate import Candidate, Gate, Termination, ToolObservation, Verdict
from verigate.gate._offloop import IN_PROCESS_CHARS, STRING_CHARS, _fits, _interrupt_after, in_process
from verigate.hookspecs import hookimpl
from verigate.redact import RulePackRedactor
from verigate.redact._base import RedactionResult
from verigate.rules import PhraseKind, RegexKind, RuleSet, is_own_ruleset, is_shipped, load_pack
from verigate.store import SqliteStore
from verigate.testing import ScriptedJudge

NATURAL = Termination("natural")
PASS = Verdict(passed=True, score=1.0)
RETRY = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True)
SMALL = Candidate("Fix the failing test.", "Fixed it; pytest: 3 passed.", session_id="s1")


class HoppingStore(SqliteStore):
    """verigate's SQLite store in memory under another type: the gate cannot vouch for it and hops."""


class CopyingRedactor:
    """A plug-in redactor that changes nothing (``verigate_redactors`` of a third party)."""

    name = "copying"

    def redact(self, text: str | bytes) -> RedactionResult:
        return RedactionResult(text if isinstance(text, str) else text.decode("utf-8", "replace"), ())


class Redactors:
    def __init__(self, *redactors: object) -> None:
        self.redactors = list(redactors)

    @hookimpl
    def verigate_redactors(self) -> list[object]:
        return self.redactors


@pytest.fixture
def gates() -> Iterator[list[Gate]]:
    opened: list[Gate] = []
    yield opened
    for gate in opened:
        gate.close()


def _gate(opened: list[Gate], store: object = ":memory:", *, plugins: Sequence[object] = (),
          **config: Any) -> Gate:
    gate = Gate.from_config(config, store=store, plugins=list(plugins), entry_points=False)  # type: ignore[arg-type]
    opened.append(gate)
    return gate


# ------------------------------------------------------------------ which gates write on the loop
def test_only_verigates_own_store_in_memory_with_the_shipped_redactors_writes_on_the_loop(
        gates: list[Gate], tmp_path: Path) -> None:
    assert in_process(_gate(gates).store, _gate(gates).egress, SMALL, NATURAL)
    file_gate = _gate(gates, str(tmp_path / "v.db"))
    assert not in_process(file_gate.store, file_gate.egress, SMALL, NATURAL)  # a file: I/O, the lock of other processes
    hopping = _gate(gates, HoppingStore(":memory:"))
    assert not in_process(hopping.store, hopping.egress, SMALL, NATURAL)  # a subclass may do anything in its methods
    plugin = _gate(gates, plugins=[Redactors(CopyingRedactor())])
    assert not in_process(plugin.store, plugin.egress, SMALL, NATURAL)  # a third party's redactor


def test_a_pack_that_is_not_the_shipped_object_keeps_the_hop(gates: list[Gate], tmp_path: Path) -> None:
    """A file holding the shipped pack's very text, even named rules/secrets.yaml, is the user's pack."""
    folder = tmp_path / "rules"
    folder.mkdir()
    copy = folder / "secrets.yaml"
    from verigate import _data

    copy.write_text(_data.read_text("rules", "secrets.yaml"), encoding="utf-8")
    assert is_shipped(load_pack("secrets")) and not is_shipped(load_pack(copy))
    extra = _gate(gates, redaction={"packs": ["pii"], "extra_packs": [str(copy)]})
    assert not in_process(extra.store, extra.egress, SMALL, NATURAL)
    redactor = extra.egress.redactors[0]
    assert isinstance(redactor, RulePackRedactor) and not redactor.own_rules
    shipped = _gate(gates, redaction={"packs": ["secrets"]})
    assert in_process(shipped.store, shipped.egress, SMALL, NATURAL)


class PluginRegex(RegexKind):
    """A plug-in's kind under the built-in name, given straight to ``from_packs`` (no registry to refuse it)."""


def test_only_rules_compiled_by_verigates_own_kinds_from_shipped_packs_count_as_its_own() -> None:
    assert RulePackRedactor.from_packs(["secrets"]).own_rules
    assert RulePackRedactor.from_packs(["secrets"], kinds={"regex": RegexKind(), "phrase": PhraseKind()}).own_rules
    assert not RulePackRedactor.from_packs(["secrets"], kinds={"regex": PluginRegex(), "phrase": PhraseKind()}
                                           ).own_rules
    compiled = RuleSet.compile(["secrets"])
    assert is_own_ruleset(compiled)
    by_hand = RuleSet(compiled.compiled, compiled.packs)  # equal, but not what compile built
    assert by_hand == compiled and not is_own_ruleset(by_hand)
    assert not RulePackRedactor(by_hand, {}).own_rules


def test_an_injected_store_clock_keeps_the_hop(gates: list[Gate]) -> None:
    store = SqliteStore(":memory:", clock=lambda: datetime(2026, 12, 3, tzinfo=UTC))
    gate = _gate(gates, store)
    assert not in_process(gate.store, gate.egress, SMALL, NATURAL)  # the caller's code: it may block


# ------------------------------------------------------------------ how large a candidate may be
_PLAIN = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers(-10 ** 17, 10 ** 17) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30)
_ODD = st.sampled_from([b"bytes", bytearray(b"x"), 10 ** 30, object(), frozenset({1}), 3j])


def _measure(value: object) -> tuple[int, int, bool]:
    """(characters of every string, number of values, every value plain) — an independent recursion."""
    if isinstance(value, str) and type(value) is str:
        return len(value), 1, True
    if value is None or type(value) in (bool, float):
        return 0, 1, True
    if type(value) is int:
        return 0, 1, abs(value) < 10 ** 18  # type: ignore[arg-type]
    if type(value) in (list, tuple):
        parts = [_measure(item) for item in value]  # type: ignore[attr-defined]
    elif type(value) is dict:
        parts = [_measure(item) for pair in value.items() for item in pair]  # type: ignore[attr-defined]
    else:
        return 0, 1, False
    return sum(p[0] for p in parts), 1 + sum(p[1] for p in parts), all(p[2] for p in parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=st.lists(st.dictionaries(st.text(max_size=8), _PLAIN | _ODD, max_size=4), max_size=4),
       text=st.text(max_size=300), limit=st.integers(0, 1200))
def test_a_candidate_fits_only_when_its_strings_stay_within_the_limit(
        inputs: list[dict[str, Any]], text: str, limit: int) -> None:
    calls = tuple(ToolObservation("tool", input=value, output=text[:7]) for value in inputs)
    candidate = Candidate("request", text, tool_calls=calls, requirements=("r",), usage={"in": 3})
    parts: list[object] = [candidate.request, candidate.final_text, candidate.session_id, candidate.turn_id,
                           candidate.attempt, candidate.rounds, candidate.contains_personal_data,
                           list(candidate.requirements), dict(candidate.usage)]
    parts += [[call.name, call.output, dict(call.input), call.ok] for call in calls]
    chars, values, plain = _measure(parts)
    fits = _fits([candidate], limit)
    if fits:  # sound: nothing unbounded, nothing over the limit
        assert plain and chars <= limit
    if plain and chars + (STRING_CHARS + 30) * values <= limit:  # and it does not refuse what is clearly small
        assert fits


class Impersonating(type):
    """A metaclass whose classes compare and hash as ``str``: a lookup by type would take them for it."""

    def __eq__(cls, other: object) -> bool:
        return other is str or type.__eq__(cls, other)

    def __hash__(cls) -> int:
        return hash(str)


class DisguisedText(str, metaclass=Impersonating):
    def __len__(self) -> int:
        raise AssertionError("user code ran on the loop")


def test_strings_cost_a_redaction_call_each_and_a_disguised_type_never_fits() -> None:
    tiny = Candidate("r", "done", tool_calls=(ToolObservation("t", input={"k": ["x"] * 2700}),))
    assert not _fits([tiny], IN_PROCESS_CHARS)  # 2,700 strings of one character: 2,700 redaction calls
    disguised = Candidate("r", "done", tool_calls=(ToolObservation("t", input={"k": DisguisedText("x")}),))
    assert not _fits([disguised], IN_PROCESS_CHARS)


def test_the_limit_is_the_shipped_one_and_a_larger_candidate_hops(gates: list[Gate]) -> None:
    gate = _gate(gates)
    assert in_process(gate.store, gate.egress, Candidate("r", "x" * (IN_PROCESS_CHARS - 16 * STRING_CHARS)), NATURAL)
    assert not in_process(gate.store, gate.egress, Candidate("r", "x" * (IN_PROCESS_CHARS + 1)), NATURAL)
    many = tuple(ToolObservation("t", output="y" * 1000) for _ in range(IN_PROCESS_CHARS // 1000 + 1))
    assert not in_process(gate.store, gate.egress, Candidate("r", "short", tool_calls=many), NATURAL)


# ------------------------------------------------------------------ where the writes happen
def _store_calls_on_this_thread(gate: Gate, candidates: Sequence[Candidate]) -> list[str]:
    """The SQLite store's methods the finalizes of ``candidates`` called on this thread (the event loop's)."""
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("_sqlite.py"):
            called.append(frame.f_code.co_name)

    async def run() -> None:
        for candidate in candidates:
            called.clear()  # only the last finalize's calls count
            await gate.finalize(candidate, NATURAL)

    sys.setprofile(profile)
    try:
        asyncio.run(run())
    finally:
        sys.setprofile(None)
    return called


def _scripted(store: object, steps: Sequence[Verdict], gates: list[Gate]) -> Gate:
    return _gate(gates, store, plugins=[ScriptedJudge(steps)], judge={"engine": "scripted"})


def test_a_small_first_attempt_writes_on_the_loop_a_large_one_or_another_store_in_a_worker(
        gates: list[Gate]) -> None:
    on_loop = _store_calls_on_this_thread(_scripted(":memory:", [PASS], gates), [SMALL])
    assert {"begin_attempt", "append_ledger", "save_checkpoint"} <= set(on_loop)
    large = Candidate("r", "Fixed it. " * (IN_PROCESS_CHARS // 10 + 1), session_id="s1")
    assert "begin_attempt" not in _store_calls_on_this_thread(_scripted(":memory:", [PASS], gates), [large])
    subclass = _store_calls_on_this_thread(_scripted(HoppingStore(":memory:"), [PASS], gates), [SMALL])
    assert "begin_attempt" not in subclass and "append_ledger" not in subclass


def test_a_later_attempt_reads_the_earlier_ones_back_in_a_worker(gates: list[Gate]) -> None:
    gate = _scripted(":memory:", [RETRY, PASS], gates)
    again = Candidate(SMALL.request, "Now pytest: 4 passed.", session_id="s1", attempt=1)
    called = _store_calls_on_this_thread(gate, [SMALL, again])
    assert "begin_attempt" in called  # the attempt on the loop
    assert "attempts" not in called and "save_checkpoint" not in called  # its outcome, with the read, in a worker
    assert gate.store.latest_checkpoint("s1")["attempts"] == 2  # type: ignore[index]


def test_the_loop_never_waits_for_a_store_another_thread_holds(gates: list[Gate]) -> None:
    gate = _scripted(":memory:", [PASS], gates)
    store = gate.store
    assert isinstance(store, SqliteStore) and in_process(store, gate.egress, SMALL, NATURAL)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.held_if_free() as held:
            assert held
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)

    async def main() -> tuple[int, str]:
        ticks = 0
        finalize = asyncio.ensure_future(gate.finalize(SMALL, NATURAL))
        while ticks < 5:  # the loop turns while the finalize's step waits for the lock in a worker
            await asyncio.sleep(0.01)
            ticks += 1
        assert not finalize.done()
        release.set()
        return ticks, (await finalize).outcome

    try:
        assert asyncio.run(main()) == (5, "completed")
    finally:
        release.set()
        holder.join()


def test_a_ctrl_c_during_a_step_on_the_loop_is_raised_when_the_step_is_done() -> None:
    # Python's own handler, as in an interactive run (a shell's background job may start with SIGINT ignored)
    outside = signal.signal(signal.SIGINT, signal.default_int_handler)
    steps: list[str] = []
    try:
        with pytest.raises(KeyboardInterrupt), _interrupt_after():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("the rest of the step")  # the default handler would have raised before this line
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outside)
    assert steps == ["the rest of the step"]


def test_a_long_verdict_or_termination_detail_takes_the_hop_for_its_step(gates: list[Gate]) -> None:
    """The judge's reply (a prompt-injected candidate can make it long) and a termination's detail are redacted and
    stored too: they count like the candidate's own text."""
    long_misses = Verdict(passed=False, rubric_misses=("missing: " + "x " * IN_PROCESS_CHARS,), retryable=False)
    called = _store_calls_on_this_thread(_scripted(":memory:", [long_misses], gates), [SMALL])
    assert "begin_attempt" in called and "create_pending_review" not in called  # the decision's step hopped
    gate = _scripted(":memory:", [PASS], gates)
    stopped = Termination("max_rounds", detail="the model said: " + "y " * IN_PROCESS_CHARS)
    assert not in_process(gate.store, gate.egress, SMALL, stopped)
    assert in_process(gate.store, gate.egress, SMALL, Termination("max_rounds", detail="10 rounds"))


class Rounds(int):
    """An int whose arithmetic is the caller's code (``_merge`` adds the rounds of a request's attempts)."""

    def __radd__(self, other: object) -> int:
        raise AssertionError("user code ran on the loop")


def test_every_field_of_the_candidate_counts_by_its_exact_type() -> None:
    assert not _fits([Candidate("r", "done", rounds=Rounds(1))], IN_PROCESS_CHARS)
    assert not _fits([Candidate("r", "done", attempt=Rounds(0))], IN_PROCESS_CHARS)
    assert _fits([Candidate("r", "done", rounds=2, attempt=1)], IN_PROCESS_CHARS)


def test_a_ctrl_c_reaches_any_python_handler_once_the_step_is_done() -> None:
    """asyncio.run's handler cancels the task on a first Ctrl-C and raises on a second: both wait for the step."""
    seen: list[str] = []
    outside = signal.signal(signal.SIGINT, lambda number, frame: seen.append("handler"))
    try:
        with _interrupt_after():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            seen.append("the rest of the step")
        seen.append("after")
    finally:
        signal.signal(signal.SIGINT, outside)
    assert seen == ["the rest of the step", "handler", "handler", "after"]


# ------------------------------------------------------------------ the same records either way
def _secret() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(random.SystemRandom().choice(alphabet) for _ in range(36))


def _stored(store: SqliteStore, sessions: Sequence[str]) -> dict[str, Any]:
    return {
        "ledger": [(row.seq, row.kind, row.payload) for row in store.ledger()],  # its hashes cover review ids
        "timeline": {s: [(row.kind, row.payload) for row in store.timeline(s)] for s in sessions},
        "sessions": {s: store.get_session(s) for s in sessions},
        "checkpoints": {s: store.latest_checkpoint(s) for s in sessions},
        "attempts": {s: list(store.attempts(s)) for s in sessions},
        "reviews": sorted(repr((r.session_id, r.status, r.candidate)) for r in store.list_reviews()),
    }


_VERDICTS = st.sampled_from([PASS, RETRY, Verdict(passed=False, retryable=False), Verdict(passed=True, score=0.2),
                             Verdict(passed=False, rubric_misses=("the log shows SECRET",), retryable=True)])
#: a verified turn, and one persisted unverified with a detail that holds the planted secret
_ENDINGS = st.sampled_from([("natural", ""), ("max_rounds", "stopped after 10 rounds; last: SECRET")])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(max_size=60) | st.just("SECRET"), min_size=1, max_size=4),
       verdicts=st.lists(_VERDICTS, min_size=4, max_size=4),
       tool_input=st.dictionaries(st.sampled_from(["path", "token", "n"]), st.text(max_size=12) | st.just("SECRET"),
                                  max_size=3),
       endings=st.lists(_ENDINGS, min_size=4, max_size=4))
def test_records_on_the_loop_are_those_the_worker_thread_writes(
        texts: list[str], verdicts: list[Verdict], tool_input: dict[str, str], endings: list[tuple[str, str]]) -> None:
    secret = _secret()
    texts = [text.replace("SECRET", f"token {secret}") for text in texts]
    tool_input = {key: value.replace("SECRET", secret) for key, value in tool_input.items()}
    verdicts = [attrs.evolve(verdict, rubric_misses=tuple(miss.replace("SECRET", f"token {secret}")
                                                          for miss in verdict.rubric_misses)) for verdict in verdicts]
    terminations = [Termination(reason, detail.replace("SECRET", f"token {secret}")) for reason, detail in endings]
    sides = []
    for store in (SqliteStore(":memory:"), HoppingStore(":memory:")):
        gate = Gate.from_config({"judge": {"engine": "scripted"}}, plugins=[ScriptedJudge(verdicts)], store=store,
                                entry_points=False)
        results = []
        try:
            for number, text in enumerate(texts):
                call = ToolObservation("Bash", input=tool_input, output=text, ok=True)
                session = f"s{number % 2}"
                attempt = results[-2].attempt + 1 if number >= 2 and results[-2].outcome == "revise" else 0
                candidate = Candidate("Fix it.", text, tool_calls=(call,), session_id=session, attempt=attempt)
                ending = terminations[number]
                assert in_process(store, gate.egress, candidate, ending) is (type(store) is SqliteStore)
                result = asyncio.run(gate.finalize(candidate, ending))
                results.append(result)
            sides.append((results, _stored(store, ["s0", "s1"])))
        finally:
            gate.close()
    (ours, our_rows), (theirs, their_rows) = sides
    assert [_without_ids(result, ours) for result in ours] == [_without_ids(result, theirs) for result in theirs]
    assert _without_ids(our_rows, ours) == _without_ids(their_rows, theirs)
    assert secret not in repr(our_rows)


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _without_ids(value: object, results: Sequence[Any]) -> str:
    """``repr(value)`` with each pending review's random id replaced by its place among the results, and every
    timestamp by one text (the two stores' clocks run on)."""
    text = _TIMESTAMP.sub("<time>", repr(value))
    for number, result in enumerate(results):
        if result.pending_id:
            text = text.replace(result.pending_id, f"review-{number}")
    return text

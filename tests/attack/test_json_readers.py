"""Attack: JSON that two readers read two ways — a repeated key, NaN, a lone surrogate, deep nesting — sent to every
reader of outside data: judge envelopes (OpenAI, Anthropic, Jev) over real loopback servers, RunEvidence and its
task folder through the CLI, the ledger through ``verigate ledger verify``. Each must fail closed."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_servers import JudgeServer, verdict_json
from verigate import Candidate, Gate, StrictJSONError, Termination, strict_loads
from verigate.store import SqliteStore

NATURAL = Termination("natural")
PASS = verdict_json(passed=True)
FAIL = verdict_json(passed=False, misses=("no_evidence",))


def _candidate(session: str) -> Candidate:
    return Candidate(request="fix it", final_text="fixed", session_id=session, contains_personal_data=False)


def _judged(server: JudgeServer, judge: dict[str, Any], session: str) -> str:
    with Gate.from_config({"judge": {**judge, "base_url": server.base_url}}, store=":memory:") as gate:
        return asyncio.run(gate.finalize(_candidate(session), NATURAL)).outcome


def _openai_envelope_with_two_contents() -> str:
    message = f'{{"role": "assistant", "content": {json.dumps(FAIL)}, "content": {json.dumps(PASS)}}}'
    return f'{{"id": "x", "object": "chat.completion", "choices": [{{"index": 0, "message": {message}}}]}}'


def _anthropic_envelope_with_two_contents() -> str:
    fail = json.dumps([{"type": "tool_use", "id": "t1", "name": "submit_verdict", "input": json.loads(FAIL)}])
    passing = json.dumps([{"type": "tool_use", "id": "t2", "name": "submit_verdict", "input": json.loads(PASS)}])
    return f'{{"type": "message", "role": "assistant", "content": {fail}, "content": {passing}}}'


def _jev_reply_with_two_choices() -> str:
    return ('{"model": "jev-1", "answers": {"verdict": {"type": "choice", "choice": "contradicted", '
            '"choice": "supported", "probabilities": {"supported": 0.98, "contradicted": 0.01, '
            '"insufficient_evidence": 0.01}}}}')


@pytest.mark.parametrize(
    ("protocol", "judge", "body"),
    [
        ("openai", {"client": "openai", "model": "m"}, _openai_envelope_with_two_contents()),
        ("anthropic", {"client": "anthropic", "model": "m"}, _anthropic_envelope_with_two_contents()),
        ("jev", {"engine": "jev", "client": "jev", "model": "jev-1"}, _jev_reply_with_two_choices()),
        ("openai", {"client": "openai", "model": "m"},
         json.dumps({"choices": [{"message": {"role": "assistant", "content": PASS}}]})[:-1] + ', "x": NaN}'),
        ("openai", {"client": "openai", "model": "m"},
         '{"choices": [{"message": {"role": "assistant", "content": "\\ud800' + PASS[1:-1] + '"}}]}'),
        ("openai", {"client": "openai", "model": "m"},
         '{"choices": [{"message": {"role": "assistant", "content": ' + json.dumps(PASS) + "}}], \"d\": "
         + "[" * 5000 + "]" * 5000 + "}"),
    ],
    ids=["openai-two-contents", "anthropic-two-contents", "jev-two-choices", "openai-nan", "openai-surrogate",
         "openai-deep"],
)
def test_an_envelope_two_readers_read_differently_never_completes(protocol: str, judge: dict[str, Any], body: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "JEV_API_KEY"):
        monkeypatch.setenv(name, "test-key-not-secret")
    with JudgeServer(protocol) as server:  # type: ignore[arg-type]
        server.reply_raw(body)
        outcome = _judged(server, judge, f"env-{protocol}")
    assert outcome == "pending_review"  # invalid_judge_response / invalid_jev_response: a person decides


# ----------------------------------------------------------------------------------- RunEvidence and ledger


def _dup_terminal_state(fullest_ev: dict[str, Any]) -> str:
    """The EV with a second ``terminal_state`` key: first-wins and last-wins readers see different states."""
    text = json.dumps(fullest_ev)
    state = json.dumps(fullest_ev["terminal_state"])
    return text[:-1] + f', "terminal_state": {state}' + "}" if "terminal_state" in fullest_ev else text


@pytest.mark.parametrize("attack", ["repeated key", "NaN", "deep nesting", "lone surrogate"])
def test_evidence_verify_refuses_ambiguous_json_with_exit_1(attack: str, fullest_ev: dict[str, Any],
                                                            merge_task: Path, tmp_path: Path) -> None:
    text = json.dumps(fullest_ev)
    if attack == "repeated key":
        key = next(iter(fullest_ev))
        text = f'{{{json.dumps(key)}: {json.dumps(fullest_ev[key])}, ' + text[1:]
    elif attack == "NaN":
        text = text[:-1] + ', "x_extra": NaN}'
    elif attack == "deep nesting":
        text = text[:-1] + ', "x_extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    else:
        text = text[:-1] + ', "x_extra": "\\udc00"}'
    ev = tmp_path / "ev.json"
    ev.write_text(text, encoding="utf-8")
    result = run_cli("evidence", "verify", str(ev), str(merge_task))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "strict JSON" in result.stderr


def test_a_repeated_key_in_the_delivery_record_is_rejected(fullest_ev: dict[str, Any], merge_task: Path,
                                                           tmp_path: Path) -> None:
    record = merge_task / "delivery" / "record.jsonl"
    lines = record.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1][:-1] + ', "kind": "other"}'
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps(fullest_ev), encoding="utf-8")
    result = run_cli("evidence", "verify", str(ev), str(merge_task))
    assert result.returncode == 1 and "strict JSON" in result.stderr


def test_ledger_verify_reports_a_prepended_outcome_key_as_tampering(tmp_path: Path) -> None:
    path = tmp_path / "verigate.db"
    with SqliteStore(path) as store:
        store.append_ledger("verification_policy", {"outcome": "pending_review", "session_id": "s"})
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS ledger_no_update")
    payload = conn.execute("SELECT payload FROM ledger WHERE seq = 1").fetchone()[0]
    forged = '{"outcome":"completed",' + payload[1:]
    conn.execute("UPDATE ledger SET payload = ? WHERE seq = 1", (forged,))
    # SQLite's own JSON reader takes the first key: it would report the forged outcome
    assert conn.execute("SELECT json_extract(payload, '$.outcome') FROM ledger").fetchone()[0] == "completed"
    conn.close()
    result = subprocess.run([sys.executable, "-m", "verigate", "ledger", "verify", "--store", str(path)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "seq 1" in result.stderr and "Traceback" not in result.stderr


# ----------------------------------------------------------------------------------- the reader itself

_json_values = st.recursive(
    # integers every reader holds exactly; larger ones are refused (below)
    st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_json_values)
def test_every_ordinary_document_reads_back_equal(value: Any) -> None:
    assert strict_loads(json.dumps(value)) == value
    assert strict_loads(json.dumps(value, ensure_ascii=False).encode("utf-8")) == value


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), _json_values, min_size=1, max_size=4), st.data())
def test_any_repeated_key_is_refused(value: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(value)))
    text = json.dumps(value)[:-1] + f", {json.dumps(key)}: {json.dumps(data.draw(_json_values))}}}"
    with pytest.raises(StrictJSONError) as caught:
        strict_loads(text)
    assert caught.value.kind == "duplicate_key"


@pytest.mark.parametrize(
    ("text", "kind"),
    [("NaN", "constant"), ("[-Infinity]", "constant"), ("[1e400]", "constant"), ("[9007199254740992]", "number"),
     ("[-9007199254740992]", "number"), ("[" + "1" * 5000 + "]", "number"), ('"\\ud800"', "surrogate"),
     ('{"a": "\\udfff x"}', "surrogate"), ("[" * 65 + "]" * 65, "depth"), ("[" * 10**6, "depth"),
     ('{"a": 1} {"b": 2}', "syntax"), (b"\xff", "syntax")],
)
def test_the_reader_refuses_what_is_not_one_unambiguous_value(text: Any, kind: str) -> None:
    with pytest.raises(StrictJSONError) as caught:
        strict_loads(text)
    assert caught.value.kind == kind


def test_a_surrogate_pair_is_one_character_not_an_error() -> None:
    assert strict_loads('"\\ud83d\\ude00"') == "\U0001f600"

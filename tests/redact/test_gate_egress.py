"""Through a real Gate and SQLite store: no generated token in any embedding reaches the judge request or the
store, and an integer card number in a tool input is personal data (never sent to an auxiliary judge)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from redact.embeddings import EMBEDDINGS, TOKENS, pieces
from verigate import Candidate, Gate, Termination, ToolObservation, Verdict
from verigate.gate import finalize_and_return
from verigate.rules._validators import luhn_ok
from verigate.testing import ScriptedJudge

NATURAL = Termination("natural")


def _stored(db_path: Path) -> bytes:
    return b"".join(path.read_bytes() for path in db_path.parent.glob(db_path.name + "*"))


def _forms(secret: str) -> list[bytes]:
    """The secret as raw UTF-8 and as it would appear inside a JSON string."""
    return [secret.encode(), json.dumps(secret)[1:-1].encode()]


def _gate(db_path: Path, judge: ScriptedJudge, **config: Any) -> Gate:
    return Gate.from_config({"judge": {"engine": "scripted", **config}}, plugins=[judge], store=str(db_path),
                            entry_points=False)


def test_no_token_in_any_embedding_reaches_the_judge_or_the_store(tmp_path: Path) -> None:
    planted: list[tuple[str, str]] = []
    outputs: list[str] = []
    inputs: dict[str, Any] = {}
    for index, name in enumerate(sorted(EMBEDDINGS)):
        token = TOKENS[sorted(TOKENS)[index % len(TOKENS)]]()
        planted.append((name, token))
        outputs.append(EMBEDDINGS[name](token))
        inputs[f"arg{index}"] = EMBEDDINGS[name](token).encode() if index % 2 else (EMBEDDINGS[name](token),)
    candidate = Candidate(
        "Deploy the service.", "Deployed:\n" + "\n".join(outputs[::3]), session_id="egress-embeddings",
        tool_calls=(ToolObservation("Bash", inputs, output="\n".join(outputs), ok=True),),
    )
    judge = ScriptedJudge([Verdict(passed=True, score=1.0)])
    db_path = tmp_path / "verigate.db"
    with _gate(db_path, judge) as gate:
        result = finalize_and_return(gate, candidate, NATURAL)
    assert result.outcome == "completed"
    sent = judge.requests[0].candidate
    sent_text = json.dumps([sent.request, sent.final_text, [(call.name, dict(call.input), call.output)
                                                            for call in sent.tool_calls]])
    stored = _stored(db_path)
    assert "[REDACTED:" in sent_text
    for name, token in planted:
        for piece in pieces(name, token):
            assert piece not in sent_text, f"{name} reached the judge"
            for form in _forms(piece):
                assert form not in stored, f"{name} was stored"


def test_an_integer_card_number_in_a_tool_input_is_personal_data(tmp_path: Path) -> None:
    body = "5" + "1" + "".join(secrets.choice("0123456789") for _ in range(13))
    card = int(next(body + digit for digit in "0123456789" if luhn_ok(body + digit)))
    candidate = Candidate("Refund the order.", "Refunded.", session_id="egress-card",
                          tool_calls=(ToolObservation("payments.refund", {"card": card, "amount": 1250}, "ok"),))
    judge = ScriptedJudge([Verdict(passed=True, score=1.0)])
    db_path = tmp_path / "verigate.db"
    with _gate(db_path, judge, trust="auxiliary") as gate:
        result = finalize_and_return(gate, candidate, NATURAL)
    assert result.verdict.error == "personal_data_omitted"
    assert judge.calls == 0
    assert str(card).encode() not in _stored(db_path)

"""Egress end to end: secrets in a gate run reach neither a real loopback judge server nor the SQLite file."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from judge_servers import JudgeServer, verdict_json
from redact.secret_corpus import SECRET_RULES, Planted, planted
from verigate import Candidate, Gate, Termination, ToolObservation
from verigate.gate import finalize_and_return

pytest.importorskip("verigate_openai", reason="the OpenAI client plug-in (plugins/verigate-openai) is not installed")


def _forms(secret: str) -> list[bytes]:
    """The secret as raw UTF-8 and as it would appear inside a JSON string."""
    return [secret.encode(), json.dumps(secret)[1:-1].encode()]


def _stored_bytes(db_path: Path) -> bytes:
    return b"".join(path.read_bytes() for path in db_path.parent.glob(db_path.name + "*"))


def _env_entry(token: Planted) -> tuple[str, str]:
    """How a tool's environment would carry the token: keyed by a real variable name, and with the context a
    reader (or a rule) needs for the values that are not self-identifying (a bare random string is not)."""
    contextual = {
        "aws-secret-access-key": ("AWS_SECRET_ACCESS_KEY", token.secret),
        "generic-secret-assignment": ("DB_PASSWORD", token.secret),
        "password-assignment": ("DB_PASSWORD", token.secret),
        "authorization-header": ("Authorization", f"Bearer {token.secret}"),
        "url-credentials": ("DATABASE_URL", f"postgres://{token.secret}@db.internal:5432/app"),
        "azure-storage-account-key": ("AZURE_STORAGE_CONNECTION_STRING", token.text),
    }
    return contextual.get(token.rule_id, (token.rule_id.upper().replace("-", "_"), token.secret))


def _candidate(session: str, tokens: list[Planted], extra: str = "") -> Candidate:
    """Every token somewhere in the candidate: request, final text, requirements, tool inputs and outputs."""
    chunks = [tokens[index::5] for index in range(5)]
    return Candidate(
        request="Deploy the service. " + " ".join(token.text for token in chunks[0]),
        final_text="Deployed; the config now holds:\n" + "\n".join(token.text for token in chunks[1]) + extra,
        requirements=tuple(f"keep {token.text} working" for token in chunks[2]),
        tool_calls=(
            ToolObservation("Bash", {"command": "deploy --env " + " ".join(token.text for token in chunks[3]),
                                     "env": dict(_env_entry(token) for token in chunks[3])},
                            output="ok", ok=True),
            ToolObservation("Read", {"path": "config/.env"},
                            output="\n".join(token.text for token in chunks[4]), ok=True),
        ),
        session_id=session,
    )


def _gate(server: JudgeServer, db_path: Path, **judge: object) -> Gate:
    config = {"judge": {"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini",
                        "base_url": server.base_url, **judge}}
    return Gate.from_config(config, plugins=["verigate_openai"], store=str(db_path), entry_points=False)


def test_no_secret_reaches_the_judge_server_or_the_store(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    tokens = [planted(rule_id, rng) for rule_id in SECRET_RULES for _ in range(2)]
    db_path = tmp_path / "verigate.db"
    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))
        server.reply_text(verdict_json(passed=False, misses=("evidence",)))
        gate = _gate(server, db_path)
        try:
            completed = finalize_and_return(gate, _candidate("egress-pass", tokens), Termination("natural"))
            held = finalize_and_return(gate, _candidate("egress-fail", tokens[::-1]), Termination("natural"))
        finally:
            gate.close()
        requests = list(server.requests)
    assert completed.outcome == "completed"
    assert held.outcome in {"revise", "pending_review"}
    assert len(requests) == 2
    sent = b"".join(request.body + json.dumps(dict(request.headers)).encode() for request in requests)
    stored = _stored_bytes(db_path)
    assert b"[REDACTED:" in sent
    assert b"[REDACTED:" in stored
    for token in tokens:
        for form in _forms(token.secret):
            assert form not in sent, f"{token.rule_id} reached the judge server"
            assert form not in stored, f"{token.rule_id} was stored"


def test_personal_data_is_never_sent_to_an_auxiliary_judge(tmp_path: Path) -> None:
    db_path = tmp_path / "verigate.db"
    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))
        gate = _gate(server, db_path, trust="auxiliary")
        try:
            candidate = _candidate("egress-pii", [], extra="\nSent the invoice to hanako.yamada@corp.co.jp.")
            result = finalize_and_return(gate, candidate, Termination("natural"))
        finally:
            gate.close()
        requests = list(server.requests)
    assert result.verdict.error == "personal_data_omitted"
    assert requests == []
    assert b"hanako.yamada" not in _stored_bytes(db_path)

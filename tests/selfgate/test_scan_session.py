"""``verigate selfgate scan`` files gates under the session id the host's hooks use (issue 10 item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verigate.cli._selfgate import session_of

UUID = "0199a7c1-3b2e-7d41-9c55-2f4e6a8b0c1d"


@pytest.mark.parametrize(
    ("name", "session"),
    [
        (f"rollout-2026-12-01T09-30-00-{UUID}.jsonl", UUID),  # Codex: the hooks get the bare uuid
        (f"{UUID}.jsonl", UUID),  # Claude Code: <session_id>.jsonl
        ("rollout-notes.jsonl", "rollout-notes"),
        (f"rollout-2026-12-01T09-30-00-{UUID}-copy.jsonl", f"rollout-2026-12-01T09-30-00-{UUID}-copy"),
    ],
)
def test_the_session_of_a_transcript_is_the_hooks_session(name: str, session: str) -> None:
    assert session_of(Path("/sessions") / name) == session

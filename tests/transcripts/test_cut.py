"""Cutting long tool output never leaves part of a secret behind (the redactors run on what is kept)."""

from __future__ import annotations

import random
import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from transcripts.builders import ClaudeSession
from verigate.redact import redact
from verigate.transcripts import cut_text, last_turn
from verigate.transcripts._turn import CUT_BEFORE

pieces = st.lists(st.sampled_from(["a", "B", "7", "_", "-", "/", ":", "@", ".", "=", " ", "\n", "\t", '"', "'",
                                   "<", ">", "ghp_", "é"]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(pieces, st.integers(min_value=0, max_value=70))
def test_a_cut_falls_only_before_a_boundary(text: str, limit: int) -> None:
    cut = cut_text(text, limit, "")
    assert (text.startswith(cut) and len(cut) <= limit) or cut == text
    if cut != text:
        assert cut == "" or text[len(cut)] in CUT_BEFORE  # the kept part ends where a token ended


def _token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=39))
def test_a_secret_straddling_the_limit_is_dropped_whole(rng: random.Random, inside: int) -> None:
    token = _token(rng)
    text = "output: " + "word " * 40 + token + " and more"
    limit = text.index(token) + inside  # the limit falls inside the token
    cut = cut_text(text, limit)
    assert token[:4] not in cut and redact(cut).text == cut  # nothing secret-shaped is left to redact


def test_last_turn_cuts_long_output_at_a_boundary(tmp_path: Path) -> None:
    token = _token(random.Random())
    output = "x " * 9995 + token + " tail"  # the token starts at 19,990: the 20,000 limit falls inside it
    path = ClaudeSession().prompt("go").tool("t1", "Bash", {"command": "cat log"}, output).say("done").write(
        tmp_path / "s.jsonl")
    (call,) = last_turn(path).tool_calls
    assert call.output.endswith("characters cut]") and "ghp_" not in call.output
    assert len(call.output) < 20_100 and call.output.startswith("x x x")

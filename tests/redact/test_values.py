"""Non-string values leave egress as scanned text: bytes, sets, tuples, objects and numbers (a card number as an
integer is personal data); the result holds only JSON-native types."""

from __future__ import annotations

import enum
import json
import math
import secrets
from pathlib import PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redact.embeddings import TOKENS
from verigate import Candidate, ToolObservation
from verigate.redact import DEFAULT_PACKS, Egress, RulePackRedactor
from verigate.redact._values import MAX_DEPTH, OBJECT_TEXT_LIMIT, text_of
from verigate.rules._validators import luhn_ok

EGRESS = Egress((RulePackRedactor.from_packs(DEFAULT_PACKS),))
_NATIVE_SCALARS = (str, int, float, bool, type(None))


def _card() -> int:
    body = "4" + "".join(secrets.choice("0123456789") for _ in range(14))
    return int(next(body + digit for digit in "0123456789" if luhn_ok(body + digit)))


def _token() -> str:
    return TOKENS["github-classic-token"]()


def _assert_json_native(value: Any) -> None:
    """Only dict (str keys), list, str, int, float (finite), bool and None, by exact type."""
    if isinstance(value, dict):
        assert type(value) is dict
        for key, item in value.items():
            assert type(key) is str
            _assert_json_native(item)
    elif isinstance(value, list):
        assert type(value) is list
        for item in value:
            _assert_json_native(item)
    else:
        assert type(value) in _NATIVE_SCALARS, type(value)
        if type(value) is float:
            assert math.isfinite(value)


class Shouting(enum.IntEnum):
    LOUD = 3


def test_an_integer_card_number_is_redacted_and_personal_data() -> None:
    card = _card()
    redacted, findings = EGRESS.value({"amount": 1250, "card": card, "ratio": 0.5, "flag": True, "none": None})
    assert redacted == {"amount": 1250, "card": "[REDACTED:payment-card-number#1]", "ratio": 0.5, "flag": True,
                        "none": None}
    assert type(redacted["amount"]) is int and type(redacted["ratio"]) is float
    assert any(finding.category == "personal_data" for finding in findings)
    assert str(card) not in json.dumps(redacted)


def test_a_negative_card_number_is_still_a_card_number() -> None:
    card = _card()
    redacted, findings = EGRESS.value({"card": -card, "float": -float(card)})
    assert redacted == {"card": "-[REDACTED:payment-card-number#1]", "float": "-[REDACTED:payment-card-number#1].0"}
    assert [(finding.start, finding.end) for finding in findings] == [(1, 1 + len(str(card)))] * 2


def test_a_float_card_number_and_a_number_key_are_scanned() -> None:
    card = _card()
    redacted, findings = EGRESS.value({card: "key", "f": float(card)})
    assert str(card) not in json.dumps(redacted)
    assert {finding.rule_id for finding in findings} == {"payment-card-number"}


def test_numbers_that_match_nothing_stay_plain_numbers() -> None:
    redacted, findings = EGRESS.value([0, -7, 2**62, 1.5e300, Shouting.LOUD, True])
    assert redacted == [0, -7, 2**62, 1.5e300, 3, True]
    assert [type(item) for item in redacted] == [int, int, int, float, int, bool]  # an IntEnum becomes its int
    assert findings == ()


def test_numbers_without_a_json_form_become_text() -> None:
    redacted, _ = EGRESS.value({"nan": math.nan, "inf": -math.inf, "huge": 10**5000})
    assert redacted["nan"] == "nan" and redacted["inf"] == "-inf"
    assert redacted["huge"].startswith("[integer withheld:")
    json.dumps(redacted, allow_nan=False)


def test_bytes_sets_tuples_and_objects_are_text_and_scanned() -> None:
    token = _token()

    class Config:
        def __str__(self) -> str:
            return f"Config(token={token})"

    value = {"raw": token.encode() + b"\xff\xfe", "view": memoryview(token.encode()), "set": {token, "b", "a"},
             "tuple": (token, 1), "frozen": frozenset({2, 1}), "object": Config(), "path": PurePosixPath("src/app.py")}
    redacted, findings = EGRESS.value(value)
    assert token not in json.dumps(redacted)
    assert redacted["raw"] == "[REDACTED:github-classic-token#1]\ufffd\ufffd"
    assert redacted["set"] == ["[REDACTED:github-classic-token#1]", "a", "b"]  # sorted, whatever the hash order
    assert redacted["tuple"] == ["[REDACTED:github-classic-token#1]", 1]
    assert redacted["frozen"] == [1, 2]
    assert redacted["object"] == "Config(token=[REDACTED:github-classic-token#1])"
    assert redacted["path"] == "src/app.py"
    assert len([finding for finding in findings if finding.rule_id == "github-classic-token"]) == 5
    _assert_json_native(redacted)


def test_objects_that_cannot_be_shown_or_are_too_long_are_withheld() -> None:
    token = _token()

    class Broken:
        def __str__(self) -> str:
            raise RuntimeError(token)

        def __repr__(self) -> str:
            raise RuntimeError(token)

    class Long:
        def __str__(self) -> str:
            return "x" * OBJECT_TEXT_LIMIT + token

    redacted, _ = EGRESS.value([Broken(), Long()])
    assert redacted == ["[Broken withheld: it could not be turned into text]",
                        f"[Long withheld: its text has {OBJECT_TEXT_LIMIT + len(token)} characters]"]


def test_str_subclasses_leave_as_plain_str() -> None:
    class Sly(str):
        def __str__(self) -> str:
            return "something else"

    token = _token()
    redacted, _ = EGRESS.value({Sly("key"): Sly(token), "plain": Sly("ok")})
    assert redacted == {"key": "[REDACTED:github-classic-token#1]", "plain": "ok"}
    assert type(redacted["plain"]) is str and all(type(key) is str for key in redacted)
    assert text_of(Sly("value")) == "value"


def test_keys_that_become_equal_are_all_kept() -> None:
    first, second = _token(), _token()
    redacted, _ = EGRESS.value({first: 1, second: 2, 1: "one", "1": "string one"})
    assert redacted == {"[REDACTED:github-classic-token#1]": 1, "[REDACTED:github-classic-token#1] (2)": 2,
                        "1": "one", "1 (2)": "string one"}


def test_list_items_are_redacted_in_the_context_of_their_key() -> None:
    password = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(16))
    redacted, _ = EGRESS.value({"password": [password], "names": [password]})
    assert redacted == {"password": ["[REDACTED:password-assignment#1]"], "names": [password]}


def test_cycles_and_deep_nesting_are_withheld_not_crashes() -> None:
    cycle: list[Any] = [1]
    cycle.append(cycle)
    mapping: dict[str, Any] = {}
    mapping["self"] = mapping
    deep: Any = "bottom"
    for _ in range(MAX_DEPTH + 50):
        deep = [deep]
    redacted, _ = EGRESS.value({"cycle": cycle, "mapping": mapping, "deep": deep})
    assert redacted["cycle"] == [1, "[value withheld: it contains itself]"]
    assert redacted["mapping"] == {"self": "[value withheld: it contains itself]"}
    json.dumps(redacted)  # bounded depth: serialises without a RecursionError
    assert "bottom" not in json.dumps(redacted)


def test_a_shared_child_is_not_a_cycle() -> None:
    shared = ["x"]
    redacted, _ = EGRESS.value({"a": shared, "b": shared})
    assert redacted == {"a": ["x"], "b": ["x"]}


def test_candidate_fields_of_the_wrong_type_are_scanned_as_text() -> None:
    token = _token()
    card = _card()
    observation = ToolObservation("Bash", {"card": card, "argv": (token,), "blob": token.encode()})
    # attrs does not check these types at run time: a host or plug-in can pass anything
    object.__setattr__(observation, "output", token.encode())
    object.__setattr__(observation, "ok", token)
    candidate = Candidate("deploy", "done", tool_calls=(observation,))
    object.__setattr__(candidate, "final_text", PurePosixPath(f"/tmp/{token}"))
    redacted, findings = EGRESS.candidate(candidate)
    call = redacted.tool_calls[0]
    assert call.ok is None
    assert type(call.output) is str and token not in call.output
    assert type(redacted.final_text) is str and token not in redacted.final_text
    dumped = json.dumps(dict(call.input))  # no default=str needed
    assert token not in dumped and str(card) not in dumped
    assert any(finding.category == "personal_data" for finding in findings)


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), st.binary(max_size=20),
    st.decimals(allow_nan=True), st.complex_numbers(), st.just(PurePosixPath("/opt/data")),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.tuples(children, children),
        st.frozensets(st.one_of(st.integers(), st.text(max_size=5)), max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans(),
                                  st.tuples(st.integers())), children, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(value=_VALUES, token=st.sampled_from(sorted(TOKENS)))
def test_every_value_leaves_json_native_and_a_planted_token_never_survives(value: Any, token: str) -> None:
    planted = TOKENS[token]()
    redacted, _ = EGRESS.value({"data": value, "bytes": [planted.encode()], planted: (planted,)})
    _assert_json_native(redacted)
    dumped = json.dumps(redacted, allow_nan=False)  # strict JSON without default=str
    assert planted not in dumped


@pytest.mark.parametrize("value", [7, 3.25, None, True, "plain"])
def test_scalars_at_the_top_level(value: Any) -> None:
    assert EGRESS.value(value) == (value, ())

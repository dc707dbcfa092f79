"""The per-user cache of compiled schema validators: the same verdicts and messages as a fresh fastjsonschema
compile (the independent oracle), and never trusted when damaged or from another schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastjsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate import SchemaError, _data
from verigate._schema_cache import _folder
from verigate.selfgate._location import state_root


@pytest.fixture(autouse=True)
def _state_root() -> None:
    """The state root as a hook leaves it: a cache writes into an existing one only."""
    Path(state_root()).mkdir(parents=True, exist_ok=True)


SHIPPED = ("config.schema.json", "rule-pack.schema.json", "self-gate.schema.json", "judge-verdict.schema.json")


def _oracle(definition: Any) -> Any:
    return fastjsonschema.compile(definition, use_default=False)


def _outcome(validator: Any, value: Any) -> tuple[str, Any]:
    try:
        return "valid", validator(value)
    except fastjsonschema.JsonSchemaValueException as exc:
        return "invalid", (exc.message, exc.path, exc.rule)


def _entries() -> list[Path]:
    return sorted(_folder().glob("*.bin")) if _folder().is_dir() else []


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.sampled_from(
        ["", "openai", "llm_judge", "secrets", "high", "x" * 300, "pending_review", "sqlite:///s.db"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["judge", "engine", "client", "model", "store", "url", "redaction", "packs", "pack",
                         "rules", "id", "kind", "passed", "score", "x"]), inner, max_size=5),
    max_leaves=20,
)


@pytest.mark.parametrize("name", SHIPPED)
def test_an_entry_is_written_once_and_read_back(name: str) -> None:
    definition = _data.schema(name)
    first = _data.compile_schema(definition)
    entries = _entries()
    assert len(entries) == 1
    second = _data.compile_schema(definition)  # from the entry
    assert _entries() == entries
    for value in ({}, None, [], {"x": 1}):
        assert _outcome(second, value) == _outcome(first, value) == _outcome(_oracle(definition), value)


@settings(max_examples=150, deadline=None)
@given(value=JSON, name=st.sampled_from(SHIPPED))
def test_cached_validators_agree_with_a_fresh_compile(value: Any, name: str) -> None:
    definition = _data.schema(name)
    _data.compile_schema(definition)  # makes sure an entry exists
    assert _outcome(_data.compile_schema(definition), value) == _outcome(_oracle(definition), value)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "other-name"])
def test_a_damaged_entry_is_ignored_and_replaced(damage: str) -> None:
    definition = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]}
    _data.compile_schema(definition)
    [entry] = _entries()
    raw = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        entry.write_bytes(raw[:-10] + bytes(b ^ 0xFF for b in raw[-10:]))
    elif damage == "garbage":
        entry.write_bytes(b"\x00" * 64)
    else:  # a well-formed entry whose validator name is not defined by its code
        magic, key, _name, rest = raw.split(b"\n", 3)
        entry.write_bytes(b"\n".join((magic, key, b"validate_nothing_here", rest)))
    validator = _data.compile_schema(definition)
    for value in ({"n": 1}, {"n": 4}, {}, {"n": "1"}):
        assert _outcome(validator, value) == _outcome(_oracle(definition), value)
    assert entry.read_bytes() == raw  # written again


def test_key_order_makes_another_entry() -> None:
    # the order of a schema's keys decides which failure fastjsonschema reports first
    one = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    other = {"properties": {"b": {"type": "string"}, "a": {"type": "integer"}}, "type": "object"}
    _data.compile_schema(one)
    _data.compile_schema(other)
    assert len(_entries()) == 2
    value = {"a": "x", "b": 1}
    assert _outcome(_data.compile_schema(other), value) == _outcome(_oracle(other), value)


def test_an_unwritable_cache_only_means_compiling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocked = tmp_path / "state-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(blocked))
    validator = _data.compile_schema({"type": "integer"})
    assert _outcome(validator, 1) == ("valid", 1)
    assert _outcome(validator, "1")[0] == "invalid"


def test_a_remote_reference_is_still_refused() -> None:
    with pytest.raises(SchemaError):
        _data.compile_schema({"$ref": "https://example.invalid/schema.json"})
    assert _entries() == []


def test_no_state_folder_is_made_for_a_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a read-only command (selfgate doctor) compiles schemas too and must leave no state folder behind
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(tmp_path / "fresh"))
    validator = _data.compile_schema({"type": "integer"})
    assert _outcome(validator, 1) == ("valid", 1)
    assert not (tmp_path / "fresh").exists()


def test_an_entry_naming_another_function_of_its_code_is_ignored() -> None:
    # the code of a schema with a $ref defines one function per referenced subschema: an entry whose name line was
    # damaged to name one of them would validate the subschema instead of the schema, a different verdict
    definition = {"type": "object", "properties": {"n": {"$ref": "#/definitions/small"}}, "required": ["n"],
                  "definitions": {"small": {"type": "integer", "maximum": 3}}}
    _data.compile_schema(definition)
    [entry] = _entries()
    raw = entry.read_bytes()
    magic, key, name, rest = raw.split(b"\n", 3)
    assert name == b"validate"
    entry.write_bytes(b"\n".join((magic, key, b"validate___definitions_small", rest)))
    validator = _data.compile_schema(definition)
    for value in ({"n": 1}, {"n": 4}, {}, 2, 5):
        assert _outcome(validator, value) == _outcome(_oracle(definition), value)
    assert entry.read_bytes() == raw  # written again

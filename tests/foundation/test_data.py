"""Shipped schemas: every one parses, compiles, and uses only keywords fastjsonschema enforces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from verigate import SchemaError, _data

#: 2019-09 / 2020-12 keywords fastjsonschema silently ignores (DESIGN §1)
UNENFORCED = {"prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
              "dependentSchemas", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "minContains", "maxContains"}


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            # inside "properties" the keys are property names, not keywords
            if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
                for sub in value.values():
                    yield from _keys(sub)
            else:
                yield from _keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item)


def _schema_names() -> list[str]:
    return [name for name, _ in _data.iter_files("schemas") if name.endswith(".json")]


def test_there_are_schemas() -> None:
    assert "config.schema.json" in _schema_names()


@pytest.mark.parametrize("name", _schema_names())
def test_schema_compiles_and_uses_enforced_keywords_only(name: str) -> None:
    definition = json.loads(_data.read_text("schemas", name))
    _data.compile_schema(definition)
    assert not (set(_keys(definition)) & UNENFORCED), name


def test_remote_refs_are_refused() -> None:
    with pytest.raises(SchemaError, match="remote"):
        _data.compile_schema({"$ref": "https://example.invalid/schema.json"})

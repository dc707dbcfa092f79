"""The parsed data of a project's YAML file (``verigate.yaml``), kept in the per-user cache of parsed files
(:mod:`verigate.rules._cache`: keyed by the sha256 of the text and the verigate version, read with the strict JSON
reader, written atomically, a damaged entry ignored), so a hook process need not import ruamel and parse the same
file at every start (~40-70 ms under load).

That cache writes canonical JSON, whose keys are sorted; a configuration's mappings keep the order they were
written in (a plug-in's options may depend on it), so the data travels in an order-keeping form: every mapping
as ``{"o": [[key, value], ...]}``, every list as ``{"a": [...]}``. An entry is written only when reading it back
gives the same data in the same order, and anything unexpected in an entry means parsing the YAML again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["cached_data", "keep_data"]

def _encode(value: Any) -> Any:
    if isinstance(value, dict):
        return {"o": [[key, _encode(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return {"a": [_encode(item) for item in value]}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if list(value) == ["o"] and isinstance(value["o"], list):
            pairs = value["o"]
            if not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) for pair in pairs):
                raise ValueError("not a pair list")
            decoded = {key: _decode(item) for key, item in pairs}
            if len(decoded) != len(pairs):
                raise ValueError("a repeated key")
            return decoded
        if list(value) == ["a"] and isinstance(value["a"], list):
            return [_decode(item) for item in value["a"]]
        raise ValueError("an unknown container")
    if isinstance(value, list):
        raise ValueError("a bare list")
    return value


def _ordered(value: Any) -> str:
    """The data as JSON in its own key order: two values are the same, order included, when these are equal."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def cached_data(text: str, source: str) -> tuple[Any] | None:
    """``(data,)``, the parsed data of exactly this text from ``source`` kept by :func:`keep_data` (the data may be
    None: an empty file), or None when there is no sound entry."""
    from .rules._cache import entry_key, read_entry

    entry = read_entry(entry_key(text, f"parsed-yaml:{source}"))
    if type(entry) is not dict or list(entry) != ["v"]:
        return None
    try:
        return (_decode(entry["v"]),)
    except (ValueError, TypeError):
        return None


def keep_data(text: str, source: str, data: Any) -> None:
    """Keep ``data``, the YAML parse of ``text``, when JSON carries it exactly (types and key order)."""
    from . import _json as strict_json
    from .rules._cache import entry_key, write_entry
    from .selfgate._location import state_root

    if not Path(state_root()).is_dir():
        return  # a cache never creates the state folder: a read-only command (doctor) changes nothing
    try:
        encoded = _encode(data)
        # read back as the cache will read it (the strict reader refuses, e.g., integers past 2**53)
        if _ordered(_decode(strict_json.loads(strict_json.dumps(encoded)))) != _ordered(data):
            return
    except (TypeError, ValueError, strict_json.StrictJSONError):  # a value JSON cannot hold: no entry
        return
    write_entry(entry_key(text, f"parsed-yaml:{source}"), {"v": encoded})

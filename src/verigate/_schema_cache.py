"""A per-user cache of compiled fastjsonschema validators, so a hook process does not generate and compile the same
validators at every start.

``fastjsonschema.compile`` writes a validator as Python source and compiles it: for the shipped config schema that
is ~85 ms (two thirds of it Python's own ``compile`` of ~80 KB of generated code), and a Stop hook compiled four
schemas at every run. The compiled code object of the generated module is therefore kept, marshalled, as
``<key>.bin`` in the folder of the parsed-pack cache of ``verigate.rules._cache`` (under the self-gate's per-user
state root: out of the agents' sandboxes, folders 0700, files 0600).

Same trust model as that cache (the state root is trusted like the user's own ``__pycache__`` folders), and any
doubt means compiling again:

* the key is the sha256 of the schema's JSON in its own key order (the order decides which error is reported
  first), the compile options, the fastjsonschema and verigate versions, the Python implementation's bytecode tag
  and this entry format; an upgrade of any of them never finds an old entry;
* an entry carries its key and the sha256 of its validator's name and payload (the code of a schema with a
  ``$ref`` defines a function per subschema: a name not covered could pick one of them); one that does not
  match, does not unmarshal to a code object, or does not define the validator it names is ignored (and written
  again);
* an entry is written atomically and only after the validator it holds was built from it, and only into an
  existing state root (a read-only command such as ``selfgate doctor`` must leave no state folder behind);
* any failure to read or write the folder only means compiling, as before.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import CodeType
from typing import Any

from ._builtin_sha256 import sha256_hex
from ._fileio import replace_file

__all__ = ["cached_validator"]

#: bump when the layout of an entry changes: older entries are then simply not found
CACHE_FORMAT = 2
_MAGIC = b"verigate-schema-cache\n"
#: the generated code of the largest shipped schema marshals to a few hundred KB
_MAX_ENTRY_BYTES = 16 * 1024 * 1024


def _folder() -> Path:
    # the folder of the parsed-pack cache: one place for verigate's per-user caches of its own parsed data
    from .selfgate._location import cache_folder

    return Path(cache_folder())


def _key(definition: Any, handlers: Mapping[str, Callable[[str], Any]], options: Mapping[str, Any]) -> str | None:
    import fastjsonschema

    from . import __version__

    try:
        schema_json = json.dumps(definition, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        schema_sha256 = sha256_hex(schema_json.encode())
        material = json.dumps({"format": CACHE_FORMAT, "schema_sha256": schema_sha256,
                               "options": dict(options),
                               "handlers": sorted(f"{scheme}={handler.__module__}.{handler.__qualname__}"
                                                  for scheme, handler in handlers.items()),
                               "fastjsonschema": fastjsonschema.VERSION,
                               "verigate": __version__, "python": sys.implementation.cache_tag,
                               "hexversion": sys.hexversion}, sort_keys=True)
    except (TypeError, ValueError):  # not plain JSON (or options that are not): no entry, compile as before
        return None
    return sha256_hex(material.encode())


def _validator(code: CodeType, name: str) -> Callable[[Any], Any]:
    namespace: dict[str, Any] = {"__name__": "verigate._compiled_schema"}
    exec(code, namespace)  # the generated module of fastjsonschema.compile_to_code (see the module docstring)
    validator = namespace.get(name)
    if not callable(validator):
        raise ValueError("the entry does not define its validator")
    return validator  # type: ignore[no-any-return]


def _read(key: str) -> tuple[CodeType, str] | None:
    try:
        with (_folder() / f"{key}.bin").open("rb") as stream:
            raw = stream.read(_MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    try:
        magic, entry_key, name, digest, payload = raw.split(b"\n", 4)
        if (magic + b"\n" != _MAGIC or entry_key.decode() != key or len(raw) > _MAX_ENTRY_BYTES
                or _digest(name, payload) != digest.decode()):
            return None
        code = marshal.loads(payload)
        return (code, name.decode()) if isinstance(code, CodeType) and name.isascii() else None
    except Exception:  # any damage means: compile again (the cache can only save time)
        return None


def _digest(name: bytes, payload: bytes) -> str:
    return sha256_hex(name + b"\n" + payload)


def _write(key: str, code: CodeType, name: str) -> None:
    from .selfgate._location import state_root

    if not Path(state_root()).is_dir():
        return  # a cache never creates the state folder: a read-only command (doctor) changes nothing
    payload = marshal.dumps(code)
    entry = b"".join((_MAGIC, key.encode(), b"\n", name.encode(), b"\n",
                      _digest(name.encode(), payload).encode(), b"\n", payload))
    path = _folder() / f"{key}.bin"
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_file(path, entry, mode=0o600)


def cached_validator(definition: Any, handlers: Mapping[str, Callable[[str], Any]],
                     **options: Any) -> Callable[[Any], Any]:
    """The validator ``fastjsonschema.compile(definition, handlers=handlers, **options)`` would return, from the
    cache when an entry for exactly this schema and these options exists, else compiled and kept. Errors of a bad
    definition (JsonSchemaDefinitionException) propagate as from ``fastjsonschema.compile``."""
    import fastjsonschema
    from fastjsonschema.ref_resolver import RefResolver

    key = _key(definition, handlers, options)
    if key is not None and (entry := _read(key)) is not None:
        try:
            return _validator(*entry)
        except Exception:  # a damaged entry: compile again below, and replace it
            pass
    source = fastjsonschema.compile_to_code(definition, handlers=handlers, **options)
    name = RefResolver.from_schema(definition, handlers=handlers, store={}).get_scope_name()
    code = compile(source, "<fastjsonschema>", "exec")
    validator = _validator(code, name)
    if key is not None:
        _write(key, code, name)
    return validator

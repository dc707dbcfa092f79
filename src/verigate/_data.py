"""Access to the shipped rules/, prompts/ and schemas/ (inside the wheel, or the checkout in development)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._errors import InputError, SchemaError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# importlib.resources (tempfile, shutil, lzma …) and fastjsonschema load inside the functions that use them: the
# gate imports this module, and most processes read one cached schema or none

__all__ = [
    "compiled_schema",
    "data_root",
    "iter_files",
    "read_text",
    "schema",
    "validate",
]

_KINDS = ("rules", "prompts", "schemas")


@functools.cache
def data_root() -> Traversable:
    """The folder holding rules/, prompts/ and schemas/.

    An installed wheel carries them as ``verigate/_data`` (hatch force-include). An editable install of a
    checkout has no such folder, so the checkout's top-level folders are used: the source tree is the data.
    """
    module = Path(__file__)
    beside = module.with_name("_data")
    if beside.is_dir():  # a wheel installed as files: the folder itself, without importing importlib.resources
        return beside
    checkout = module.resolve().parents[2]
    # only for a module that is a file on disk: inside an archive, parents[2] is the folder holding the archive
    if module.is_file() and (checkout / "pyproject.toml").is_file() and (checkout / "schemas").is_dir():
        return checkout
    from importlib import resources

    packaged = resources.files("verigate") / "_data"
    if packaged.is_dir():  # verigate imported from an archive
        return packaged
    raise SchemaError("verigate's data folders (rules/, prompts/, schemas/) are not installed")


def _entry(kind: str, name: str) -> Traversable:
    if kind not in _KINDS:
        raise ValueError(f"unknown data kind {kind!r}")
    return data_root() / kind / name


def read_text(kind: str, name: str) -> str:
    """The text of a shipped data file, e.g. ``read_text("prompts", "judge_system.txt")``."""
    entry = _entry(kind, name)
    try:
        return entry.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaError(f"cannot read shipped {kind}/{name}: {exc}") from exc


def iter_files(kind: str) -> Iterator[tuple[str, bytes]]:
    """Every shipped file of one kind as (relative path, bytes), sorted by path — for corpus hashes."""

    def walk(folder: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
        for child in sorted(folder.iterdir(), key=lambda item: item.name):
            name = f"{prefix}{child.name}"
            if child.is_dir():
                if child.name != "__pycache__":
                    yield from walk(child, name + "/")
            else:
                yield name, child.read_bytes()

    root = data_root() / kind
    if not root.is_dir():
        raise SchemaError(f"shipped folder {kind}/ is missing")
    yield from walk(root, "")


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """A shipped JSON schema, parsed."""
    try:
        loaded = json.loads(read_text("schemas", name))
    except json.JSONDecodeError as exc:
        raise SchemaError(f"schema {name} is not JSON: {exc}", source=f"schemas/{name}", line=exc.lineno) from exc
    if not isinstance(loaded, dict):
        raise SchemaError("a schema must be a JSON object", source=f"schemas/{name}")
    return loaded


def _refuse_remote(uri: str) -> Any:
    raise SchemaError(f"remote $ref {uri!r} refused: schemas must be self-contained")


class _NoRemote(Mapping[str, Callable[[str], Any]]):
    """fastjsonschema's handlers with every URI scheme refused: it opens a scheme its handlers lack with ``urlopen``
    (``file:///dev/zero``, a FIFO, ``ftp://``), and a nested ``$id`` makes even a ``#/$defs/…`` reference one of
    those."""

    def __getitem__(self, scheme: str) -> Callable[[str], Any]:
        return _refuse_remote

    def __contains__(self, scheme: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(("*",))

    def __len__(self) -> int:
        return 1


def compile_schema(definition: dict[str, Any]) -> Callable[[Any], Any]:
    """Compile a schema with fastjsonschema: no defaults filled in, no remote references. The compiled code is
    kept in the per-user cache of ``verigate._schema_cache`` (a hook process would compile it at every start)."""
    import fastjsonschema

    from ._schema_cache import cached_validator

    try:
        return cached_validator(definition, _NoRemote(), use_default=False)
    except fastjsonschema.JsonSchemaDefinitionException as exc:
        raise SchemaError(f"schema does not compile: {exc}") from exc


@functools.cache
def compiled_schema(name: str) -> Callable[[Any], Any]:
    """A shipped schema compiled once per process."""
    return compile_schema(schema(name))


def validate(name: str, data: Any, *, source: str | None = None, line: int | None = None) -> None:
    """Validate ``data`` against the shipped schema ``name``; raise InputError naming the failing field."""
    import fastjsonschema

    from ._schema_errors import schema_failure

    try:
        compiled_schema(name)(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        failure = schema_failure(exc)
        raise InputError(failure.message, source=source, line=line, field=failure.field) from exc

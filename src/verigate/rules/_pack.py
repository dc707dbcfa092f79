"""Rule packs: YAML files with a ``pack:`` name, validated against schemas/rule-pack.schema.json at load.

:func:`load_pack` (a file or a shipped name) keeps each parsed pack in a per-user cache keyed by the sha256 of the
file's bytes (``_cache``), so that an unchanged pack is not parsed with ruamel again in the next process.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import fastjsonschema

from .. import _data
from .. import _json as strict_json
from .._errors import RuleError, SchemaError
from .._schema_errors import schema_failure
from .._yaml import LoadedYaml, load_yaml, read_yaml_file
from ._cache import entry_key, read_entry, write_entry

__all__ = [
    "COMMON_FIELDS",
    "Example",
    "Pack",
    "Rule",
    "is_pack",
    "load_pack",
    "load_pack_text",
    "shipped_packs",
]

SCHEMA = "rule-pack.schema.json"
#: fields every rule has; all others belong to the rule's kind
COMMON_FIELDS = frozenset({"id", "kind", "severity", "message", "references", "metadata", "examples"})


@attrs.frozen
class Example:
    """One runnable example: ``text`` is assembled from its ``join`` parts when the pack used them."""

    text: str
    line: int | None


def _example(item: str | Mapping[str, Any], line: int | None) -> Example:
    if isinstance(item, str):
        return Example(item, line)
    parts = [part if isinstance(part, str) else part["repeat"] * int(part["times"]) for part in item["join"]]
    return Example("".join(parts), line)


@attrs.frozen
class Rule:
    """One rule as written in its pack; ``fields`` holds the kind-specific fields."""

    id: str
    kind: str
    severity: str
    message: str
    fields: Mapping[str, Any] = attrs.field(hash=False)
    references: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = attrs.field(factory=dict, hash=False)
    match_examples: tuple[Example, ...] = ()
    no_match_examples: tuple[Example, ...] = ()
    source: str = "<text>"
    line: int | None = None
    #: the line of each field (kind-specific ones included), for errors that name file:line
    field_lines: Mapping[str, int | None] = attrs.field(factory=dict, hash=False, eq=False, repr=False)

    def error(self, message: str, *, field: str | None = None) -> RuleError:
        """A RuleError naming this rule's file, the line of ``field`` (or of the rule) and its id."""
        line = self.field_lines.get(field, self.line) if field else self.line
        return RuleError(f"rule {self.id!r}: {message}", source=self.source, line=line, field=field)


@attrs.frozen
class Pack:
    """A loaded, schema-valid rule pack (kinds are checked when it is compiled into a RuleSet)."""

    name: str
    rules: tuple[Rule, ...]
    source: str
    version: int = 1
    description: str = ""
    category: str | None = None
    disables: tuple[str, ...] = ()


def _schema_error(exc: fastjsonschema.JsonSchemaValueException, loaded: LoadedYaml) -> RuleError:
    """Name the file, the line of the failing value and, inside a rule, the rule's id."""
    # fastjsonschema reports the path as strings ("rules", "3", "severity"); list indices become ints again
    failure = schema_failure(exc)
    path: list[str | int] = [int(part) if part.isdigit() else part for part in failure.path]
    data = loaded.data
    rule_id = None
    if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int):
        rule = data["rules"][path[1]] if path[1] < len(data["rules"]) else None
        if isinstance(rule, Mapping) and isinstance(rule.get("id"), str):
            rule_id = rule["id"]
    field = ".".join(str(part) for part in path) or None
    prefix = f"rule {rule_id!r}: " if rule_id else ""
    return RuleError(f"{prefix}{failure.detail}", source=loaded.source, line=loaded.line_of(path), field=field)


def is_pack(data: Any) -> bool:
    """A YAML document is a rule pack when it is a mapping with a top-level ``pack:`` key."""
    return isinstance(data, Mapping) and "pack" in data


def _parse_pack_text(text: str, source: str) -> Pack:
    """Parse and validate one pack; every error is a RuleError naming ``source``, the line and the rule id."""
    loaded = load_yaml(text, source, error=RuleError)
    data = loaded.data
    if not is_pack(data):
        raise RuleError("not a rule pack: the top level must be a mapping with a `pack:` name", source=source,
                        line=1)
    try:
        _data.compiled_schema(SCHEMA)(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise _schema_error(exc, loaded) from exc
    rules: list[Rule] = []
    seen: dict[str, int | None] = {}
    for index, raw in enumerate(data["rules"]):
        line = loaded.line_of(["rules", index])
        rule_id = raw["id"]
        if rule_id in seen:
            raise RuleError(f"rule {rule_id!r}: duplicate id (first defined at line {seen[rule_id]})",
                            source=source, line=line, field="id")
        seen[rule_id] = line
        examples = raw["examples"]
        rules.append(Rule(
            id=rule_id,
            kind=raw["kind"],
            severity=raw["severity"],
            message=raw["message"],
            fields={key: value for key, value in raw.items() if key not in COMMON_FIELDS},
            references=tuple(raw.get("references", ())),
            metadata=dict(raw.get("metadata", {})),
            match_examples=tuple(
                _example(item, loaded.line_of(["rules", index, "examples", "match", position]))
                for position, item in enumerate(examples["match"])
            ),
            no_match_examples=tuple(
                _example(item, loaded.line_of(["rules", index, "examples", "no_match", position]))
                for position, item in enumerate(examples["no_match"])
            ),
            source=source,
            line=line,
            field_lines={key: loaded.line_of(["rules", index, key]) for key in raw},
        ))
    return Pack(
        name=data["pack"],
        rules=tuple(rules),
        source=source,
        version=data["version"],
        description=data.get("description", ""),
        category=data.get("category"),
        disables=tuple(data.get("disables", ())),
    )


def _examples_data(examples: tuple[Example, ...]) -> list[list[Any]]:
    return [[example.text, example.line] for example in examples]


def _pack_data(pack: Pack) -> dict[str, Any]:
    """The pack as plain JSON values (a cache entry, see ``_cache``)."""
    return {
        "name": pack.name, "source": pack.source, "version": pack.version, "description": pack.description,
        "category": pack.category, "disables": list(pack.disables),
        "rules": [{"id": rule.id, "kind": rule.kind, "severity": rule.severity, "message": rule.message,
                   "fields": dict(rule.fields), "references": list(rule.references), "metadata": dict(rule.metadata),
                   "match": _examples_data(rule.match_examples), "no_match": _examples_data(rule.no_match_examples),
                   "source": rule.source, "line": rule.line, "field_lines": dict(rule.field_lines)}
                  for rule in pack.rules],
    }


def _pack_from_data(data: Any) -> Pack:
    """The pack a cache entry holds; an unexpected shape raises (KeyError, TypeError, ValueError)."""

    def examples(items: Any) -> tuple[Example, ...]:
        return tuple(Example(text, line) for text, line in items)

    rules = tuple(Rule(id=raw["id"], kind=raw["kind"], severity=raw["severity"], message=raw["message"],
                       fields=dict(raw["fields"]), references=tuple(raw["references"]),
                       metadata=dict(raw["metadata"]), match_examples=examples(raw["match"]),
                       no_match_examples=examples(raw["no_match"]), source=raw["source"], line=raw["line"],
                       field_lines=dict(raw["field_lines"]))
                  for raw in data["rules"])
    return Pack(name=data["name"], rules=rules, source=data["source"], version=data["version"],
                description=data["description"], category=data["category"], disables=tuple(data["disables"]))


def _same_pack(left: Pack, right: Pack) -> bool:
    """Equal, field lines included (``Rule`` leaves them out of its equality)."""
    return left == right and all(one.field_lines == other.field_lines
                                 for one, other in zip(left.rules, right.rules, strict=True))


def load_pack_text(text: str, source: str) -> Pack:
    """Parse and validate one pack; every error is a RuleError naming ``source``, the line and the rule id.

    The parse is skipped when the per-user cache holds this exact text's pack from this source (see ``_cache``):
    a plug-in's own pack (``verigate-git``'s claims) costs a hook no ruamel import, as the shipped packs do not."""
    try:
        key = entry_key(text, source)
    except UnicodeEncodeError:  # a lone surrogate: the parser words the error (a RuleError with its line)
        return _parse_pack_text(text, source)
    data = read_entry(key)
    if data is not None:
        try:
            return _pack_from_data(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # an entry of another shape: parse the YAML and replace it
    pack = _parse_pack_text(text, source)  # an error propagates: a broken pack is never cached
    try:
        data = strict_json.loads(strict_json.dumps(_pack_data(pack)))  # exactly what a later read gives
        exact = _same_pack(_pack_from_data(data), pack)
    except (TypeError, ValueError):
        exact = False
    if exact:  # a pack JSON cannot carry exactly (a tuple, a date object) is parsed from its YAML every time
        write_entry(key, data)
    return pack


def _looks_like_path(value: str | Path) -> bool:
    return isinstance(value, Path) or "/" in value or "\\" in value or value.endswith((".yaml", ".yml"))


def load_pack(path_or_name: str | Path) -> Pack:
    """Load a pack from a file path, or a shipped pack by name (``"secrets"`` → rules/secrets.yaml)."""
    if _looks_like_path(path_or_name):
        path = Path(path_or_name)
        text = read_yaml_file(path, error=RuleError, what="rule pack")
        return load_pack_text(text, str(path))
    return _shipped_pack(str(path_or_name))


@functools.cache
def _shipped_pack(name: str) -> Pack:
    """Shipped packs cannot change while the process runs: each is parsed and validated once."""
    try:
        text = _data.read_text("rules", f"{name}.yaml")
    except SchemaError as exc:
        available = ", ".join(shipped_packs()) or "none"
        raise RuleError(f"no shipped rule pack named {name!r} (shipped: {available})") from exc
    return load_pack_text(text, f"rules/{name}.yaml")


_PACK_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def is_shipped(pack: Pack) -> bool:
    """True for the very pack object this process loaded from verigate's own ``rules/<name>.yaml`` (reviewed
    rules with their examples run as tests), False for every other pack, a copy or a file of the same name."""
    name = pack.source.removeprefix("rules/").removesuffix(".yaml")
    if pack.source != f"rules/{name}.yaml" or not _PACK_NAME.fullmatch(name):
        return False
    try:
        return _shipped_pack(name) is pack
    except RuleError:
        return False


def shipped_packs() -> tuple[str, ...]:
    """Names (file stems) of the shipped rules/*.yaml files that are rule packs, sorted."""
    names = []
    for relative, raw in _data.iter_files("rules"):
        if "/" in relative or not relative.endswith(".yaml"):
            continue
        try:
            data = load_yaml(raw.decode("utf-8"), f"rules/{relative}", error=RuleError).data
        except (RuleError, UnicodeDecodeError):
            # a broken file is still listed when it says it is a pack, so lint reports it instead of skipping it
            data = {"pack": None} if b"\npack:" in b"\n" + raw else None
        if is_pack(data):
            names.append(relative.removesuffix(".yaml"))
    return tuple(names)

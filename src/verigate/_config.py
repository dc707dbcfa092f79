"""verigate.yaml: load, validate against schemas/config.schema.json, and build the typed configuration.

The typed Config is structured by the models' strict cattrs converter (unknown keys refused, no coercion), which
is imported when a configuration is first built, not when this module is (fastjsonschema too): many modules import
the section types alone, and a project without verigate.yaml gets the defaults without loading cattrs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from . import _data
from ._errors import ConfigError
from ._logging import get_logger
from ._yaml import LoadedYaml, load_yaml, read_yaml_file
from .judge._base import JudgeConfig
from .selfgate._defaults import DEFAULT_BLOCKED_TOOLS, DEFAULT_HARDENING, DEFAULT_MODE, DEFAULT_STORE

if TYPE_CHECKING:
    import cattrs  # for the annotations; imported at run time on first use
    import fastjsonschema  # likewise

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "BudgetConfig",
    "Config",
    "HooksConfig",
    "RedactionConfig",
    "SelfGateConfig",
    "StoreConfig",
    "load_config",
    "store_folder",
]

DEFAULT_CONFIG_NAME = "verigate.yaml"
#: engine names of the origin runtime that meant "judge less"; judgment cannot be turned off
LEGACY_ENGINE_NAMES = frozenset({"off", "rule_based", "reflexion"})
log = get_logger("verigate.config")


@attrs.frozen
class BudgetConfig:
    revise: int = 2


@attrs.frozen
class HooksConfig:
    timeout_s: float = 10.0
    on_error: Literal["escalate"] = "escalate"


@attrs.frozen
class RedactionConfig:
    packs: tuple[str, ...] = ("secrets", "pii", "privacy")
    extra_packs: tuple[str, ...] = ()
    replace_defaults: bool = False


@attrs.frozen
class StoreConfig:
    url: str = ".verigate/verigate.db"
    review_expiry_s: float | None = None
    lock_timeout_s: float = 30.0


@attrs.frozen
class SelfGateConfig:
    mode: Literal["audit", "block"] = DEFAULT_MODE
    blocked_tools: tuple[str, ...] = DEFAULT_BLOCKED_TOOLS
    #: None: the project's per-user state folder, outside every sandbox's writable roots (see the README)
    store: str | None = DEFAULT_STORE
    #: "os": block mode needs the host's sandbox; "best-effort": a person accepts the shell-word tripwire alone
    hardening: Literal["os", "best-effort"] = DEFAULT_HARDENING


@attrs.frozen
class Config:
    """The whole configuration; every value has a default, so an empty file is a valid configuration."""

    judge: JudgeConfig | None = None
    budget: BudgetConfig = BudgetConfig()
    hooks: HooksConfig = HooksConfig()
    redaction: RedactionConfig = RedactionConfig()
    store: StoreConfig = StoreConfig()
    self_gate: SelfGateConfig = SelfGateConfig()
    plugins: tuple[str, ...] = ()
    #: where the configuration came from ("<mapping>", a path, or "<defaults>")
    source: str = "<defaults>"
    #: warnings produced while reading (legacy engine names …), also logged
    warnings: tuple[str, ...] = ()


def _judge(section: Mapping[str, Any], legacy_engine: str | None, warnings: list[str]) -> dict[str, Any]:
    """The ``judge:`` section with its engine resolved (a legacy name, or the top-level ``judgment_engine``)."""
    values = dict(section)
    engine = values.get("engine", legacy_engine or "llm_judge")
    if engine in LEGACY_ENGINE_NAMES:
        message = f"judge engine {engine!r} is a legacy name and is read as 'llm_judge': judgment cannot be off"
        warnings.append(message)
        log.warning(message)
        engine = "llm_judge"
    values["engine"] = engine
    return values


#: the keys of a ``judge:`` section that holds an ensemble; engine settings belong to each member
ENSEMBLE_SECTION_KEYS = frozenset({"ensemble", "mode", "timeout_s", "cache"})


def _ensemble(section: Mapping[str, Any], legacy_engine: str | None, warnings: list[str], source: str,
              loaded: LoadedYaml | None) -> dict[str, Any]:
    """A ``judge:`` section with ``ensemble``: its shape checked (what the schema cannot say), each member's engine
    resolved like a single judge's, and the section's own engine named ``ensemble``."""

    def refuse(message: str, path: list[str | int]) -> ConfigError:
        line = loaded.line_of(path) if loaded is not None else None
        field = ".".join(str(part) for part in path)
        return ConfigError(message, source=source, line=line, field=field)

    stray = sorted(set(section) - ENSEMBLE_SECTION_KEYS)
    if stray:
        raise refuse(f"judge.{stray[0]} does not apply beside judge.ensemble: engine settings belong to each "
                     "member", ["judge", stray[0]])
    if legacy_engine is not None:
        raise refuse("judgment_engine names one engine; with judge.ensemble each member names its own",
                     ["judgment_engine"])
    if section.get("mode") is None:
        raise refuse("judge.ensemble needs judge.mode (allowed: unanimous)", ["judge", "ensemble"])
    values = dict(section)
    values["ensemble"] = [_judge(member, None, warnings) for member in section["ensemble"]]
    values["engine"] = "ensemble"
    return values


@functools.cache
def _converter() -> cattrs.Converter:
    """The models' strict converter, except that ``judge.options`` is kept as written: it belongs to a plug-in,
    which documents (and checks) its own keys and values."""
    from ._converters import structure_converter

    converter = structure_converter().copy()
    converter.register_structure_hook_func(lambda kind: kind == Mapping[str, Any], lambda value, _kind: dict(value))
    return converter


def _schema_error(exc: fastjsonschema.JsonSchemaValueException, source: str,
                  loaded: LoadedYaml | None) -> ConfigError:
    from ._schema_errors import schema_failure

    failure = schema_failure(exc)
    field = failure.field if failure.rule != "additionalProperties" else failure.target
    # point at the offending key itself, not at the section holding it (list items by index: judge.ensemble[0])
    path: list[str | int] = [int(part) if part.isdigit() else part for part in failure.target_path]
    line = loaded.line_of(path) if loaded is not None and path else None
    return ConfigError(failure.message, source=source, line=line, field=field)


def _structure_error(exc: BaseException, source: str, loaded: LoadedYaml | None) -> ConfigError:
    from ._converters import first_error

    path, message = first_error(exc)
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".") or None
    line = loaded.line_of(list(path)) if loaded is not None and path else None
    return ConfigError(message, source=source, line=line, field=field)


def build_config(data: Any, source: str, loaded: LoadedYaml | None = None) -> Config:
    """Validate a plain mapping and build a Config; errors name the source, line and field."""
    if data is None:
        data = {}
    import fastjsonschema

    try:
        _data.compiled_schema("config.schema.json")(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise _schema_error(exc, source, loaded) from exc
    import cattrs

    warnings: list[str] = []
    sections = {key: value for key, value in data.items() if key not in ("judge", "judgment_engine")}
    legacy_engine = data.get("judgment_engine")
    judge_section = data.get("judge")
    if judge_section is not None and "ensemble" in judge_section:
        sections["judge"] = _ensemble(judge_section, legacy_engine, warnings, source, loaded)
    elif judge_section is not None and judge_section.get("mode") is not None:
        line = loaded.line_of(["judge", "mode"]) if loaded is not None else None
        raise ConfigError("judge.mode applies to judge.ensemble only", source=source, line=line, field="judge.mode")
    elif judge_section is not None or legacy_engine is not None:
        sections["judge"] = _judge(judge_section or {}, legacy_engine, warnings)
    try:
        config = _converter().structure(sections, Config)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        # the schema has already checked every value: this is a model the schema does not describe exactly
        raise _structure_error(exc, source, loaded) from exc
    return attrs.evolve(config, source=source, warnings=tuple(warnings))


def load_config(path_or_mapping: str | Path | Mapping[str, Any] | None = None) -> Config:
    """Read verigate.yaml from a path, take a mapping as is, or (None) use ./verigate.yaml when it exists."""
    if isinstance(path_or_mapping, Mapping):
        return build_config(dict(path_or_mapping), "<mapping>")
    if path_or_mapping is None:
        default = Path(DEFAULT_CONFIG_NAME)
        if not default.is_file():
            return Config()
        path_or_mapping = default
    path = Path(path_or_mapping)
    text = read_yaml_file(path, error=ConfigError, what="configuration")
    from ._parsed_cache import cached_data, keep_data

    cached = cached_data(text, f"config:{path}")
    if cached is not None and (cached[0] is None or isinstance(cached[0], Mapping)):
        try:
            return build_config(cached[0], str(path))
        except ConfigError:
            pass  # cannot happen for data that built once; the YAML path below words the error with its line
    loaded = load_yaml(text, str(path), error=ConfigError)
    if loaded.data is not None and not isinstance(loaded.data, Mapping):
        raise ConfigError("the configuration must be a mapping", source=str(path), line=1)
    config = build_config(loaded.data, str(path), loaded)
    keep_data(text, f"config:{path}", loaded.data)  # only a config that built: a broken one is parsed again
    return config


def store_folder(config: Config, base: Path) -> Path | None:
    """The folder holding the configured store file, a relative path being relative to ``base`` (the project or
    the working directory); None for a store that is not a local file (``:memory:``, another scheme)."""
    url = config.store.url
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    if path in ("", ":memory:") or "://" in path or (url.startswith("sqlite:") and path == url):
        return None
    folder = Path(path).parent
    return folder if folder.is_absolute() else base / folder

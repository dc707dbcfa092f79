"""verigate.yaml: load, validate against schemas/config.schema.json, and build the typed configuration."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs
import fastjsonschema

from . import _data
from ._errors import ConfigError
from ._logging import get_logger
from ._schema_errors import schema_failure
from ._yaml import LoadedYaml, load_yaml, read_yaml_file
from .judge._base import JudgeCaps, JudgeConfig
from .selfgate._defaults import DEFAULT_BLOCKED_TOOLS, DEFAULT_HARDENING, DEFAULT_MODE, DEFAULT_STORE

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


def _judge(section: Mapping[str, Any], legacy_engine: str | None, warnings: list[str]) -> JudgeConfig:
    values = dict(section)
    engine = values.get("engine", legacy_engine or "llm_judge")
    if engine in LEGACY_ENGINE_NAMES:
        message = f"judge engine {engine!r} is a legacy name and is read as 'llm_judge': judgment cannot be off"
        warnings.append(message)
        log.warning(message)
        engine = "llm_judge"
    values["engine"] = engine
    caps = values.pop("caps", None)
    return JudgeConfig(caps=JudgeCaps(**caps) if caps else JudgeCaps(), **values)


def _with_tuples(section: Mapping[str, Any]) -> dict[str, Any]:
    """YAML lists become tuples: configuration objects are immutable."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in section.items()}


def build_config(data: Any, source: str, loaded: LoadedYaml | None = None) -> Config:
    """Validate a plain mapping and build a Config; errors name the source, line and field."""
    if data is None:
        data = {}
    try:
        _data.compiled_schema("config.schema.json")(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        failure = schema_failure(exc)
        path = failure.field.split(".") if failure.field else []
        if failure.rule == "additionalProperties" and failure.key is not None:
            path.append(failure.key)  # point at the offending key itself, not at the section holding it
        line = loaded.line_of(path) if loaded is not None and path else None
        raise ConfigError(failure.message, source=source, line=line, field=".".join(path) or None) from exc
    warnings: list[str] = []
    legacy_engine = data.get("judgment_engine")
    judge_section = data.get("judge")
    judge = None
    if judge_section is not None or legacy_engine is not None:
        judge = _judge(judge_section or {}, legacy_engine, warnings)
    return Config(
        judge=judge,
        budget=BudgetConfig(**data.get("budget", {})),
        hooks=HooksConfig(**data.get("hooks", {})),
        redaction=RedactionConfig(**_with_tuples(data.get("redaction", {}))),
        store=StoreConfig(**data.get("store", {})),
        self_gate=SelfGateConfig(**_with_tuples(data.get("self_gate", {}))),
        plugins=tuple(data.get("plugins", ())),
        source=source,
        warnings=tuple(warnings),
    )


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
    loaded = load_yaml(text, str(path), error=ConfigError)
    if loaded.data is not None and not isinstance(loaded.data, Mapping):
        raise ConfigError("the configuration must be a mapping", source=str(path), line=1)
    return build_config(loaded.data, str(path), loaded)


def store_folder(config: Config, base: Path) -> Path | None:
    """The folder holding the configured store file, a relative path being relative to ``base`` (the project or
    the working directory); None for a store that is not a local file (``:memory:``, another scheme)."""
    url = config.store.url
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    if path in ("", ":memory:") or "://" in path or (url.startswith("sqlite:") and path == url):
        return None
    folder = Path(path).parent
    return folder if folder.is_absolute() else base / folder

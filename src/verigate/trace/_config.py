"""The trace-grader configuration: read strictly (schema, file:line errors), never silently defaulted."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from .. import _data
from .._errors import ConfigError, InputError
from .._yaml import LoadedYaml, load_yaml, read_yaml_file

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "ForbiddenTool",
    "Grounding",
    "TraceConfig",
    "TrajectoryJudgeConfig",
    "load_trace_config",
]

#: the shipped default, under rules/ (verified: false, every value an ASSUMPTION)
DEFAULT_CONFIG_NAME = "trace-grader.config.yaml"
SCHEMA_NAME = "trace-config.schema.json"


@attrs.frozen
class ForbiddenTool:
    """A tool that must not be used, optionally only when an argument matches ``args_pattern``."""

    tool: str
    args_pattern: re.Pattern[str] | None = None
    #: the argument ``args_pattern`` is matched against (None: every string argument)
    arg: str | None = None
    reason: str = ""


@attrs.frozen
class Grounding:
    enabled: bool
    edit_tools: tuple[str, ...] = ("Edit", "MultiEdit")
    read_tools: tuple[str, ...] = ("Read", "Grep", "Glob")
    create_tools: tuple[str, ...] = ("Write",)


@attrs.frozen
class TrajectoryJudgeConfig:
    """The ``judge:`` section: the judge engine settings of verigate.yaml plus ``enabled`` and a rubric."""

    enabled: bool
    engine: str = "llm_judge"
    client: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    trust: Literal["primary", "auxiliary"] = "primary"
    timeout_s: float = 120.0
    threshold: float = 0.5
    options: Mapping[str, Any] = attrs.field(factory=dict)
    rubric: tuple[str, ...] = ()


@attrs.frozen
class TraceConfig:
    verified: bool
    forbidden_tools: tuple[ForbiddenTool, ...]
    retry_threshold: int
    step_budget: int
    must_precede: tuple[tuple[str, str], ...]
    grounding: Grounding
    judge: TrajectoryJudgeConfig
    #: parameters of plug-in rules by rule id (the config file is the one place for every parameter)
    rules: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    source: str = "<mapping>"


def _forbidden(item: Any, index: int, source: str, loaded: LoadedYaml | None) -> ForbiddenTool:
    if isinstance(item, str):
        return ForbiddenTool(item)
    pattern = None
    if "args_pattern" in item:
        try:
            pattern = re.compile(item["args_pattern"])
        except re.error as exc:
            path: list[str | int] = ["forbidden_tools", index, "args_pattern"]
            raise ConfigError(f"args_pattern is not a regular expression: {exc}", source=source,
                              line=loaded.line_of(path) if loaded else None,
                              field=f"forbidden_tools[{index}].args_pattern") from exc
    return ForbiddenTool(item["tool"], pattern, item.get("arg"), item.get("reason", ""))


def build_trace_config(data: Any, source: str, loaded: LoadedYaml | None = None) -> TraceConfig:
    """Validate plain data against the trace-config schema and build a TraceConfig (errors name file:line)."""
    try:
        _data.validate(SCHEMA_NAME, data, source=source)
    except InputError as exc:
        path: list[str | int] = [int(part) if part.isdigit() else part
                                 for part in re.split(r"[.\[\]]+", exc.field or "") if part]
        line = loaded.line_of(path) if loaded is not None and path else None
        raise ConfigError(exc.message, source=source, line=line, field=exc.field) from exc
    grounding = data["grounding"]
    judge = dict(data["judge"])
    judge["rubric"] = tuple(judge.get("rubric", ()))
    return TraceConfig(
        verified=data["verified"],
        forbidden_tools=tuple(_forbidden(item, index, source, loaded)
                              for index, item in enumerate(data["forbidden_tools"])),
        retry_threshold=data["retry_threshold"],
        step_budget=data["step_budget"],
        must_precede=tuple((first, then) for first, then in data["order_constraints"]["must_precede"]),
        grounding=Grounding(grounding["enabled"],
                            **{key: tuple(value) for key, value in grounding.items() if key != "enabled"}),
        judge=TrajectoryJudgeConfig(**judge),
        rules={key: dict(value) for key, value in data.get("rules", {}).items()},
        source=source,
    )


def load_trace_config(path_or_mapping: str | Path | Mapping[str, Any] | None = None) -> TraceConfig:
    """Read a trace-grader config file (or mapping); None reads the shipped default. Any defect is a ConfigError."""
    if isinstance(path_or_mapping, Mapping):
        return build_trace_config(dict(path_or_mapping), "<mapping>")
    if path_or_mapping is None:
        source = f"rules/{DEFAULT_CONFIG_NAME} (shipped default)"
        text = _data.read_text("rules", DEFAULT_CONFIG_NAME)
    else:
        source = str(path_or_mapping)
        text = read_yaml_file(path_or_mapping, error=ConfigError, what="trace-grader configuration")
    loaded = load_yaml(text, source, error=ConfigError)
    if not isinstance(loaded.data, Mapping):
        raise ConfigError("the trace-grader configuration must be a mapping", source=source, line=1)
    return build_trace_config(loaded.data, source, loaded)

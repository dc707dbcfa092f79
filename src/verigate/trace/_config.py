"""The trace-grader configuration: layered over documented defaults, read strictly (schema, file:line errors).

A missing key or sub-key takes its default from :data:`DEFAULTS` — the seed's defaults (its reference grader
layers a file the same way), plus verigate's refinements, each a named option that is off unless the file turns
it on, so that the seed's own adapter file grades exactly as the seed does. The keys that took a default are kept
(``TraceConfig.defaults_used``) and reported. Anything present is validated in full: an unknown key or a wrong
type is a ConfigError naming file and line, never a silent fallback.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs
import fastjsonschema

from .. import _data
from .._errors import ConfigError
from .._schema_errors import schema_failure
from .._yaml import LoadedYaml, load_yaml, read_yaml_file

__all__ = [
    "DEFAULTS",
    "DEFAULT_CONFIG_NAME",
    "ForbiddenTool",
    "Grounding",
    "OrderOptions",
    "RetryStormOptions",
    "TraceConfig",
    "TrajectoryJudgeConfig",
    "load_trace_config",
]

#: the shipped default, under rules/ (verified: false, every value an ASSUMPTION)
DEFAULT_CONFIG_NAME = "trace-grader.config.yaml"
SCHEMA_NAME = "trace-config.schema.json"

#: what a missing key means (docs/trace-grader.md lists each with the seed's behaviour it keeps)
DEFAULTS: dict[str, Any] = {
    "verified": False,
    "forbidden_tools": [],
    "retry_threshold": 3,
    "step_budget": 40,
    "order_constraints": {"must_precede": []},
    "grounding": {
        "enabled": True,
        "edit_tools": ["Edit", "MultiEdit"],
        "read_tools": ["Read", "Grep", "Glob"],
        "create_tools": ["Write"],
        "search_listings": False,  # refinement: the files a Grep/Glob result lists count as read
        "ignore_failed": False,  # refinement: a failed edit is not flagged, a failed read grounds nothing
    },
    "judge": {"enabled": False, "model": None, "rubric": []},
    "subagents": False,  # refinement: sub-agents graded as child runs instead of skipped
    "rules": {
        "forbidden_tool": {"ignore_case": True},  # kept on: a spelling must not side-step a forbidden list
        "out_of_order": {"once_per_pair": False, "first_must_succeed": False},
        "retry_storm": {"same_error": False, "skip_cascades": False},
    },
}


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
    search_listings: bool = False
    ignore_failed: bool = False


@attrs.frozen
class RetryStormOptions:
    #: a storm is a run of one tool's failures with the same error signature (the seed: any error)
    same_error: bool = False
    #: "Sibling tool call errored" cancellations neither extend nor break a storm (the seed: they are failures)
    skip_cascades: bool = False


@attrs.frozen
class OrderOptions:
    #: flag only the first violation of each pair (the seed: every violating step)
    once_per_pair: bool = False
    #: a failed ``first`` does not count as having run (the seed: any attempt counts)
    first_must_succeed: bool = False


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
    retry_storm: RetryStormOptions = RetryStormOptions()
    out_of_order: OrderOptions = OrderOptions()
    #: forbidden_tool compares tool names with ``str.casefold``
    ignore_case: bool = True
    #: grade sub-agents (sidechains, subagents/agent-*.jsonl) as child runs; False skips them as the seed does
    subagents: bool = False
    #: the keys (dotted) that the file left out and that took their default from :data:`DEFAULTS`
    defaults_used: tuple[str, ...] = ()


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


def layer(data: Mapping[str, Any], defaults: Mapping[str, Any] = DEFAULTS, prefix: str = ""
          ) -> tuple[dict[str, Any], list[str]]:
    """``data`` over ``defaults`` (mappings merged key by key, other values replaced) and the dotted keys that
    took a default: a section left out whole is named once (``grounding``), not leaf by leaf."""
    merged: dict[str, Any] = dict(data)
    used: list[str] = []
    for key, default in defaults.items():
        name = f"{prefix}{key}"
        if key not in data:
            merged[key] = copy.deepcopy(default)
            used.append(name)
        elif isinstance(default, Mapping) and isinstance(data[key], Mapping):
            merged[key], inner = layer(data[key], default, f"{name}.")
            used.extend(inner)
    return merged, used


def _empty_sections_dropped(data: Mapping[str, Any], defaults: Mapping[str, Any] = DEFAULTS) -> dict[str, Any]:
    """``data`` without the list and mapping keys written empty (``forbidden_tools:`` with every entry commented
    out reads as null): those take their default, as they do in the seed's grader, rather than fail the schema."""
    kept: dict[str, Any] = {}
    for key, value in data.items():
        default = defaults.get(key)
        if value is None and isinstance(default, list | Mapping):
            continue
        if isinstance(default, Mapping) and isinstance(value, Mapping):
            value = _empty_sections_dropped(value, default)
        kept[key] = value
    return kept


def _schema_error(exc: Any, source: str, loaded: LoadedYaml | None) -> ConfigError:
    """The schema's complaint at the line of the offending value (an unknown key: the key's own line)."""
    failure = schema_failure(exc)
    path: list[str | int] = [int(part) if part.isdigit() else part for part in failure.path]
    message = failure.message
    if failure.rule == "additionalProperties" and failure.key is not None:
        where = f" in {failure.field}" if failure.field else ""
        message = f"unknown key {failure.key!r}{where} (see docs/trace-grader.md for the keys)"
        path.append(failure.key)
    line = loaded.line_of(path) if loaded is not None else None
    return ConfigError(message, source=source, line=line, field=failure.field)


def build_trace_config(data: Any, source: str, loaded: LoadedYaml | None = None) -> TraceConfig:
    """Validate plain data against the trace-config schema, layer it over :data:`DEFAULTS` and build a
    TraceConfig (errors name file:line)."""
    if isinstance(data, Mapping):
        data = _empty_sections_dropped(data)
    try:
        _data.compiled_schema(SCHEMA_NAME)(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise _schema_error(exc, source, loaded) from exc
    data, used = layer(data)
    grounding = data["grounding"]
    judge = dict(data["judge"])
    judge["rubric"] = tuple(judge["rubric"])
    rules = data["rules"]
    return TraceConfig(
        verified=data["verified"],
        forbidden_tools=tuple(_forbidden(item, index, source, loaded)
                              for index, item in enumerate(data["forbidden_tools"])),
        retry_threshold=data["retry_threshold"],
        step_budget=data["step_budget"],
        must_precede=tuple((first, then) for first, then in data["order_constraints"]["must_precede"]),
        grounding=Grounding(grounding["enabled"], tuple(grounding["edit_tools"]), tuple(grounding["read_tools"]),
                            tuple(grounding["create_tools"]), grounding["search_listings"],
                            grounding["ignore_failed"]),
        judge=TrajectoryJudgeConfig(**judge),
        rules={key: dict(value) for key, value in rules.items()},
        source=source,
        retry_storm=RetryStormOptions(**rules["retry_storm"]),
        out_of_order=OrderOptions(**rules["out_of_order"]),
        ignore_case=rules["forbidden_tool"]["ignore_case"],
        subagents=data["subagents"],
        defaults_used=tuple(used),
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
    if loaded.data is None:
        loaded = attrs.evolve(loaded, data={})  # an empty file (or only comments): every default
    if not isinstance(loaded.data, Mapping):
        raise ConfigError("the trace-grader configuration must be a mapping", source=source, line=1)
    return build_trace_config(loaded.data, source, loaded)

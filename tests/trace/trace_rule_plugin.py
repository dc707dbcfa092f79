"""A third-party trace rule plug-in for the tests: its parameters come only from the config's ``rules`` section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from verigate import hookimpl
from verigate.trace import Flag, RuleChecker, Run, Step, TraceConfig


class _Checker:
    def __init__(self, tools: set[str]) -> None:
        self.tools = tools

    def step(self, step: Step) -> Iterable[Flag]:
        if step.tool in self.tools:
            return [Flag("banned_sleep", "high", step.step, step.tool, "sleeping instead of waiting on a signal",
                         step.line)]
        return ()

    def finish(self) -> Iterable[Flag]:
        return ()


class BannedSleep:
    id = "banned_sleep"
    severity = "high"
    description = "a sleep tool was used"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        tools = config.rules.get(self.id, {}).get("tools", [])
        return _Checker(set(tools)) if tools else None


@hookimpl
def verigate_trace_rules() -> Mapping[str, Any]:
    return {"banned_sleep": BannedSleep()}

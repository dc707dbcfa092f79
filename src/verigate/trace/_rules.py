"""The trace rules: a rule is a plug-in that checks a run step by step (streaming) and emits flags."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from ..transcripts import cut_text
from ..transcripts._turn import CUT_BEFORE
from ._config import ForbiddenTool, TraceConfig
from ._model import Flag, Run, Severity, Step

__all__ = [
    "Checker",
    "ExcessiveSteps",
    "ForbiddenToolRule",
    "OutOfOrder",
    "RetryStorm",
    "RuleChecker",
    "TraceRule",
    "error_signature",
    "flag_at",
    "step_path",
    "string_args",
    "tool_key",
]


@runtime_checkable
class RuleChecker(Protocol):
    """The state of one rule over one run: ``step`` is called for every step in order, then ``finish`` once."""

    def step(self, step: Step) -> Iterable[Flag]: ...

    def finish(self) -> Iterable[Flag]: ...


@runtime_checkable
class TraceRule(Protocol):
    """A trace rule registered through ``verigate_trace_rules`` (a mapping rule id -> rule).

    ``checker`` receives the configuration (plug-in rules read their parameters from ``config.rules[id]``) and
    the run's header (``steps`` empty); it returns None when the rule does not apply to that run.
    """

    id: str
    severity: Severity
    description: str

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None: ...


def string_args(args: Mapping[str, Any]) -> Iterator[str]:
    """Every string inside an argument mapping (nested lists and mappings included)."""
    stack: list[Any] = list(args.values())
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)


_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"</?tool_use_error>")
#: the characters ``str.splitlines`` breaks lines at
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: the non-empty lines of a text, as ``str.splitlines`` cuts them, found lazily
_NON_EMPTY_LINE = re.compile(f"[^{_LINE_BREAKS}]+")


def error_signature(observation: str | None) -> str:
    """A failure's signature: its first non-empty line, numbers and spacing folded, so retries of one error match."""
    for found in _NON_EMPTY_LINE.finditer(observation or ""):  # lazily: outputs can be long, one line is needed
        line = _TAGS.sub("", found.group()).strip()
        if line:
            return _SPACES.sub(" ", _DIGITS.sub("#", line))[:120]
    return ""


PATH_KEYS = ("file_path", "path", "notebook_path")


def step_path(step: Step) -> str | None:
    """The file a step names (its first non-empty path argument), as written."""
    for key in PATH_KEYS:
        value = step.args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def flag_at(rule: TraceRule, step: Step, detail: str) -> Flag:
    """A flag on ``step``: its number, tool, line and the file it names (a relative POSIX path joined to the
    step's working directory, so that the report can show it relative to its project)."""
    path = step_path(step)
    if path is not None and step.cwd and not path.startswith("/") and step.cwd.startswith("/") and "\\" not in path:
        path = posixpath.normpath(posixpath.join(step.cwd, path))
    return Flag(rule.id, rule.severity, step.step, step.tool, detail, step.line, path)


class Checker:
    """Base for checkers that flag on single steps; ``finish`` flags nothing unless overridden."""

    def finish(self) -> Iterable[Flag]:
        return ()


# ------------------------------------------------------------------------------------------ forbidden_tool


class ForbiddenToolRule:
    id = "forbidden_tool"
    severity: Severity = "high"
    description = "a forbidden tool (or a tool with a forbidden argument) was used"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        return _ForbiddenChecker(self, config) if config.forbidden_tools else None


def tool_key(name: str) -> str:
    """How forbidden_tool compares tool names: case-insensitively (``str.casefold``, surrounding spaces
    ignored), since hosts and traces spell one tool differently (``Bash``, ``bash``) and a rule must not be
    side-stepped by a spelling."""
    return name.strip().casefold()


class _ForbiddenChecker(Checker):
    def __init__(self, rule: ForbiddenToolRule, config: TraceConfig) -> None:
        self.rule = rule
        #: the reference grader compares names exactly; verigate by default case-insensitively (rules.forbidden_tool)
        self.key = tool_key if config.ignore_case else str
        #: tool key -> its entries in config order: one dict look-up per step, however long the list
        self.entries: dict[str, list[ForbiddenTool]] = {}
        for entry in config.forbidden_tools:
            self.entries.setdefault(self.key(entry.tool), []).append(entry)
        #: tool name as written -> its key (a session uses a handful of names millions of times)
        self.keys: dict[str, str] = {}

    def step(self, step: Step) -> Iterable[Flag]:
        key = self.keys.get(step.tool)
        if key is None:
            key = self.keys[step.tool] = self.key(step.tool)
        for entry in self.entries.get(key, ()):
            if entry.args_pattern is not None:
                match = _first_match(entry, step.args)
                if match is None:
                    continue
                what = f"{step.tool} with {_quoted(match)!r}"
            else:
                what = step.tool
            outcome = " (the call failed, but it was attempted)" if step.ok is False else ""
            reason = f": {entry.reason}" if entry.reason else ""
            return [flag_at(self.rule, step, f"forbidden {what}{reason}{outcome}")]
        return ()


#: how much of a matched argument a flag's detail quotes
QUOTED_CHARS = 200
_TOKEN_REST = re.compile(f"[^{re.escape(CUT_BEFORE)}]*")


def _quoted(match: re.Match[str]) -> str:
    """The matched text widened to whole tokens and cut at a token boundary: the detail never holds part of a
    secret that the report's redactors could not recognise (a pattern may start or stop inside a token)."""
    text = match.string
    start = max(max(text.rfind(character, 0, match.start()) for character in CUT_BEFORE) + 1, 0)
    rest = _TOKEN_REST.match(text, match.end())
    end = rest.end() if rest is not None else match.end()
    return cut_text(text[start:end].strip(), QUOTED_CHARS, "…")


def _first_match(entry: ForbiddenTool, args: Mapping[str, Any]) -> re.Match[str] | None:
    """The first match of the entry's pattern in its argument (or in any string argument when it names none)."""
    assert entry.args_pattern is not None
    if entry.arg is None:
        candidates: Iterable[str] = string_args(args)
    else:
        value = args.get(entry.arg)
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            value = " ".join(value)  # argv form, e.g. Codex shell ["bash", "-lc", "git push -f"]
        candidates = (value,) if isinstance(value, str) else ()
    for text in candidates:
        match = entry.args_pattern.search(text)
        if match is not None:
            return match
    return None


# -------------------------------------------------------------------------------------------- out_of_order


class OutOfOrder:
    id = "out_of_order"
    severity: Severity = "medium"
    description = "a tool ran before the tool that must precede it (order_constraints.must_precede)"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        return _OrderChecker(self, config) if config.must_precede else None


class _OrderChecker(Checker):
    """The seed's rule: every ``then`` step without an earlier ``first`` step is flagged (``once_per_pair``: only
    the first per pair); any attempt of ``first`` counts (``first_must_succeed``: only one that did not fail)."""

    def __init__(self, rule: OutOfOrder, config: TraceConfig) -> None:
        self.rule = rule
        self.pairs = config.must_precede
        self.once = config.out_of_order.once_per_pair
        self.must_succeed = config.out_of_order.first_must_succeed
        self.seen: set[str] = set()
        self.flagged: set[tuple[str, str]] = set()

    def step(self, step: Step) -> Iterable[Flag]:
        flags = []
        for first, then in self.pairs:
            if step.tool == then and first not in self.seen and (first, then) not in self.flagged:
                if self.once:
                    self.flagged.add((first, then))
                flags.append(flag_at(self.rule, step, f"{then} ran before {first} (must_precede [{first}, {then}])"))
        if step.ok is not False or not self.must_succeed:
            self.seen.add(step.tool)
        return flags


# --------------------------------------------------------------------------------------------- retry_storm


class RetryStorm:
    id = "retry_storm"
    severity: Severity = "medium"
    description = "more than retry_threshold consecutive failures of one tool"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        # audit logs cannot say whether a step failed: no storm can be seen there (seed RULE-04)
        return None if run.partial else _StormChecker(self, config)


class _StormChecker(Checker):
    """The seed's rule: a streak is consecutive failed steps of one tool; any other step (a success, another
    tool, an unknown outcome) ends it. A streak longer than the threshold is flagged once, at its first step
    (as the seed does), when it crosses the threshold. ``same_error``: the failures must also share an error
    signature; ``skip_cascades``: a sibling's cancellation neither extends nor ends a streak."""

    def __init__(self, rule: RetryStorm, config: TraceConfig) -> None:
        self.rule = rule
        self.threshold = config.retry_threshold
        self.same_error = config.retry_storm.same_error
        self.skip_cascades = config.retry_storm.skip_cascades
        self.key: tuple[str, str] | None = None
        self.count = 0
        self.first: Step | None = None

    def step(self, step: Step) -> Iterable[Flag]:
        if step.cascade and self.skip_cascades:
            return ()
        if step.ok is not False:
            self.key, self.count = None, 0
            return ()
        key = (step.tool, error_signature(step.observation) if self.same_error else "")
        if key != self.key:
            self.key, self.count, self.first = key, 0, step
        self.count += 1
        if self.count == self.threshold + 1:
            first = self.first
            assert first is not None
            signature = f" with {key[1]!r}" if key[1] else ""
            return [flag_at(self.rule, first, f"{step.tool} failed {self.count} times in a row{signature}, steps "
                                              f"{first.step}-{step.step} (threshold {self.threshold})")]
        return ()


# ----------------------------------------------------------------------------------------- excessive_steps


class ExcessiveSteps:
    id = "excessive_steps"
    severity: Severity = "low"
    description = "more steps than step_budget"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        return _BudgetChecker(self, config.step_budget)


class _BudgetChecker(Checker):
    """Flags the run once, at its last step, as the seed does (the detail names the step that went over)."""

    def __init__(self, rule: ExcessiveSteps, budget: int) -> None:
        self.rule = rule
        self.budget = budget
        self.count = 0
        self.last: Step | None = None

    def step(self, step: Step) -> Iterable[Flag]:
        self.count += 1
        self.last = step
        return ()

    def finish(self) -> Iterable[Flag]:
        if self.count <= self.budget or self.last is None:
            return ()
        return [flag_at(self.rule, self.last, f"{self.count} steps > budget {self.budget} (over it from step "
                                              f"{self.budget + 1} on)")]

"""The trace rules: a rule is a plug-in that checks a run step by step (streaming) and emits flags."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from ..transcripts import cut_text
from ..transcripts._turn import CUT_BEFORE
from ._config import ForbiddenTool, TraceConfig
from ._model import Flag, Run, Severity, Step

__all__ = [
    "BUILTIN_RULES",
    "EditedWithoutRead",
    "ExcessiveSteps",
    "ForbiddenToolRule",
    "OutOfOrder",
    "RetryStorm",
    "RuleChecker",
    "TraceRule",
    "error_signature",
    "listed_paths",
    "normalize_path",
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


_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"</?tool_use_error>")
#: the characters ``str.splitlines`` breaks lines at
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: the non-empty lines of a text, as ``str.splitlines`` cuts them, found lazily
_NON_EMPTY_LINE = re.compile(f"[^{_LINE_BREAKS}]+")
#: a line of search output that starts with a path: /abs, ./rel, ../rel or C:\\ / C:/ (Windows)
_LISTED_PATH = re.compile(r"((?:[A-Za-z]:[\\/]|\.{1,2}/|/)[^:\r\n]*)")


def _is_windows(path: str, cwd: str | None) -> bool:
    return bool(_WINDOWS_ABSOLUTE.match(path) or "\\" in path or (cwd and _WINDOWS_ABSOLUTE.match(cwd)))


@functools.lru_cache(maxsize=4096)  # sessions touch the same paths again and again
def normalize_path(path: str, cwd: str | None = None) -> str:
    """An absolute, normalised path: relative paths join the line's cwd; Windows paths get forward slashes and
    lower case (drive letters and names are case-insensitive there)."""
    if _is_windows(path, cwd):
        unified = path.replace("\\", "/")
        if not re.match(r"^[A-Za-z]:/|^//", unified) and cwd:
            unified = cwd.replace("\\", "/").rstrip("/") + "/" + unified
        prefix = "//" if unified.startswith("//") else ""
        return prefix + posixpath.normpath(unified.lstrip("/") if prefix else unified).lower()
    if not path.startswith("/") and cwd:
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


def error_signature(observation: str | None) -> str:
    """A failure's signature: its first non-empty line, numbers and spacing folded, so retries of one error match."""
    for found in _NON_EMPTY_LINE.finditer(observation or ""):  # lazily: outputs can be long, one line is needed
        line = _TAGS.sub("", found.group()).strip()
        if line:
            return _SPACES.sub(" ", _DIGITS.sub("#", line))[:120]
    return ""


def _flag(rule: TraceRule, step: Step, detail: str) -> Flag:
    return Flag(rule.id, rule.severity, step.step, step.tool, detail, step.line)


class _Checker:
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


class _ForbiddenChecker(_Checker):
    def __init__(self, rule: ForbiddenToolRule, config: TraceConfig) -> None:
        self.rule = rule
        #: tool key -> its entries in config order: one dict look-up per step, however long the list
        self.entries: dict[str, list[ForbiddenTool]] = {}
        for entry in config.forbidden_tools:
            self.entries.setdefault(tool_key(entry.tool), []).append(entry)
        #: tool name as written -> its key (a session uses a handful of names millions of times)
        self.keys: dict[str, str] = {}

    def step(self, step: Step) -> Iterable[Flag]:
        key = self.keys.get(step.tool)
        if key is None:
            key = self.keys[step.tool] = tool_key(step.tool)
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
            return [_flag(self.rule, step, f"forbidden {what}{reason}{outcome}")]
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
        return _OrderChecker(self, config.must_precede) if config.must_precede else None


class _OrderChecker(_Checker):
    def __init__(self, rule: OutOfOrder, pairs: tuple[tuple[str, str], ...]) -> None:
        self.rule = rule
        self.pairs = pairs
        self.seen: set[str] = set()
        self.flagged: set[tuple[str, str]] = set()

    def step(self, step: Step) -> Iterable[Flag]:
        flags = []
        for first, then in self.pairs:
            if step.tool == then and first not in self.seen and (first, then) not in self.flagged:
                self.flagged.add((first, then))  # once per pair: the first violation is the finding
                flags.append(_flag(self.rule, step, f"{then} ran before {first} (must_precede [{first}, {then}])"))
        if step.ok is not False:
            self.seen.add(step.tool)  # a failed call did not happen, for ordering purposes
        return flags


# --------------------------------------------------------------------------------------------- retry_storm


class RetryStorm:
    id = "retry_storm"
    severity: Severity = "medium"
    description = "more than retry_threshold consecutive failures of one tool with the same error"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        # audit logs cannot say whether a step failed: no storm can be seen there (seed RULE-04)
        return None if run.partial else _StormChecker(self, config.retry_threshold)


class _StormChecker(_Checker):
    def __init__(self, rule: RetryStorm, threshold: int) -> None:
        self.rule = rule
        self.threshold = threshold
        self.key: tuple[str, str] | None = None
        self.count = 0
        self.first_step = 0

    def step(self, step: Step) -> Iterable[Flag]:
        if step.cascade or step.ok is None:
            return ()  # a sibling's cascade or an unknown outcome neither extends nor breaks a streak
        if step.ok:
            self.key, self.count = None, 0
            return ()
        key = (step.tool, error_signature(step.observation))
        if key != self.key:
            self.key, self.count, self.first_step = key, 0, step.step
        self.count += 1
        if self.count == self.threshold + 1:
            signature = f" ({key[1]!r})" if key[1] else ""
            return [_flag(self.rule, step, f"{self.count} consecutive failures of {step.tool}{signature} "
                                           f"since step {self.first_step} (threshold {self.threshold})")]
        return ()


# ----------------------------------------------------------------------------------------- excessive_steps


class ExcessiveSteps:
    id = "excessive_steps"
    severity: Severity = "low"
    description = "more steps than step_budget"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        return _BudgetChecker(self, config.step_budget)


class _BudgetChecker(_Checker):
    def __init__(self, rule: ExcessiveSteps, budget: int) -> None:
        self.rule = rule
        self.budget = budget
        self.count = 0

    def step(self, step: Step) -> Iterable[Flag]:
        self.count += 1
        if self.count == self.budget + 1:
            return [_flag(self.rule, step, f"step budget of {self.budget} exceeded here")]
        return ()


# ------------------------------------------------------------------------------------- edited_without_read


class EditedWithoutRead:
    id = "edited_without_read"
    severity: Severity = "medium"
    description = "a successful edit of a file the run had not read, searched or created"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        return _GroundingChecker(self, config, run.partial) if config.grounding.enabled else None


_PATH_KEYS = ("file_path", "path", "notebook_path")
#: paths read from one search result (bounds the work on huge outputs)
LISTED_PATHS_READ = 1000
LISTED_SCAN_CHARS = 64 * 1024
_PATH_STARTS = frozenset("/.")


class _GroundingChecker(_Checker):
    def __init__(self, rule: EditedWithoutRead, config: TraceConfig, partial: bool) -> None:
        self.rule = rule
        self.edit_tools = frozenset(config.grounding.edit_tools)
        self.grounding_tools = frozenset(config.grounding.create_tools + config.grounding.read_tools)
        self.partial = partial
        self.files: set[str] = set()

    def _path(self, step: Step) -> str | None:
        for key in _PATH_KEYS:
            value = step.args.get(key)
            if isinstance(value, str) and value:
                return normalize_path(value, step.cwd)
        return None

    def step(self, step: Step) -> Iterable[Flag]:
        tool = step.tool
        if tool in self.edit_tools:
            # only an edit that happened counts: rejected or failed edits changed nothing (unknown in audit logs)
            happened = step.ok is True or (step.ok is None and self.partial)
            path = self._path(step)
            if happened and path is not None and path not in self.files:
                self.files.add(path)  # flag a file once; the edit itself now grounds later edits
                return [_flag(self.rule, step, f"{tool} of {path} which the run had not read")]
            return ()
        if step.ok is False or tool not in self.grounding_tools:
            return ()
        path = self._path(step)
        if path is not None:
            self.files.add(path)  # a searched folder grounds only the files the search listed (below)
        if tool in ("Grep", "Glob") and step.observation:
            # the files a search listed were seen (one path per line; content mode adds ":line:text")
            self.files.update(normalize_path(listed, step.cwd) for listed in listed_paths(step.observation))
        return ()


def listed_paths(output: str) -> Iterator[str]:
    """The paths at the starts of a search output's lines (the first ``LISTED_PATHS_READ`` in its first
    ``LISTED_SCAN_CHARS`` characters)."""
    listing = output[:LISTED_SCAN_CHARS]
    if "/" not in listing and ":" not in listing:
        return  # every listed path has one (/, ./, ../, C:): an output without either lists none
    read = 0
    for line in listing.splitlines():
        line = line.lstrip(" \t")
        # a cheap first-character test before the regex: most output lines are not paths
        if line[:1] in _PATH_STARTS or line[1:2] == ":":
            listed = _LISTED_PATH.match(line)
            if listed is not None:
                yield listed.group(1).rstrip()
                read += 1
                if read == LISTED_PATHS_READ:
                    return


BUILTIN_RULES: tuple[TraceRule, ...] = (ForbiddenToolRule(), OutOfOrder(), RetryStorm(), ExcessiveSteps(),
                                        EditedWithoutRead())

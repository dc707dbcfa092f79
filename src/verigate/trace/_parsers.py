"""Trace sources -> one model: traces.json, audit JSONL, Claude Code transcripts, Codex rollouts.

Every parser yields a stream of ``RunStart`` / ``RunStep`` / ``RunEnd`` events, so a multi-GB transcript is
graded without holding its steps; :func:`load_runs` collects them into :class:`Run` objects for small inputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import attrs

from .. import _data
from .. import _json as strict_json
from .._errors import InputError
from .._transcript_lines import bounded_lines, open_log_stream
from ..transcripts import CallPairer, ToolCall, ToolResult, ToolUse, Transcript, read_claude_code, read_codex
from ..transcripts import CompactBoundary as _Compact
from ..transcripts import subagent_files as _subagent_files
from ._model import Run, Step

__all__ = [
    "FORMATS",
    "Format",
    "RunEnd",
    "RunEvent",
    "RunStart",
    "RunStep",
    "detect_format",
    "load_runs",
    "parse",
    "parse_audit",
    "parse_claude_code",
    "parse_codex",
    "parse_traces",
]

Format = Literal["traces", "audit", "claude-code", "codex"]
FORMATS: tuple[Format, ...] = ("traces", "audit", "claude-code", "codex")
TRACES_SCHEMA = "traces.schema.json"
#: the audit-line fields kept as step arguments (seed 004)
AUDIT_ARGS = ("file_path", "path", "command", "url")
TRANSCRIPT_NOTE = "a transcript has no task verdict: delivered is forced true — trust the flags, not the verdict"
AUDIT_NOTE = ("partial: an audit log has no per-step ok/observation — retry_storm is not checked and the run has "
              "no delivery signal, so it is left out of pass^k")
Progress = Callable[[int], None]
Sidechains = Literal["apart", "main", "skip"]


@attrs.frozen(slots=True)
class RunStart:
    """A run begins; ``run`` is its header (``steps`` empty)."""

    key: str
    run: Run


@attrs.frozen(slots=True)
class RunStep:
    key: str
    step: Step


@attrs.frozen(slots=True)
class RunEnd:
    key: str
    delivered: bool | None
    warnings: int = 0
    notes: tuple[str, ...] = ()


RunEvent = RunStart | RunStep | RunEnd


def _unreadable(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot read trace input: {exc.strerror or exc}", source=str(path))


# ------------------------------------------------------------------------------------------------ traces.json


def _step(raw: dict[str, Any], index: int) -> Step:
    observation = raw.get("observation")
    if observation is not None and not isinstance(observation, str):
        observation = json.dumps(observation, ensure_ascii=False)
    return Step(step=raw.get("step", index + 1), tool=raw["tool"], args=raw.get("args") or {},
                observation=observation, ok=raw.get("ok"))


def parse_traces(path: str | Path, *, task: str | None = None) -> Iterator[RunEvent]:
    """Canonical traces.json: ``{"tasks": [...]}``, ``{"runs": [...]}`` or a list of runs (one JSON document).

    A ``tasks`` item may also group runs: ``{"task": T, "runs": [...]}``. A run without ``ok`` is delivered iff
    it has steps and every step says ``ok: true`` (a step without ``ok`` is unknown, which is not ok); a run's own
    ``ok`` decides.
    A document that lists no run is an :class:`InputError`.
    """
    path = Path(path)
    try:
        with open_log_stream(str(path)) as stream:  # read one byte past the reader's bound: never held whole
            document = stream.read(4 * strict_json.DEFAULT_MAX_CHARS + 1)
        if len(document) > 4 * strict_json.DEFAULT_MAX_CHARS:
            raise InputError(f"a traces document of more than {4 * strict_json.DEFAULT_MAX_CHARS:,} bytes is refused "
                             f"(the JSON reader takes at most {strict_json.DEFAULT_MAX_CHARS:,} characters)",
                             source=str(path))
        data = strict_json.loads(document, source=str(path))
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    _data.validate(TRACES_SCHEMA, data, source=str(path))
    items = data if isinstance(data, list) else data.get("runs", data.get("tasks", []))
    runs: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if "runs" in item:
            runs.extend((item["task"], run) for run in item["runs"])
        else:
            runs.append((item["task"], item))
    if not runs:
        raise InputError("no run: the document lists no runs", source=str(path))
    for index, (run_task, raw) in enumerate(runs):
        steps = [_step(step, number) for number, step in enumerate(raw.get("steps", []))]
        run_id = str(raw.get("run_id", f"{run_task}#{index + 1}"))
        key = f"{index}:{run_id}"
        # SPEC §4: without its own ok a run is delivered iff every step is ok; a step without ok is unknown, and
        # unknown is not ok (a run cannot be counted as delivered on steps nobody saw succeed), and a run with
        # no step delivered nothing (as the seed's grader says)
        delivered = raw["ok"] if "ok" in raw else bool(steps) and all(step.ok is True for step in steps)
        yield RunStart(key, Run(task or run_task, run_id, delivered, (), str(path)))
        for step in steps:
            yield RunStep(key, step)
        yield RunEnd(key, delivered)


# ------------------------------------------------------------------------------------------------------ audit


def parse_audit(path: str | Path, *, task: str | None = None, progress: Progress | None = None
                ) -> Iterator[RunEvent]:
    """Hook audit JSONL (``{ts, event, session_id, tool_name, file_path, command, …}`` or ``{ts, event, path,
    tool}``): one partial run per session_id, steps in file order; lines without a tool are skipped."""
    path = Path(path)
    runs: dict[str, int] = {}
    warnings = 0
    truncated = False
    try:
        stream = open_log_stream(str(path))
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    with stream:
        read = 0
        for number, raw in enumerate(bounded_lines(stream, str(path)), 1):  # a line is never held past the bound
            read += len(raw)
            if progress is not None and number % 2048 == 0:
                progress(read)
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                if not raw.endswith(b"\n"):
                    truncated = True
                elif raw.strip():
                    warnings += 1
                continue
            if not isinstance(record, dict):
                warnings += 1
                continue
            tool = record.get("tool_name", record.get("tool"))
            if not isinstance(tool, str) or not tool:
                continue
            session = record.get("session_id")
            session = session if isinstance(session, str) and session else "audit"
            if session not in runs:
                runs[session] = 0
                yield RunStart(session, Run(task or session, session, None, (), str(path), partial=True))
            runs[session] += 1
            cwd = record.get("cwd")
            yield RunStep(session, Step(runs[session], tool,
                                        {key: record[key] for key in AUDIT_ARGS if isinstance(record.get(key), str)},
                                        None, None, number, cwd if isinstance(cwd, str) else None))
        if progress is not None:
            progress(read)
    if not runs:
        raise InputError("no run: no line is an audit record with a tool name (is this file in another format, "
                         "empty or broken?)", source=str(path))
    notes = (AUDIT_NOTE,) + (("the last line is truncated (still being written)",) if truncated else ())
    for session in runs:
        yield RunEnd(session, None, warnings, notes)


# ------------------------------------------------------------------------------------------------ transcripts


def _call_step(number: int, call: ToolCall) -> Step:
    use, result = call.use, call.result
    if result is None:
        return Step(number, use.name, use.input, None, None, use.line, use.cwd)
    failed = result.failed
    return Step(number, use.name, use.input, result.text, not failed, use.line, use.cwd,
                failed and result.sibling_cascade)


class _TranscriptRuns:
    """Turns one transcript's events into runs: the main chain, and sidechain calls either each agent's run
    apart ("apart"), part of the main run ("main": a sub-agent file is that agent's run) or skipped ("skip")."""

    def __init__(self, transcript: Transcript, main: Run, *, sidechains: Sidechains, host: str) -> None:
        self.transcript = transcript
        self.host = host
        self.main = main
        self.sidechains = sidechains
        self.skipped = 0
        self.pairers: dict[str, CallPairer] = {}
        self.counts: dict[str, int] = {}
        self.compactions = 0

    def _sidechain_key(self, agent_id: str | None) -> str:
        return f"{self.main.run_id}:sidechain-{agent_id or 'inline'}"

    def _steps(self, key: str, calls: list[ToolCall]) -> list[RunStep]:
        first = self.counts[key] + 1
        self.counts[key] += len(calls)
        return [RunStep(key, _call_step(number, call)) for number, call in enumerate(calls, first)]

    def _open(self, key: str) -> Iterator[RunStart]:
        if key not in self.pairers:
            self.pairers[key] = CallPairer()
            self.counts[key] = 0
            run = self.main if key == self.main.run_id else attrs.evolve(self.main, run_id=key,
                                                                        parent=self.main.run_id)
            yield RunStart(key, run)

    def events(self) -> Iterator[RunEvent]:
        yield from self._open(self.main.run_id)
        pairers = self.pairers
        main_key = self.main.run_id
        apart = self.sidechains == "apart"
        skip = self.sidechains == "skip"
        try:
            for event in self.transcript:  # the hot loop: a type test per event, nothing built without output
                if type(event) is ToolUse:
                    if skip and event.sidechain:
                        self.skipped += 1
                        continue
                    key = self._sidechain_key(event.agent_id) if apart and event.sidechain else main_key
                    pairer = pairers.get(key)
                    if pairer is None:
                        yield from self._open(key)
                        pairer = pairers[key]
                    released = pairer.add_use(event)
                elif type(event) is ToolResult:
                    if skip and event.sidechain:
                        continue
                    key = self._sidechain_key(event.agent_id) if apart and event.sidechain else main_key
                    pairer = pairers.get(key)
                    released = pairer.add_result(event) if pairer is not None else []
                else:
                    if type(event) is _Compact:
                        self.compactions += 1
                    continue
                if released:
                    yield from self._steps(key, released)
        except OSError as exc:
            raise _unreadable(self.transcript.path, exc) from exc
        transcript = self.transcript
        if transcript.lines - transcript.warnings - transcript.truncated_tail <= 0:
            # a wrong format flag, an empty, binary or broken file: grading it would be a fail-open "clean-pass"
            samples = f" (e.g. {'; '.join(transcript.warning_samples[:2])})" if transcript.warning_samples else ""
            raise InputError(f"no line was recognised as a {self.host} transcript{samples}: is this file in "
                             "another format, empty or broken?", source=str(transcript.path))
        notes = [TRANSCRIPT_NOTE]
        if self.skipped:
            notes.append(f"{self.skipped} sub-agent tool call(s) skipped (subagents: false, as the seed does)")
        if self.compactions:
            notes.append(f"{self.compactions} compaction(s): the run continues across them")
        if self.transcript.truncated_tail:
            notes.append("the last line is truncated (the session was still being written)")
        if self.transcript.warnings:
            samples = "; ".join(self.transcript.warning_samples[:3])
            notes.append(f"{self.transcript.warnings} line(s) skipped (malformed or unknown), e.g. {samples}")
        for key, pairer in self.pairers.items():
            yield from self._steps(key, pairer.flush())
            orphans = pairer.orphan_results
            extra = (f"{orphans} tool result(s) without a matching call",) if orphans else ()
            main = key == self.main.run_id
            yield RunEnd(key, True, self.transcript.warnings if main else 0,
                         (*notes, *extra) if main else (TRANSCRIPT_NOTE, *extra))


def parse_claude_code(path: str | Path, *, task: str | None = None, progress: Progress | None = None,
                      subagents: bool = True) -> Iterator[RunEvent]:
    """A Claude Code session: the main run (delivered forced true), plus one run per sidechain agent and per
    sub-agent file (``<session>/subagents/agent-*.jsonl``), each attached to the session as its parent
    (``subagents`` False: sidechain calls are skipped and sub-agent files not read, as the seed does)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such transcript file", source=str(path))
    session = path.stem
    main = Run(task or session, session, True, (), str(path), delivered_forced=True)
    yield from _TranscriptRuns(read_claude_code(path, progress=progress, pipes=False), main,
                               sidechains="apart" if subagents else "skip", host="Claude Code").events()
    if subagents:
        for sub in _subagent_files(path):
            run = Run(task or session, f"{session}:{sub.stem}", True, (), str(sub), delivered_forced=True,
                      parent=session)
            yield from _TranscriptRuns(read_claude_code(sub, pipes=False), run, sidechains="main",
                                       host="Claude Code").events()


def parse_codex(path: str | Path, *, task: str | None = None, progress: Progress | None = None
                ) -> Iterator[RunEvent]:
    """A Codex CLI rollout: one run (delivered forced true: a rollout has no task verdict either)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such rollout file", source=str(path))
    main = Run(task or path.stem, path.stem, True, (), str(path), delivered_forced=True)
    yield from _TranscriptRuns(read_codex(path, progress=progress, pipes=False), main, sidechains="main",
                               host="Codex").events()


# ------------------------------------------------------------------------------------------------- dispatch


def detect_format(path: str | Path) -> Format:
    """Guess the format from the first JSON line: a document -> traces, Claude Code / Codex lines, else audit."""
    path = Path(path)
    try:
        with open_log_stream(str(path)) as stream:
            head = stream.read(1)
            stream.seek(0)
            if head in (b"[",) or (head == b"{" and path.suffix == ".json"):
                return "traces"
            for raw in bounded_lines(stream, str(path)):
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict):
                    if "payload" in record and record.get("type") in ("session_meta", "response_item",
                                                                       "event_msg", "turn_context"):
                        return "codex"
                    if "sessionId" in record or ("uuid" in record and "message" in record) or \
                            record.get("type") in ("summary", "file-history-snapshot"):
                        return "claude-code"
                    if "tool_name" in record or "tool" in record or "session_id" in record:
                        return "audit"
                    if record.get("type") in ("runs", "tasks") or "runs" in record or "tasks" in record:
                        return "traces"
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    raise InputError("cannot tell the trace format; name it (traces, audit, claude-code, codex)", source=str(path))


def parse(path: str | Path, format: Format | None = None, *, task: str | None = None,
          progress: Progress | None = None, subagents: bool = True) -> Iterator[RunEvent]:
    """The run events of ``path`` in ``format`` (detected when None); ``subagents`` False skips a Claude Code
    session's sub-agents (sidechain lines and sub-agent files), as the seed's grader does."""
    chosen = format or detect_format(path)
    if chosen == "traces":
        return parse_traces(path, task=task)
    if chosen == "audit":
        return parse_audit(path, task=task, progress=progress)
    if chosen == "claude-code":
        return parse_claude_code(path, task=task, progress=progress, subagents=subagents)
    if chosen == "codex":
        return parse_codex(path, task=task, progress=progress)
    raise InputError(f"unknown trace format {chosen!r} (one of {', '.join(FORMATS)})", source=str(path))


def load_runs(path: str | Path, format: Format | None = None, *, task: str | None = None) -> list[Run]:
    """Every run of ``path`` with all its steps (for small inputs; grading streams instead)."""
    headers: dict[str, Run] = {}
    steps: dict[str, list[Step]] = {}
    runs: list[Run] = []
    for event in parse(path, format, task=task):
        if isinstance(event, RunStart):
            headers[event.key] = event.run
            steps[event.key] = []
        elif isinstance(event, RunStep):
            steps[event.key].append(event.step)
        elif event.key in headers:
            header = headers.pop(event.key)
            kept = tuple(steps.pop(event.key))
            runs.append(attrs.evolve(header, delivered=event.delivered, steps=kept, step_count=len(kept),
                                     warnings=event.warnings, notes=event.notes))
    return runs

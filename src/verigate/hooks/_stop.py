"""The Stop gate for Claude Code and Codex: an agent's final answer goes through ``Gate.finalize`` before it stops.

This module keeps the flow of one invocation (``_Run``); its parts live beside it:

* ``_stop_input``    — the hook input, strictly for the run and leniently for the error path;
* ``_stop_deadline`` — the time budget and the bounded waits;
* ``_stop_request``  — the candidate: the latest turn and the person's request it answers;
* ``_stop_project``  — the project's gate and the ``StageContext`` its plug-ins receive;
* ``_stop_answers``  — what the host is told (block, stop, pending review);
* ``_stop_errors``   — the error counter that keeps a failure from looping;
* ``_stop_state``    — the per-session counters on disk.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ._protocol import HookAnswer, Host, hook_started, run_hook
from ._stop_answers import FEEDBACK_MARKER, MAX_REASON_CHARS, answer, block, out_of_time, pending
from ._stop_deadline import finalize_until, hook_deadlines, result_wait_until
from ._stop_errors import count_error, review_after_error
from ._stop_input import Event, StopInput, error_context, parse_stop_input
from ._stop_project import open_gate, stage_context
from ._stop_request import candidate as build_candidate
from ._stop_request import current_request, latest_turn
from ._stop_state import StopState, load_state, save_state

if TYPE_CHECKING:
    from .._models import Candidate, FinalizeResult, StageContext
    from ..gate import Gate

__all__ = [
    "FEEDBACK_MARKER",
    "MAX_REASON_CHARS",
    "StopInput",
    "claude_stop",
    "claude_subagent_stop",
    "codex_stop",
    "hook_deadlines",
    "parse_stop_input",
]

@attrs.define
class _Run:
    """What one invocation has learned so far; the error path uses it to count failures per session."""

    host: Host
    event: Event
    #: time.monotonic() when the hook started: the time budget counts from here
    #: (from the watchdog's arming, when ``verigate hook`` armed one: both count from the same moment)
    started: float = attrs.field(factory=lambda: hook_started() or time.monotonic())
    raw: dict[str, Any] | None = None
    stop: StopInput | None = None
    #: a gate the caller supplies (an in-process runtime, ``hooks.inprocess``; it closes it); None: the project's
    given: Gate | None = None
    #: the gate's result, when the answer came from it (not from the loop guard, the time budget or an error)
    result: FinalizeResult | None = None

    @contextlib.contextmanager
    def _gate(self, project_dir: Path, context: StageContext) -> Iterator[Gate]:
        if self.given is not None:
            yield self.given
            return
        with open_gate(project_dir, context) as gate:
            yield gate

    def handle(self, data: dict[str, Any]) -> HookAnswer:
        import asyncio

        self.raw = data
        stop = self.stop = parse_stop_input(data, self.host, self.event)
        deadline, give_up = hook_deadlines(self.started)
        state = load_state(stop.project_dir, stop.session_key)
        turn = latest_turn(stop, result_wait_until(self.started, deadline))
        # plug-ins learn the project from the context argument, never from the process environment: the
        # project's gate is opened with it, a given gate learns it per finalize
        context = stage_context(stop)
        with self._gate(stop.project_dir, context) as gate:
            request, state = current_request(stop, turn, gate, state)
            candidate = build_candidate(stop, turn, request)
            result = self.result = asyncio.run(finalize_until(gate, candidate, deadline, give_up,
                                                              context if self.given is not None else None))
            if result is None:
                reply = out_of_time(gate, candidate)
                state = attrs.evolve(state, blocks_in_row=0, errors_in_row=0)
            elif result.outcome == "revise" and state.blocks_in_row >= gate.config.budget.revise:
                self.result = None
                reply = self._loop_guard(gate, candidate, state)
                state = attrs.evolve(state, blocks_in_row=0, errors_in_row=0)
            else:
                reply = answer(result)
                blocks = state.blocks_in_row + 1 if result.outcome == "revise" else 0
                state = attrs.evolve(state, blocks_in_row=blocks, errors_in_row=0)
        save_state(stop.project_dir, stop.session_key, state)
        return reply

    def _loop_guard(self, gate: Gate, candidate: Candidate, state: StopState) -> HookAnswer:
        """More blocks in a row than the revise budget allows (the gate's counter was reset under us):
        hand the answer to a person instead of blocking again."""
        reason = f"stop hook loop guard: {state.blocks_in_row} blocks in a row for one request"
        review_id = gate.file_review(candidate, policy_action="escalate_budget_exhausted", reason=reason)
        return pending(review_id, reason)

    def on_error(self, reason: str) -> HookAnswer:
        """Fail closed without looping: the first error in a row blocks (the next Stop retries); a repeated one
        files a pending review, or — when no store is reachable — lets the agent stop with the answer marked
        unverified. The count stays until a Stop gets through, so a persistent error blocks once, never again."""
        try:
            context = error_context(self.stop, self.raw, self.host, self.event, os.environ)
            repeated, reason = count_error(context, reason)
            if not repeated:
                return block(f"verigate could not verify this answer ({reason}). Stop again to retry; if it fails "
                             "again, the answer goes to a person for review.")
            return pending(review_after_error(context, reason), reason)
        except Exception as exc:  # the error path itself failed: hand over rather than risk a loop
            return pending(None, f"{reason}; then {type(exc).__name__}: {exc}")


def _main(host: Host, event: Event) -> int:
    run = _Run(host, event)
    return run_hook(run.handle, run.on_error, host=host)


def claude_stop() -> int:
    """``verigate hook claude-code stop``."""
    return _main("claude-code", "stop")


def claude_subagent_stop() -> int:
    """``verigate hook claude-code subagent-stop``."""
    return _main("claude-code", "subagent-stop")


def codex_stop() -> int:
    """``verigate hook codex stop``."""
    return _main("codex", "stop")

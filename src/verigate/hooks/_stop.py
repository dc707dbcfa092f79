"""The Stop gate for Claude Code and Codex: an agent's final answer goes through ``Gate.finalize`` before it stops."""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from .._errors import ConfigError, InputError
from ._protocol import DEADLINE_ENV, STOP_BUDGET_DEFAULT_S, HookAnswer, Host, hook_started, run_hook
from ._stop_state import StopState, load_state, save_state

if TYPE_CHECKING:
    from .._models import Candidate, FinalizeResult
    from ..gate import Gate
    from ..transcripts import Turn

__all__ = [
    "FEEDBACK_MARKER",
    "PROJECT_DIR_ENV",
    "StopInput",
    "claude_stop",
    "claude_subagent_stop",
    "codex_stop",
    "hook_deadlines",
    "parse_stop_input",
]

Event = Literal["stop", "subagent-stop"]
#: the first words of every block reason: the host feeds the reason back as the next prompt, and a prompt
#: that carries them is verigate's own feedback, never the person's new request
FEEDBACK_MARKER = "[verigate stop gate]"
#: set for plug-ins (e.g. verigate-git) to the project directory this hook resolved
PROJECT_DIR_ENV = "VERIGATE_PROJECT_DIR"
#: the block reason is an instruction to the agent; the judge's full reflection stays in the store
MAX_REASON_CHARS = 1500
#: kept back from the budget for filing a review and writing the answer (at most a tenth of the budget)
ANSWER_MARGIN_S = 10.0
#: how long the hook waits for tool results the host has not written yet (Claude Code writes its transcript
#: asynchronously: at Stop the last tool_result line may land tens of ms after the hook started); at most a tenth
#: of the budget, and the re-reads poll at this interval
RESULT_WAIT_S = 1.0
RESULT_POLL_S = 0.05


@attrs.frozen
class StopInput:
    """The fields of a Stop / SubagentStop hook input that the gate uses."""

    host: Host
    event: Event
    session_id: str
    #: the gate's session: the host session, or ``<session>/agent/<agent_id>`` for a sub-agent
    session_key: str
    project_dir: Path
    transcript_path: Path | None
    last_assistant_message: str
    stop_hook_active: bool
    turn_id: str = ""


def _text_field(data: Mapping[str, Any], name: str, *, required: bool = False) -> str:
    value = data.get(name)
    if value is None:
        if required:
            raise InputError(f"the hook input has no {name}", source="<stdin>", field=name)
        return ""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, not {type(value).__name__}", source="<stdin>", field=name)
    return value


def parse_stop_input(data: Mapping[str, Any], host: Host, event: Event,
                     environ: Mapping[str, str] | None = None) -> StopInput:
    """Check the stdin JSON of a Stop hook; the project is ``CLAUDE_PROJECT_DIR`` when set, else ``cwd``."""
    environ = os.environ if environ is None else environ
    session_id = _text_field(data, "session_id", required=True)
    if not session_id:
        raise InputError("session_id is empty", source="<stdin>", field="session_id")
    project = (environ.get("CLAUDE_PROJECT_DIR") if host == "claude-code" else None) or _text_field(data, "cwd")
    if not project:
        raise InputError("no project directory: neither CLAUDE_PROJECT_DIR nor cwd is set", source="<stdin>",
                         field="cwd")
    project_dir = Path(project)
    if not project_dir.is_dir():
        raise InputError(f"the project directory {project} does not exist", source="<stdin>", field="cwd")
    session_key, transcript = session_id, _text_field(data, "transcript_path")
    if event == "subagent-stop":
        agent_id = _text_field(data, "agent_id", required=True)
        session_key = f"{session_id}/agent/{agent_id}"
        transcript = _text_field(data, "agent_transcript_path") or transcript
    return StopInput(
        host=host,
        event=event,
        session_id=session_id,
        session_key=session_key,
        project_dir=project_dir,
        transcript_path=Path(transcript) if transcript else None,
        last_assistant_message=_text_field(data, "last_assistant_message"),
        stop_hook_active=_stop_hook_active(data) is True,
        turn_id=_text_field(data, "turn_id"),
    )


def _stop_hook_active(data: Mapping[str, Any]) -> bool | None:
    """The host's one-bit loop hint, read leniently (None when the input does not carry it): it only ever makes
    the hook hand over sooner, so a value of an unknown shape counts as set instead of failing the input."""
    if "stop_hook_active" not in data:
        return None
    return data["stop_hook_active"] not in (None, False, 0, "", "false", "False", "0")


def hook_deadlines(started: float, environ: Mapping[str, str] | None = None) -> tuple[float, float]:
    """(the deadline given to ``Gate.finalize``, the moment the hook stops waiting for it), as absolute
    :func:`time.monotonic` values: ``started`` plus ``VERIGATE_HOOK_DEADLINE_S`` (default 150 s) minus a margin
    kept for answering — the whole margin for the judge, half of it for the rest of finalize."""
    environ = os.environ if environ is None else environ
    text = environ.get(DEADLINE_ENV, "").strip()
    budget = STOP_BUDGET_DEFAULT_S
    if text:
        try:
            budget = float(text)
        except ValueError:
            budget = math.nan
        if not math.isfinite(budget) or budget <= 0:
            raise ConfigError(f"{DEADLINE_ENV} must be a positive number of seconds, not {text!r}",
                              source="environment", field=DEADLINE_ENV)
    margin = min(ANSWER_MARGIN_S, budget / 10)
    return started + budget - margin, started + budget - margin / 2


# ------------------------------------------------------------------------------------------- answers


def _block(reason: str) -> HookAnswer:
    """Keep the agent going: ``reason`` is what it reads as its next instruction."""
    text = f"{FEEDBACK_MARKER} {reason.strip()}"
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 1] + "…"
    return 0, {"decision": "block", "reason": text}, ""


def _allow_with_message(stop_reason: str, message: str) -> HookAnswer:
    """Let the agent stop and tell the person: ``stopReason`` (shown because ``continue`` is false) says what,
    ``systemMessage`` says why and what to do."""
    return 0, {"continue": False, "stopReason": stop_reason, "systemMessage": message}, ""


def _pending(review_id: str | None, why: str) -> HookAnswer:
    from ..gate import PENDING_STATUS  # the gate's own status (loaded on first use: the gate is heavy to import)

    if review_id:
        headline = f"{PENDING_STATUS}: review {review_id}"
        where = f"`verigate review show {review_id}`, then approve or reject it"
    else:
        headline = f"{PENDING_STATUS}: the review could not be stored"
        where = "the review could not be stored; the answer stays in the transcript"
    return _allow_with_message(headline, f"{headline}. The agent's last answer is NOT verified: verigate could not "
                               f"verify it ({why}). Do not rely on it until a person has checked it: {where}.")


def _answer(result: FinalizeResult) -> HookAnswer:
    if result.outcome == "revise":
        return _block(result.follow_up or "verification did not pass; revise the answer")
    if result.outcome == "completed":
        return 0, None, ""
    if result.outcome == "pending_review":
        why = result.policy_action.replace("_", " ")
        if result.verdict is not None and result.verdict.error:
            why = f"{why}: {result.verdict.error}"
        return _pending(result.pending_id, why)
    message = f"verigate: the agent's last answer was not verified ({result.status})."
    return _allow_with_message(message, message)


# ------------------------------------------------------------------------------------------- the candidate


def _turn(stop: StopInput, wait_until: float) -> Turn:
    """The latest turn of the (sub-agent's) transcript, re-read until every tool call of it has its result or
    ``wait_until`` (a ``time.monotonic()`` value) passes; a result still missing then is marked as missing in the
    candidate (``MISSING_RESULT``), never judged as an empty output."""
    from ..transcripts import last_turn

    if stop.transcript_path is None:
        raise InputError("the hook input has no transcript_path: the request cannot be read", source="<stdin>",
                         field="transcript_path")
    while True:
        turn = last_turn(stop.transcript_path, host=stop.host, subagent=stop.event == "subagent-stop")
        # written so that a NaN deadline ends the wait as well (a comparison with NaN is False)
        if not turn.missing_results or not time.monotonic() + RESULT_POLL_S <= wait_until:
            return turn
        time.sleep(RESULT_POLL_S)


def _person_request(stop: StopInput) -> str:
    """The person's latest request when the latest prompt is verigate's own feedback (the host feeds a block reason
    back as a prompt): the last request prompt before it that is not feedback, from the lines ``last_turn`` reads.
    "" when the transcript holds none."""
    from ..transcripts import UserPrompt, read

    assert stop.transcript_path is not None  # _turn has read it already
    subagent = stop.event == "subagent-stop"
    request = ""
    try:
        for event in read(stop.transcript_path, host=stop.host):
            if (isinstance(event, UserPrompt) and event.sidechain is subagent and event.origin in ("typed", "command")
                    and FEEDBACK_MARKER not in event.text):
                request = event.text
    except OSError as exc:
        raise InputError(f"cannot read transcript: {exc}", source=str(stop.transcript_path)) from exc
    return request


def _stored_request(gate: Gate, session_key: str) -> str:
    """The request verigate's own feedback answers, as the store holds it (redacted)."""
    stored = gate.store.attempts(session_key)
    if stored and isinstance(stored[0].get("request"), str):
        return str(stored[0]["request"])
    raise InputError("the latest prompt is verigate's own feedback and the request it answers is not stored",
                     source="<transcript>")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _candidate(stop: StopInput, turn: Turn, request: str) -> Candidate:
    from .._models import Candidate

    return Candidate(
        request=request,
        # the host's own copy of the final message wins: the transcript may not have it written yet
        final_text=stop.last_assistant_message or turn.final_text,
        tool_calls=turn.tool_calls,
        session_id=stop.session_key,
        turn_id=stop.turn_id,
    )


def _is_project(folder: Path) -> bool:
    return (folder / "verigate.yaml").is_file() or (folder / ".verigate").is_dir()


def _open_gate(project_dir: Path) -> Gate:
    """The project's gate: its verigate.yaml (absent: the embedded defaults, with no judge, so every answer
    fails closed into review) and its store, a relative store url being relative to the project."""
    from .._config import load_config
    from ..gate import Gate

    path = project_dir / "verigate.yaml"
    config = load_config(path if path.is_file() else {})  # parsed once: the store url needs it first
    return Gate.from_config(config, store=_project_store_url(config.store.url, project_dir))


def _project_store_url(url: str, project_dir: Path) -> str:
    """A relative store path (plain or ``sqlite:///relative``) is relative to the project, not to the cwd."""
    prefix = "sqlite:///" if url.startswith("sqlite:///") else ""
    path = url[len(prefix):]
    if path in ("", ":memory:") or "://" in path or Path(path).is_absolute():
        return url
    return prefix + str(project_dir / path)


# ------------------------------------------------------------------------------------------- the hook


@attrs.frozen
class _ErrorContext:
    """What the error path could still learn from the input: where to count and file a review, and the flag."""

    #: the folder holding the counter file and the store (None: neither is reachable)
    project_dir: Path | None
    session_key: str
    #: the host's flag; None when the input does not carry one
    stop_hook_active: bool | None
    last_assistant_message: str = ""
    turn_id: str = ""


def _error_context(stop: StopInput | None, raw: Mapping[str, Any] | None, host: Host, event: Event,
                   environ: Mapping[str, str]) -> _ErrorContext:
    """The parsed input when there is one; else whatever the raw input still says, read leniently. A folder the
    input names only counts as the project when it already is a verigate project (verigate.yaml or .verigate/):
    the error path never creates a store in a folder nobody chose."""
    raw = raw or {}
    active = _stop_hook_active(raw)
    if stop is not None:
        return _ErrorContext(stop.project_dir, stop.session_key, active, stop.last_assistant_message, stop.turn_id)

    def text(name: str) -> str:
        value = raw.get(name)
        return value if isinstance(value, str) else ""

    folders = [environ.get("CLAUDE_PROJECT_DIR", "") if host == "claude-code" else "", text("cwd")]
    project_dir = next((Path(folder) for folder in folders if folder and _is_project(Path(folder))), None)
    # an input without a readable session still gets a counter: shared by every such input of the project, it
    # only makes the hook hand over sooner
    session_key = text("session_id") or "<unreadable hook input>"
    if event == "subagent-stop":
        session_key = f"{session_key}/agent/{text('agent_id') or '<no agent_id>'}"
    return _ErrorContext(project_dir, session_key, active, text("last_assistant_message"), text("turn_id"))


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

    def handle(self, data: dict[str, Any]) -> HookAnswer:
        import asyncio

        self.raw = data
        stop = self.stop = parse_stop_input(data, self.host, self.event)
        deadline, give_up = hook_deadlines(self.started)
        os.environ[PROJECT_DIR_ENV] = str(stop.project_dir)
        state = load_state(stop.project_dir, stop.session_key)
        turn = _turn(stop, min(self.started + RESULT_WAIT_S, self.started + (deadline - self.started) / 10))
        with _open_gate(stop.project_dir) as gate:
            request, state = _current_request(stop, turn, gate, state)
            candidate = _candidate(stop, turn, request)
            result = asyncio.run(_finalize_until(gate, candidate, deadline, give_up))
            if result is None:
                answer = _out_of_time(gate, candidate)
                state = attrs.evolve(state, blocks_in_row=0, errors_in_row=0)
            elif result.outcome == "revise" and state.blocks_in_row >= gate.config.budget.revise:
                answer = self._loop_guard(gate, candidate, state)
                state = attrs.evolve(state, blocks_in_row=0, errors_in_row=0)
            else:
                answer = _answer(result)
                blocks = state.blocks_in_row + 1 if result.outcome == "revise" else 0
                state = attrs.evolve(state, blocks_in_row=blocks, errors_in_row=0)
        save_state(stop.project_dir, stop.session_key, state)
        return answer

    def _loop_guard(self, gate: Gate, candidate: Candidate, state: StopState) -> HookAnswer:
        """More blocks in a row than the revise budget allows (the gate's counter was reset under us):
        hand the answer to a person instead of blocking again."""
        reason = f"stop hook loop guard: {state.blocks_in_row} blocks in a row for one request"
        review_id = gate.file_review(candidate, policy_action="escalate_budget_exhausted", reason=reason)
        return _pending(review_id, reason)

    def on_error(self, reason: str) -> HookAnswer:
        """Fail closed without looping: the first error in a row blocks (the next Stop retries); a repeated one
        files a pending review, or — when no store is reachable — lets the agent stop with the answer marked
        unverified. The count stays until a Stop gets through, so a persistent error blocks once, never again."""
        try:
            context = _error_context(self.stop, self.raw, self.host, self.event, os.environ)
            repeated, reason = _count_error(context, reason)
            if not repeated:
                return _block(f"verigate could not verify this answer ({reason}). Stop again to retry; if it fails "
                              "again, the answer goes to a person for review.")
            return _pending(_review_after_error(context, reason), reason)
        except Exception as exc:  # the error path itself failed: hand over rather than risk a loop
            return _pending(None, f"{reason}; then {type(exc).__name__}: {exc}")


def _count_error(context: _ErrorContext, reason: str) -> tuple[bool, str]:
    """(is this error a repeat, the reason to show). Counted in the session's state file; without one, the host's
    ``stop_hook_active`` says whether this Stop already follows a block — and when the input does not carry it
    either, nothing tells a first error from the hundredth, so it counts as a repeat (a block could loop)."""
    if context.project_dir is None:
        return _repeated_by_flag(context, f"{reason}; no project to keep an error counter in")
    try:
        state = load_state(context.project_dir, context.session_key)
        save_state(context.project_dir, context.session_key,
                   attrs.evolve(state, errors_in_row=state.errors_in_row + 1))
    except Exception as exc:  # no counter: the host's one-bit flag is the last loop guard left
        return _repeated_by_flag(context, f"{reason}; the error counter is unusable too ({type(exc).__name__}: "
                                          f"{exc})")
    return state.errors_in_row > 0, reason


def _repeated_by_flag(context: _ErrorContext, reason: str) -> tuple[bool, str]:
    if context.stop_hook_active is None:
        return True, f"{reason}; the input has no stop_hook_active either"
    return context.stop_hook_active, reason


async def _finalize_until(gate: Gate, candidate: Candidate, deadline: float, give_up: float) -> FinalizeResult | None:
    """``Gate.finalize`` with the hook's deadline (it bounds the judge); None when the rest of finalize (hook
    stages, store) runs past ``give_up`` too — the answer must reach the host before its own timeout."""
    import asyncio

    from .._models import Termination, TerminationReason

    finalize = gate.finalize(candidate, Termination(TerminationReason.NATURAL), deadline=deadline)
    try:
        return await asyncio.wait_for(finalize, timeout=max(0.0, give_up - time.monotonic()))
    except TimeoutError:
        return None


def _current_request(stop: StopInput, turn: Turn, gate: Gate, state: StopState) -> tuple[str, StopState]:
    """The person's request the answer is for, and the counters that belong to it: named by the sha256 of the raw
    request (the store holds it redacted, so a stored copy never matches), and reset with the gate's attempts when
    a new request begins while a revise of the previous one is outstanding."""
    request = turn.request
    if FEEDBACK_MARKER in request:
        request = _person_request(stop)
        if not request:  # the transcript lost it: the stored (redacted) copy, counters unchanged
            return _stored_request(gate, stop.session_key), state
    request_sha = _sha256(request)
    if request_sha != state.request_sha256:
        state = StopState(request_sha256=request_sha)
        session = gate.store.get_session(stop.session_key)
        if session is not None and session.follow_up:
            gate.store.reset_request(stop.session_key)
    return request, state


def _out_of_time(gate: Gate, candidate: Candidate) -> HookAnswer:
    reason = "verification_time_budget_exhausted: the gate did not finish within the hook's time budget"
    try:
        review_id: str | None = gate.file_review(candidate, policy_action="escalate_verification_error",
                                                 reason=reason)
    except Exception:  # out of time already: say so rather than block on a second failure
        review_id = None
    return _pending(review_id, reason)


def _review_after_error(context: _ErrorContext, reason: str) -> str | None:
    """A pending review for the failed verification, holding the final answer when it can be read."""
    from .._models import Candidate

    if context.project_dir is None:
        return None
    try:
        with _open_gate(context.project_dir) as gate:
            candidate = Candidate("", context.last_assistant_message, session_id=context.session_key,
                                  turn_id=context.turn_id)
            return gate.file_review(candidate, policy_action="escalate_hook_error", reason=reason)
    except Exception:  # the store (or configuration) itself is what fails: say so, never block again
        return None


def _main(host: Host, event: Event) -> int:
    run = _Run(host, event)
    return run_hook(run.handle, run.on_error)


def claude_stop() -> int:
    """``verigate hook claude-code stop``."""
    return _main("claude-code", "stop")


def claude_subagent_stop() -> int:
    """``verigate hook claude-code subagent-stop``."""
    return _main("claude-code", "subagent-stop")


def codex_stop() -> int:
    """``verigate hook codex stop``."""
    return _main("codex", "stop")

"""Host hook I/O shared by every wrapper: read stdin JSON (strictly, bounded), answer in the host's JSON, fail closed,
and answer in time.

Hosts let an action through when a hook exits 1, crashes, prints what they cannot parse, or outlives the host's
``timeout``. The first three are handled by :func:`run_hook`; the last by a :class:`Watchdog` that ``verigate hook``
arms before anything else: a daemon thread that, at the hook's deadline, writes the fail-closed answer prepared in
advance and ends the process with ``os._exit``. One lock decides who answers, so the hook's own answer and the
watchdog's are never both written (under :func:`supervise`, a one-byte token in a pipe extends that to the
supervising process).

A thread cannot interrupt C code that holds the GIL (a regular expression backtracking inside ``re``, say): the
watchdog bounds everything written in Python, which is everything verigate itself runs.

Text on stdout other than the answer makes the answer unparseable, so the hook process's answer is written to a
descriptor of its own (:mod:`._answer_fd`). This module is past 400 lines because the three writers of an answer
(:func:`run_hook`, the watchdog, the supervisor) share the answer token, which a split would spread over modules
that reach into each other.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TextIO

from .._errors import InputError, VerigateError
from .._json import DEFAULT_MAX_DEPTH, StrictJSONError, loads
from ._answer_fd import answer_descriptor, hold_stdout, identity

# Every hook process imports this module before its answer: pathlib (an error's log folder) and select and signal
# (the supervising parent's, first used after the fork, while the child already runs) load only where used
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DEADLINE_ENV",
    "MAX_HOOK_STDIN_BYTES",
    "MAX_STOP_GRACE_S",
    "STOP_BUDGET_DEFAULT_S",
    "TOOL_HOOK_DEADLINE_S",
    "HookAnswer",
    "Host",
    "Watchdog",
    "arm_watchdog",
    "hold_stdout",
    "hook_budget_s",
    "hook_started",
    "read_hook_input",
    "run_hook",
    "supervise",
    "watchdog_deadline_s",
]

Host = Literal["claude-code", "codex"]
#: (exit code, stdout JSON or None, stderr text)
HookAnswer = tuple[int, Mapping[str, Any] | None, str]

#: the Stop hook's whole budget in seconds (it reads the same variable; see hooks/_stop.py)
DEADLINE_ENV = "VERIGATE_HOOK_DEADLINE_S"
#: the Stop hook's default budget: below the examples' Stop timeout (180 s) and the hosts' default (600 s)
STOP_BUDGET_DEFAULT_S = 150.0
#: PreToolUse and UserPromptSubmit answer within this (or the budget, when smaller): below Claude Code's former
#: default command-hook timeout (60 s) and the examples' 150 s; these hooks call no judge
TOOL_HOOK_DEADLINE_S = 50.0
#: the Stop watchdog fires this long after the budget (at most a quarter of it): the Stop hook's own time keeping
#: stops work before the budget ends and files a review; the watchdog is the backstop when that cannot run
MAX_STOP_GRACE_S = 5.0
#: hook stdin larger than this is refused (read at most this + 1 bytes); host inputs are a few KB
MAX_HOOK_STDIN_BYTES = 8 * 1024 * 1024

#: how long past the deadline the supervisor waits for an answer the child began writing before it (its token)
CLAIM_GRACE_S = 2.0
#: the watchdog of this process, when ``verigate hook`` armed one
_watchdog: Watchdog | None = None


def hook_budget_s(environ: Mapping[str, str] | None = None) -> float:
    """``VERIGATE_HOOK_DEADLINE_S`` in seconds, or the default when it is unset or invalid (the Stop hook reports
    an invalid value itself; the watchdog must protect either way)."""
    text = (os.environ if environ is None else environ).get(DEADLINE_ENV, "").strip()
    try:
        value = float(text) if text else STOP_BUDGET_DEFAULT_S
    except ValueError:
        return STOP_BUDGET_DEFAULT_S
    return value if math.isfinite(value) and value > 0 else STOP_BUDGET_DEFAULT_S


def watchdog_deadline_s(kind: Literal["stop", "tool"], environ: Mapping[str, str] | None = None) -> float:
    """Seconds from the hook's start until the watchdog answers: a Stop hook's budget plus a grace of at most
    :data:`MAX_STOP_GRACE_S`; a tool or prompt hook's budget capped at :data:`TOOL_HOOK_DEADLINE_S`."""
    budget = hook_budget_s(environ)
    if kind == "stop":
        return budget + min(MAX_STOP_GRACE_S, budget / 4)
    return min(budget, TOOL_HOOK_DEADLINE_S)


class Watchdog:
    """Answers ``answer`` at ``started + seconds`` unless the hook claimed the answer first; either way the process
    ends by then (a hook that answered but lingers — a plug-in's thread — would otherwise reach the host's timeout).
    The answer is encoded when armed: at the deadline nothing is imported or computed (the main thread may hold
    the import lock)."""

    def __init__(self, seconds: float, answer: HookAnswer, *, exit_: Callable[[int], Any] = os._exit,
                 status_fd: int | None = None, claim_fd: int | None = None) -> None:
        self.started = time.monotonic()
        #: under :func:`supervise`: where the exit code of the written answer is reported to the supervisor
        self._status_fd = status_fd
        #: under :func:`supervise`: the pipe holding the one answer token this process and the supervisor share
        self._claim_fd = claim_fd
        self.deadline = self.started + seconds
        code, payload, message = answer
        self._code = code if code != 1 else 2
        self._stdout = (json.dumps(payload, ensure_ascii=True) + "\n").encode("ascii") if payload is not None else b""
        self._stderr = (message.rstrip("\n") + "\n").encode("utf-8", "backslashreplace") if message else b""
        self._exit = exit_
        self._lock = threading.Lock()
        self._owner: str | None = None
        self._answered_code: int | None = None
        self._thread = threading.Thread(target=self._run, name="verigate-hook-watchdog", daemon=True)

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def claim(self) -> bool:
        """The hook's own answer may be written (True) or the watchdog or the supervisor is already writing its own
        (False)."""
        with self._lock:
            if self._owner is None:
                self._owner = "hook" if _take_token(self._claim_fd) else "supervisor"
            return self._owner == "hook"

    def answered(self, code: int) -> None:
        """The hook's answer is written; ``code`` is what the process will exit with."""
        self._answered_code = code
        self._report(code)

    def _report(self, code: int) -> None:
        if self._status_fd is not None:
            with contextlib.suppress(OSError):  # the supervisor is gone: nobody to tell
                os.write(self._status_fd, bytes([code & 0xFF]))

    def _run(self) -> None:
        time.sleep(max(0.0, self.deadline - time.monotonic()))
        with self._lock:
            if self._owner is None:
                self._owner = "watchdog" if _take_token(self._claim_fd) else "supervisor"
            mine = self._owner == "watchdog"
        if self._owner == "supervisor":  # the supervisor took the token: it answers, and kills this process
            self._exit(2)
            return
        if not mine:  # the hook answered (or is writing its answer) and the process is still here: end it
            self._exit(2 if self._answered_code is None else self._answered_code)
            return
        try:
            for descriptor, data in ((answer_descriptor(), self._stdout), (2, self._stderr)):
                while data:
                    data = data[os.write(descriptor, data):]
        except OSError:  # an answer that cannot be written: exit 2 still blocks
            self._exit(2)
            return
        self._report(self._code)
        self._exit(self._code)


def _take_token(claim_fd: int | None) -> bool:
    """Take the one answer token (True), or find it taken by the other process (False). Without a supervisor there
    is no token to share: the thread lock alone decides."""
    if claim_fd is None:
        return True
    try:
        return os.read(claim_fd, 1) == b"!"
    except OSError:  # EAGAIN: the other process read it first
        return False


def arm_watchdog(seconds: float, answer: HookAnswer, *, status_fd: int | None = None,
                 claim_fd: int | None = None) -> Watchdog:
    """Start this process's watchdog (``verigate hook`` does, first thing); :func:`run_hook` then claims the
    answer before writing it."""
    global _watchdog
    _watchdog = Watchdog(seconds, answer, status_fd=status_fd, claim_fd=claim_fd).start()
    return _watchdog


# ------------------------------------------------------------------------------------------- the supervisor


def _write_all(descriptor: int, data: bytes) -> None:
    while data:
        data = data[os.write(descriptor, data):]


class _Child:
    """The supervisor's view of the forked hook: what it wrote to stdout, the exit code it reported once its answer
    was written, and whether it has ended (the status pipe closes when the child process does). ``cut``: output
    past MAX_HOOK_STDIN_BYTES was dropped, so what is held is no whole answer."""

    def __init__(self, pid: int, out_read: int, status_read: int) -> None:
        self.pid = pid
        self.out = bytearray()
        self.status = bytearray()
        self.cut = False
        self._status_read = status_read
        self._open = {out_read: self.out, status_read: self.status}

    @property
    def ended(self) -> bool:
        return self._status_read not in self._open

    def _read(self, timeout: float) -> bool:
        """Read whatever is ready within ``timeout``; False when nothing was."""
        import select

        ready, _, _ = select.select(list(self._open), [], [], max(0.0, timeout))
        for descriptor in ready:
            data = os.read(descriptor, 65536)
            if not data:
                del self._open[descriptor]
            elif len(self._open[descriptor]) < MAX_HOOK_STDIN_BYTES:  # a flood is cut, never stored whole
                self._open[descriptor] += data
            else:
                self.cut = True
        return bool(ready)

    def pump(self, deadline: float, done: Callable[[], bool]) -> None:
        """Collect output until ``done()`` or the deadline."""
        while self._open and not done() and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())

    def drain(self) -> None:
        """Collect what is already written (the answer was flushed before its code was reported)."""
        while self._open and self._read(0.0):
            pass

    def end(self) -> int | None:
        """Kill the child if it is still running; its wait status (None when unknown)."""
        import signal

        if not self.ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        try:
            return os.waitpid(self.pid, 0)[1]
        except ChildProcessError:
            return None


def _deadline_reason(seconds: float) -> str:
    return f"verigate hook deadline: no answer within {seconds:g} s (see {DEADLINE_ENV})"


def supervise(seconds: float, answer_for: Callable[[str], HookAnswer]) -> None:
    """Run the rest of this hook in a forked child and answer for it (POSIX; elsewhere the thread watchdog alone).

    A thread cannot stop C code that holds the GIL (a backtracking regular expression); a parent process can. The
    child returns from this call and runs the hook with its stdout into a pipe, reporting its exit code through a
    second pipe once its answer is written. The parent never returns: it relays that answer and waits for the
    child to end (until the deadline), or — past the deadline, or when the child dies without an answer — kills it
    and writes ``answer_for(reason)`` itself. Exactly one answer is written, in time: the child (its hook or its
    watchdog) and the parent each take a one-byte token from a shared pipe before answering, and a pipe hands a
    byte to one reader only — so at the deadline they cannot both write to the stderr they share."""
    deadline = time.monotonic() + seconds
    out_read, out_write = os.pipe()
    status_read, status_write = os.pipe()
    claim_read, claim_write = os.pipe()
    os.write(claim_write, b"!")
    os.close(claim_write)
    os.set_blocking(claim_read, False)
    try:
        host_stdout: tuple[int, int] | None = identity(1)
    except OSError:
        host_stdout = None
    pid = os.fork()
    if pid == 0:  # the child: the hook itself, its stdout into the pipe
        os.close(out_read)
        os.close(status_read)
        os.dup2(out_write, 1)
        os.close(out_write)
        hold_stdout(host_stdout=host_stdout)  # before the watchdog: it must find the answer's descriptor in place
        arm_watchdog(seconds, answer_for(_deadline_reason(seconds)), status_fd=status_write, claim_fd=claim_read)
        return
    os.close(out_write)
    os.close(status_write)
    devnull = os.open(os.devnull, os.O_RDONLY)  # stdin is the child's: a host writing more than it reads gets
    os.dup2(devnull, 0)  # EPIPE when the child ends, not a pipe the parent holds open
    os.close(devnull)
    child = _Child(pid, out_read, status_read)
    child.pump(deadline, lambda: bool(child.status) or child.ended)
    if not child.status and not child.ended and not _take_token(claim_read):
        # the child took the token just before the deadline: its answer is being written; let it finish (bounded)
        child.pump(time.monotonic() + CLAIM_GRACE_S, lambda: bool(child.status) or child.ended)
    try:
        if child.status:
            child.drain()
        if child.status and not child.cut:  # answered: relay the answer, give the child until the deadline to end
            _write_all(1, bytes(child.out))
            child.pump(deadline, lambda: child.ended)
            child.end()
            os._exit(child.status[0] if child.status[0] != 1 else 2)
        ended = child.ended
        wait_status = child.end()
        if child.cut:  # relayed cut, a deny the host cannot parse would let the action through
            reason = (f"verigate hook error: the hook's answer is longer than {MAX_HOOK_STDIN_BYTES:,} bytes, so it "
                      "is not relayed")
        elif ended:
            how = ("killed by signal " + str(os.WTERMSIG(wait_status)) if wait_status is not None
                   and os.WIFSIGNALED(wait_status) else f"exit status {wait_status}")
            reason = f"verigate hook error: the hook process ended without an answer ({how})"
        else:
            reason = _deadline_reason(seconds)
        code, payload, message = answer_for(reason)
        if payload is not None:
            _write_all(1, (json.dumps(payload, ensure_ascii=True) + "\n").encode("ascii"))
        if message:
            _write_all(2, (message.rstrip("\n") + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        os._exit(2)
    os._exit(code if code != 1 else 2)


def hook_started() -> float | None:
    """:func:`time.monotonic` when this process's watchdog was armed (None outside ``verigate hook``): the
    moment a hook's own time budget should count from, since the watchdog counts from it."""
    return _watchdog.started if _watchdog is not None else None


def read_hook_input(stream: TextIO) -> dict[str, Any]:
    """The hook's stdin as one strict JSON object (no repeated key, NaN, lone surrogate, nesting past 64 levels,
    at most :data:`MAX_HOOK_STDIN_BYTES`); anything else is an InputError naming the problem."""
    buffer = getattr(stream, "buffer", None)
    raw: str | bytes = (buffer.read(MAX_HOOK_STDIN_BYTES + 1) if buffer is not None
                        else stream.read(MAX_HOOK_STDIN_BYTES + 1))
    if len(raw) > MAX_HOOK_STDIN_BYTES:
        raise StrictJSONError("size", f"hook stdin refused (size): more than {MAX_HOOK_STDIN_BYTES} bytes",
                              source="<stdin>")
    try:
        data = loads(raw, max_depth=DEFAULT_MAX_DEPTH, max_chars=MAX_HOOK_STDIN_BYTES, source="<stdin>")
    except StrictJSONError as exc:
        text = "hook stdin is not JSON" if exc.kind == "syntax" else f"hook stdin refused ({exc.kind})"
        raise StrictJSONError(exc.kind, f"{text}: {exc.message}", source="<stdin>") from None
    if not isinstance(data, dict):
        raise InputError("hook stdin must be a JSON object", source="<stdin>")
    return data


def _write_text(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
    stream.flush()


def _project_of(data: Mapping[str, Any] | None, host: Host) -> Path | None:
    """Where the error log belongs: the host's project, resolved as every hook resolves it (``_project``)."""
    from pathlib import Path

    from .._project import find_project

    folder = find_project(host, data)
    return Path(folder) if folder else None


def _reason(exc: BaseException, data: Mapping[str, Any] | None, stderr: TextIO, host: Host) -> str:
    """One line for the host; an unexpected exception's traceback goes to the error log (and, with
    ``VERIGATE_DEBUG=1``, to stderr), never to stderr by default: hosts hand stderr to the model."""
    reason = f"verigate hook error: {type(exc).__name__}: {exc}"
    if not isinstance(exc, VerigateError):
        from .._errorlog import debug_enabled, format_debug, log_exception, redacted_message

        reason = f"verigate hook error: {type(exc).__name__}: {redacted_message(exc)}"
        path = log_exception(exc, _project_of(data, host), context="verigate hook")
        if path is not None:
            reason = f"{reason} (details in {path})"
        if debug_enabled():
            _write_text(stderr, format_debug(exc))
    return " | ".join(part for part in reason.splitlines() if part.strip())


def run_hook(
    handler: Callable[[dict[str, Any]], HookAnswer],
    on_internal_error: Callable[[str], HookAnswer],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    host: Host = "claude-code",
) -> int:
    """Run one hook invocation. Any exception becomes ``on_internal_error(reason)``: hosts treat exit 1,
    crashes and unparseable output as "proceed", so an error here must never look like one of those.
    ``host`` decides where an unexpected error's log goes (the host's project, see ``verigate._project``)."""
    stdin = stdin or sys.stdin
    # the process's own stdout carries the answer alone (hold_stdout); a caller's stream is written as given
    answer_fd = hold_stdout() if stdout is None else None
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    data: dict[str, Any] | None = None
    try:
        data = read_hook_input(stdin)
        with contextlib.redirect_stdout(stderr):  # a plug-in's print() before the answer: unreadable, "proceed"
            code, payload, message = handler(data)
    except BaseException as exc:  # fail closed on anything: bugs, a plug-in's sys.exit(0),
        # asyncio.CancelledError, KeyboardInterrupt; each would otherwise end the process in a host-"proceed" state
        reason = _reason(exc, data, stderr, host)
        try:
            code, payload, message = on_internal_error(reason)
        except BaseException:  # the error answer itself failed: block with the plain reason
            code, payload, message = 2, None, reason
    code = code if code != 1 else 2  # exit 1 is fail-open for the hosts: never use it
    if _watchdog is not None and not _watchdog.claim():
        threading.Event().wait()  # the watchdog is writing its answer and ends the process; never write a second
    try:
        if payload is not None:
            # ASCII JSON (\u escapes): a host pipe in a legacy code page must never make the answer unwritable
            line = json.dumps(payload, ensure_ascii=True) + "\n"
            if answer_fd is not None:
                _write_all(answer_descriptor(), line.encode("ascii"))
            else:
                stdout.write(line)
                stdout.flush()
        if message:
            _write_text(stderr, message.rstrip("\n") + "\n")
    except BaseException:  # an answer that cannot be written is no answer: block
        code = 2
    if _watchdog is not None:
        _watchdog.answered(code)
    return code

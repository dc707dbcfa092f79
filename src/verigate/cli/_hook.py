"""``verigate hook <host> <event>``: thin host wrappers (stdin JSON -> verigate -> host JSON), answering in time.

The watchdog is armed before the hook's module is imported: whatever the input does to the hook (a hang in the
configuration, the transcript, a plug-in, stdin that never ends, a regular expression that never returns), the
host gets the fail-closed answer below before its own timeout would let the action through. On POSIX the hook
runs in a forked child supervised by the original process (see ``hooks._protocol.supervise``); elsewhere a
watchdog thread alone answers, which cannot interrupt C code that holds the GIL. The forked child ends without
tearing the interpreter down once its answer is written (``end_child``): the host waits for the process to end.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from ..hooks._protocol import (
    DEADLINE_ENV,
    HookAnswer,
    arm_watchdog,
    hold_stdout,
    run_hook,
    supervise,
    watchdog_deadline_s,
)

#: (host, event) -> "module:function" under verigate.hooks; the function is ``main() -> int``
EVENTS: dict[tuple[str, str], str] = {
    ("claude-code", "pre-tool-use"): "verigate.hooks._selfgate_hooks:claude_pre_tool_use",
    ("claude-code", "user-prompt-submit"): "verigate.hooks._selfgate_hooks:claude_user_prompt_submit",
    ("claude-code", "stop"): "verigate.hooks._stop:claude_stop",
    ("claude-code", "subagent-stop"): "verigate.hooks._stop:claude_subagent_stop",
    ("codex", "pre-tool-use"): "verigate.hooks._selfgate_hooks:codex_pre_tool_use",
    ("codex", "user-prompt-submit"): "verigate.hooks._selfgate_hooks:codex_user_prompt_submit",
    ("codex", "stop"): "verigate.hooks._stop:codex_stop",
}
STOP_EVENTS = frozenset({"stop", "subagent-stop"})


def deadline_answer(host: str, event: str, seconds: float) -> HookAnswer:
    """The watchdog's answer: the hook gave none within ``seconds``."""
    return fail_closed_answer(host, event, f"verigate hook deadline: no answer within {seconds:g} s (see "
                                           f"{DEADLINE_ENV})")


def fail_closed_answer(host: str, event: str, reason: str) -> HookAnswer:
    """Each event's documented fail-closed answer for an error the hook cannot recover from, without anything
    that needs the store or the configuration (which may be what hangs or fails)."""
    reason = f"{reason}; verigate fails closed ({host} {event})"
    if event == "pre-tool-use":  # exit 2 with the reason on stderr: both hosts block the tool call
        return 2, None, f"{reason}: the tool call is refused"
    if event == "user-prompt-submit":  # as on an internal error when the mode is unknown: refuse the prompt
        return 0, {"decision": "block", "reason": f"{reason}: the prompt is refused; submit it again"}, ""
    # Stop / SubagentStop: as when the gate's time budget is exhausted — hand over to a person, marked unverified,
    # never a block (a hang that persists would block every Stop: a loop)
    headline = "EXTERNAL_VERIFICATION_REQUIRED: verigate ran out of time"
    return 0, {"continue": False, "stopReason": headline,
               "systemMessage": f"{headline}. The agent's last answer is NOT verified ({reason}). Do not rely on "
                                "it until a person has checked it; no review could be stored, the answer stays in "
                                "the transcript."}, ""


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2 or (argv[0], argv[1]) not in EVENTS:
        known = ", ".join(f"{host} {event}" for host, event in EVENTS)
        print(f"usage: verigate hook <host> <event>   (one of: {known})", file=sys.stderr)
        return 2
    host, event = argv
    seconds = watchdog_deadline_s("stop" if event in STOP_EVENTS else "tool")
    # a supervising parent process can stop even C code that holds the GIL; fork only a single-threaded process
    # (another thread's locks would be copied held into the child)
    forked = hasattr(os, "fork") and threading.active_count() == 1
    if forked:
        supervise(seconds, lambda reason: fail_closed_answer(host, event, reason))  # returns in the child only
    else:  # from here on descriptor 1 carries the answer alone, whoever writes it (supervise does the same)
        hold_stdout()
        arm_watchdog(seconds, deadline_answer(host, event, seconds))
    module_name, function_name = EVENTS[(host, event)].split(":")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except Exception as exc:  # a broken installation still answers in the host's format
        failure = exc

        def handler(_data: dict[str, Any]) -> HookAnswer:
            raise failure

        return run_hook(handler, lambda reason: fail_closed_answer(host, event, reason),
                        host="codex" if host == "codex" else "claude-code")
    code: int = function()
    if forked:
        end_child(code)
    return code


def end_child(code: int) -> NoReturn:
    """End the forked hook process once its answer is written, without tearing the interpreter down.

    The host waits for the process to end, and the supervisor for its child: freeing every module and object of a
    run that loaded the gate, its plug-ins and their model clients took longer than the rest of a short run after
    the answer. What an ordinary exit does that anyone can see still happens, in its order: other non-daemon
    threads are joined, the ``atexit`` handlers run (logging, telemetry exporters flush there), stdio is flushed.
    """
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken: the answer was written and reported
            stream.flush()
    os._exit(code)

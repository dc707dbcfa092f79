"""Host hook I/O shared by every wrapper: read stdin JSON, answer in the host's JSON, fail closed."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, Literal, TextIO

from .._errors import InputError

__all__ = ["HookAnswer", "Host", "read_hook_input", "run_hook"]

Host = Literal["claude-code", "codex"]
#: (exit code, stdout JSON or None, stderr text)
HookAnswer = tuple[int, Mapping[str, Any] | None, str]


def read_hook_input(stream: TextIO) -> dict[str, Any]:
    """The hook's stdin as a JSON object; anything else is an InputError naming the problem."""
    raw = stream.read()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"hook stdin is not JSON: {exc.msg}", source="<stdin>", line=exc.lineno) from exc
    if not isinstance(data, dict):
        raise InputError("hook stdin must be a JSON object", source="<stdin>")
    return data


def _write_text(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
    stream.flush()


def run_hook(
    handler: Callable[[dict[str, Any]], HookAnswer],
    on_internal_error: Callable[[str], HookAnswer],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one hook invocation. Any exception becomes ``on_internal_error(reason)``: hosts treat exit 1,
    crashes and unparseable output as "proceed", so an error here must never look like one of those."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        code, payload, message = handler(read_hook_input(stdin))
    except BaseException as exc:  # fail closed on anything: bugs, a plug-in's sys.exit(0),
        # asyncio.CancelledError, KeyboardInterrupt; each would otherwise end the process in a host-"proceed" state
        reason = f"verigate hook error: {type(exc).__name__}: {exc}"
        if not isinstance(exc, InputError):
            import traceback  # only on this path: the module costs milliseconds on every hook call

            traceback.print_exception(exc, file=stderr)
        try:
            code, payload, message = on_internal_error(reason)
        except BaseException:  # the error answer itself failed: block with the plain reason
            code, payload, message = 2, None, reason
    try:
        if payload is not None:
            # ASCII JSON (\u escapes): a host pipe in a legacy code page must never make the answer unwritable
            stdout.write(json.dumps(payload, ensure_ascii=True) + "\n")
            stdout.flush()
        if message:
            _write_text(stderr, message.rstrip("\n") + "\n")
    except BaseException:  # an answer that cannot be written is no answer: block
        return 2
    return code if code != 1 else 2  # exit 1 is fail-open for the hosts: never use it

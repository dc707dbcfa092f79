"""The shared hook I/O never ends in a state a host reads as "proceed" (exit 1, a crash, unwritable output)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from verigate.hooks._protocol import HookAnswer, run_hook

DENY: HookAnswer = (2, {"decision": "block", "reason": "fail closed"}, "")


def _run(handler: Any, *, stdin: str = "{}", encoding: str = "utf-8") -> tuple[int, str, str]:
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    err = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    code = run_hook(handler, lambda reason: (2, {"decision": "block", "reason": reason}, reason),
                    stdin=io.StringIO(stdin), stdout=out, stderr=err)
    out.seek(0)
    err.seek(0)
    return code, out.read(), err.read()


@pytest.mark.parametrize("raised", [SystemExit(0), asyncio.CancelledError(), KeyboardInterrupt(),
                                    RuntimeError("bug"), GeneratorExit()])
def test_anything_a_handler_raises_blocks(raised: BaseException) -> None:
    def handler(_data: dict[str, Any]) -> HookAnswer:
        raise raised

    code, out, _ = _run(handler)
    assert code == 2
    assert json.loads(out)["decision"] == "block"


def test_exit_one_is_never_returned() -> None:
    code, _, _ = _run(lambda _data: (1, None, "oops"))
    assert code == 2


def test_invalid_stdin_blocks_with_the_reason() -> None:
    code, out, _ = _run(lambda _data: (0, None, ""), stdin="{not json")
    assert code == 2
    assert "not JSON" in json.loads(out)["reason"]


def test_a_legacy_code_page_cannot_make_the_answer_unwritable() -> None:
    gate_text = "Step 3 は成果物提示後に再承認"
    code, out, err = _run(lambda _data: (2, {"reason": gate_text}, gate_text), encoding="cp1252")
    assert code == 2
    assert json.loads(out)["reason"] == gate_text  # JSON \u escapes carry the text through any code page
    assert "\\u" in err or "\\x" in err


def test_an_error_answer_that_itself_fails_still_blocks() -> None:
    def handler(_data: dict[str, Any]) -> HookAnswer:
        raise RuntimeError("first")

    def broken_answer(_reason: str) -> HookAnswer:
        raise RuntimeError("second")

    out = io.StringIO()
    code = run_hook(handler, broken_answer, stdin=io.StringIO("{}"), stdout=out, stderr=io.StringIO())
    assert code == 2


# ------------------------------------------------------------------------------------------- strict, bounded stdin


def _run_bytes(stdin: bytes, handler: Any = None) -> tuple[int, dict[str, Any], str]:
    """stdin as the bytes a host pipes in (read through ``.buffer``, like sys.stdin)."""
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(handler or (lambda _data: (0, None, "")),
                    lambda reason: (0, {"decision": "block", "reason": reason}, ""),
                    stdin=io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"), stdout=out, stderr=err)
    return code, json.loads(out.getvalue()), err.getvalue()


@pytest.mark.parametrize(("stdin", "kind"), [
    (b'{"tool_name": "Read", "tool_name": "Bash"}', "duplicate_key"),
    (b'{"session_id": NaN}', "constant"),
    (b'{"session_id": Infinity}', "constant"),
    (b'{"session_id": 1e999}', "constant"),
    (b'{"prompt": "\\ud800"}', "surrogate"),
    (b'{"prompt": "\xed\xa0\x80"}', "syntax"),  # a raw surrogate is not UTF-8 either
    (b'{"prompt": "\xff"}', "syntax"),
    (b'{"tool_input": ' + b"[" * 100 + b"]" * 100 + b"}", "depth"),
    (b'{"tool_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "depth"),
])
def test_ambiguous_or_hostile_stdin_fails_closed_naming_the_problem(stdin: bytes, kind: str) -> None:
    called: list[Any] = []

    def handler(data: dict[str, Any]) -> HookAnswer:
        called.append(data)
        return 0, None, ""

    code, answer, err = _run_bytes(stdin, handler)
    assert called == []  # the handler never sees it
    assert answer["decision"] == "block" and code == 0
    assert f"({kind})" in answer["reason"] or (kind == "syntax" and "not JSON" in answer["reason"])
    assert err == ""  # an input error is one reason, no traceback


def test_stdin_past_the_bound_is_refused_without_reading_it_all() -> None:
    from verigate.hooks._protocol import MAX_HOOK_STDIN_BYTES

    stream = io.BytesIO(b'{"prompt": "' + b"x" * (2 * MAX_HOOK_STDIN_BYTES) + b'"}')
    out, wrapper = io.StringIO(), io.TextIOWrapper(stream, encoding="utf-8")
    run_hook(lambda _data: (0, None, ""), lambda reason: (0, {"decision": "block", "reason": reason}, ""),
             stdin=wrapper, stdout=out, stderr=io.StringIO())
    assert "(size)" in json.loads(out.getvalue())["reason"]
    assert stream.tell() <= MAX_HOOK_STDIN_BYTES + 1 + io.DEFAULT_BUFFER_SIZE


def test_a_plain_object_within_the_bounds_reaches_the_handler() -> None:
    seen: list[dict[str, Any]] = []

    def handler(data: dict[str, Any]) -> HookAnswer:
        seen.append(data)
        return 0, None, ""

    code, _, _ = _run(handler, stdin='{"prompt": "ok \\ud83d\\ude00"}')
    assert code == 0 and seen == [{"prompt": "ok \U0001f600"}]


def test_a_bug_is_one_reason_line_and_no_traceback_unless_debugging(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Any) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("VERIGATE_DEBUG", raising=False)

    def handler(_data: dict[str, Any]) -> HookAnswer:
        raise RuntimeError("bug\nsecond line")

    _, out, err = _run(handler)
    reason = json.loads(out)["reason"]
    assert "RuntimeError: bug | second line" in reason and "\n" not in reason
    assert "Traceback" not in err
    monkeypatch.setenv("VERIGATE_DEBUG", "1")
    _, _, err = _run(handler)
    assert "Traceback" in err


def test_a_bug_in_a_project_is_logged_beside_its_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    (tmp_path / ".verigate").mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("VERIGATE_DEBUG", raising=False)

    def handler(_data: dict[str, Any]) -> HookAnswer:
        raise KeyError("missing")

    _, out, err = _run(handler)
    log = tmp_path / ".verigate" / "logs" / "verigate-errors.log"
    assert f"(details in {log})" in json.loads(out)["reason"]
    assert "Traceback" not in err
    assert "KeyError" in log.read_text(encoding="utf-8") and "in handler" in log.read_text(encoding="utf-8")
    assert log.stat().st_mode & 0o777 == 0o600


def _hook_program(handler_body: str, *, before: str = "", after: str = "") -> str:
    """A process that answers a block through run_hook with its own stdout, between ``before`` and ``after``."""
    return (
        "import os, subprocess, sys\n"
        f"{before}\n"
        "from verigate.hooks._protocol import run_hook\n"
        "def handler(data):\n"
        f"    {handler_body}\n"
        "    return 0, {'decision': 'block', 'reason': 'no'}, ''\n"
        "code = run_hook(handler, lambda reason: (2, None, reason))\n"
        f"{after}\n"
        "sys.exit(code)\n"
    )


TALKERS = {
    "print": "print('a plug-in talking on stdout')",
    "descriptor 1": "os.write(1, b'a plug-in talking on stdout\\n')",
    "a child process": "subprocess.run([sys.executable, '-c', 'print(\"a plug-in talking on stdout\")'], check=True)",
}


@pytest.mark.parametrize("talk", list(TALKERS), ids=list(TALKERS))
def test_a_handler_talking_on_stdout_does_not_spoil_the_answer(talk: str) -> None:
    # a plug-in's output inside the handler would put text before the JSON answer on the host's stdout: a host
    # that cannot parse it proceeds, so a block (exit 0 and a JSON decision) would become a pass. Text after the
    # answer (a thread or atexit handler still writing) spoils it the same way
    import subprocess
    import sys

    program = _hook_program(TALKERS[talk], after="os.write(1, b'written after the answer\\n')")
    done = subprocess.run([sys.executable, "-c", program], input="{}", capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"decision": "block", "reason": "no"}
    assert "a plug-in talking on stdout" in done.stderr  # not lost: a plug-in's output goes to stderr
    assert "written after the answer" in done.stderr


def _answer_only(stdout: str) -> None:
    assert json.loads(stdout) == {"decision": "block", "reason": "no"}, stdout


def test_with_stderr_closed_the_answer_still_stands_alone() -> None:
    # os.dup takes the lowest free number: with descriptor 2 closed, the answer's copy would have become fd 2 and
    # descriptor 1, pointed at "stderr", the answer's channel again
    import subprocess
    import sys

    program = _hook_program("os.write(1, b'junk on 1\\n'); os.write(2, b'junk on 2\\n')")
    done = subprocess.run(["/bin/sh", "-c", 'exec "$0" -c "$1" 2>&-', sys.executable, program], input="{}",
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0
    _answer_only(done.stdout)


def test_a_host_merging_stderr_into_stdout_gets_the_answer_alone() -> None:
    import subprocess
    import sys

    program = _hook_program("os.write(1, b'junk on 1\\n')")
    done = subprocess.run([sys.executable, "-c", program], input="{}", stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60, check=False)
    assert done.returncode == 0
    _answer_only(done.stdout)


def test_text_python_buffered_before_the_hook_goes_to_stderr() -> None:
    # a .pth file, sitecustomize or an import printing before run_hook: stdout is a pipe, so Python buffers it
    # (unless PYTHONUNBUFFERED: then it is written at once, before any hook code runs, and nothing can take it back)
    import os
    import subprocess
    import sys

    program = _hook_program("pass", before="print('printed before the hook')")
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", program], input="{}", capture_output=True, text=True, timeout=60,
                          check=False, env=environment)
    _answer_only(done.stdout)
    assert "printed before the hook" in done.stderr


def test_an_answer_descriptor_closed_and_reused_is_never_written(tmp_path: Path) -> None:
    # a plug-in closing every descriptor above 2 and opening a file: the file gets the answer copy's number
    import subprocess
    import sys

    log = tmp_path / "reused.log"
    program = _hook_program(f"os.closerange(3, 4096); globals()['log'] = open({str(log)!r}, 'w')")
    done = subprocess.run([sys.executable, "-c", program], input="{}", capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2 and done.stdout == ""  # no answer can be written: exit 2 blocks
    assert "block" not in log.read_text(encoding="utf-8")



def test_a_supervised_answer_past_the_relay_bound_is_never_relayed_cut() -> None:
    # the supervisor keeps at most MAX_HOOK_STDIN_BYTES of the child's answer: relayed cut, a deny the host cannot
    # parse lets the tool run. An agent sizes a self-gate answer itself (every gate it declares is listed in it)
    import subprocess
    import sys

    program = (
        "import sys\n"
        "from verigate.hooks._protocol import MAX_HOOK_STDIN_BYTES, run_hook, supervise\n"
        "supervise(30.0, lambda reason: (2, None, 'supervisor: ' + reason))\n"
        "def handler(data):\n"
        "    return 0, {'decision': 'block', 'reason': 'x' * MAX_HOOK_STDIN_BYTES}, ''\n"
        "sys.exit(run_hook(handler, lambda reason: (2, None, reason)))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], input=b"{}", capture_output=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == b"", done.stdout[-200:]
    assert done.stderr.startswith(b"supervisor: ") and b"longer than" in done.stderr, done.stderr[-300:]

def test_the_answer_descriptor_is_known_before_stdout_moves() -> None:
    # the watchdog answers at any moment: once descriptor 1 points at stderr, it must already write to the copy
    import subprocess
    import sys

    program = (
        "import os\n"
        "import verigate.hooks._answer_fd as answer_fd\n"
        "real, seen = os.dup2, []\n"
        "def spy(source, target, *rest):\n"
        "    real(source, target, *rest)\n"
        "    if target == 1:\n"
        "        seen.append(answer_fd.answer_descriptor())\n"
        "os.dup2 = spy\n"
        "answer_fd.hold_stdout()\n"
        "os.dup2 = real\n"
        "assert seen and all(descriptor > 2 for descriptor in seen), seen\n"
    )
    done = subprocess.run([sys.executable, "-c", program], input="", capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr

"""The shared hook I/O never ends in a state a host reads as "proceed" (exit 1, a crash, unwritable output)."""

from __future__ import annotations

import asyncio
import io
import json
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

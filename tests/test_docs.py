"""The Python examples of the manual (``docs/**/*.md``) and of README.md run, and say what they print.

Every fenced ``python`` block runs, each in a fresh namespace and a fresh working folder, unless the line right
before its fence is ``<!-- not-run: <reason> -->``; the reason must be given. Inside a block that runs, a top-level
expression whose trailing comment is exactly a Python literal (``result.text  # 'DATABASE_URL=…'``) must evaluate
to that literal. ``docs/index.md`` documents this for authors.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_RUN = re.compile(r"<!-- not-run: (?P<reason>\S.*?) -->")


def _blocks() -> list[tuple[str, str, str | None]]:
    """(where, code, reason it does not run or None) for every python block."""
    found: list[tuple[str, str, str | None]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
            line = text.count("\n", 0, match.start()) + 1
            previous = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = NOT_RUN.fullmatch(previous.strip())
            if previous.strip().startswith("<!-- not-run") and marker is None:
                raise AssertionError(f"{path.relative_to(ROOT)}:{line}: a not-run marker needs a reason")
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1), marker and marker["reason"]))
    return found


BLOCKS = _blocks()
RUNNABLE = [(where, code) for where, code, reason in BLOCKS if reason is None]


def _literal_comments(code: str) -> dict[int, Any]:
    """Line number -> the literal its trailing comment states, for comments that are exactly a literal."""
    wanted: dict[int, Any] = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            try:
                wanted[token.start[0]] = ast.literal_eval(token.string[1:].strip())
            except (ValueError, SyntaxError):
                continue
    return wanted


def test_the_docs_have_examples_and_every_skip_says_why() -> None:
    assert len(RUNNABLE) >= 5
    assert all(reason for _, _, reason in BLOCKS if reason is not None)


@pytest.mark.parametrize(("where", "code"), RUNNABLE, ids=[where for where, _ in RUNNABLE])
def test_example_runs(where: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    wanted = _literal_comments(code)
    for statement in ast.parse(code, filename=where).body:
        if isinstance(statement, ast.Expr) and statement.end_lineno in wanted:
            value = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)
            assert value == wanted[statement.end_lineno], f"{where}, line {statement.lineno}"
        else:
            exec(compile(ast.Module([statement], type_ignores=[]), where, "exec"), namespace)

"""The tripwire never raises, whatever the command or tool input: an exception in the hook would hand the decision
to the host, which lets a tool call through when its hook fails."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tripwire_attacks import Project, project

from verigate.selfgate._paths import _realpath

__all__ = ["project"]  # the fixture, imported to be used here

#: characters with meaning to bash, and a few pieces of protected names, so the reader's every branch is reached
SHELL = st.lists(st.sampled_from([*" \t\n;&|<>(){}[]*?,.'\"\\$`~=!#%-/0129abcx",
    "verigate", "selfgate", "gate", "close", ".verigate", "self-gates.jsonl", "$'\\x2e'", "$(", "${", "<<EOF\n",
    "\nEOF\n", "{a..c}", "cd ", "printf ", "echo ", "bash -c ", "\\\n", "\x00", "\udcff"]), max_size=40).map("".join)
#: strings no file system can hold (a NUL byte, a lone surrogate), after ``~`` and past PATH_MAX until collapsed
UNNAMEABLE = st.sampled_from(["~\ud800/x", "~a\x00/x", "\ud800", "~\ud800/" + "./" * 2100 + "x", "a\x00b"])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
                    | UNNAMEABLE,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                    max_leaves=20)


def test_a_nul_byte_in_a_folder_is_refused(project: Project) -> None:
    # found by the property below: os.path.realpath raised ValueError on "cd \x00" (the hook failed closed, but
    # with an internal error instead of an answer)
    for command in ("cd \x00", "cd a\x00b && ls", "echo x > \x00"):
        answer = project.check("Bash", {"command": command})
        assert answer is None or isinstance(answer, str)
    assert "cannot be checked" in (project.check("Bash", {"command": "cd \x00"}) or "")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(SHELL, min_size=1, max_size=6).map("".join))
def test_any_command_gets_an_answer(project: Project, command: str) -> None:
    answer = project.check("Bash", {"command": command})
    assert answer is None or isinstance(answer, str)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["Bash", "Write", "apply_patch", "mcp__fs__write_file", "shell", "Read"]),
       st.dictionaries(st.sampled_from(["command", "cmd", "path", "file_path", "input", "patch", "workdir", "x"]), JSON,
                       max_size=4))
def test_any_tool_input_gets_an_answer(project: Project, tool: str, tool_input: dict[str, Any]) -> None:
    answer = project.check(tool, tool_input)
    assert answer is None or isinstance(answer, str)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folders, a file, and links: to a folder, to a file, dangling, upwards. Not a link loop: the kernel opens
    nothing through one (ELOOP), and ``os.path.realpath``'s non-strict answer for it is not a path either takes."""
    root = tmp_path_factory.mktemp("tree")
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("x", encoding="utf-8")
    for name, target in (("to-d", "d"), ("to-f", "d/f.txt"), ("dangling", "nowhere"),
                         ("up", ".."), ("abs", str(root / "d"))):
        (root / name).symlink_to(target)
    (root / "d" / "e" / "back").symlink_to(root)
    return root


PIECES = st.sampled_from(["d", "e", "f.txt", "to-d", "to-f", "dangling", "up", "abs", "back", "x", ".", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, min_size=30, max_size=80))
def test_long_paths_resolve_as_realpath_does(tree: Path, pieces: list[str]) -> None:
    # the oracle is os.path.realpath itself; the check takes a shortcut for long paths
    path = "/".join([str(tree), *pieces])  # as written: "" and "." kept, as a tool input may hold them
    assert _realpath(path) == os.path.realpath(path)

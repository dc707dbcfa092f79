"""The Bash check is linear in the command's length (ratios only: the machine's speed is not asserted), bounded in
nesting and brace output, and refuses a command past ``MAX_COMMAND_CHARS`` unread."""

from __future__ import annotations

import time

import pytest
from test_tripwire_attacks import Project, project

from verigate.selfgate._guard import MAX_COMMAND_CHARS, violation

__all__ = ["project"]  # the fixture, imported to be used here

#: every kind of syntax the reader handles, none of it protected: quotes, ANSI-C, braces, a nested command
#: string, a substitution, a continuation, cd, a glob (memoised), pipelines and redirections
UNIT = ("echo \"a b; c\" 'c;d' $'\\x41' x{1,2}{a..c} >> out.txt && bash -c 'echo \"n $HOME\" | wc -l' ; "
        "cd src ; ls *.py | head -n 1 ; x=$(date) \\\n ; cat notes.txt | grep -c a 2>/dev/null\n")
#: the longest single-word and single-string shapes, which a character-at-a-time lexer made quadratic
SHAPES = {
    "mixed": lambda size: UNIT * (size // len(UNIT)),
    "one quoted string": lambda size: "echo '" + "ab cd ; " * (size // 8) + "'",
    "one word": lambda size: "echo " + "a" * size,
}


def _seconds(project: Project, command: str) -> float:
    """The check's CPU time: the other processes of a shared machine change wall time far more."""
    start = time.process_time()
    refused = violation("Bash", {"command": command}, str(project.project), project.protected, lambda text: False,
                        max_command=None)
    elapsed = time.process_time() - start
    assert refused is None, refused
    return elapsed


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_time_grows_linearly(project: Project, shape: str) -> None:
    make = SHAPES[shape]
    small, large = make(200_000), make(2_000_000)
    # the smaller run is repeated and its fastest time kept: one slow run of it would inflate the ratio most
    small_time = min(_seconds(project, small) for _ in range(3))
    large_time = _seconds(project, large)
    ratio = large_time / small_time
    print(f"{shape}: {len(small)} chars {small_time:.3f}s, {len(large)} chars {large_time:.3f}s, ratio {ratio:.1f}")
    # ten times the text: linear is 10×, a quadratic lexer 100×; a loaded machine (the CI's other jobs, a
    # neighbour) stretched a linear run to 15.8× once, so the bound sits between the two, far from either
    assert ratio <= 30, (shape, small_time, large_time)


def test_a_command_past_the_bound_is_refused_unread(project: Project) -> None:
    command = "echo " + "a" * MAX_COMMAND_CHARS
    refused = project.check("Bash", {"command": command})
    assert refused is not None and "too long to check" in refused
    assert project.check("Bash", {"command": command[:MAX_COMMAND_CHARS]}) is None


@pytest.mark.parametrize("command", [
    "echo " + "$(" * 5_000 + "x" + ")" * 5_000,
    "cat " + "<(cat " * 5_000 + ")" * 5_000,
    "echo " + "{a,b}" * 40,
    "echo {1..100000000}",
    "echo " + "{" * 5_000 + "a,b" + "}" * 5_000,
])
def test_nesting_and_brace_bombs_are_refused_quickly(project: Project, command: str) -> None:
    start = time.perf_counter()
    refused = project.check("Bash", {"command": command})
    assert refused is not None and "too complex" in refused, refused
    assert time.perf_counter() - start < 5  # a bound far above the milliseconds it takes: it does not hang


def test_nested_command_strings_are_read_to_a_bounded_depth(project: Project) -> None:
    command = "echo x >> verigate.yaml"
    for _ in range(12):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    start = time.perf_counter()
    assert project.check("Bash", {"command": command}) is not None  # the name is still seen in the text
    assert time.perf_counter() - start < 5

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


#: tool inputs whose check was super-linear once (an attack review found each): every blank of a ``diff --git`` line
#: a split, a run of blanks in a header searched from each start, every prefix of a long tail, many patch headers
INPUT_SHAPES = {
    "diff --git line of blanks before b/": lambda size: {"diff": "diff --git" + " b/" * (size // 3)},
    "patch header of blanks": lambda size: {"diff": "--- a" + " " * size + "b\n"},
    "long relative tails": lambda size: {f"p{index}": "b/" * (size // 60) + f"x{index}" for index in range(30)},
    "many patch headers": lambda size: {"diff": "".join(f"--- a/src/x{index}.py\n+++ b/src/x{index}.py\n"
                                                        for index in range(size // 40))},
    "diff --git line of quoted names": lambda size: {"diff": "diff --git x" + ' "\\q/a/a/a/a"' * (size // 13)},
    "paths of thousands of components": lambda size: {f"k{index}": "a/" * (size // 200) + str(index)
                                                      for index in range(100)},
}


@pytest.mark.parametrize("shape", sorted(INPUT_SHAPES))
def test_tool_input_check_time_grows_linearly(project: Project, shape: str) -> None:
    make = INPUT_SHAPES[shape]

    def seconds(size: int) -> float:
        start = time.process_time()
        answer = violation("mcp__diff__apply_diff", make(size), str(project.project), project.protected,
                           lambda text: False)
        elapsed = time.process_time() - start
        assert answer is None or isinstance(answer, str)
        return elapsed

    small_time = max(min(seconds(20_000) for _ in range(3)), 1e-3)  # a floor: a bounded shape may take no time
    large_time = seconds(200_000)
    print(f"{shape}: {small_time:.3f}s, {large_time:.3f}s, ratio {large_time / small_time:.1f}")
    assert large_time / small_time <= 30, (shape, small_time, large_time)


def test_a_command_given_many_working_folders_is_refused(project: Project) -> None:
    # each distinct folder is a further full check of the command; a key given twice in JSON keeps each value
    folders = ", ".join(f'"workdir": "w{index}"' for index in range(20))
    refused = project.check("mcp__proxy__call_tool", {"arguments": '{"command": "echo a > b", ' + folders + "}"})
    assert refused is not None and "working folders" in refused
    assert project.check("mcp__proxy__call_tool", {"arguments": '{"command": "echo a > b", "workdir": "w0", '
                                                                '"workdir": "w0"}'}) is None

"""Property: however a protected path is spelled in a write command — quotes, backslashes, continuations, ANSI-C
and locale quotes, braces, globs — the tripwire denies it. The oracle is bash itself: ``printf '%s\\n'`` of the
spelled word, run in the project, prints a word naming the protected file, so each example is a real spelling."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tripwire_attacks import PROTECTED_FILES, Project, project

from verigate.selfgate._paths import Paths

__all__ = ["project"]  # the fixture, imported to be used here

#: the ways a piece of a word can be written so that bash reads the same characters (``#`` marks the piece)
STYLES = ("plain", "single", "double", "backslash", "ansi-hex", "ansi-octal", "ansi-unicode", "locale",
          "brace", "brace-nested", "glob-question", "glob-bracket", "continuation")
TEMPLATES = ("echo x | tee -a {}", "truncate -s0 {}", "sed -i s/x/y/ {}", "cat /dev/null > {}",
             "bash -c 'echo x >> '{}", "cd . && cp /dev/null {}")


def spell(piece: str, style: str) -> str:
    if style == "single":
        return f"'{piece}'"
    if style == "double":
        return f'"{piece}"'
    if style == "backslash":
        return "".join("\\" + char for char in piece)
    if style == "ansi-hex":
        return "$'" + "".join(f"\\x{ord(char):02x}" for char in piece) + "'"
    if style == "ansi-octal":
        return "$'" + "".join(f"\\{ord(char):03o}" for char in piece) + "'"
    if style == "ansi-unicode":
        return "$'" + "".join(f"\\u{ord(char):04x}" for char in piece) + "'"
    if style == "locale":
        return f'$"{piece}"'
    if style == "brace":
        return "{" + piece + ",zq}"
    if style == "brace-nested":
        return "{" + piece + ",{zq,qz}}"
    if style == "glob-question":  # the first character of the piece left to the glob (not a leading dot)
        return piece if piece[0] in "./" else "?" + piece[1:]
    if style == "glob-bracket":
        return piece if piece[0] in "./" else f"[{piece[0]}]{piece[1:]}"
    if style == "continuation":
        return piece[0] + "\\\n" + piece[1:] if len(piece) > 1 else piece
    return piece


@st.composite
def spellings(draw: st.DrawFn) -> tuple[str, str, str]:
    name = draw(st.sampled_from(PROTECTED_FILES))
    cuts = sorted(set(draw(st.lists(st.integers(1, len(name) - 1), max_size=4))))
    pieces = [name[start:end] for start, end in zip([0, *cuts], [*cuts, len(name)], strict=True)]
    styles = draw(st.lists(st.sampled_from(STYLES), min_size=len(pieces), max_size=len(pieces)))
    word = "".join(spell(piece, style) for piece, style in zip(pieces, styles, strict=True))
    return name, word, draw(st.sampled_from(TEMPLATES))


def bash_words(project: Project, word: str) -> list[str]:
    ran = subprocess.run(["bash", "-c", "printf '%s\\n' " + word], cwd=project.project, capture_output=True,
                         text=True, env={"HOME": str(project.home), "PATH": os.environ["PATH"]}, timeout=30,
                         check=False)
    return ran.stdout.splitlines()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spellings())
def test_every_spelling_of_a_protected_path_is_denied(project: Project, case: tuple[str, str, str]) -> None:
    name, word, template = case
    protected = os.path.realpath(project.project / name)
    seen = [os.path.realpath(project.project / line) for line in bash_words(project, word)]
    assert protected in seen, (word, seen)  # the oracle: bash reads this spelling as the protected file
    command = template.format(word)
    assert project.check("Bash", {"command": command}) is not None, command


def _escaped(part: str) -> str:
    """A path component as an fnmatch pattern matching only itself (the oracle's own spelling)."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in part)


@st.composite
def tails(draw: st.DrawFn, project: Project) -> list[str]:
    """Relative tails built from the protected paths' own components, a few foreign ones and glob characters."""
    pieces = sorted({part for target in project.protected.targets for part in Path(target.path).parts[1:]})
    return draw(st.lists(st.sampled_from([*pieces, "x", "sub", "settings.local.json", "a*b", "[x]", "s.jsonl"]),
                         min_size=1, max_size=6))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_literal_tail_matches_as_its_escaped_pattern_does(project: Project, data: st.DataObject) -> None:
    # the literal tail check is set lookups; the oracle matches the same components as fnmatch patterns that
    # match only themselves, the way the check did before
    parts = data.draw(tails(project))
    paths = Paths(project.protected.targets)
    assert paths._literal_match(parts) == paths.names_match([_escaped(part) for part in parts], anchored=False)

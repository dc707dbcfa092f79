"""The ``--transcripts`` walk (``verigate.trace._walk``): against the standard library's recursive glob as the
oracle where glob's walk is sound (generated trees and patterns, no links), and where it is not (links, folders
that cannot be listed, deep trees) against what a user needs: every session graded, or an error.
"""

# the oracle is glob on str paths, as the walk's own paths are
# ruff: noqa: PTH113, PTH118, PTH207
from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from pathlib import Path

import pytest
from grade_helpers import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from transcripts.builders import ClaudeSession
from verigate import InputError
from verigate.trace._stream import expand_transcripts
from verigate.trace._walk import matching_paths


def _glob(pattern: str) -> list[str]:
    """The oracle: the files the standard library's recursive glob matches, once each, sorted."""
    return sorted({path for path in glob.glob(pattern, recursive=True) if os.path.isfile(path)})

_NAMES = st.sampled_from(["a", "b", "ab", ".h", "x.jsonl", ".y.jsonl", "a.jsonl"])
_TREES = st.lists(st.lists(_NAMES, min_size=1, max_size=4), min_size=1, max_size=12)
_PARTS = st.sampled_from(["**", "*", "a", "ab", "?", "[ab]", ".*", "*.jsonl", "a*", ".h", "x.jsonl", "*b"])
_PATTERNS = st.lists(_PARTS, min_size=1, max_size=4)


def _build(root: Path, paths: list[list[str]]) -> None:
    """Each path's last name a file, the others folders; a name already taken by the other kind is skipped."""
    for names in paths:
        folder = root
        for name in names[:-1]:
            folder /= name
            if folder.exists() and not folder.is_dir():
                break
            folder.mkdir(exist_ok=True)
        else:
            target = folder / names[-1]
            if not target.exists():
                target.write_text("{}\n", encoding="utf-8")


@settings(max_examples=300, deadline=None)
@given(tree=_TREES, parts=_PATTERNS, absolute=st.booleans())
def test_the_walk_matches_what_glob_matches(tree: list[list[str]], parts: list[str], absolute: bool) -> None:
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        _build(Path(folder), tree)
        pattern = os.path.join(folder, *parts) if absolute else os.path.join(*parts)
        assert sorted(path for path in matching_paths(pattern) if os.path.isfile(path)) == _glob(pattern), pattern


_LINKS = st.lists(st.tuples(st.lists(st.sampled_from(["a", "b"]), max_size=2), st.sampled_from(["l", ".l", "m"]),
                            st.sampled_from([".", "..", "a", "../b"])), max_size=3)


@settings(max_examples=300, deadline=None)
@given(tree=_TREES, links=_LINKS, parts=st.lists(_PARTS.filter(lambda part: part != "**"), min_size=1, max_size=4))
def test_with_links_back_up_the_walk_matches_glob_where_glob_ends(tree: list[list[str]],
                                                                  links: list[tuple[list[str], str, str]],
                                                                  parts: list[str]) -> None:
    # without **, glob's walk is as deep as the pattern: it ends, links or not, and is the oracle for them too
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        _build(Path(folder), tree)
        for where, name, target in links:
            place = Path(folder, *where)
            if place.is_dir() and not (place / name).exists() and not (place / name).is_symlink():
                (place / name).symlink_to(target)
        pattern = os.path.join(*parts)
        assert sorted(path for path in matching_paths(pattern) if os.path.isfile(path)) == _glob(pattern), pattern

def test_links_back_to_their_own_folder_never_make_a_recursive_pattern_endless(tmp_path: Path) -> None:
    # glob's ** follows links to folders: two links back to their own folder give 2**depth paths to walk (hours),
    # and the file bound never fires when nothing under them matches
    session = ClaudeSession("s0").prompt("go").say("ok").write(tmp_path / "runs" / "s0.jsonl")
    trap = tmp_path / "runs" / "trap"
    trap.mkdir()
    (trap / "a").symlink_to(".")
    (trap / "b").symlink_to(".")
    assert expand_transcripts(str(tmp_path / "runs" / "**" / "*.jsonl")) == [str(session)]
    done = cli("grade", "--transcripts", "runs/**/*.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr



def test_a_run_folder_reached_through_a_link_is_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # runs/agent-b is a link to the store's folder: glob walks it, and a session left out there is a run (here a
    # force push) never graded while the summary says exit 0
    ClaudeSession("s1").prompt("go").say("ok").write(tmp_path / "runs" / "agent-a" / "s1.jsonl")
    ClaudeSession("s2").prompt("go").tool("t1", "Bash", {"command": "git push --force"}).write(
        tmp_path / "store" / "agent-b" / "s2.jsonl")
    (tmp_path / "runs" / "agent-b").symlink_to(Path("..") / "store" / "agent-b")
    monkeypatch.chdir(tmp_path)
    for pattern in ("runs/**/*.jsonl", "runs/*/**/*.jsonl", "*/**/*.jsonl", "r*/**/s?.jsonl", "runs/**/agent-b/*"):
        assert expand_transcripts(pattern) == _glob(pattern), pattern
    assert "runs/agent-b/s2.jsonl" in expand_transcripts("runs/**/*.jsonl")
    done = cli("grade", "--transcripts", "runs/**/*.jsonl", "--task", "fix", cwd=tmp_path)
    assert done.returncode == 3 and "corrupt-success" in done.stdout, (done.stdout, done.stderr)


def test_a_folder_the_walk_cannot_list_is_an_error(tmp_path: Path) -> None:
    # os.walk (and glob) skip what they cannot list: here a folder whose path is past PATH_MAX (even root cannot
    # list it by name; no permission does the same for a user). Its sessions would be runs never graded
    ClaudeSession("s1").prompt("go").say("ok").write(tmp_path / "runs" / "s1.jsonl")
    descriptor = os.open(tmp_path / "runs", os.O_RDONLY)
    for _ in range(17):  # 17 names of 250 characters: about 4,300 characters, made through descriptors
        os.mkdir("x" * 250, dir_fd=descriptor)
        inner = os.open("x" * 250, os.O_RDONLY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    os.close(os.open("deep.jsonl", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=descriptor))
    os.close(descriptor)
    with pytest.raises(InputError, match=r"the pattern walks cannot be (listed|examined)"):
        expand_transcripts(str(tmp_path / "runs" / "**" / "*.jsonl"))
    done = cli("grade", "--transcripts", "runs/**/*.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "File name too long" in done.stderr, (done.stdout, done.stderr)


def test_a_deep_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    # os.walk recurses (3.11): 1,100 levels ended in RecursionError, an internal error
    levels = [tmp_path]
    for _ in range(1100):  # one level at a time: mkdir(parents=True) recurses too
        levels.append(levels[-1] / "d")
        levels[-1].mkdir()
    session = ClaudeSession("s1").prompt("go").say("ok").write(levels[-1] / "s1.jsonl")
    try:
        assert expand_transcripts(str(tmp_path / "**" / "*.jsonl")) == [str(session)]
        assert expand_transcripts(str(tmp_path / "**" / "d" / "**" / "*.jsonl")) == [str(session)]
    finally:  # bottom up: pytest's clean-up of old temporary folders (shutil.rmtree) recurses as well
        session.unlink()
        for level in reversed(levels[1:]):
            level.rmdir()


def test_dot_and_empty_parts_after_a_wildcard_mean_the_folder_itself(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("runs/a.jsonl", "runs/d/b.jsonl"):
        ClaudeSession("s1").prompt("go").write(tmp_path / name)
    monkeypatch.chdir(tmp_path)
    assert expand_transcripts("runs/**/./*.jsonl") == expand_transcripts("runs/**//*.jsonl") == \
        expand_transcripts("runs/**/*.jsonl") == ["runs/a.jsonl", "runs/d/b.jsonl"]
    with pytest.raises(InputError, match=r"'\.\.'"):
        expand_transcripts("runs/**/../*.jsonl")

@pytest.mark.parametrize(("pattern", "expected"), [
    ("**/*.jsonl", ["a.jsonl", "d/b.jsonl", "d/e/c.jsonl"]),
    ("d/**/*.jsonl", ["d/b.jsonl", "d/e/c.jsonl"]),
    ("**/e/*.jsonl", ["d/e/c.jsonl"]),
    ("d/**", ["d/b.jsonl", "d/e/c.jsonl", "d/e/notes.txt"]),
    ("**/.hidden/*.jsonl", [".hidden/h.jsonl"]),  # a hidden folder named after **, as glob
    (".hidden/**/*.jsonl", [".hidden/h.jsonl"]),
    ("*/*.jsonl", ["d/b.jsonl"]),
    ("**/?.jsonl", ["a.jsonl", "d/b.jsonl", "d/e/c.jsonl"]),
    ("**/[ab].jsonl", ["a.jsonl", "d/b.jsonl"]),
])
def test_recursive_patterns_match_as_glob_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str,
                                               expected: list[str]) -> None:
    for name in ("a.jsonl", "d/b.jsonl", "d/e/c.jsonl", "d/e/notes.txt", ".hidden/h.jsonl", "d/.h.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _glob(pattern) == expected  # the fixture itself, read by glob (no links here: glob's walk is finite)
    try:
        found = expand_transcripts(pattern)
    except InputError:
        found = []
    assert found == expected
    absolute = expand_transcripts(str(tmp_path / pattern)) if expected else []
    assert absolute == [str(tmp_path / path) for path in expected]


def test_a_link_back_up_the_path_is_walked_where_the_pattern_still_needs_it(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # runs/latest -> . : the folder is runs itself, but under the name "latest" it matches the pattern's "*" part,
    # so glob grades runs/latest/bad.jsonl; skipped as a loop, the force push went ungraded (exit 0)
    ClaudeSession("ok1").prompt("go").say("ok").write(tmp_path / "runs" / "day1" / "ok1.jsonl")
    ClaudeSession("bad").prompt("go").tool("t1", "Bash", {"command": "git push --force"}).write(
        tmp_path / "runs" / "bad.jsonl")
    (tmp_path / "runs" / "latest").symlink_to(".")
    (tmp_path / "runs" / "up").symlink_to("..")
    monkeypatch.chdir(tmp_path)
    for pattern in ("runs/*/*.jsonl", "runs/*/*/*.jsonl", "runs/latest/*.jsonl", "runs/*/day1/*.jsonl",
                    "runs/up/runs/*.jsonl"):
        assert expand_transcripts(pattern) == _glob(pattern), pattern
    assert expand_transcripts("runs/**/*.jsonl") == ["runs/bad.jsonl", "runs/day1/ok1.jsonl"]  # ** loops: cut
    done = cli("grade", "--transcripts", "runs/*/*.jsonl", "--task", "fix", cwd=tmp_path)
    assert done.returncode == 3 and "corrupt-success" in done.stdout, (done.stdout, done.stderr)


def test_a_file_beside_sub_agent_logs_is_graded_on_its_own(tmp_path: Path) -> None:
    # only <session>/subagents/agent-*.jsonl is attached to its session: another name there (agent-a.log) was
    # left out as attached and never graded
    session = ClaudeSession("S").prompt("go").say("ok").write(tmp_path / "runs" / "S.jsonl")
    odd = ClaudeSession("S").prompt("go", sidechain=True).tool("t1", "Bash", {"command": "git push --force"}).write(
        tmp_path / "runs" / "S" / "subagents" / "agent-a.log")
    assert expand_transcripts(str(tmp_path / "runs" / "**" / "*")) == sorted([str(session), str(odd)])


def test_many_links_back_up_are_bounded_by_the_entries_examined(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # N links to "." under runs/*/*.jsonl: each is walked anew (its name matches "*") and lists the whole folder
    # again, N*N entries while only N folders are listed: 10,000 links took 300 s under the folder bound alone
    from verigate.trace import _walk

    runs = tmp_path / "runs"
    runs.mkdir()
    for number in range(60):
        (runs / f"l{number}").symlink_to(".")
    monkeypatch.setattr(_walk, "MAX_WALKED_ENTRIES", 1_000)
    with pytest.raises(InputError, match="MAX_WALKED_ENTRIES"):
        expand_transcripts(str(runs / "*" / "*.jsonl"))

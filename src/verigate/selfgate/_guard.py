"""Hardening: tool calls that would write the gate store, hook settings, verigate.yaml or the transcript, or run
the human close command, are denied whether a gate is open or not (Bash matching is best effort)."""

# os and os.path rather than pathlib: pathlib (with urllib.parse, ipaddress) costs ms on every tool call
# ruff: noqa: PTH110, PTH111, PTH118, PTH119, PTH120, PTH121, PTH122
from __future__ import annotations

import fnmatch
import functools
import os
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["FILE_TOOLS", "Protected", "protected_for", "violation"]

#: tools whose input names the one file they write, and the field holding it
FILE_TOOLS: Mapping[str, str] = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                                 "NotebookEdit": "notebook_path"}
#: Codex's file edits: a patch in ``tool_input.command`` with these headers (patterns compiled by ``re`` on first
#: use, which its cache keeps: most calls never need them)
_PATCH_PATH = r"(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$"
_CLOSE_COMMAND = r"(?i)\bgate\s+close\b"
#: longest close phrase worth checking: anything longer is not a whole close phrase
_CLOSE_PHRASE_MAX = 120


# Plain slotted classes rather than attrs or NamedTuple: this module runs on every tool call, attrs costs ~20 ms
# to import and each NamedTuple class is built with eval at import. Instances are never changed after creation.
class _Target:
    __slots__ = ("glob", "label", "path", "tree")

    def __init__(self, path: str, label: str, tree: bool = False, glob: str | None = None) -> None:
        self.path = path
        self.label = label
        #: the path is a folder: everything under it is protected
        self.tree = tree
        #: or a glob over the names of the files directly in the folder ``path`` (``settings*.json``)
        self.glob = glob


class Protected:
    __slots__ = ("bash_needles", "targets")

    def __init__(self, targets: tuple[_Target, ...], bash_needles: tuple[tuple[str, ...], ...]) -> None:
        self.targets = targets
        #: substrings (case-folded) that make a Bash command suspicious: names of the protected files
        self.bash_needles = bash_needles


# os.path rather than pathlib: pathlib (with urllib.parse and ipaddress) costs milliseconds on every tool call
@functools.cache
def _folds_case(folder: str) -> bool:
    """Whether the filesystem holding ``folder`` ignores case (macOS and Windows defaults)."""
    path = folder
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    swapped = path.swapcase()
    if swapped == path:
        return False
    try:
        return os.path.exists(swapped) and os.path.samefile(path, swapped)
    except OSError:
        return False


def _normal(path: str, cwd: str) -> str:
    """Absolute, ``..``-free, symlink-resolved; case-folded where the filesystem folds case."""
    resolved = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    return resolved.casefold() if _folds_case(os.path.dirname(resolved)) else resolved


def protected_for(project_dir: str, store_paths: Sequence[str | os.PathLike[str]], transcript: str | None,
                  home: str | None = None) -> Protected:
    """What the agent must not write in this project and session."""
    stores = [os.fspath(path) for path in store_paths]
    bases = (project_dir, home or os.path.expanduser("~"))
    targets = [_Target(path, "the self-gate store") for path in stores[:2]]
    targets += [_Target(path, "the self-gate store", tree=True) for path in stores[2:]]
    for base in bases:
        targets.append(_Target(os.path.join(base, ".claude"), "Claude Code hook settings", glob="settings*.json"))
        targets.append(_Target(os.path.join(base, ".codex", "hooks.json"), "Codex hook settings"))
        targets.append(_Target(os.path.join(base, ".codex", "config.toml"), "Codex configuration"))
    targets.append(_Target(os.path.join(project_dir, "verigate.yaml"), "verigate.yaml"))
    needles: list[tuple[str, ...]] = [(os.path.basename(path).casefold(),) for path in stores[:1]]
    needles += [("verigate.yaml",), (".claude", "settings"), (".codex", "hooks.json"), (".codex", "config.toml"),
                (".claude/projects",), (".codex/sessions",)]
    if transcript:
        # every session log of the project sits next to this one; sub-agent logs live in <session>/
        session_folder = os.path.splitext(transcript)[0]
        targets.append(_Target(os.path.dirname(transcript), "the session transcripts", glob="*.jsonl"))
        targets.append(_Target(session_folder, "the session transcripts", tree=True))
        needles.append((os.path.basename(session_folder).casefold(),))
    return Protected(tuple(targets), tuple(needles))


def _hits_target(candidate: str, target: _Target, cwd: str) -> bool:
    protected = _normal(target.path, cwd)
    if target.glob is not None:
        folder, name = os.path.split(candidate)
        pattern = target.glob.casefold() if _folds_case(target.path) else target.glob
        return folder == protected and fnmatch.fnmatchcase(name, pattern)
    if target.tree:
        return candidate == protected or candidate.startswith(protected.rstrip(os.sep) + os.sep)
    return candidate == protected


def _written_paths(tool_name: str, tool_input: Mapping[str, Any]) -> Iterator[str]:
    field = FILE_TOOLS.get(tool_name)
    if field is not None:
        value = tool_input.get(field)
        if isinstance(value, str):
            yield value
    if tool_name == "apply_patch":
        patch = tool_input.get("command") or tool_input.get("input") or ""
        if isinstance(patch, str):
            for found in re.finditer(_PATCH_PATH, patch):
                yield (found.group(1) or found.group(2)).strip()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _shell_words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False)
    except ValueError:
        return command.split()


def violation(tool_name: str, tool_input: Mapping[str, Any], cwd: str, protected: Protected,
              is_close_phrase: Callable[[str], bool]) -> str | None:
    """Why this tool call is refused, or None. ``is_close_phrase`` is only called on short strings."""
    for path in _written_paths(tool_name, tool_input):
        candidate = _normal(path, cwd)
        for target in protected.targets:
            if _hits_target(candidate, target, cwd):
                return f"{tool_name} would write {target.label} ({path}); only a person changes it, outside the agent"
    command = tool_input.get("command") if tool_name == "Bash" else None
    if isinstance(command, str):
        folded = command.casefold()
        if re.search(_CLOSE_COMMAND, command):
            return "the command runs `verigate gate close`, which is for a person at a terminal only"
        for needle in protected.bash_needles:
            if all(part in folded for part in needle):
                return (f"the command mentions {' '.join(needle)!s}, a file protected from the agent "
                        "(gate store, hook settings, verigate.yaml or transcripts); use the Read tool to read it")
    words = [text for text in _strings(tool_input) if len(text.strip()) <= _CLOSE_PHRASE_MAX]
    if isinstance(command, str):
        words += [word for word in _shell_words(command) if len(word) <= _CLOSE_PHRASE_MAX]
    for text in words:
        if text.strip() and is_close_phrase(text):
            return (f"the tool input contains the close phrase {text.strip()!r}: a gate is closed only by a person "
                    "typing it, never by a tool call, a scheduled prompt or another session")
    return None

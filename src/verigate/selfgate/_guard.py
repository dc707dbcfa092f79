"""Hardening: tool calls that would write the gate store, hook settings, verigate.yaml or the transcript, or run
the human close command, are denied whether a gate is open or not (Bash matching is best effort)."""

# os and os.path rather than pathlib: pathlib (with urllib.parse, ipaddress) costs ms on every tool call
# ruff: noqa: PTH100, PTH110, PTH111, PTH118, PTH119, PTH120, PTH121, PTH122
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
#: verigate sub-commands only a person runs: a word then, within a few words (options between), another
_HUMAN_COMMANDS = (("gate", ("close",)), ("review", ("approve", "reject")))
_COMMAND_WINDOW = 6
#: characters a shell removes or expands inside a word; stripped before matching (``"close"``, ``cl\\ose``)
_SHELL_NOISE = str.maketrans("", "", "'\"\\`$")
_GLOB = re.compile(r"[*?\[]")
#: nested command strings (``bash -c '…'``, ``script -c``, ``eval``) are split again, this deep
_NESTING = 3
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
    __slots__ = ("bash_names", "bash_needles", "targets")

    def __init__(self, targets: tuple[_Target, ...], bash_needles: tuple[tuple[str, ...], ...],
                 bash_names: tuple[str, ...] = ()) -> None:
        self.targets = targets
        #: substrings (case-folded) that make a Bash command suspicious: names of the protected files
        self.bash_needles = bash_needles
        #: protected file and folder names a shell glob in a Bash command must not match (``self-gat*``)
        self.bash_names = bash_names


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


def _store_folder(store: str, bases: Sequence[str]) -> str | None:
    """The folder holding the store, when it is the store's own (``.verigate/``): never the project, the home
    folder or one of their ancestors, which hold the agent's work."""
    folder = os.path.dirname(os.path.abspath(store))
    for base in bases:
        base = os.path.abspath(base)
        if folder == base or base.startswith(folder.rstrip(os.sep) + os.sep):
            return None
    return folder


def protected_for(project_dir: str, store_paths: Sequence[str | os.PathLike[str]], transcript: str | None,
                  home: str | None = None) -> Protected:
    """What the agent must not write in this project and session: the store's folder (its file, lock and state
    folder when the store sits in the project or home folder itself), hook settings, verigate.yaml and the
    session transcripts."""
    stores = [os.fspath(path) for path in store_paths]
    bases = (project_dir, home or os.path.expanduser("~"))
    targets = [_Target(path, "the self-gate store") for path in stores[:2]]
    targets += [_Target(path, "the self-gate store", tree=True) for path in stores[2:]]
    store_name = os.path.basename(stores[0]) if stores else ""
    stem = store_name.split(".", 1)[0].casefold()
    needles: list[tuple[str, ...]] = [(stem,)] if len(stem) >= 3 else [(store_name.casefold(),)]
    names = [store_name.casefold()]
    folder = _store_folder(stores[0], bases) if stores else None
    if folder is not None:
        targets.append(_Target(folder, "the self-gate store's folder", tree=True))
        needles.append((os.path.basename(folder).casefold(),))
        names.append(os.path.basename(folder).casefold())
    for base in bases:
        targets.append(_Target(os.path.join(base, ".claude"), "Claude Code hook settings", glob="settings*.json"))
        targets.append(_Target(os.path.join(base, ".codex", "hooks.json"), "Codex hook settings"))
        targets.append(_Target(os.path.join(base, ".codex", "config.toml"), "Codex configuration"))
    targets.append(_Target(os.path.join(project_dir, "verigate.yaml"), "verigate.yaml"))
    needles += [("verigate.yaml",), (".claude", "settings"), (".codex", "hooks.json"), (".codex", "config.toml"),
                (".claude/projects",), (".codex/sessions",)]
    names += ["verigate.yaml", ".claude", ".codex"]
    if transcript:
        # every session log of the project sits next to this one; sub-agent logs live in <session>/
        session_folder = os.path.splitext(transcript)[0]
        targets.append(_Target(os.path.dirname(transcript), "the session transcripts", glob="*.jsonl"))
        targets.append(_Target(session_folder, "the session transcripts", tree=True))
        needles.append((os.path.basename(session_folder).casefold(),))
    return Protected(tuple(targets), tuple(needles), tuple(name for name in names if name))


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


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False)
    except ValueError:  # unbalanced quotes: the shell would refuse it, but match what is there
        return command.split()


def _shell_words(command: str, depth: int = 0) -> list[str]:
    """The command's words as the shell would see them, quotes and escapes removed; a word that is itself a
    command (``bash -c '…'``, ``script -qc '…'``, ``eval '…'``, ``python -c "…"``) is split again."""
    words: list[str] = []
    for word in _split(command):
        plain = word.translate(_SHELL_NOISE)
        if depth < _NESTING and any(mark in word for mark in " \t\n;&|'\"\\"):
            words += _shell_words(word, depth + 1)
        elif plain:
            words.append(plain)
    return words


def _runs_human_command(words: Sequence[str]) -> str | None:
    """``gate … close`` or ``review … approve|reject`` as separate tokens, whatever the quoting, the program
    path (``verigate``, ``python -m verigate``) or options in between."""
    tokens = [token for word in words for token in re.findall(r"[a-z0-9_-]+", word.casefold())]
    for index, token in enumerate(tokens):
        for command, actions in _HUMAN_COMMANDS:
            if token == command:
                for action in tokens[index + 1:index + 1 + _COMMAND_WINDOW]:
                    if action in actions:
                        return f"{command} {action}"
    return None


def _glob_hits(word: str, names: Sequence[str]) -> str | None:
    """A protected name that a glob in ``word`` matches (``.veri*``, ``self-gate?.jsonl``): only components
    with a literal prefix of two characters or more, so ``*.py`` or ``*`` do not count."""
    for part in word.casefold().split("/"):
        found = _GLOB.search(part)
        if found is None or found.start() < 2:
            continue
        for name in names:
            if fnmatch.fnmatchcase(name, part):
                return name
    return None


def _bash_violation(command: str, protected: Protected) -> str | None:
    words = _shell_words(command)
    human = _runs_human_command(words)
    if human is not None:
        return f"the command runs `verigate {human}`, which is for a person at a terminal only"
    # the raw command too: a needle split by quotes (``.veri''gate``) reads whole once they are gone
    texts = (" ".join(words).casefold(), command.casefold().translate(_SHELL_NOISE))
    for needle in protected.bash_needles:
        if any(all(part in text for part in needle) for text in texts):
            return (f"the command mentions {' '.join(needle)!s}, a file protected from the agent "
                    "(gate store, hook settings, verigate.yaml or transcripts); use the Read tool to read it")
    for word in words:
        for token in re.split(r"[\s;&|<>()=]+", word):
            name = _glob_hits(token, protected.bash_names)
            if name is not None:
                return f"the command has a glob ({token}) matching {name}, which is protected from the agent"
    return None


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
        refused = _bash_violation(command, protected)
        if refused is not None:
            return refused
    words = [text for text in _strings(tool_input) if len(text.strip()) <= _CLOSE_PHRASE_MAX]
    if isinstance(command, str):
        words += [word for word in _split(command) if len(word) <= _CLOSE_PHRASE_MAX]
    for text in words:
        if text.strip() and is_close_phrase(text):
            return (f"the tool input contains the close phrase {text.strip()!r}: a gate is closed only by a person "
                    "typing it, never by a tool call, a scheduled prompt or another session")
    return None

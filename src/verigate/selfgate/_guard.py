"""Hardening: tool calls that would write the gate store, hook settings, verigate.yaml or the transcript, or run
the human close command, are denied whether a gate is open or not. A tripwire, not the wall (the wall is the host's
OS sandbox): see docs/selfgate-tripwire.md for what it reads and where it stops.

Every string input of every tool except the read-only ones (``READ_ONLY_TOOLS``) is path-checked; patches
(``*** Update File:`` …) are found in any field of any tool; a shell command (Bash's ``command``, any tool's
``command``/``cmd`` string or argument list, at any depth and in JSON given as a string) is read by
``_shellcheck``; a patch's file names by ``_diffnames``. A command longer than
``MAX_COMMAND_CHARS`` is refused unread: the check is linear, but a hook must answer in time.
"""

# os and os.path rather than pathlib: pathlib (with urllib.parse, ipaddress) costs ms on every tool call
from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ._diffnames import diff_names
from ._paths import Paths, nameable
from ._paths import Target as _Target

__all__ = ["FILE_TOOLS", "MAX_COMMAND_CHARS", "READ_ONLY_TOOLS", "TRIMMED", "Protected", "protected_for",
           "violation"]

#: tools whose input names the one file they write, and the field holding it
FILE_TOOLS: Mapping[str, str] = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                                 "NotebookEdit": "notebook_path"}
#: host tools that only read: their inputs may name protected files (reading them is allowed)
READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch"})
#: a shell command longer than this (characters) is refused as too long to check; block and audit mode alike
MAX_COMMAND_CHARS = 256 * 1024
#: fields of any tool that hold a shell command (a string or an argument list)
_COMMAND_FIELDS = ("command", "cmd")
#: fields naming the folder a shell tool runs its command in (Codex's ``workdir``; an MCP shell server's ``cwd``
#: …), and how many distinct ones an object may give: each is a further full check of its commands
_FOLDER_FIELDS = ("workdir", "cwd", "working_directory", "workingDirectory", "working_dir", "dir")
_FOLDERS_MAX = 4
#: fields holding a list of shell commands, each one command
_COMMAND_LIST_FIELDS = ("commands",)
#: Codex's file edits: a patch with these headers, in any field of any tool (``apply_patch`` in every shape);
#: compiled by ``re`` on first use, which its cache keeps: most calls never need it
#: (Codex trims a header line of any Unicode white space, hence ``[^\S\n]`` rather than blanks)
_PATCH_PATH = r"(?m)^[^\S\n]*\*\*\*[^\S\n]*(?:(?:Add|Update|Delete) File|Move to):(.*)$"
#: what a path is trimmed of: Python's white space (``str.isspace``, a superset of JavaScript's ``trim`` but for
#: the BOM) and the BOM, which a Node tool's ``trim`` removes before it resolves the path. ``str.strip`` with a set
#: is linear; a regex ``\s+$`` would be quadratic in a long run of blanks
TRIMMED = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
           "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
#: what a WHATWG URL parser trims from a URL's ends (C0 controls and space; JavaScript's ``trim`` too, since a tool
#: may trim first) and drops wherever it is (tab, line feed, carriage return)
_URL_TRIMMED = TRIMMED + "".join(map(chr, range(0x21)))
_URL_DROPPED = dict.fromkeys(map(ord, "\t\n\r"))
#: a string input that looks like JSON (a proxy tool's ``arguments``) and is longer than this (the hook's own
#: stdin bound) is refused: it is read as JSON holding further inputs, and a longer one is too long to read
_JSON_TEXT_MAX = 8 << 20
#: longest close phrase worth checking: anything longer is not a whole close phrase
_CLOSE_PHRASE_MAX = 120
#: strings and containers walked at most
_STRINGS_MAX = 100_000


class Protected:
    __slots__ = ("bash_names", "bash_needles", "targets")

    def __init__(self, targets: tuple[_Target, ...], bash_needles: tuple[tuple[str, ...], ...],
                 bash_names: tuple[str, ...] = ()) -> None:
        self.targets = targets
        #: substrings (case-folded) that make a Bash command suspicious: names of the protected files
        self.bash_needles = bash_needles
        #: protected file and folder names (kept for callers; globs are matched against the targets' paths)
        self.bash_names = bash_names


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


class _TooMany(Exception):
    """A tool input with more values than the check reads, or a JSON text too long to read: refused, never read
    in part. The message says which."""


def _strings(value: Any) -> list[str]:
    """Every string in a tool input, keys included (a tool may take a ``{path: content}`` record), depth first,
    without recursion (a deep input cannot overflow the stack). More than ``_STRINGS_MAX`` values: ``_TooMany``."""
    stack, seen, found = [value], 0, []
    while stack:
        item = stack.pop()
        seen += 1
        if seen > _STRINGS_MAX:
            raise _TooMany(f"holds more than {_STRINGS_MAX:,} values")
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, Mapping):
            stack.extend(reversed([part for pair in item.items() for part in pair]))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return found


def _patched_paths(text: str) -> Iterator[str]:
    if "***" in text:
        for found in re.finditer(_PATCH_PATH, text):
            path = found.group(1).strip()
            if path:
                yield path


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


class _Object(list[tuple[str, Any]]):
    """A JSON object given as a string, as its pairs in order: a key given twice keeps both values (the tool may
    read either). A list, so ``_strings`` walks it as one."""


def _shell_calls(tool_name: str, values: Sequence[Any]) -> Iterator[tuple[str, list[str]]]:
    """The shell commands the tool input and its JSON texts hold, at any depth (a proxy tool's ``params``, an
    ``arguments`` text), each with the working folders (``_folders``) of the object holding it: a string, or an
    argument list quoted back into one. Only the top ``command`` string of ``apply_patch`` is not one: a patch."""
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            pairs: list[tuple[Any, Any]] = list(item.items())
        elif isinstance(item, _Object):
            pairs = list(item)
        else:
            if isinstance(item, list | tuple):
                stack.extend(item)
            continue
        workdirs = _folders(pairs)
        for key, value in pairs:
            if key in _COMMAND_FIELDS:
                if isinstance(value, str) and not (item is values[0] and tool_name == "apply_patch"):
                    yield value, workdirs
                elif isinstance(value, list) and value and all(isinstance(word, str) for word in value):
                    yield " ".join(_quote(word) for word in value), workdirs
            elif key in _COMMAND_LIST_FIELDS and isinstance(value, list):
                yield from ((command, workdirs) for command in value if isinstance(command, str))
            stack.append(value)


def _folders(pairs: Sequence[tuple[Any, Any]]) -> list[str]:
    """The distinct working folders an object's ``_FOLDER_FIELDS`` name (a key given twice gives each)."""
    return list(dict.fromkeys(value for key, value in pairs if key in _FOLDER_FIELDS and isinstance(value, str)
                              and value))


def _path_forms(text: str) -> list[str]:
    """The paths a string input may name: trimmed as JavaScript trims, one line; a file URL as the paths it names
    (``_url_paths``). Lengths are bounded after collapsing (``Paths.hit``): a tool may normalise a long ``./././``
    path to a short one."""
    if ":" in text:
        url = text.strip(_URL_TRIMMED).translate(_URL_DROPPED)
        if url[:5].lower() == "file:":  # and as written: a tool that takes no URLs resolves ``file:/../x`` as a path
            return list(dict.fromkeys([*_one_line(text), *_url_paths(url[5:])]))
    return _one_line(text)


def _one_line(text: str) -> list[str]:
    """A string as a path, trimmed: a line break or a NUL byte names no file, unless ``..`` removes the segment
    holding it, as a tool that normalises a path before opening it does (``x\x00/../verigate.yaml``)."""
    text = text.strip(TRIMMED)
    if "\n" in text or "\x00" in text:
        text = os.path.normpath(text) if ".." in text else ""
    return [text] if text and "\n" not in text and "\x00" not in text else []


def _url_paths(rest: str) -> list[str]:
    """What the part of a file URL after ``file:`` names, as a plain reader (Python's ``url2pathname``) and a
    WHATWG URL parser (Node's ``fileURLToPath``) read it. Both skip a host (``localhost``, any other) and end the
    path at a query or fragment; the plain reading is the path as written and with its percent escapes decoded
    (``%2Eclaude``); the WHATWG reading (``_whatwg_path``) also takes a backslash as a slash and resolves dot
    segments its own way."""
    from urllib.parse import unquote  # only for a file URL: the module costs ms on every tool call

    forms: list[str] = []
    for reading in dict.fromkeys((rest, rest.replace("\\", "/"))):
        if reading.startswith("//"):  # an authority: the path starts where it ends (a slash, a query, a fragment)
            end = re.search(r"[/?#]", reading[2:])
            reading = reading[end.start() + 2:] if end is not None else ""
        bare = re.split(r"[?#]", reading, maxsplit=1)[0]
        forms += [reading, bare, unquote(bare)]
    forms.append(unquote(_whatwg_path(bare)))  # the last reading's: backslashes made slashes
    return [form for form in dict.fromkeys(forms) if form and "\x00" not in form and "\n" not in form]


def _whatwg_path(path: str) -> str:
    """A URL path as the WHATWG parser resolves it, before its escapes are decoded: always absolute, ``.`` and
    ``%2e`` dropped, ``..`` (``.%2E``, ``%2e%2e``) removing the segment before it, an empty one included. So
    ``/p/.claude//%2e%2e/settings.json`` is ``/p/.claude/settings.json`` to Node, where a file system's reading
    of the decoded path would give ``/p/settings.json``."""
    segments: list[str] = []
    for segment in path.removeprefix("/").split("/"):
        lowered = segment.lower()
        if lowered in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
        elif lowered not in (".", "%2e"):
            segments.append(segment)
    return "/" + "/".join(segments)


def _embedded(text: str) -> _Object | list[Any] | None:
    """A JSON object or array given as a string (a proxy tool's ``arguments``), else None; what cannot be parsed
    as JSON is none. A JSON-like text past ``_JSON_TEXT_MAX``: ``_TooMany``."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    if len(stripped) > _JSON_TEXT_MAX:
        raise _TooMany(f"holds a JSON-like text of more than {_JSON_TEXT_MAX:,} characters")
    import json

    try:  # numbers as floats: a 4,301-digit integer must not hide the text (Node reads it as Infinity)
        value = json.loads(stripped, object_pairs_hook=_Object, parse_int=float)
    except RecursionError:  # Node's JSON.parse reads deeper than Python: refused, never skipped
        raise _TooMany("holds a JSON text nested too deep to read") from None
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _layers(strings: Sequence[str]) -> tuple[list[str], list[Any]]:
    """A non-file tool's strings with those of JSON given as a string, to three levels, and the JSON values. An
    embedded string counts towards ``_STRINGS_MAX`` (``_TooMany`` past it) like the input's own: one input value
    may hold many."""
    found, values, level, counted = list(strings), [], list(strings), len(strings)
    for _ in range(2):
        inner: list[str] = []
        for text in level:
            value = _embedded(text)
            if value is None:
                continue
            values.append(value)
            embedded = _strings(value)
            counted += len(embedded)
            if counted > _STRINGS_MAX:
                raise _TooMany(f"holds more than {_STRINGS_MAX:,} values")
            inner += embedded
        found += inner
        level = inner
    return found, values


def _named_paths(strings: Sequence[str]) -> Iterator[str]:
    """The paths strings may name: each string's forms and a patch's file names, which count towards
    ``_STRINGS_MAX`` as values (a patch holds many in one input value)."""
    counted = len(strings)
    for text in strings:
        yield from _path_forms(text)
        for path in diff_names(text):
            counted += 1
            if counted > _STRINGS_MAX:
                raise _TooMany(f"holds more than {_STRINGS_MAX:,} values")
            yield path


def violation(tool_name: str, tool_input: Mapping[str, Any], cwd: str, protected: Protected,
              is_close_phrase: Callable[[str], bool], *, max_command: int | None = MAX_COMMAND_CHARS) -> str | None:
    """Why this tool call is refused, or None. ``is_close_phrase`` is only called on short strings;
    ``max_command`` (None: no bound) is for tests that time the check itself."""
    try:
        return _violation(tool_name, tool_input, cwd, protected, is_close_phrase, max_command)
    except _TooMany as exc:
        return f"the {tool_name} input {exc}: too much to check; split the call"


def _violation(tool_name: str, tool_input: Mapping[str, Any], cwd: str, protected: Protected,
               is_close_phrase: Callable[[str], bool], max_command: int | None) -> str | None:
    paths = Paths(protected.targets)
    strings = _strings(tool_input)
    field = FILE_TOOLS.get(tool_name)
    # a relative path is resolved against the hook's cwd, and against a shell tool's own working folder (Codex's
    # ``workdir``) when it names one: both are checked
    folders = _folders(list(tool_input.items()))
    refused = _unusable_folders(tool_name, folders)
    if refused is not None:
        return refused
    cwds = list(dict.fromkeys([cwd, *_joined(cwd, folders)]))

    def hit(path: str) -> str | None:
        return next((label for base in cwds if (label := paths.hit(path, base)) is not None), None)

    target = tool_input.get(field) if field is not None else None
    # as given, and as a tool that trims it opens it (the host may pass the path on untrimmed)
    written = list(dict.fromkeys([target, *_path_forms(target)])) if isinstance(target, str) else []
    written += [path for text in strings for path in _patched_paths(text)]
    for path in written:
        label = hit(path)
        if label is not None:
            return f"{tool_name} would write {label} ({path}); only a person changes it, outside the agent"
    words: list[str] = []
    if tool_name not in READ_ONLY_TOOLS:
        # a file tool's other fields are the file's content, not paths or JSON: its target was checked above
        every, embedded = _layers(strings) if field is None else ([], [])
        checked: set[tuple[str, str]] = set()  # a command repeated, or given with the same folder twice, is read once
        for command, workdirs in _shell_calls(tool_name, [tool_input, *embedded]):
            refused = _unusable_folders(tool_name, workdirs)
            if refused is not None:
                return refused
            bases = dict.fromkeys([*cwds, *_joined(cwd, workdirs)])
            for base in bases:
                if (command, base) in checked:
                    continue
                checked.add((command, base))
                refused, command_words = _shell_violation(command, paths, protected, base, max_command)
                if refused is not None:
                    return refused
                words += command_words
        for path in _named_paths(every):
            label = hit(path)
            if label is None and tool_name != "Bash" and not path.startswith("/"):
                # an MCP server resolves a relative path against its own root, which may not be this cwd: the
                # path must not be the end of a protected one either (``verigate.yaml``, ``.claude/settings.json``)
                label = paths.tail_hit(path)
            if label is not None:
                return (f"{tool_name} names {label} ({path}) in its input; only a person changes it, outside the "
                        "agent (the Read tool may read it)")
    candidates = [text for text in strings if len(text.strip()) <= _CLOSE_PHRASE_MAX]
    candidates += [word for word in words if len(word) <= _CLOSE_PHRASE_MAX]
    for text in candidates:
        if text.strip() and is_close_phrase(text):
            return (f"the tool input contains the close phrase {text.strip()!r}: a gate is closed only by a person "
                    "typing it, never by a tool call, a scheduled prompt or another session")
    return None


def _joined(cwd: str, folders: Sequence[str]) -> list[str]:
    """Working folders as paths: relative ones under ``cwd``, ``~`` expanded."""
    return [os.path.join(cwd, os.path.expanduser(folder)) for folder in folders]


def _unusable_folders(tool_name: str, folders: Sequence[str]) -> str | None:
    """Why an object's working folders cannot be checked: one no file system holds, or too many of them."""
    unnamed = next((folder for folder in folders if not nameable(folder)), None)
    if unnamed is not None:
        return f"the {tool_name} working folder {unnamed!r} names no folder (a NUL byte or an unencodable character)"
    if len(folders) > _FOLDERS_MAX:
        return (f"the {tool_name} input names {len(folders)} working folders for one command; more than "
                f"{_FOLDERS_MAX} are too many to check")
    return None


def _shell_violation(command: str, paths: Paths, protected: Protected, cwd: str,
                     max_command: int | None) -> tuple[str | None, list[str]]:
    if max_command is not None and len(command) > max_command:
        return (f"the command is too long to check ({len(command)} characters; the bound is {max_command}); "
                "split it or write a script file first"), []
    # imported here: a Read or an Edit never needs the shell reader
    from ._shell import TooComplex
    from ._shellcheck import ShellCheck

    check = ShellCheck(paths, protected.bash_needles, cwd)
    # the reader makes many small objects and no cycles: the cyclic collector's passes over them would grow with
    # the command (full collections scan every live object) and make a long command's check super-linear
    collecting = gc.isenabled()
    gc.disable()
    try:
        return check.check(command), check.words
    except (TooComplex, RecursionError) as exc:
        return f"the command is too complex to check ({exc})", check.words
    except ValueError as exc:  # a NUL byte in a path (os.path refuses it; no file and no bash word has one)
        return f"the command cannot be checked ({exc})", check.words
    finally:
        if collecting:
            gc.enable()

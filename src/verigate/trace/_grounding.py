"""edited_without_read: the seed's grounding proxy — an edit of a file the run had not read, searched or created.

The seed's rule, by default: an Edit/MultiEdit (attempted, whatever its outcome) of a path no earlier
Read/Grep/Glob/Write step named is flagged, once per file. Two refinements are named options under
``grounding:`` (docs/trace-grader.md): ``search_listings`` (the files a search result lists count as read) and
``ignore_failed`` (a failed edit changed nothing and is not flagged; a failed read grounds nothing). Paths are
always compared normalised against the line's working directory, so ``src/a.py`` and ``/repo/src/a.py`` are one
file (the seed compares them as written).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Iterator

from ._config import TraceConfig
from ._model import Flag, Run, Severity, Step
from ._rules import Checker, RuleChecker, flag_at, step_path

__all__ = ["EditedWithoutRead", "listed_paths", "normalize_path"]

_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")
#: a line of search output that starts with a path: /abs, ./rel, ../rel or C:\\ / C:/ (Windows)
_LISTED_PATH = re.compile(r"((?:[A-Za-z]:[\\/]|\.{1,2}/|/)[^:\r\n]*)")
#: paths read from one search result (bounds the work on huge outputs)
LISTED_PATHS_READ = 1000
LISTED_SCAN_CHARS = 64 * 1024
_PATH_STARTS = frozenset("/.")
#: the tools whose output lists files (search_listings)
SEARCH_TOOLS = frozenset(("Grep", "Glob"))


def _is_windows(path: str, cwd: str | None) -> bool:
    return bool(_WINDOWS_ABSOLUTE.match(path) or "\\" in path or (cwd and _WINDOWS_ABSOLUTE.match(cwd)))


@functools.lru_cache(maxsize=4096)  # sessions touch the same paths again and again
def normalize_path(path: str, cwd: str | None = None) -> str:
    """An absolute, normalised path: relative paths join the line's cwd; Windows paths get forward slashes and
    lower case (drive letters and names are case-insensitive there)."""
    if _is_windows(path, cwd):
        unified = path.replace("\\", "/")
        if not re.match(r"^[A-Za-z]:/|^//", unified) and cwd:
            unified = cwd.replace("\\", "/").rstrip("/") + "/" + unified
        prefix = "//" if unified.startswith("//") else ""
        return prefix + posixpath.normpath(unified.lstrip("/") if prefix else unified).lower()
    if not path.startswith("/") and cwd:
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


class EditedWithoutRead:
    id = "edited_without_read"
    severity: Severity = "medium"
    description = "an edit of a file the run had not read, searched or created"

    def checker(self, config: TraceConfig, run: Run) -> RuleChecker | None:
        return _GroundingChecker(self, config, run.partial) if config.grounding.enabled else None


class _GroundingChecker(Checker):
    def __init__(self, rule: EditedWithoutRead, config: TraceConfig, partial: bool) -> None:
        self.rule = rule
        grounding = config.grounding
        self.edit_tools = frozenset(grounding.edit_tools)
        self.grounding_tools = frozenset(grounding.create_tools + grounding.read_tools)
        self.listings = grounding.search_listings
        self.ignore_failed = grounding.ignore_failed
        self.partial = partial
        self.files: set[str] = set()

    def _path(self, step: Step) -> str | None:
        path = step_path(step)
        return None if path is None else normalize_path(path, step.cwd)

    def step(self, step: Step) -> Iterable[Flag]:
        tool = step.tool
        if tool in self.edit_tools:
            if self.ignore_failed and not (step.ok is True or (step.ok is None and self.partial)):
                return ()  # a failed or rejected edit changed nothing (an audit log cannot say: counted)
            path = self._path(step)
            if path is not None and path not in self.files:
                self.files.add(path)  # flag a file once; the edit itself now grounds later edits
                return [flag_at(self.rule, step, f"{tool} of {path} which the run had not read")]
            return ()
        if tool not in self.grounding_tools or (step.ok is False and self.ignore_failed):
            return ()
        path = self._path(step)
        if path is not None:
            self.files.add(path)  # a searched folder is a path of its own, not the files in it
        if self.listings and tool in SEARCH_TOOLS and step.observation and step.ok is not False:
            # the files a search listed were seen (one path per line; content mode adds ":line:text")
            self.files.update(normalize_path(listed, step.cwd) for listed in listed_paths(step.observation))
        return ()


def listed_paths(output: str) -> Iterator[str]:
    """The paths at the starts of a search output's lines (the first ``LISTED_PATHS_READ`` in its first
    ``LISTED_SCAN_CHARS`` characters)."""
    listing = output[:LISTED_SCAN_CHARS]
    if "/" not in listing and ":" not in listing:
        return  # every listed path has one (/, ./, ../, C:): an output without either lists none
    read = 0
    for line in listing.splitlines():
        line = line.lstrip(" \t")
        # a cheap first-character test before the regex: most output lines are not paths
        if line[:1] in _PATH_STARTS or line[1:2] == ":":
            listed = _LISTED_PATH.match(line)
            if listed is not None:
                yield listed.group(1).rstrip()
                read += 1
                if read == LISTED_PATHS_READ:
                    return

"""The file names a patch text gives to the tools that apply it (``git apply``, GNU ``patch``), for the tripwire's
reading of a diff-applying tool's input. A superset: every name either tool may take from a header line, as
given and (but for a rename's or copy's, which carry no prefix) with its first component stripped (``-p0``,
``-p1``).

Read: ``--- name`` / ``+++ name`` and ``Index:`` (Subversion's, which GNU patch reads when the other headers name
nothing) in every reading ``_names`` lists, ``diff --git X Y`` split as ``_pair`` says, and ``rename from`` /
``rename to`` / ``copy from`` / ``copy to`` (and git's older ``rename old`` / ``rename new``). The tests apply
each form with the real tools (``tests/selfgate/test_tripwire_diffs.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ._paths import PATH_MAX

__all__ = ["diff_names"]

# every quantifier is followed by a character it cannot match, or the match is anchored to a short tail: a line of
# blanks must not make a search quadratic (``re`` holds the GIL, so the hook's watchdog could not fire). Pattern
# strings, compiled by ``re`` on first use (its cache keeps them): most tool calls hold no patch, and every hook
# process imports this module
_HEADER = r"(?m)^[^\S\n]*(\+\+\+|---|diff --git|(?:rename|copy)[^\S\n]+(?:from|to|old|new)|Index:)(.*)$"
#: a timestamp git and GNU patch take off the end of a name: ISO-like (``2024-01-01 00:00:00.000 +0000``, a
#: two-digit year, a date alone, a colon in the zone or a zone's name) or ctime; searched for in a name's last
#: ``_STAMP_TAIL`` characters only
_TIMESTAMP = (r"[^\S\n]+(?:(?:\d\d){1,2}-\d\d?-\d\d?(?:[^\S\n]+\d\d?:\d\d(?::\d\d(?:\.\d+)?)?)?"
              r"(?:[^\S\n]*(?:[+-]\d\d:?\d\d|[A-Z]{1,5}))?"
              r"|\w{3}[^\S\n]+\w{3}[^\S\n]+\d{1,2}[^\S\n]+\d\d:\d\d:\d\d[^\S\n]+\d{4})$")
_STAMP_TAIL = 80
#: a ``diff --git`` line longer than two names of PATH_MAX is read as one name only: git refuses ``./`` in a name,
#: so no longer line names a file
_PAIR_MAX = 2 * PATH_MAX + 1
_PAIR_NAMES = 16
_OCTAL = r"[0-3][0-7][0-7]"
#: the markers without which a text holds no header: most strings are not patches
_MARKERS = ("---", "+++", "diff --git", "rename ", "copy ", "Index:")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def diff_names(text: str) -> Iterator[str]:
    """Every name a header of ``text`` gives, as given and stripped as ``_stripped`` says; never ``/dev/null``."""
    if not any(marker in text for marker in _MARKERS):
        return
    for found in re.finditer(_HEADER, text):
        kind, line = found.group(1), found.group(2).strip()
        renamed = kind.startswith(("rename", "copy"))  # git writes these names without the a/ b/ prefixes
        # as written, and cut at a NUL byte, where both tools' C strings end
        for rest in dict.fromkeys((line, line.split("\x00", 1)[0].strip())):
            if kind == "diff --git":
                names = _pair(rest)
            else:  # git strips ``-p1`` before it cuts the name at a blank or a timestamp: read both ways
                stripped = rest.partition("/")[2]
                names = _names(rest) + (_names(stripped) if stripped and not renamed else [])
            for name in dict.fromkeys(names):
                for cut in dict.fromkeys((name, name.split("\x00", 1)[0])):  # a quoted name may decode to a NUL
                    if cut and cut != "/dev/null":
                        yield from [cut] if renamed else _stripped(cut)


def _names(rest: str) -> list[str]:
    """The readings of one header's name: C-quoted, or up to a tab, up to a carriage return, up to the first
    blank, without a timestamp."""
    if rest.startswith('"'):
        quoted = _unquoted(rest)
        if quoted is not None:
            return [quoted]  # else git reads the text as written, as below
    tabbed = rest.split("\t", 1)[0].rstrip()
    head, tail = rest[:-_STAMP_TAIL], rest[-_STAMP_TAIL:]
    unstamped = head + re.sub(_TIMESTAMP, "", tail)
    return list(dict.fromkeys((rest, tabbed, rest.split("\r", 1)[0], rest.split(None, 1)[0] if rest else "",
                               unstamped)))


def _pair(rest: str) -> list[str]:
    """The names of ``diff --git X Y``: C-quoted ones; the two halves of the first blank, as GNU patch splits the
    line (renaming, copying or changing the mode of what they name, whatever the ``rename`` lines say); and as git
    finds them, every split at a blank into halves equal as written (``-p0``) or without their first components
    (``x/verigate.yaml y/verigate.yaml``: any prefixes). At most ``_PAIR_NAMES`` names."""
    if rest.startswith('"'):
        end = _quote_end(rest)
        first = _unquoted(rest[:end])
        second = rest[end:].strip()
        return [name for name in (first, *(_names(second) if second else [])) if name is not None]
    if len(rest) > _PAIR_MAX:
        return [rest]
    first_blank = re.search(r"[ \t]", rest)
    names = [rest[:first_blank.start()], rest[first_blank.end():]] if first_blank is not None else [rest]
    quoted_second = False
    for index, char in enumerate(rest):
        if char in " \t" and len(names) < _PAIR_NAMES:
            left, right = rest[:index], rest[index + 1:]
            if left == right or (left.partition("/")[2] == right.partition("/")[2] and "/" in left and "/" in right):
                names += [left, right]
            elif right.startswith('"') and not quoted_second:  # git's one quoted second name: the first such
                quoted_second = True
                names += [left, *_names(right)]
    return names


def _quote_end(text: str) -> int:
    """The index just past the C-quoted string that ``text`` starts with (its length when it is not closed)."""
    index = 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index + 1
        index += 1
    return len(text)


def _unquoted(text: str) -> str | None:
    """A name C-quoted as git quotes one (``"a/\\303\\251"``: octal bytes of UTF-8), or None when it is not."""
    end = _quote_end(text)
    if end < 2 or text[end - 1] != '"':
        return None
    body, out, index = text[1:end - 1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            try:
                out += char.encode("utf-8", "surrogateescape")
            except UnicodeError:  # a lone surrogate no file name holds
                return None
            index += 1
            continue
        following = body[index + 1:index + 2]
        octal = re.match(_OCTAL, body[index + 1:index + 4])
        if octal is not None:  # git's: exactly three digits, the first 0-3; anything else fails the name
            out.append(int(octal.group(), 8))
            index += 4
        elif following in _ESCAPES:
            out.append(_ESCAPES[following])
            index += 2
        else:
            return None
    return out.decode("utf-8", "surrogateescape")


def _stripped(name: str) -> Iterator[str]:
    """``name`` as ``-p0`` and ``-p1`` take it (git apply's default strips the first component, whatever it is).
    Deeper strips are not read: they would make every ``x/y/settings.json`` a bare ``settings.json``."""
    yield name
    _, slash, tail = name.partition("/")
    if slash and tail.lstrip("/"):
        yield tail.lstrip("/")

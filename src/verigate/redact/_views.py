"""Normalised views of a text: what a terminal or a JSON reader would show, with a map back to the original.

A secret is often written so that its neighbours hide it from a pattern: right after an ANSI colour code
(``\\x1b[32m`` ends in a letter, so a token's left boundary fails), after a JSON escape written as two
characters (``\\n``), or between escaped quotes (``password = \\"...\\"``). The redactor also scans these views;
each finding is mapped back to the span of the original it came from, and that original span is redacted.

Views never replace the scan of the original: they only add findings.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

import attrs

__all__ = ["View", "views"]

#: decoding rounds: one decodes JSON escapes of any depth (see ``_ESCAPE``); more are for percent-escapes that hide
#: JSON escapes (``%5C%22``) and the other way round
MAX_DECODE_LEVELS = 3

# ESC as a control character, 8-bit C1 introducers, and the spellings source code and shells use for ESC
# (``\x1b``, ``\033``, ``\e``, ``\u001b``, caret notation ``^[``): a colour code written in a string literal still
# puts a letter right before the token when the literal is shown as text
_ESC = r"(?:\x1b|\\x1[bB]|\\0?33|\\e|\\u001[bB]|\^\[)"
_ANSI = re.compile(
    # CSI: parameters, intermediates, one final byte (ECMA-48 5.4)
    rf"(?:{_ESC}\[|\x9b)[\x30-\x3f]{{0,64}}[\x20-\x2f]{{0,8}}[\x40-\x7e]"
    # OSC, DCS, SOS, PM, APC strings up to BEL or ST (ESC and one backslash, or two where the backslash is
    # itself escaped). The payload never holds what starts an ESC or a line end, so each character is read by
    # one string at most (the scan stays linear) and an unterminated string stays in the view
    rf"|(?:{_ESC}[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c\n\\^]{{0,2048}}+"
    rf"(?:\x07|\\a|\\0?07|{_ESC}\\{{1,2}}|\x9c)"
    # any other escape of a real ESC: intermediates and one final byte (``ESC ( B``, ``ESC 7``, ``ESC c``); not
    # of the spellings, which would eat ordinary text such as ``\example``
    r"|\x1b[\x20-\x2f]{0,8}[\x30-\x7e]"
)
_ANSI_HINT = re.compile(r"[\x1b\x90\x98\x9b-\x9f]|\\(?:x1|0?33|e|u001)|\^\[")

_SIMPLE_ESCAPES = {'"': '"', "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "'": "'"}
# JSON string escapes (plus ``\'`` of shells and Python), a surrogate pair first so it decodes as one character,
# and ASCII percent-escapes (a JSON body in a URL query). A run of backslashes before the escaped character counts
# as one: text encoded as a JSON string n times puts 2^n - 1 backslashes before a quote (``\\\"`` twice), and
# decoding one layer per round would need n rounds; in a view only for scanning, ``\\n`` read as a line break
# costs nothing (the original is scanned too)
# (the run starts where no backslash precedes and is taken whole, so a long run costs one pass, not its square)
_ESCAPE = re.compile(r"(?<!\\)\\++(?:u([dD][89abAB][0-9a-fA-F]{2})\\++u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})"
                     r"|([\"/bfnrt']))|%([0-7][0-9a-fA-F])")


def _decoded(found: re.Match[str]) -> str:
    high, low, single, simple, percent = found.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    if single is not None:
        code = int(single, 16)
        return "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)  # a lone surrogate cannot be scanned as text
    if simple is not None:
        return _SIMPLE_ESCAPES[simple]
    return chr(int(percent, 16))


@attrs.frozen
class View:
    """A derived text and, per run of it, the span of its parent it came from (``parent`` None: the original)."""

    text: str
    parent: View | None = attrs.field(repr=False)
    #: per piece: where it starts in ``text``, the parent span it came from, and whether it is a 1:1 copy
    starts: tuple[int, ...] = attrs.field(repr=False)
    sources: tuple[tuple[int, int, bool], ...] = attrs.field(repr=False)

    def _source(self, position: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, position) - 1
        source_start, source_end, copied = self.sources[index]
        if copied:
            offset = source_start + position - self.starts[index]
            return offset, offset + 1
        return source_start, source_end

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` (not empty) came from: every character of the
        original between the first and the last one it came from, escape characters included."""
        view: View | None = self
        while view is not None and view.parent is not None:
            start, end = view._source(start)[0], view._source(end - 1)[1]
            view = view.parent
        return start, end


def _derive(parent: View, text: str, found: Iterator[tuple[int, int, str]]) -> View | None:
    """``text`` with each ``(start, end, replacement)`` applied; None when nothing was replaced."""
    pieces: list[str] = []
    starts: list[int] = []
    sources: list[tuple[int, int, bool]] = []
    length = position = 0
    for start, end, replacement in found:
        if start > position:
            starts.append(length)
            sources.append((position, start, True))
            pieces.append(text[position:start])
            length += start - position
        if replacement:
            starts.append(length)
            sources.append((start, end, False))
            pieces.append(replacement)
            length += len(replacement)
        position = end
    if not sources and position == 0:
        return None
    if position < len(text):
        starts.append(length)
        sources.append((position, len(text), True))
        pieces.append(text[position:])
    if not sources:  # everything was removed: nothing to scan
        return None
    return View("".join(pieces), parent, tuple(starts), tuple(sources))


def _without_ansi(view: View, separator: str) -> View | None:
    """Each escape sequence replaced by ``separator``: removed (``""``) joins a token an escape splits, a space
    keeps apart what a colour change separates on screen (``a\x1b[32mghp_...`` shows a token after an ``a``)."""
    if _ANSI_HINT.search(view.text) is None:
        return None
    found = ((match.start(), match.end(), separator) for match in _ANSI.finditer(view.text))
    return _derive(view, view.text, found)


def _unescaped(view: View) -> View | None:
    text = view.text
    if "\\" not in text and "%" not in text:
        return None
    return _derive(view, text, ((found.start(), found.end(), _decoded(found)) for found in _ESCAPE.finditer(text)))


#: where a view can differ from the original: a backslash, a percent-escape, an ESC or C1 introducer, caret ESC
_CHANGE_HINT = re.compile(r"[\\\x1b\x90\x98\x9b-\x9f]|%[0-7][0-9a-fA-F]|\^\[")


def _focus(root: View) -> View | None:
    """The lines of ``root`` that hold something a view could change, joined by their own line ends (all of
    ``root`` when every line does; None when none does). Lines without one read the same in every view, and
    matches there are the original scan's: a file of source code with a few escapes costs a few lines more."""
    text = root.text
    lines: list[tuple[int, int]] = []
    position = 0
    while (hint := _CHANGE_HINT.search(text, position)) is not None:
        start = text.rfind("\n", 0, hint.start()) + 1
        end = text.find("\n", hint.end())
        end = len(text) if end == -1 else end
        lines.append((start, end))
        position = end + 1
    if not lines:
        return None
    if lines == [(0, len(text))]:
        return root
    starts: list[int] = []
    sources: list[tuple[int, int, bool]] = []
    length = 0
    for start, end in lines:
        # each line and the line end after it (the last line of the text has none)
        stop = min(end + 1, len(text))
        starts.append(length)
        sources.append((start, stop, True))
        length += stop - start
    return View("".join(text[start:stop] for start, stop, _ in sources), root, tuple(starts), tuple(sources))


def views(text: str) -> list[View]:
    """The normalised views of ``text`` worth scanning (empty for most texts: only those holding a backslash,
    a percent-escape or an escape sequence have any): each decoding level (JSON escapes, percent-escapes), and
    the original and each level with ANSI escape sequences removed and with each replaced by a space."""
    found: list[View] = []
    focus = _focus(View(text, None, (0,), ((0, len(text), True),)))
    if focus is None:
        return found
    seen = {text, focus.text}
    current = focus
    for level in range(MAX_DECODE_LEVELS + 1):
        for separator in ("", " "):
            stripped = _without_ansi(current, separator)
            if stripped is not None and stripped.text not in seen:
                seen.add(stripped.text)
                found.append(stripped)
        if level == MAX_DECODE_LEVELS:
            break
        decoded = _unescaped(current)
        if decoded is None or decoded.text in seen:
            break
        seen.add(decoded.text)
        found.append(decoded)
        current = decoded
    return found

"""Normalised views of a text: what a terminal or a JSON reader would show, with a map back to the original.

A secret is often written so that its neighbours hide it from a pattern: right after an ANSI colour code
(``\\x1b[32m`` ends in a letter, so a token's left boundary fails), after a JSON escape written as two
characters (``\\n``), or between escaped quotes (``password = \\"...\\"``). The redactor also scans these views;
each finding is mapped back to the span of the original it came from, and that original span is redacted.

Views never replace the scan of the original: they only add findings.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Callable, Iterator

__all__ = ["View", "views"]

#: decoding rounds: one decodes JSON escapes of any depth (see ``_ESCAPE``); more are for percent-escapes that hide
#: JSON escapes (``%5C%22``) and the other way round
MAX_DECODE_LEVELS = 3

# ESC as a control character, 8-bit C1 introducers, and the spellings source code and shells use for ESC
# (``\x1b``, ``\033``, ``\e``, ``\u001b``, caret notation ``^[``): a colour code written in a string literal still
# puts a letter right before the token when the literal is shown as text
_ESC = r"(?:\x1b|\\x1[bB]|\\0?33|\\e|\\u001[bB]|\^\[)"
_ANSI = (
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
# characters a reader does not see (format characters: zero-width spaces and joiners, soft hyphen, bidi
# controls, BOM) and compatibility forms a reader sees as ASCII (full-width ``ｇｈｐ＿``, mathematical 𝐠𝐡𝐩): a token
# spelled with them is the token to whoever reads it
_HIDDEN = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff"
_LOOKALIKE = "\uff01-\uff5e\U0001d400-\U0001d7ff"
_UNICODE = f"[{_HIDDEN}]|[{_LOOKALIKE}]+"
_IS_HIDDEN = f"[{_HIDDEN}]"
_ANSI_MARKS = ("\x1b", "\x90", "\x98", "\x9b", "\x9c", "\x9d", "\x9e", "\x9f", "\\x1", "\\033", "\\33", "\\e",
               "\\u001", "^[")


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """The patterns above, each compiled when a text first needs it: most texts hold no escape, no invisible and
    no look-alike character, and a process redacting only those never compiles one."""
    return re.compile(source)


_SIMPLE_ESCAPES = {'"': '"', "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "'": "'"}
# JSON string escapes (plus ``\'`` of shells and Python), a surrogate pair first so it decodes as one character,
# and ASCII percent-escapes (a JSON body in a URL query). A run of backslashes before the escaped character counts
# as one: text encoded as a JSON string n times puts 2^n - 1 backslashes before a quote (``\\\"`` twice), and
# decoding one layer per round would need n rounds; in a view only for scanning, ``\\n`` read as a line break
# costs nothing (the original is scanned too). A run starts where no backslash precedes and is taken whole, so a
# long run costs one pass, not its square.
_ESCAPE = (r"(?<!\\)\\++(?:u([dD][89abAB][0-9a-fA-F]{2})\\++u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})"
           r"|([\"/bfnrt']))|%([0-7][0-9a-fA-F])")


def _decoded(found: re.Match[str]) -> str:
    simple = found.group(4)
    if simple is not None:  # the common case first: one group looked up, not five
        return _SIMPLE_ESCAPES[simple]
    high, low, single, _, percent = found.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    if single is not None:
        code = int(single, 16)
        return "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)  # a lone surrogate cannot be scanned as text
    return chr(int(percent, 16))


class View:
    """A text derived from its ``parent`` (None: the original) by edits, and the way back.

    An edit replaced ``parent.text[start:end]`` by ``length`` characters (0: removed). The edits, and where each
    lands in ``text``, are worked out only when a span is mapped back: most views hold no finding, and building
    one for a text with a million escapes should cost one regex pass, not a million Python objects."""

    __slots__ = ("_edits", "_find", "_landing", "parent", "text")

    def __init__(self, text: str, parent: View | None,
                 edits: list[tuple[int, int, int]] | Callable[[], list[tuple[int, int, int]]]) -> None:
        self.text, self.parent = text, parent
        self._edits: list[tuple[int, int, int]] | None = edits if isinstance(edits, list) else None
        self._find: Callable[[], list[tuple[int, int, int]]] | None = None if isinstance(edits, list) else edits
        self._landing: list[int] | None = None

    def _mapping(self) -> tuple[list[tuple[int, int, int]], list[int]]:
        """The edits in order, and per edit where its replacement starts in ``text``."""
        if self._edits is None:
            assert self._find is not None
            self._edits = self._find()
        if self._landing is None:
            landing, shift = [], 0
            for start, end, length in self._edits:
                landing.append(start - shift)
                shift += end - start - length
            self._landing = landing
        return self._edits, self._landing

    def _source(self, position: int) -> tuple[int, int]:
        """The span of ``parent.text`` that ``text[position]`` came from."""
        edits, landing = self._mapping()
        index = bisect.bisect_right(landing, position) - 1
        if index < 0:
            return position, position + 1
        start, end, length = edits[index]
        if position < landing[index] + length:
            return start, end
        offset = end + position - landing[index] - length
        return offset, offset + 1

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` (not empty) came from: every character of the
        original between the first and the last one it came from, escape characters included."""
        view: View | None = self
        while view is not None and view.parent is not None:
            start, end = view._source(start)[0], view._source(end - 1)[1]
            view = view.parent
        return start, end


def _derive(parent: View, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str] | str) -> View | None:
    """``parent.text`` with every match of ``pattern`` replaced (``replace``: a function, or a literal without
    backslashes); None when nothing matched or nothing is left."""
    text, count = pattern.subn(replace, parent.text)
    if not count or not text:
        return None

    def edits() -> list[tuple[int, int, int]]:  # the same pass again, now keeping where each match was
        found = pattern.finditer(parent.text)
        if isinstance(replace, str):
            return [(match.start(), match.end(), len(replace)) for match in found]
        return [(match.start(), match.end(), len(replace(match))) for match in found]

    return View(text, parent, edits)


def _could_hold_ansi(text: str) -> bool:
    """A substring test per introducer (far cheaper than a regex over a long text)."""
    return any(mark in text for mark in _ANSI_MARKS)


def _as_seen(view: View, separator: str) -> View | None:
    """The text as a reader sees it: each escape sequence and each invisible character replaced by
    ``separator`` — removed (``""``) joins a token they split, a space keeps apart what a colour change
    separates on screen (``a\x1b[32mghp_...`` shows a token after an ``a``) — and look-alike characters as
    the ASCII they show (NFKC)."""
    text = view.text
    if _could_hold_ansi(text):
        view = _derive(view, _pattern(_ANSI), separator) or view
    if text.isascii() or _pattern(_UNICODE).search(view.text) is None:
        return None if view.text == text else view

    def unicode(found: re.Match[str]) -> str:
        shown = found.group()
        return separator if _pattern(_IS_HIDDEN).match(shown) else unicodedata.normalize("NFKC", shown)

    return _derive(view, _pattern(_UNICODE), unicode) or (None if view.text == text else view)


def _unescaped(view: View) -> View | None:
    text = view.text
    if "\\" not in text and "%" not in text:
        return None
    return _derive(view, _pattern(_ESCAPE), _decoded)


_PERCENT = r"%[0-7][0-9a-fA-F]"
_NON_ASCII_CHANGE = f"[\x90\x98\x9b-\x9f{_HIDDEN}{_LOOKALIKE}]"


def _may_change(line: str) -> bool:
    """Whether a view could read ``line`` differently: a backslash, an ESC, caret ESC, a percent-escape, a C1
    introducer, an invisible or a look-alike character (substring tests first: they run at memory speed)."""
    return ("\\" in line or "\x1b" in line or "^[" in line
            or ("%" in line and _pattern(_PERCENT).search(line) is not None)
            or (not line.isascii() and _pattern(_NON_ASCII_CHANGE).search(line) is not None))


def _focus(root: View) -> View | None:
    """The lines of ``root`` that a view could read differently, each with its line end (all of ``root`` when
    every line is one; None when none is). Other lines read the same in every view, and matches there are the
    original scan's: a file of source code with a few escapes costs a few lines more."""
    text = root.text
    if not _may_change(text):
        return None
    removed: list[tuple[int, int, int]] = []
    kept = position = 0  # kept: where the text not yet removed starts; position: where the line starts
    for line in text.split("\n"):
        end = position + len(line) + 1  # past the line end (one past the text for the last line)
        if _may_change(line):
            if position > kept:
                removed.append((kept, position, 0))
            kept = min(end, len(text))
        position = end
    if kept == 0:
        return None
    if kept < len(text):
        removed.append((kept, len(text), 0))
    if not removed:
        return root
    return View("".join(text[start:end] for start, end in _gaps(removed, len(text))), root, removed)


def _gaps(removed: list[tuple[int, int, int]], length: int) -> Iterator[tuple[int, int]]:
    """The spans between the removed ones."""
    position = 0
    for start, end, _ in removed:
        if start > position:
            yield position, start
        position = end
    if position < length:
        yield position, length


def views(text: str) -> list[View]:
    """The normalised views of ``text`` worth scanning (empty for most texts: only those holding a backslash,
    a percent-escape, an escape sequence, an invisible or a look-alike character have any): each decoding level
    (JSON escapes, percent-escapes), and the original and each level as a reader sees it (see ``_as_seen``)."""
    found: list[View] = []
    focus = _focus(View(text, None, []))
    if focus is None:
        return found
    seen = {text, focus.text}
    current = focus
    for level in range(MAX_DECODE_LEVELS + 1):
        for separator in ("", " "):
            stripped = _as_seen(current, separator)
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

"""The fast path of the Claude Code reader: decode only the fields the events need, with msgspec Structs.

Most of a transcript's bytes are fields no event reads (``toolUseResult`` repeats every tool output, thinking
blocks carry long signatures); msgspec skips them without building a Python object, at a quarter of the cost of
``json.loads``. The contract of the reader stays: a line gives exactly the events that ``json.loads`` of its bytes
would give (tests/transcripts/test_fast_paths.py checks it against the plain path). That holds because

* the fast path is taken only when msgspec accepts the line *and* the line has the common shape (an object whose
  ``message`` is an object, whose ``content`` is a string or a list of objects); anything else — msgspec's error
  on NaN, on a lone surrogate, on an unusual shape — returns None and the caller takes the plain path, which then
  gives or warns exactly as it always did;
* where msgspec accepts what ``json.loads`` refuses, the line is sent to the plain path first: an integer of
  more digits than ``sys.get_int_max_str_digits()`` (Python refuses to convert it; msgspec skips it unread) and
  nesting near the interpreter's recursion limit (both decoders stop there, at slightly different depths);
  neither can occur in a line shorter than the bound, so only long lines are looked at, by one ``translate``;
* where both accept, they give the same values: the last of repeated keys wins in both, integers are exact in
  both, floats are correctly rounded in both (a float out of range, which ``json.loads`` makes infinite, is an
  error to msgspec: the plain path).

msgspec is a dependency, imported when the first transcript is read; without it (a stripped install) every line
takes the plain path.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._transcript_lines import CLAUDE_OTHER_TYPES, claude_prompt_origin, content_text
from ._events import AssistantText, CompactBoundary, Event, ToolResult, ToolUse, UserPrompt

if TYPE_CHECKING:
    from ._reader import Transcript

__all__ = ["AVAILABLE", "claude_events", "claude_reader"]

#: msgspec is imported when the first transcript is read, not with this module: the hooks import the readers on
#: their start-up path and read no transcript in most decisions
AVAILABLE = importlib.util.find_spec("msgspec") is not None

#: brackets looked up one by one (``str.find`` is a memchr) before both are counted (``str.count`` reads every
#: character, several times slower on a long line, and most lines hold a handful of brackets)
_FEW_BRACKETS = 8
#: the ASCII digits from a position on (``str.isdigit`` would take other scripts' digits too)
_ASCII_DIGITS = re.compile(r"[0-9]*")


class _Guard:
    """Says which lines msgspec could read differently from ``json.loads`` (bounds read once per transcript).

    Most lines are long (tool outputs, thinking signatures), so each test reads them sparsely: brackets are looked
    for one by one and counted only on a line holding many; digits are sampled every ``run`` characters (a run of
    ``run`` digits covers exactly one such position), and only the run through a sampled digit is measured.
    """

    def __init__(self) -> None:
        digits = sys.get_int_max_str_digits()
        #: a digit run this long is an integer Python refuses to convert (0: no such limit)
        self.run = digits + 1 if digits > 0 else 0
        #: this many brackets could nest near the recursion limit, where the two decoders stop at different depths
        self.brackets = max(sys.getrecursionlimit() // 4, 1)
        #: fewer than this many of each bracket cannot add up to ``brackets``
        self.few = min(_FEW_BRACKETS, self.brackets // 2)
        #: a shorter line can hold neither
        self.shortest = min(self.run or sys.maxsize, 2 * self.brackets)

    def plain(self, text: str | bytes) -> bool:
        if type(text) is not str:
            return True  # a line of the binary fallback (the file is not all UTF-8): the plain path decodes it
        if len(text) < self.shortest:
            return False
        if not _few_brackets(text, self.few) and text.count("[") + text.count("{") >= self.brackets:
            return True
        return bool(self.run) and len(text) >= self.run and self._digit_run(text)

    def _digit_run(self, text: str) -> bool:
        run = self.run
        for index in range(0, len(text), run):
            if "0" <= text[index] <= "9":
                # the run through ``index`` is long enough when the digits it lacks after ``index`` come before it
                found = _ASCII_DIGITS.match(text, index)
                before = run - ((found.end() if found is not None else index) - index)
                if before <= 0:
                    return True
                if index >= before:
                    lead = text[index - before:index]
                    if lead.isascii() and lead.isdigit():
                        return True
        return False


def _few_brackets(text: str, most: int) -> bool:
    """True when ``text`` holds fewer than ``most`` of "[" and fewer than ``most`` of "{"."""
    find = text.find
    for bracket in "[{":
        at = -1
        for _ in range(most):
            at = find(bracket, at + 1)
            if at < 0:
                break
        else:
            return False
    return True


@functools.cache
def _decoder() -> tuple[Callable[[str | bytes], Any], type[Exception]]:
    """msgspec's decoder of a line's needed fields (Structs skip every other field unread) and its error."""
    import msgspec

    # defstruct with the types as objects: class bodies here would carry string annotations (this module's
    # ``from __future__ import annotations``) that msgspec resolves in the module's globals, where these are not
    def fields(*names: str) -> list[tuple[str, Any, None]]:
        return [(name, Any, None) for name in names]

    block = msgspec.defstruct("Block", fields("type", "id", "name", "input", "text", "tool_use_id", "content",
                                              "is_error"))
    content = str | list[block] | None  # type: ignore[valid-type]
    message = msgspec.defstruct("Message", [*fields("id"), ("content", content, None)])
    line = msgspec.defstruct("Line", [*fields("type"), ("message", message | None, None),
                                      *fields("cwd", "isSidechain", "subtype", "isMeta", "isCompactSummary",
                                              "isApiErrorMessage", "agentId")])
    return msgspec.json.Decoder(line).decode, msgspec.DecodeError



def _origin(line: Any, text: str) -> Any:
    return claude_prompt_origin({"isCompactSummary": line.isCompactSummary, "isMeta": line.isMeta}, text)


def _user(reader: Transcript, number: int, line: Any, content: Any, sidechain: bool) -> list[Event]:
    if isinstance(content, str):
        return [UserPrompt(content, number, _origin(line, content), sidechain)]
    if content is None:
        reader.warn(number, "user message without content")
        return []
    events: list[Event] = []
    texts: list[str] = []
    agent_id = line.agentId if isinstance(line.agentId, str) else None
    for block in content:
        kind = block.type
        if kind == "tool_result":
            tool_use_id = block.tool_use_id
            if not isinstance(tool_use_id, str):
                reader.warn(number, "tool_result without tool_use_id")
                continue
            is_error = block.is_error
            events.append(ToolResult(tool_use_id, content_text(block.content),
                                     is_error if isinstance(is_error, bool) else None, number, sidechain, agent_id))
        elif kind == "text" and isinstance(block.text, str):
            texts.append(block.text)
    if texts:
        text = "\n".join(texts)
        events.append(UserPrompt(text, number, _origin(line, text), sidechain))
    return events


def _assistant(reader: Transcript, number: int, line: Any, message: Any, sidechain: bool) -> list[Event]:
    message_id = message.id if isinstance(message.id, str) else ""
    content = message.content
    api_error = line.isApiErrorMessage is True
    if isinstance(content, str):
        return [AssistantText(content, number, message_id, sidechain, api_error)]
    if content is None:
        reader.warn(number, "assistant message without content")
        return []
    events: list[Event] = []
    agent_id = line.agentId if isinstance(line.agentId, str) else None
    for block in content:
        kind = block.type
        if kind == "tool_use":
            tool_id, name, tool_input = block.id, block.name, block.input
            if not isinstance(tool_id, str) or not isinstance(name, str):
                reader.warn(number, "tool_use without id or name")
                continue
            if not isinstance(tool_input, dict):
                tool_input = {} if tool_input is None else {"input": tool_input}
            events.append(ToolUse(tool_id, name, tool_input, number, reader.cwd, sidechain, message_id, agent_id))
        elif kind == "text" and isinstance(block.text, str):
            events.append(AssistantText(block.text, number, message_id, sidechain, api_error))
    return events


def claude_reader() -> Callable[[Transcript, int, str | bytes], list[Event] | tuple[Event, ...] | None]:
    """A function giving the events of one Claude Code line, or None: take the plain path (``decode_line`` and
    ``_claude_line``). One per transcript: the interpreter's limits are read when it is made."""
    plain = _Guard().plain
    decode, decode_error = _decoder()

    def events(reader: Transcript, number: int, text: str | bytes) -> list[Event] | tuple[Event, ...] | None:
        if plain(text):
            return None
        try:
            line = decode(text)
        except (decode_error, RecursionError):
            return None
        return _line_events(reader, number, line)

    return events


def claude_events(reader: Transcript, number: int, text: str | bytes) -> list[Event] | tuple[Event, ...] | None:
    """:func:`claude_reader` for one line."""
    return claude_reader()(reader, number, text) if AVAILABLE else None


def _line_events(reader: Transcript, number: int, line: Any) -> list[Event] | tuple[Event, ...] | None:
    kind = line.type
    if kind == "assistant" or kind == "user":
        message = line.message
        if message is None:
            return None  # a missing or null message: the plain path words the warning
        if isinstance(line.cwd, str):
            reader.cwd = line.cwd  # a line without a cwd keeps the last one seen
        sidechain = line.isSidechain is True
        if kind == "assistant":
            return _assistant(reader, number, line, message, sidechain)
        return _user(reader, number, line, message.content, sidechain)
    if not isinstance(kind, str):
        reader.warn(number, "line without a type")
    elif kind == "system":
        if line.subtype == "compact_boundary":
            return (CompactBoundary(number, line.isSidechain is True),)
    elif kind not in CLAUDE_OTHER_TYPES:
        reader.warn(number, f"unclassified line type {kind!r}")
    return ()

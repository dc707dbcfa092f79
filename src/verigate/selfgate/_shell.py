"""Shell words as bash would see them, for the self-gate tripwire: one pass over the command, linear in its length.

A small bash reader, not a bash: it splits a command into simple commands (``;``, ``&&``, ``||``, ``|``,
newlines, parentheses), their words and their redirections, and gives each word the value bash would give it —
quotes, backslashes and line continuations removed, ANSI-C quotes (``$'\\x2e'``) decoded, ``$"…"`` read as
double quotes, brace expansion (``{a,b}``, ``{a..c}``, nested) done. What it cannot know (``$var``, ``$(…)``,
backticks) marks the word *dynamic*; the text of a command substitution is read as a command of its own. Globs
stay patterns (with quoted metacharacters escaped) for the caller to resolve against the file system.

Why not ``shlex``: it is quadratic on long words (a token grows one character at a time through an attribute), knows
no ANSI-C quotes, braces or substitutions, and was re-run on every nested command string. Here every character is
consumed once per reading, by regular expressions that cannot backtrack (no nested repetition over overlapping
classes), and nesting and brace output are bounded (``TooComplex``). One module past 400 lines on purpose: its
parts (commands, words, quotes, substitutions, braces) call one another and share the reader's position.
"""

from __future__ import annotations

import re

from ._paths import GLOB_ESCAPE  # bash's glob metacharacters, escaped where they were quoted

__all__ = ["Command", "Script", "TooComplex", "Word", "ansi_c", "parse"]

#: deepest nesting of ``$(…)``, backticks and process substitutions read (deeper: ``TooComplex``)
MAX_DEPTH = 24
#: brace expansion may produce at most this many characters beyond 4× the command's length
_BRACE_SLACK = 1 << 16

_BLANK = re.compile(r"[ \t]+")
# a run of characters with no meaning to the shell inside a word (linear: one class, no alternation)
_PLAIN = re.compile(r"[^\s'\"\\$`;&|<>(){},*?\[\]]+")
_OPERATOR = re.compile(r"\|\||&&|;;&?|;&|\|&|[;&|\n()]")
_REDIRECT = re.compile(r"&>>?|\d*+(?:>>|>\||>&|<>|<<<|<<-|<<|<&|>|<)")
_SINGLE = re.compile(r"[^']*")
# (patterns for rarer syntax — ANSI-C quotes, backticks, sequences — are strings compiled on first use and kept by
# ``re``'s cache: a hook process reads one command, and most commands have none of them)
_ANSI_BODY = r"(?s)[^'\\]*(?:\\.[^'\\]*)*"
_ANSI_ESCAPE = (r"(?s)\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|c(.)|(.))")
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_DOUBLE_PLAIN = re.compile(r"[^\"\\$`]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_BACKTICK_BODY = r"(?s)[^`\\]*(?:\\.[^`\\]*)*"
_SEQUENCE = r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?"
#: markers of unquoted brace syntax inside a word (pieces are otherwise (text, pattern) pairs)
_OPEN, _COMMA, _CLOSE = 0, 1, 2
#: a dynamic part of a word (``$x``, ``$(…)``): no character a path can hold, so it never matches one
DYNAMIC = "\x00"

_Piece = tuple[str, str] | int


class TooComplex(ValueError):
    """Nesting or brace expansion past the bounds: the command is refused rather than half-read."""


class Word:
    """One shell word after brace expansion: ``text`` is its value (``DYNAMIC`` where unknown), ``pattern`` the
    fnmatch pattern of it when ``glob`` (an unquoted ``*``, ``?`` or ``[``), ``raw`` the source text."""

    __slots__ = ("dynamic", "glob", "pattern", "raw", "text")

    def __init__(self, text: str, pattern: str, glob: bool, dynamic: bool, raw: str) -> None:
        self.text = text
        self.pattern = pattern
        self.glob = glob
        self.dynamic = dynamic
        self.raw = raw

    def __repr__(self) -> str:
        return f"Word({self.text!r})"


class Command:
    """A simple command: its words (assignments and program included), its redirections ``(operator, word)``,
    and whether its output is piped into the next command."""

    __slots__ = ("piped", "redirects", "words")

    def __init__(self) -> None:
        self.words: list[Word] = []
        self.redirects: list[tuple[str, Word]] = []
        self.piped = False


class Script:
    """The simple commands of a command line, in order, and the scripts of its substitutions."""

    __slots__ = ("commands", "substitutions")

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.substitutions: list[Script] = []


def parse(command: str, depth: int = 0, variables: dict[str, str] | None = None) -> Script:
    """Read ``command`` as bash would split and expand it (see the module docstring). ``variables`` collects the
    literal assignments read (``n=self-gat``) and expands them later (``$n``), shared with nested readings."""
    reader = _Reader(command, depth, {} if variables is None else variables)
    return reader.script(closing=None)



def _append_value(value: str | None, pieces: list[_Piece], quoted: bool) -> None:
    """A value the check could work out (``None``: it could not, ``DYNAMIC``); unquoted, its glob characters are
    live (bash globs the result)."""
    if value is None:
        pieces.append((DYNAMIC, DYNAMIC))
    elif quoted:
        pieces.append(_quoted(value))
    else:
        pieces += [(part, part) for part in re.split(r"([*?\[])", value) if part]

class _Reader:
    def __init__(self, source: str, depth: int, variables: dict[str, str]) -> None:
        self.source = source
        self.pos = 0
        self.depth = depth
        self.variables = variables
        self.brace_budget = 4 * len(source) + _BRACE_SLACK

    # -- commands ---------------------------------------------------------------------------------------------

    def script(self, closing: str | None) -> Script:
        """Commands until the end, or until the unmatched ``closing`` ``)`` of a substitution."""
        if self.depth > MAX_DEPTH:
            raise TooComplex("command substitutions nested too deep to check")
        source, script = self.source, Script()
        current, parens = Command(), 0
        pending: str | None = None  # a redirection operator waiting for its target word
        heredocs: list[tuple[Command, str, str]] = []
        while self.pos < len(source):
            char = source[self.pos]
            if char in " \t":
                self.pos = _BLANK.match(source, self.pos).end()  # type: ignore[union-attr]
                continue
            if source.startswith("\\\n", self.pos):  # a line continuation between words
                self.pos += 2
                continue
            found = None if source.startswith("(", self.pos + 1) else _REDIRECT.match(source, self.pos)
            if found is not None:  # at a word's start: ``2>``, ``&>>``, ``<<<`` (``<(…)`` is a word)
                self.pos = found.end()
                pending = found.group().lstrip("0123456789")
                continue
            if char in ";&|\n()":
                operator = _OPERATOR.match(source, self.pos).group()  # type: ignore[union-attr]
                if operator == "\n" and heredocs:  # the bodies of this line's heredocs follow it
                    self.pos += 1
                    for command, operator, delimiter in heredocs:
                        command.redirects.append((operator, self.heredoc(delimiter, operator == "<<-")))
                    heredocs = []
                    continue
                if operator == ")" and closing == ")" and parens == 0:
                    self.pos += 1
                    break
                parens += {"(": 1, ")": -1}.get(operator, 0)
                self.pos += len(operator)
                if current.words or current.redirects:
                    current.piped = operator in ("|", "|&")
                    script.commands.append(current)
                    current = Command()
                continue
            words = self.word(script)
            if pending in ("<<", "<<-"):  # a heredoc's delimiter: its body is read after the line
                heredocs.append((current, pending, words[0].text if words else ""))
                pending = None
            elif pending is not None:
                if words:
                    current.redirects.append((pending, words[0]))
                    current.words.extend(words[1:])
                pending = None
            else:
                current.words.extend(words)
                for word in words:
                    self.assign(word)
        if current.words or current.redirects or heredocs:
            script.commands.append(current)
        for command, operator, _ in heredocs:  # no newline after the delimiter: an empty body
            command.redirects.append((operator, Word("", "", False, False, "")))
        return script

    def heredoc(self, delimiter: str, tabs: bool) -> Word:
        """A heredoc's body, to the line holding only ``delimiter`` (or the end), as one quoted word."""
        end = re.compile(("^\t*" if tabs else "^") + re.escape(delimiter) + "$", re.MULTILINE)
        found = end.search(self.source, self.pos)
        stop = found.start() if found is not None else len(self.source)
        body = self.source[self.pos:stop]
        self.pos = found.end() if found is not None else stop
        return Word(body, body.translate(GLOB_ESCAPE), False, False, body)

    def assign(self, word: Word) -> None:
        """Remember ``NAME=literal`` (wherever it stands: ``export``, ``local`` …); an assignment of something
        unknown forgets the name. A guess bash may not share (a branch not taken): it only adds readings."""
        found = _ASSIGNMENT.match(word.text)
        if found is None:
            return
        name, value = found.group(1), word.text[found.end():]
        if DYNAMIC in value:
            self.variables.pop(name, None)
        else:
            self.variables[name] = (self.variables.get(name, "") if found.group(2) else "") + value

    def nested(self, script: Script, closing: str | None) -> None:
        self.depth += 1
        script.substitutions.append(self.script(closing))
        self.depth -= 1

    # -- one word ---------------------------------------------------------------------------------------------

    def word(self, script: Script) -> list[Word]:
        source, start = self.source, self.pos
        pieces: list[_Piece] = []
        dynamic = braces = False
        while self.pos < len(source):
            char = source[self.pos]
            if char in " \t\n;&|()":
                break
            if char in "<>":
                if not source.startswith("(", self.pos + 1):
                    break
                self.pos += 2  # <(…) and >(…): a file name bash makes up, the command inside checked
                self.nested(script, ")")
                pieces.append((DYNAMIC, DYNAMIC))
                dynamic = True
            elif char == "'":
                end = _SINGLE.match(source, self.pos + 1).end()  # type: ignore[union-attr]
                pieces.append(_quoted(source[self.pos + 1:end]))
                self.pos = end + 1
            elif char == '"':
                self.pos += 1
                dynamic |= self.double(script, pieces)
            elif char == "\\":
                following = source[self.pos + 1:self.pos + 2]
                if following != "\n":  # a continuation joins the two halves of the word
                    pieces.append(_quoted(following or "\\"))
                self.pos += 2
            elif char == "$":
                if source.startswith("$'", self.pos):
                    end = re.compile(_ANSI_BODY).match(source, self.pos + 2).end()  # type: ignore[union-attr]
                    pieces.append(_quoted(ansi_c(source[self.pos + 2:end])))
                    self.pos = end + 1
                elif source.startswith('$"', self.pos):  # a locale string: the text itself here
                    self.pos += 2
                    dynamic |= self.double(script, pieces)
                else:
                    dynamic |= self.dollar(script, pieces)
            elif char == "`":
                self.backtick(script, pieces, quoted=False)
                dynamic = True
            elif char in "{},":
                pieces.append({"{": _OPEN, ",": _COMMA, "}": _CLOSE}[char])
                braces = True
                self.pos += 1
            elif char in "*?[]":
                pieces.append((char, char))
                self.pos += 1
            else:
                end = _PLAIN.match(source, self.pos)
                stop = end.end() if end is not None else self.pos + 1
                pieces.append((source[self.pos:stop],) * 2)
                self.pos = stop
        raw = source[start:self.pos]
        if not braces:
            return [_word(pieces, dynamic, raw)]
        return [_word(list(alternative), dynamic, raw) for alternative in self.expand_braces(pieces)]

    def double(self, script: Script, pieces: list[_Piece]) -> bool:
        """The inside of ``"…"`` (the opening quote read); True when it holds an expansion."""
        source, dynamic = self.source, False
        while self.pos < len(source):
            char = source[self.pos]
            if char == '"':
                self.pos += 1
                break
            if char == "\\":
                following = source[self.pos + 1:self.pos + 2]
                if following in ('"', "\\", "$", "`"):
                    pieces.append(_quoted(following))
                elif following != "\n":
                    pieces.append(_quoted("\\" + following))
                self.pos += 2
            elif char == "$":
                dynamic |= self.dollar(script, pieces, quoted=True)
            elif char == "`":
                self.backtick(script, pieces, quoted=True)
                dynamic = True
            else:
                end = _DOUBLE_PLAIN.match(source, self.pos).end()  # type: ignore[union-attr]
                pieces.append(_quoted(source[self.pos:end]))
                self.pos = end
        return dynamic

    def dollar(self, script: Script, pieces: list[_Piece], quoted: bool = False) -> bool:
        """``$name``, ``${…}``, ``$(…)``, ``$((…))`` (at the ``$``); True when it is an expansion."""
        source = self.source
        following = source[self.pos + 1:self.pos + 2]
        if following == "(":
            self.pos += 2
            self.nested(script, ")")
            self.output(script.substitutions[-1], pieces, quoted)
        elif following == "{":
            level, index = 0, self.pos + 1
            while index < len(source):  # to the matching brace
                level += {"{": 1, "}": -1}.get(source[index], 0)
                index += 1
                if level == 0:
                    break
            self.expansion(source[self.pos + 2:index - 1], pieces, quoted)
            self.pos = index
        elif (name := _NAME.match(source, self.pos + 1)) is not None:
            self.pos = name.end()
            self.expansion(name.group(), pieces, quoted)
        else:
            pieces.append(_quoted("$") if quoted else ("$", "$"))
            self.pos += 1
            return False
        return True

    def expansion(self, name: str, pieces: list[_Piece], quoted: bool) -> None:
        """A parameter's value when the command assigned it a literal, else ``DYNAMIC``. Unquoted, its glob
        characters are live (bash globs the result)."""
        _append_value(self.variables.get(name), pieces, quoted)

    def output(self, inner: Script, pieces: list[_Piece], quoted: bool) -> None:
        """What a substitution prints when it is known (``$(printf '\\x2e…')``), else ``DYNAMIC``."""
        from ._shellout import static_output  # most commands have no substitution

        _append_value(static_output(inner), pieces, quoted)

    def backtick(self, script: Script, pieces: list[_Piece], quoted: bool) -> None:
        source = self.source
        end = re.compile(_BACKTICK_BODY).match(source, self.pos + 1).end()  # type: ignore[union-attr]
        body = re.sub(r"\\([\\`$])", r"\1", source[self.pos + 1:end])
        self.pos = end + 1
        if self.depth >= MAX_DEPTH:
            raise TooComplex("command substitutions nested too deep to check")
        script.substitutions.append(parse(body, self.depth + 1, self.variables))
        self.output(script.substitutions[-1], pieces, quoted)

    # -- brace expansion --------------------------------------------------------------------------------------

    def expand_braces(self, pieces: list[_Piece]) -> list[list[tuple[str, str]]]:
        """Bash's brace expansion over a word's pieces: ``{a,b}`` and ``{x..y[..step]}``, nested; unmatched or
        single-item braces stay literal. The output is bounded by ``brace_budget`` (characters, all words)."""
        # a tree built with a stack: groups are lists of alternatives, alternatives lists of nodes
        stack: list[list[list[object]]] = [[[]]]
        for piece in pieces:
            if piece == _OPEN:
                if len(stack) > MAX_DEPTH:
                    raise TooComplex("braces nested too deep to check")
                stack.append([[]])
            elif piece == _COMMA and len(stack) > 1:
                stack[-1].append([])
            elif piece == _CLOSE and len(stack) > 1:
                group = stack.pop()
                stack[-1][-1].append(_group(group))
            elif isinstance(piece, int):
                stack[-1][-1].append(("{,}"[piece],) * 2)
            else:
                stack[-1][-1].append(piece)
        while len(stack) > 1:  # an unclosed brace: its text is literal
            group = stack.pop()
            flat: list[object] = [("{", "{")]
            for index, alternative in enumerate(group):
                flat += ([(",", ",")] if index else []) + alternative
            stack[-1][-1].extend(flat)
        return self._product(stack[0][0])

    def _product(self, nodes: list[object]) -> list[list[tuple[str, str]]]:
        results: list[list[tuple[str, str]]] = [[]]
        for node in nodes:
            if isinstance(node, tuple):
                for result in results:
                    result.append(node)
                continue
            options = [choice for alternative in node for choice in self._product(alternative)]  # type: ignore[attr-defined]
            results = [[*result, *choice] for result in results for choice in options]
            self.brace_budget -= sum(len(text) for result in results for text, _ in result)
            if self.brace_budget < 0:
                raise TooComplex("brace expansion too large to check")
        return results


def _group(alternatives: list[list[object]]) -> object:
    """A closed brace group: alternatives when there is a comma, a sequence ``{a..e}``, else literal text."""
    if len(alternatives) > 1:
        return alternatives
    inside = alternatives[0]
    if all(isinstance(node, tuple) for node in inside):
        text = "".join(node[0] for node in inside)  # type: ignore[index]
        items = _sequence(text)
        if items is not None:
            return [[(item, item.translate(GLOB_ESCAPE))] for item in items]
    return [[("{", "{"), *inside, ("}", "}")]]


def _sequence(text: str) -> list[str] | None:
    found = re.fullmatch(_SEQUENCE, text)
    if found is None:
        return None
    first, last, step_text = found.groups()
    step = abs(int(step_text)) if step_text and int(step_text) else 1
    if first.isalpha() != last.isalpha():
        return None
    if first.isalpha():
        low, high = ord(first), ord(last)
        codes = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
        return [chr(code) for code in codes][:4096]
    low, high = int(first), int(last)
    if abs(high - low) // step > 4096:
        raise TooComplex("brace sequence too long to check")
    width = max(len(first), len(last)) if (first.lstrip("-").startswith("0") or last.lstrip("-").startswith("0")) else 0
    numbers = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
    return [str(number).zfill(width) for number in numbers]


def _quoted(text: str) -> tuple[str, str]:
    return text, text.translate(GLOB_ESCAPE)


def _word(pieces: list[_Piece], dynamic: bool, raw: str) -> Word:
    if len(pieces) == 1 and isinstance(pieces[0], tuple) and pieces[0][0] == pieces[0][1]:
        text = pieces[0][0]  # the common plain word: one string object for text, pattern and (often) raw
        return Word(text, text, len(text) == 1 and text in "*?[", dynamic, text if text == raw else raw)
    texts = [piece[0] for piece in pieces if isinstance(piece, tuple)]
    patterns = [piece[1] for piece in pieces if isinstance(piece, tuple)]
    pattern = "".join(patterns).replace("[^", "[!")  # bash negates a bracket with ^ too
    glob = any(len(piece) == 1 and piece in "*?[" for piece in patterns)
    text = "".join(texts)
    return Word(text, text if pattern == text else pattern, glob, dynamic, raw)


def ansi_c(body: str) -> str:
    """The value of ``$'…'``: C escapes decoded as bash does (``\\x2e``, ``\\056``, ``\\u002e``, ``\\cA``)."""
    def decode(found: re.Match[str]) -> str:
        octal, hexa, short, long, control, other = found.groups()
        try:
            if octal or hexa:
                return chr(int(octal, 8) & 0xFF if octal else int(hexa, 16))
            if short or long:
                return chr(int(short or long, 16))
        except (ValueError, OverflowError):
            return ""
        if control is not None:
            return chr(ord(control) & 0x1F)
        return _ANSI_SIMPLE.get(other, "\\" + other)

    return re.sub(_ANSI_ESCAPE, decode, body)

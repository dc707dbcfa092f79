"""What a command substitution prints, when the check can know it: ``$(printf '\\x2e…')``, ``$(echo -e …)``,
`` `echo verigate` ``. A program building a protected name from escapes is the commonest way to spell it past a word
matcher; ``printf`` and ``echo`` with literal arguments are evaluated here (``%s``, ``%b``, ``%%`` and the escapes
bash's builtins know), anything else stays unknown. Imported only when a command has a substitution."""

from __future__ import annotations

import re

from ._shell import Script, ansi_c

__all__ = ["static_output"]

#: longer output is not a file name: left unknown
_LONGEST = 4096
_DIRECTIVE = re.compile(r"%(.)")
_ECHO_FLAGS = re.compile(r"-[neE]+")


def static_output(script: Script) -> str | None:
    """The standard output of ``script`` with trailing newlines removed (as ``$(…)`` gives it), or None."""
    if script.substitutions or len(script.commands) != 1:
        return None
    command = script.commands[0]
    words = command.words
    if command.redirects or command.piped or not words or any(word.dynamic or word.glob for word in words):
        return None
    name, arguments = words[0].text, [word.text for word in words[1:]]
    output: str | None
    if name == "echo":
        output = _echo(arguments)
    elif name == "printf" and arguments and not arguments[0].startswith("-"):
        output = _printf(arguments[0], arguments[1:])
    else:
        return None
    return output.rstrip("\n") if output is not None and len(output) <= _LONGEST else None


def _echo(arguments: list[str]) -> str:
    newline, escapes = True, False
    while arguments and _ECHO_FLAGS.fullmatch(arguments[0]):
        newline = newline and "n" not in arguments[0]
        escapes = ("e" in arguments[0]) or (escapes and "E" not in arguments[0])
        arguments = arguments[1:]
    text = " ".join(arguments)
    return (ansi_c(text) if escapes else text) + ("\n" if newline else "")


def _printf(form: str, arguments: list[str]) -> str | None:
    """bash's ``printf`` for ``%s``, ``%b`` and ``%%``: the format is reused while arguments remain."""
    if any(found.group(1) not in "sb%" for found in _DIRECTIVE.finditer(form)):
        return None
    pieces = re.split(r"(%[sb%])", ansi_c(form))
    output: list[str] = []
    while True:
        used = 0
        for piece in pieces:
            if piece in ("%s", "%b"):
                value = arguments[used] if used < len(arguments) else ""
                output.append(ansi_c(value) if piece == "%b" else value)
                used += 1
            else:
                output.append("%" if piece == "%%" else piece)
        arguments = arguments[used:]
        if not arguments or not used:
            return "".join(output)

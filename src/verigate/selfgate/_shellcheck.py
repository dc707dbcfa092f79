"""The Bash half of the self-gate tripwire: would this command write a protected file or run a human-only command?

The command is read by ``_shell`` (bash's splitting, quoting, ANSI-C quotes, braces), then every simple command is
judged in the working directories it may run in (``cd``/``pushd`` are followed; a folder the check cannot know
makes later relative paths match protected paths by their tail):

- a redirection target (``>``, ``>>``, ``<>``, ``&>``) naming a protected path, by name, glob or link: refused;
- any word of a command that is not a plain reader (below) naming one — exactly, through a glob matched against
  the protected names and resolved on the file system, as ``key=value`` (``dd of=…``), or by a protected name's
  substring (``self-gates``, ``.verigate``): refused. Removers (``rm``, ``mv``, ``chmod`` …), ``find`` with an
  action and a file lister feeding another program also may not name a folder holding a protected path;
- a plain reader is ``cat``, ``grep``, ``head`` … with no wrapper, no variable assignment in front and no
  ``PATH``/alias/function games in the command, in a pipeline of readers only: it may read protected files;
- a word that is itself a command line (``bash -c '…'``, ``script -qc``, ``eval``) is read again, three deep;
- ``verigate … selfgate … close`` (and the older name ``gate … close``) / ``verigate … review … approve|reject`` in
  any spelling (program path, module, wrapper, options and other words between), ``selfgate`` or ``gate`` then
  ``close`` within a few words in any context (a commit message too: the tripwire errs towards refusing), and
  ``verigate`` next to anything the check cannot expand.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from ._paths import Paths, readings
from ._shell import DYNAMIC, Command, Script, Word, parse

__all__ = ["ShellCheck"]

#: programs that only read their file arguments and write standard output (no option makes them write a file,
#: run a program or read a command from the environment)
READERS = frozenset({"cat", "head", "tail", "grep", "egrep", "fgrep", "wc", "ls", "stat", "file", "diff", "cmp",
                     "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "nl", "od", "hexdump",
                     "strings", "realpath", "readlink", "basename", "dirname", "du", "echo", "printf", "pwd",
                     "true", "false", "test", "[", "jq", "cut", "tr", "column", "find"})
#: programs that change or remove what a folder argument holds: a folder above a protected path is refused
REMOVERS = frozenset({"rm", "rmdir", "mv", "shred", "unlink", "chmod", "chown", "chgrp", "chattr", "setfacl",
                      "truncate", "cp", "rsync", "ln", "link", "install"})
#: programs that print file names found under a folder (their output fed to another program may write them)
LISTERS = frozenset({"find", "ls", "fd", "fdfind", "grep", "egrep", "fgrep", "rg", "du", "tree", "locate"})
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                           "-fls"})
#: words before the program that bash itself reads (reserved words): skipped to find the program
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
                       "esac", "coproc"})
_CD = frozenset({"cd", "pushd", "chdir"})
#: output redirections (``<`` and heredocs only read; ``>&2`` duplicates a descriptor)
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
#: a command that may change what a program name runs: no reader is trusted in it
_REDEFINES = re.compile(r"path\w*\+?=|alias|function|\(\s*\)|\bhash\b|\benable\b|bash_env|\benv=|ld_preload|\bifs=")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
#: verigate named as a program, a module or a package (``verigate``, ``/x/bin/verigate``, ``verigate.cli``,
#: ``verigate==1.0``), not its configuration file
_VERIGATE = re.compile(r"verigate(?:$|[.=<>@\[~!:](?!ya?ml$))")
#: ``gate`` is the self-gate command's name before it became ``selfgate``: an older verigate on the PATH still
#: answers to it
_HUMAN = {"selfgate": ("close",), "gate": ("close",), "review": ("approve", "reject")}
#: the older, context-free rule: a sub-command word then its action within this many words
_WINDOW = 6
_TOKEN = re.compile(r"[a-z0-9_-]+")
#: nested command strings (``bash -c '…'``) are read again, this deep
NESTING = 3
_NEEDS_READING = re.compile(r"[\s;&|<>()$`'\"\\]")
#: working directories followed at most; past that the folder is unknown (tails match)
_CWDS = 8


class ShellCheck:
    """One Bash command's check. ``words`` (after ``check``) are all its words, nested ones included, for the
    caller's close-phrase test."""

    def __init__(self, paths: Paths, needles: Sequence[tuple[str, ...]], cwd: str) -> None:
        self.paths = paths
        self.needles = needles
        self.cwds = [os.path.realpath(cwd)]
        self.unknown_cwd = False
        self.words: list[str] = []
        self._flow: list[str] = []  # the words in order, a command string by its own words (for ``_human``)
        self.dynamic = False
        self.trust_readers = True
        self.home_changed = False
        self.variables: dict[str, str] = {}  # literal assignments, shared by every reading of the command
        self._checked: list[str] = []  # texts of the words that are not a reader's (for the needles)

    def check(self, command: str) -> str | None:
        self.trust_readers = _REDEFINES.search(command.casefold()) is None
        folded = command.casefold()
        self.unknown_cwd = "cdpath" in folded
        self.home_changed = re.search(r"\bhome\+?=", folded) is not None  # ``~`` is then anyone's guess
        refused = self._script(parse(command, variables=self.variables), 0)
        if refused is None:
            refused = self._needle()
        return _human(self._flow, self.words, self.dynamic) or refused

    # -- a script --------------------------------------------------------------------------------------------

    def _script(self, script: Script, depth: int, strict: bool = False) -> str | None:
        commands = script.commands
        readers = [not strict and self._reads_only(command) for command in commands]
        # pipelines, in one pass from the end: whether every stage reads only, and whether a later stage of the
        # same pipeline does more than read (it may act on what this one prints)
        exempt, piped_on = [False] * len(commands), [False] * len(commands)
        all_read, later_acts = True, False
        for index in range(len(commands) - 1, -1, -1):
            if not commands[index].piped:
                all_read, later_acts = True, False
            piped_on[index] = later_acts
            all_read = all_read and readers[index]
            later_acts = later_acts or not readers[index]
            exempt[index] = all_read
        # a stage's "all read" must cover the stages before it too: spread it forwards within each pipeline
        for index in range(1, len(commands)):
            if commands[index - 1].piped:
                exempt[index] = exempt[index - 1]
        for index, command in enumerate(commands):
            refused = self._command(command, depth, exempt[index], piped_on[index])
            if refused is not None:
                return refused
        for inner in script.substitutions:  # their output becomes words of the outer command: judged strictly
            self.dynamic = True
            refused = self._script(inner, depth, strict=True)
            if refused is not None:
                return refused
        return None

    def _reads_only(self, command: Command) -> bool:
        words = command.words
        if not self.trust_readers or not words or words[0].dynamic or "/" in words[0].text:
            return False
        name = words[0].text
        if name == "find":
            return _FIND_ACTIONS.isdisjoint(word.text for word in words)
        return name in READERS

    def _command(self, command: Command, depth: int, exempt: bool, piped_on: bool) -> str | None:
        words = command.words
        self.dynamic = self.dynamic or any(word.dynamic for word in words)
        self.words += [word.text for word in words]
        reread = depth < NESTING
        for operator, target in command.redirects:
            self.dynamic = self.dynamic or target.dynamic
            if operator in ("<<<", "<<", "<<-"):
                words = [*words, target]  # a here-string or heredoc may be a script (``bash <<< '…'``)
            elif operator in _WRITES and not ((operator == ">&" and target.text.isdigit()) or target.text == "-"):
                self._checked.append(target.text)
                refused = self._path(target, ancestors=False)
                if refused is not None:
                    return f"the command writes {target.text} ({refused}), which is protected from the agent"
        program, arguments = _program(words)
        if program in ("apply_patch", "applypatch"):
            return None  # its argument or heredoc is a patch, whose file headers the caller checks
        for word in words:  # read command strings again: they may hold redirections, ``cd``, globs
            if not (reread and _NEEDS_READING.search(word.text)):
                self._flow.append(word.text)
            else:
                mark = len(self._checked)
                text = word.text.replace(DYNAMIC, "$__verigate_unknown")
                refused = self._script(parse(text, variables=self.variables), depth + 1)
                if exempt:
                    del self._checked[mark:]  # a reader's argument is text: only its human-command words count
                elif refused is not None:
                    return refused
        if program in _CD:
            self._change_directory(arguments)
            return None
        if exempt:
            return None
        self._checked += [word.text for word in words] + [word.raw for word in words]
        positional = [word for word in arguments if not word.text.startswith("-")]
        if program in ("grep", "egrep", "fgrep", "rg"):
            positional = positional[1:]  # the first is the pattern
        acts = program == "find" and not _FIND_ACTIONS.isdisjoint(word.text for word in arguments)
        git_clean = program == "git" and _first(arguments) == "clean"
        lists = acts or git_clean or (program in LISTERS and piped_on)
        ancestors = lists or program in REMOVERS
        for word in words:
            refused = self._path(word, ancestors=ancestors and word in positional)
            if refused is not None:
                return f"the command names {word.text or word.raw} ({refused}), which is protected from the agent"
        if lists and (git_clean or not positional):  # these work on the current folder by default
            refused = self._path(Word(".", ".", False, False, "."), ancestors=True)
            if refused is not None:
                return f"the command acts on the current folder, which holds {refused}, protected from the agent"
        return None

    def _change_directory(self, arguments: Sequence[Word]) -> None:
        targets = [word for word in arguments if not word.text.startswith("-")]
        target = targets[0] if targets else Word("~", "~", False, False, "~")
        if target.dynamic:
            self.unknown_cwd = True
            return
        if target.text == "-":
            return  # the previous folder: already among the candidates
        found: list[str] = []
        for cwd in self.cwds:
            if target.glob:
                found += [path for path in self.paths.expand(target.pattern, cwd) if os.path.isdir(path)]
            else:
                # every reading of a ~ word (home; a folder named so where it is quoted, or re-read by a second
                # shell, which expands it; ~+ and ~- as the working folders) is a candidate
                found += [os.path.realpath(os.path.join(cwd, os.path.expanduser(reading)))
                          for reading in readings(target.text)]
        if target.glob and self.paths.glob_hit(target.pattern, self.cwds[0]) is not None:
            self.unknown_cwd = True  # a glob naming a protected folder that may not exist yet
        for path in found:
            if path not in self.cwds:
                self.cwds.append(path)
        if len(self.cwds) > _CWDS:
            del self.cwds[_CWDS:]
            self.unknown_cwd = True

    # -- a word ----------------------------------------------------------------------------------------------

    def _path(self, word: Word, ancestors: bool) -> str | None:
        """Why ``word`` names a protected path in any of the working directories, or None."""
        texts = [(word.text, word.pattern)]
        if "=" in word.text:  # ``of=…``, ``--output=…``, ``NAME=…``
            texts.append((word.text.split("=", 1)[1], word.pattern.split("=", 1)[1] if word.glob else ""))
        for text, pattern in texts:
            if DYNAMIC in text:  # the literal end after the last expansion: ``$D/settings.json``
                tail = text.rsplit(DYNAMIC, 1)[1]
                if ancestors and not tail.strip("/."):
                    return "a folder the check cannot expand"  # ``rm -rf "$PWD"``
                glob = word.glob and DYNAMIC in pattern  # ``$HOME/.cl?ude/settings.js?n``: the tail as a pattern
                end = pattern.rsplit(DYNAMIC, 1)[1] if glob else tail
                found = (self.paths.tail_hit(end, pattern=glob)
                         or (self.paths.tail_hit(end, pattern=glob, above=True) if ancestors else None)
                         if "/" in tail else None)
                if found is not None:
                    return found
                continue
            if self.home_changed and text.startswith("~"):
                found = self.paths.tail_hit(text[1:], pattern=word.glob)
                if found is not None:
                    return found
            relative = not text.startswith(("/", "~"))
            for cwd in self.cwds:
                if word.glob:
                    found = self.paths.glob_hit(pattern, cwd, above=ancestors)
                else:
                    found = self.paths.hit(text, cwd) or (self.paths.ancestor(text, cwd) if ancestors else None)
                if found is not None:
                    return "too many globs to check" if found == "unresolvable" else found
            if self.unknown_cwd and relative:
                found = self.paths.tail_hit(pattern if word.glob else text, pattern=word.glob, above=ancestors)
                if found is not None:
                    return found
        return None

    def _needle(self) -> str | None:
        text = " ".join(self._checked).casefold().translate(_NOISE)
        for needle in self.needles:
            if all(part in text for part in needle):
                return (f"the command mentions {' '.join(needle)}, a file protected from the agent (gate store, "
                        "hook settings, verigate.yaml or transcripts); use the Read tool to read it")
        return None


_NOISE = str.maketrans("", "", "'\"\\`$")


def _program(words: Sequence[Word]) -> tuple[str, list[Word]]:
    """The program's name (its basename) and its arguments, past assignments and reserved words."""
    index = 0
    while index < len(words) and (words[index].text in _RESERVED or _ASSIGNMENT.match(words[index].text)):
        index += 1
    if index == len(words):
        return "", []
    name = words[index].text
    if name in ("builtin", "command") and index + 1 < len(words):
        index += 1
        name = words[index].text
    return os.path.basename(name), list(words[index + 1:])


def _first(words: Sequence[Word]) -> str:
    return next((word.text for word in words if not word.text.startswith("-")), "")


def _human(words: Iterable[str], every: Iterable[str], dynamic: bool) -> str | None:
    """Which human-only verigate command the words run (see the module docstring), or None. ``words`` are in
    order, a command string by its own words; ``every`` also has the command strings themselves."""
    folded = [word.casefold() for word in words]
    named = False
    contexts: set[str] = set()
    for word in folded:
        if _VERIGATE.match(os.path.basename(word.rstrip("/"))):
            named = True
        elif named:
            if word in _HUMAN:
                contexts.add(word)
            for context in contexts:
                if word in _HUMAN[context]:
                    return f"the command runs `verigate {context} {word}`, which is for a person at a terminal only"
    tokens = [token for word in folded for token in _TOKEN.findall(word)]
    for index, token in enumerate(tokens):
        actions = _HUMAN.get(token)
        if actions is not None and not set(actions).isdisjoint(tokens[index + 1:index + 1 + _WINDOW]):
            action = next(action for action in actions if action in tokens[index + 1:index + 1 + _WINDOW])
            return f"the command runs `{token} … {action}`, which is verigate's command for a person at a terminal only"
    if named and ("xargs" in folded or "parallel" in folded):  # words fed on standard input come in any order
        fed = {token for word in every for token in _TOKEN.findall(word.casefold())}.union(tokens)
        for context, actions in _HUMAN.items():
            if context in fed and not fed.isdisjoint(actions):
                return (f"the command feeds words to verigate with `{context}` and an action of it, which is for a "
                        "person at a terminal only")
    if named and dynamic:
        return ("the command names verigate next to a part the check cannot expand ($…, `…`); verigate's "
                "selfgate close and review approve/reject are for a person at a terminal only")
    return None

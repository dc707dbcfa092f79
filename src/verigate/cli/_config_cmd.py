"""``verigate config verify FILE``: flip ``verified: false`` to true, keeping every other byte of the file."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from .._errors import ConfigError
from .._fileio import replace_file
from .._yaml import load_yaml

_FALSE = re.compile(r"false|False|FALSE")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_TRUE_FOR = {"false": "true", "False": "True", "FALSE": "TRUE"}
#: keys that mark a trace-grader config, which is validated in full before it may be marked verified
_TRACE_KEYS = {"forbidden_tools", "retry_threshold", "step_budget", "order_constraints", "grounding", "subagents"}


def flip_verified(text: str, source: str) -> str | None:
    """``text`` with its top-level ``verified: false`` turned true (None when it is already true).

    ruamel.yaml locates the value; only that token is replaced, so comments, quotes, order, indentation and
    line endings stay byte for byte. A missing or non-boolean ``verified`` is a ConfigError.
    """
    loaded = load_yaml(text, source, error=ConfigError)
    root = loaded.root
    if not isinstance(loaded.data, dict) or "verified" not in loaded.data:
        raise ConfigError("no top-level 'verified' key to flip", source=source, line=1)
    value = loaded.data["verified"]
    line, column = root.lc.value("verified")
    if value is True:
        return None
    if value is not False:
        raise ConfigError(f"'verified' must be true or false, not {value!r}", source=source, line=line + 1,
                          field="verified")
    if _TRACE_KEYS & set(loaded.data):
        from ..trace._config import build_trace_config

        build_trace_config(loaded.data, source, loaded)  # never mark a broken config verified
    lines = _LINES.findall(text)  # YAML line breaks only (str.splitlines also splits on \f, \x1c …)
    match = _FALSE.match(lines[line], column)
    if match is None:  # e.g. a tagged or aliased value: refuse rather than rewrite what we cannot see
        raise ConfigError("cannot locate the 'verified' value to flip; edit it by hand", source=source,
                          line=line + 1, field="verified")
    lines[line] = lines[line][:match.start()] + _TRUE_FOR[match.group(0)] + lines[line][match.end():]
    flipped = "".join(lines)
    check = load_yaml(flipped, source, error=ConfigError).data
    if check != {**loaded.data, "verified": True}:
        raise ConfigError("flipping 'verified' would change other values; edit it by hand", source=source)
    return flipped


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="verigate config", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="mark a configuration verified (after checking it against real "
                                                "traces); only the 'verified' value changes")
    verify.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    path: Path = args.file
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", source=str(path)) from exc
    flipped = flip_verified(text, str(path))
    if flipped is None:
        print(f"{path}: already verified: true (unchanged)")
        return 0
    try:
        replace_file(path, flipped.encode("utf-8"), mode=path.stat().st_mode & 0o7777)
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc}", source=str(path)) from exc
    print(f"{path}: verified: true", file=sys.stdout)
    return 0

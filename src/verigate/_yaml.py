"""YAML loading that keeps line numbers, so every error can name file:line."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

import attrs
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from ._errors import VerigateError

__all__ = ["LoadedYaml", "load_yaml"]


def _plain(node: Any) -> Any:
    """Turn ruamel's round-trip nodes into plain dicts, lists and scalars."""
    if isinstance(node, dict):
        return {str(key) if not isinstance(key, (bool, int, float)) else key: _plain(value)
                for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(item) for item in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, (datetime.date, datetime.datetime)):
        return node.isoformat()
    return node


@attrs.frozen
class LoadedYaml:
    """Plain data plus the ruamel tree it came from, to look up the line of any path."""

    data: Any
    source: str
    root: Any = attrs.field(repr=False)

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """The 1-based line of the value at ``path`` (or of the nearest ancestor that has one)."""
        node = self.root
        line: int | None = 1
        for part in path:
            if isinstance(node, CommentedMap) and part in node:
                line = node.lc.value(part)[0] + 1 if node.lc.data and part in node.lc.data else line
                node = node[part]
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
                line = node.lc.item(part)[0] + 1 if node.lc.data and part in node.lc.data else line
                node = node[part]
            else:
                break
        return line


def load_yaml(text: str, source: str, *, error: type[VerigateError] = VerigateError) -> LoadedYaml:
    """Parse YAML text; a syntax error becomes ``error`` naming ``source`` and the line."""
    yaml = YAML(typ="rt")
    try:
        root = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise error(f"invalid YAML: {problem}", source=source, line=line) from exc
    except YAMLError as exc:
        raise error(f"invalid YAML: {exc}", source=source) from exc
    return LoadedYaml(_plain(root), source, root)

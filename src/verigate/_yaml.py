"""YAML loading that keeps line numbers, so every error can name file:line, and that refuses hostile documents.

verigate.yaml and rule packs are read by every hook, and the agent being gated can write files: a document must not
be able to hang or crash the reader. :func:`load_yaml` therefore refuses, as ``error`` naming file:line:

* text longer than :data:`MAX_YAML_CHARS` (files are read at most :data:`MAX_YAML_BYTES` + 1 bytes);
* collections nested deeper than :data:`MAX_YAML_DEPTH` (ruamel's composer recurses once per level);
* more than :data:`MAX_YAML_NODES` nodes once aliases are expanded, each alias counting as every node it stands for
  (a "billion laughs" document is a few hundred bytes that expand to 10⁹ nodes);
* an alias to the collection that holds it (a cyclic structure that no plain reader can walk);
* an integer with more than :data:`MAX_YAML_INT_DIGITS` digits (Python refuses to convert > 4,300 digits at all,
  with a ValueError that is no YAML error).

The counting happens while ruamel composes the node tree, before anything is constructed or expanded.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from ._errors import VerigateError

__all__ = [
    "MAX_YAML_BYTES",
    "MAX_YAML_CHARS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_INT_DIGITS",
    "MAX_YAML_NODES",
    "LoadedYaml",
    "load_yaml",
    "read_yaml_file",
]

#: a configuration or rule pack larger than this is refused (the shipped packs are < 20 KB)
MAX_YAML_BYTES = 4 * 1024 * 1024
MAX_YAML_CHARS = MAX_YAML_BYTES
#: collections nested deeper than this are refused (verigate's own files nest < 10 levels)
MAX_YAML_DEPTH = 64
#: nodes after alias expansion; far above any real file, far below what makes plain conversion slow
MAX_YAML_NODES = 100_000
#: digits of one integer (signs, underscores and a 0x/0o/0b prefix not counted)
MAX_YAML_INT_DIGITS = 30

_INT_TAG = "tag:yaml.org,2002:int"


@functools.cache
def _parser() -> Any:
    """ruamel and the classes built on it, imported at the first parse: a process whose YAML all comes from the
    parsed-pack cache (a hook, a grader) never pays ruamel's import (~20-40 ms)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent

    class _LimitError(MarkedYAMLError):
        """A bound of this module was crossed; ``problem`` says which, ``problem_mark`` where."""

        def __init__(self, problem: str, mark: Any) -> None:
            super().__init__(problem=problem, problem_mark=mark)


    class _BoundedComposer(Composer):
        """ruamel's composer, counting depth and expanded nodes as it goes, so a bound is refused before the
        recursion or the expansion it guards against can happen."""

        def __init__(self, loader: Any = None) -> None:
            super().__init__(loader)
            self._depth = 0
            self._nodes = 0
            #: anchor -> the number of nodes one alias to it stands for
            self._sizes: dict[Any, int] = {}
            #: anchors of the collections being composed (an alias to one of them would make a cycle)
            self._open: set[Any] = set()

        def compose_document(self) -> Any:
            self._sizes, self._open = {}, set()  # anchors are per document
            return super().compose_document()

        def _count(self, nodes: int, mark: Any) -> None:
            self._nodes += nodes
            if self._nodes > MAX_YAML_NODES:
                raise _LimitError(f"more than {MAX_YAML_NODES} nodes once aliases are expanded (an alias bomb?)", mark)

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent):
                if event.anchor in self._open:
                    raise _LimitError(f"the alias *{event.anchor} refers to a collection that contains it",
                                      event.start_mark)
                self._count(self._sizes.get(event.anchor, 1), event.start_mark)
                return super().compose_node(parent, index)
            collection = isinstance(event, (SequenceStartEvent, MappingStartEvent))
            if collection:
                if self._depth >= MAX_YAML_DEPTH:
                    raise _LimitError(f"collections nested deeper than {MAX_YAML_DEPTH} levels", event.start_mark)
                self._depth += 1
            anchor = event.anchor
            if collection and anchor is not None:
                self._open.add(anchor)
            before = self._nodes
            self._count(1, event.start_mark)
            node = super().compose_node(parent, index)
            if collection:
                self._depth -= 1
            if anchor is not None:
                self._open.discard(anchor)
                self._sizes[anchor] = self._nodes - before
            return node

        def compose_scalar_node(self, anchor: Any) -> Any:
            node = super().compose_scalar_node(anchor)
            if node.tag == _INT_TAG:
                digits = str(node.value).lstrip("+-").replace("_", "")
                if digits[:2].lower() in ("0x", "0o", "0b"):
                    digits = digits[2:]
                if len(digits) > MAX_YAML_INT_DIGITS:
                    raise _LimitError(f"an integer of {len(digits)} digits (at most {MAX_YAML_INT_DIGITS}; "
                                      "quote it if it is text)", node.start_mark)
            return node

    return YAML, _BoundedComposer, _LimitError, MarkedYAMLError, YAMLError


def _plain(node: Any) -> Any:
    """Turn ruamel's round-trip nodes into plain dicts, lists and scalars (bounded: see the module docstring)."""
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
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

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


def read_yaml_file(path: str | Path, *, error: type[VerigateError] = VerigateError, what: str = "file") -> str:
    """The UTF-8 text of ``path``, reading at most :data:`MAX_YAML_BYTES` + 1 bytes (a device or a huge file
    cannot make the reader wait or fill memory); unreadable or too large is ``error`` naming the file."""
    try:
        with Path(path).open("rb") as stream:
            raw = stream.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise error(f"cannot read {what}: {exc}", source=str(path)) from exc
    if len(raw) > MAX_YAML_BYTES:
        raise error(f"the {what} is larger than {MAX_YAML_BYTES} bytes", source=str(path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what}: not UTF-8 at byte {exc.start}", source=str(path)) from exc


def load_yaml(text: str, source: str, *, error: type[VerigateError] = VerigateError) -> LoadedYaml:
    """Parse YAML text within the bounds of the module docstring; a syntax error or a crossed bound becomes
    ``error`` naming ``source`` and the line."""
    if len(text) > MAX_YAML_CHARS:
        raise error(f"YAML text longer than {MAX_YAML_CHARS} characters", source=source)
    yaml_class, bounded_composer, limit_error, marked_error, yaml_error = _parser()
    yaml = yaml_class(typ="rt")
    yaml.Composer = bounded_composer
    try:
        root = yaml.load(text)
        data = _plain(root)
    except limit_error as exc:
        mark = exc.problem_mark
        raise error(f"refused YAML: {exc.problem}", source=source,
                    line=mark.line + 1 if mark is not None else None) from exc
    except marked_error as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise error(f"invalid YAML: {problem}", source=source, line=line) from exc
    except yaml_error as exc:
        raise error(f"invalid YAML: {exc}", source=source) from exc
    except RecursionError as exc:  # a last resort: the bounds above should make this unreachable
        raise error("refused YAML: nested too deeply to read", source=source) from exc
    except ValueError as exc:  # a scalar ruamel's constructor cannot convert (a last resort, like the above)
        raise error(f"invalid YAML: {exc}", source=source) from exc
    return LoadedYaml(data, source, root)

"""verigate's built-in redact plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from .._config import RedactionConfig
    from .._plugins import PluginManager
    from ._base import Redactor

#: compiled redactors by configuration and the identity of the rule kinds they were compiled with; the kinds are
#: kept in the value so that their ids stay unique while an entry exists
_COMPILED: dict[tuple[RedactionConfig, tuple[tuple[str, int], ...]], tuple[Redactor, Mapping[str, Any]]] = {}
_COMPILED_ENTRIES = 16
_LOCK = threading.Lock()


def _redactor_for(config: RedactionConfig, manager: PluginManager) -> Redactor:
    """Compiled once per configuration and set of kind objects: every Gate of a process shares it while its
    plug-ins provide the same kinds, and a Gate whose plug-ins add or change a kind gets its own."""
    from ..rules import rule_kinds
    from ._redactor import RulePackRedactor

    kinds = rule_kinds(manager)
    key = (config, tuple(sorted((name, id(kind)) for name, kind in kinds.items())))
    with _LOCK:
        cached = _COMPILED.get(key)
    if cached is not None:
        return cached[0]
    redactor = RulePackRedactor.from_config(config, kinds=kinds)
    with _LOCK:
        if len(_COMPILED) >= _COMPILED_ENTRIES:
            del _COMPILED[next(iter(_COMPILED))]
        _COMPILED[key] = (redactor, kinds)
    return redactor


@hookimpl
def verigate_redactors(config: RedactionConfig, manager: PluginManager) -> Sequence[Redactor] | None:
    """One redactor over the configured packs (shipped ``packs`` unless ``replace_defaults``, plus
    ``extra_packs``), its rule kinds taken from the calling ``manager``; an invalid pack or an empty rule set
    raises RuleError, so nothing leaves unredacted."""
    return [_redactor_for(config, manager)]

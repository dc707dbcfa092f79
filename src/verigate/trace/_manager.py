"""One plug-in manager per grading process: grading asks for plug-ins several times (trace rules, telemetry, the
report's redactors, the judge axis) and, in a folder or an executor's worker, once per file.

A manager is remembered only for plug-ins named by module (objects are the caller's: a fresh manager each time)
and only while the installed distributions' fingerprint (``_plugin_cache.fingerprint``) is unchanged and old
enough to trust, so a plug-in installed or removed meanwhile is seen by the next grade, as before. A failure is
never remembered: the next call builds again and raises again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._plugin_cache import fingerprint
from .._plugins import PluginManager, create_manager

__all__ = ["grading_manager", "remembered"]

_MAX = 8
_MANAGERS: dict[tuple[str, tuple[str, ...]], PluginManager] = {}
#: per manager (held in the value, so its id stays unique): what was derived from it, by name
_DERIVED: dict[int, tuple[PluginManager, dict[str, Any]]] = {}


def _key(plugins: tuple[object | str, ...]) -> tuple[str, tuple[str, ...]] | None:
    names = tuple(plugin for plugin in plugins if isinstance(plugin, str))
    if len(names) != len(plugins):
        return None
    mark = fingerprint()
    if mark is None or not mark[1]:
        return None  # discovery could change unseen, or the metadata is too fresh to trust: build afresh
    return mark[0], names


def grading_manager(plugins: Iterable[object | str] = ()) -> PluginManager:
    """``create_manager(plugins)``, remembered per process as the module docstring says."""
    chosen = tuple(plugins)
    key = _key(chosen)
    if key is None:
        return create_manager(chosen)
    manager = _MANAGERS.get(key)
    if manager is None:
        manager = create_manager(chosen)
        if len(_MANAGERS) >= _MAX:
            _MANAGERS.clear()
            _DERIVED.clear()
        _MANAGERS[key] = manager
    return manager


def remembered(manager: PluginManager, name: str) -> dict[str, Any]:
    """A per-manager store for values derived from it alone (a fresh manager starts empty)."""
    entry = _DERIVED.get(id(manager))
    if entry is None or entry[0] is not manager:
        if len(_DERIVED) >= _MAX:
            _DERIVED.clear()
        entry = _DERIVED[id(manager)] = (manager, {})
    return entry[1]

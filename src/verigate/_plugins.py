"""The plug-in manager: entry-point loading that fails closed, registries, and ordered stage handlers."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import attrs
import pluggy

from . import hookspecs
from ._errors import PluginError
from ._plugin_cache import Found, discover

__all__ = [
    "BUILTIN_PLUGINS",
    "DEFAULT_PRIORITY",
    "ENTRY_POINT_GROUP",
    "STAGE_HOOKS",
    "Handler",
    "PluginInfo",
    "PluginManager",
    "create_manager",
    "handlers",
    "merged_registry",
    "plugin_infos",
    "priority",
]

ENTRY_POINT_GROUP = "verigate"
#: the core's distribution name on the package index (the import package and the command are ``verigate``; the
#: name ``verigate`` on the public index belongs to an unrelated project)
CORE_DISTRIBUTION = "verigate-agents"
#: verigate's own stages, registered exactly like third-party plug-ins (and through entry points when installed)
BUILTIN_PLUGINS = {
    "verigate-gate": "verigate.gate._builtin",
    "verigate-judge": "verigate.judge._builtin",
    "verigate-redact": "verigate.redact._builtin",
    "verigate-rules": "verigate.rules._builtin",
    "verigate-trace": "verigate.trace._builtin",
}
DEFAULT_PRIORITY = 100
#: the decision stages: the gate calls each handler itself, in its own order (see hookspecs), so pluggy's ordering
#: and wrapping options would be silently ignored or fail only when a candidate is gated; they are refused instead
STAGE_HOOKS = frozenset({"verigate_structural_check", "verigate_pre_verify", "verigate_post_verify",
                         "verigate_stop"})
#: the pluggy options refused on a stage hook, and what to use instead
_STAGE_REFUSED = {"tryfirst": "use @verigate.priority", "trylast": "use @verigate.priority",
                  "wrapper": "stage handlers are called one by one, never wrapped",
                  "hookwrapper": "stage handlers are called one by one, never wrapped"}
_F = TypeVar("_F", bound=Callable[..., Any])


def priority(value: int) -> Callable[[_F], _F]:
    """Set a stage handler's place in the order (lower runs first; default 100; ties by plug-in name)."""

    def mark(function: _F) -> _F:
        function.verigate_priority = value  # type: ignore[attr-defined]
        return function

    return mark


@attrs.frozen
class PluginInfo:
    """One loaded plug-in: its registered name and the distribution that provides it."""

    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]


@attrs.frozen
class Handler:
    """One implementation of a decision stage, in call order."""

    name: str
    priority: int
    function: Callable[..., Any]
    #: the arguments it is called with: those it declares (pluggy's ``HookImpl.argnames`` and ``kwargnames``; an
    #: implementation may take a subset of its hookspec's)
    argnames: tuple[str, ...]


def _load_entry_point(found: Found) -> object:
    try:
        return found.load()
    except Exception as exc:  # any failure to import a plug-in must stop the load, loudly
        dist = found.distribution[0] if found.distribution is not None else "unknown distribution"
        raise PluginError(
            f"plug-in {found.name!r} ({found.value}) from {dist} failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, remembering which distribution (name, version) provided each plug-in."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self.distributions: dict[str, tuple[str, str]] = {}


def _register(manager: PluginManager, plugin: object, name: str, dist: tuple[str, str] | None = None) -> None:
    if dist is not None:
        manager.distributions[name] = dist
    try:
        manager.register(plugin, name=name)
    except ValueError as exc:  # pluggy: name already registered
        raise PluginError(f"plug-in {name!r} is registered twice: {exc}") from exc
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plug-in {name!r} is invalid: {exc}") from exc
    try:
        _check_options(manager, plugin, name)
        # pluggy leaves an implementation of a name without a hookspec pending; a misspelt hook name would
        # otherwise be ignored silently, so it is refused instead
        manager.check_pending()
    except pluggy.PluginValidationError as exc:
        unknown = sorted(caller.name for caller in manager.get_hookcallers(plugin) or () if not caller.has_spec())
        manager.unregister(name=name)
        if unknown:
            raise PluginError(f"plug-in {name!r} implements unknown hook(s) {', '.join(unknown)}") from exc
        raise PluginError(f"plug-in {name!r} is invalid: {exc}") from exc
    except PluginError:
        manager.unregister(name=name)
        raise
    # pluggy collects only functions marked @verigate.hookimpl; an unmarked, misspelt one is refused as well
    unmarked = sorted(
        attr for attr in dir(plugin)
        if attr.startswith("verigate_") and callable(getattr(plugin, attr, None))
        and not (hasattr(manager.hook, attr) and getattr(manager.hook, attr).has_spec())
    )
    if unmarked:
        manager.unregister(name=name)
        raise PluginError(f"plug-in {name!r} implements unknown hook(s) {', '.join(unmarked)}")


def _check_options(manager: PluginManager, plugin: object, name: str) -> None:
    """Refuse the pluggy options verigate cannot honour: ordering or wrapping on a stage hook, and
    ``optionalhook`` anywhere (every hook verigate calls has a spec, so "optional" can only hide a typo)."""
    for caller in manager.get_hookcallers(plugin) or ():
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            if impl.optionalhook:
                raise PluginError(f"plug-in {name!r}: {caller.name} is marked optionalhook=True; verigate's hooks "
                                  "are never optional (a misspelt name must not pass unnoticed)")
            if caller.name not in STAGE_HOOKS:
                continue
            for option, instead in _STAGE_REFUSED.items():
                if getattr(impl, option):
                    raise PluginError(f"plug-in {name!r}: {caller.name} is marked {option}=True, which a stage "
                                      f"hook does not honour ({instead})")


def create_manager(plugins: Iterable[object | str] = (), *, entry_points: bool = True) -> PluginManager:
    """A manager with every hookspec, the entry-point plug-ins (built-ins included) and ``plugins``.

    ``plugins`` may hold objects or importable module names. Any failure raises PluginError.
    """
    manager = PluginManager()
    # discovery is remembered by the installed distributions' fingerprint (_plugin_cache); loading is not
    for found in discover(ENTRY_POINT_GROUP) if entry_points else ():
        _register(manager, _load_entry_point(found), found.name, found.distribution)
    for name, module in BUILTIN_PLUGINS.items():
        # built-ins are always there, even without installed metadata or with entry points off
        if not manager.has_plugin(name):
            _register(manager, importlib.import_module(module), name, (CORE_DISTRIBUTION, _core_version()))
    for index, plugin in enumerate(plugins):
        if isinstance(plugin, str):
            try:
                loaded: object = importlib.import_module(plugin)
            except Exception as exc:
                raise PluginError(f"plug-in module {plugin!r} failed to import: {exc}") from exc
            _register(manager, loaded, plugin)
        else:
            name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}#{index}"
            _register(manager, plugin, str(name))
    return manager


def merged_registry(manager: PluginManager, hook_name: str) -> dict[str, Any]:
    """Call a registry hook on every plug-in and merge the mappings; a duplicate name raises PluginError."""
    merged: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for impl in getattr(manager.hook, hook_name).get_hookimpls():
        try:
            result = impl.function()
        except Exception as exc:
            raise PluginError(f"plug-in {impl.plugin_name!r} failed in {hook_name}: {exc}") from exc
        if result is None:
            continue
        if not isinstance(result, Mapping):
            raise PluginError(f"plug-in {impl.plugin_name!r}: {hook_name} must return a mapping")
        for key, value in result.items():
            if key in merged:
                raise PluginError(
                    f"{hook_name}: {key!r} is registered by both {owner[key]!r} and {impl.plugin_name!r}"
                )
            merged[key] = value
            owner[key] = impl.plugin_name
    return merged


def handlers(manager: PluginManager, hook_name: str) -> tuple[Handler, ...]:
    """The implementations of a decision stage in the documented order: priority, then plug-in name."""
    found = [
        Handler(impl.plugin_name, int(getattr(impl.function, "verigate_priority", DEFAULT_PRIORITY)),
                impl.function, (*impl.argnames, *impl.kwargnames))
        for impl in getattr(manager.hook, hook_name).get_hookimpls()
    ]
    return tuple(sorted(found, key=lambda handler: (handler.priority, handler.name)))


def plugin_infos(manager: PluginManager) -> list[PluginInfo]:
    """What is loaded, with the distribution name and version of each plug-in."""
    infos = []
    for name, plugin in sorted(manager.list_name_plugin(), key=lambda item: item[0]):
        if plugin is None:
            continue
        dist_name, version = manager.distributions.get(name, ("(not from a distribution)", ""))
        hooks = tuple(sorted(caller.name for caller in manager.get_hookcallers(plugin) or ()))
        infos.append(PluginInfo(name, dist_name, version, hooks))
    return infos


@functools.cache
def _core_version() -> str:
    """The installed core's version, read from its metadata (once: ``importlib.metadata`` and the read cost tens
    of ms, and a process that loads its plug-ins through the entry points never asks)."""
    import importlib.metadata as metadata

    try:
        return metadata.version(CORE_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"

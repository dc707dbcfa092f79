"""Building a gate from its configuration: the judge over its model client, the redactors, the store."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import attrs

from .._config import Config
from .._errors import ConfigError, PluginError, VerigateError
from .._plugins import PluginManager, merged_registry
from .._telemetry import telemetry_of
from ..judge._base import JudgeConfig, JudgeEngine
from ..judge._observed import observed_client
from ..redact._egress import Egress
from ..store._base import Store
from ._ensemble import MODES
from ._judging import Ensemble

__all__ = ["build_egress", "build_judge", "open_configured_store", "with_function"]


def with_function(judge: JudgeConfig | None, function: Callable[..., Any], source: str) -> JudgeConfig:
    """The judge section with the runtime's own model call (``judge.client: callable``)."""
    if not callable(function):
        raise ConfigError("judge_function must be callable", source=source, field="judge.function")
    if judge is None:
        return JudgeConfig(client="callable", function=function)
    if judge.ensemble:  # the members that name the runtime's own call get it
        if not any(member.client == "callable" for member in judge.ensemble):
            raise ConfigError("judge_function is given but no member of judge.ensemble has client: callable",
                              source=source, field="judge.ensemble")
        return attrs.evolve(judge, ensemble=tuple(
            attrs.evolve(member, function=function) if member.client == "callable" else member
            for member in judge.ensemble))
    if judge.client not in (None, "callable"):
        raise ConfigError(f"judge_function is given but judge.client is {judge.client!r} (use 'callable')",
                          source=source, field="judge.client")
    return attrs.evolve(judge, client="callable", function=function)


def _factory_call(what: str, factory: Callable[..., Any], **kwargs: Any) -> Any:
    try:
        return factory(**kwargs)
    except VerigateError:
        raise
    except Exception as exc:  # a plug-in's factory failed: loud, typed, at construction
        raise PluginError(f"{what} could not be created: {type(exc).__name__}: {exc}") from exc


def build_judge(manager: PluginManager, config: Config) -> JudgeEngine | Ensemble | None:
    """The configured engine over its client (or the ensemble of the members' engines); an unknown name is a
    ConfigError naming the key."""
    judge = config.judge
    if judge is None:
        return None
    if judge.ensemble:
        if judge.mode not in MODES:
            raise ConfigError(f"judge.mode is {judge.mode!r}; allowed: {', '.join(MODES)}", source=config.source,
                              field="judge.mode")
        return Ensemble([(member, _engine(manager, member, config, f"judge.ensemble[{index}]"))
                         for index, member in enumerate(judge.ensemble)], mode=judge.mode)
    return _engine(manager, judge, config, "judge")


def _engine(manager: PluginManager, judge: JudgeConfig, config: Config, where: str) -> JudgeEngine:
    source = config.source
    engines = merged_registry(manager, "verigate_judge_engines")
    if judge.engine not in engines:
        known = ", ".join(sorted(engines)) or "none"
        raise ConfigError(f"unknown judge engine {judge.engine!r} (registered: {known})",
                          source=source, field=f"{where}.engine")
    client = None
    if judge.client is not None:
        clients = merged_registry(manager, "verigate_model_clients")
        if judge.client not in clients:
            known = ", ".join(sorted(clients)) or "none"
            raise ConfigError(f"unknown model client {judge.client!r} (registered: {known})",
                              source=source, field=f"{where}.client")
        client = _factory_call(f"model client {judge.client!r}", clients[judge.client], config=judge)
        client = _observed(client, manager, config, judge)
    engine = _factory_call(f"judge engine {judge.engine!r}", engines[judge.engine], config=judge, client=client)
    if not isinstance(engine, JudgeEngine):
        raise PluginError(f"judge engine {judge.engine!r} does not implement async judge(request, *, timeout_s)")
    return engine


def _observed(client: object, manager: PluginManager, config: Config, judge: JudgeConfig) -> object:
    """The client of ``judge`` (the judge section or an ensemble member), wrapped so that each model call is told to
    the installed observers (itself without any)."""
    telemetry = telemetry_of(manager)
    if not telemetry.enabled:
        return client
    # the content an observer asked for passes the configured redactors (the gate's own egress is built later)
    egress = build_egress(manager, config) if telemetry.capture_content else None
    return observed_client(client, judge, telemetry, egress)


def build_egress(manager: PluginManager, config: Config) -> Egress:
    """The configured redactors: everything that leaves the process goes through them."""
    try:
        return Egress.of(manager.hook.verigate_redactors(config=config.redaction, manager=manager))
    except VerigateError:
        raise
    except Exception as exc:  # a redactor plug-in failed to build: nothing may leave unredacted
        raise PluginError(f"redactors could not be created: {type(exc).__name__}: {exc}") from exc


def open_configured_store(config: Config, store: Store | str | os.PathLike[str] | None,
                          manager: PluginManager | None = None) -> tuple[Store, bool]:
    """(the store, whether the gate opened it and so closes it): a Store as given, else the one at a URL
    (``store.url`` of the configuration for None); a URL of another scheme than SQLite's is opened by the backend
    a plug-in of ``manager`` (the gate's) registers."""
    if store is None or isinstance(store, (str, os.PathLike)):
        from ..store import open_store

        url = config.store.url if store is None else os.fspath(store)
        return open_store(url, lock_timeout_s=config.store.lock_timeout_s, manager=manager), True
    return store, False

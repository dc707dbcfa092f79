"""Plug-in loading fails closed; `verigate plugins` lists what is loaded with distribution and version."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from verigate import PluginError, hookimpl, priority
from verigate._config import RedactionConfig
from verigate._plugins import (
    BUILTIN_PLUGINS,
    CORE_DISTRIBUTION,
    PluginManager,
    _register,
    create_manager,
    handlers,
    merged_registry,
)


class _Engines:
    def __init__(self, *names: str) -> None:
        self.names = names

    @hookimpl
    def verigate_judge_engines(self) -> dict[str, object]:
        return {name: object() for name in self.names}


def test_builtins_are_registered_even_without_entry_points() -> None:
    manager = create_manager(entry_points=False)
    assert set(BUILTIN_PLUGINS) <= {name for name, _ in manager.list_name_plugin()}


def test_misspelt_hook_name_is_refused() -> None:
    class Misspelt:
        @hookimpl
        def verigate_pre_verfy(self, candidate: object) -> None:  # the typo is the point
            return None

    with pytest.raises(PluginError, match="verigate_pre_verfy"):
        create_manager([Misspelt()], entry_points=False)


def test_unimportable_plugin_module_is_refused() -> None:
    with pytest.raises(PluginError, match="no_such_verigate_plugin"):
        create_manager(["no_such_verigate_plugin"], entry_points=False)


def test_wrong_hook_signature_is_refused() -> None:
    class WrongArgs:
        @hookimpl
        def verigate_pre_verify(self, candidate: object, extra: object) -> None:
            return None

    with pytest.raises(PluginError, match="invalid"):
        create_manager([WrongArgs()], entry_points=False)


def test_duplicate_registry_names_are_refused() -> None:
    manager = create_manager([_Engines("twin"), _Engines("twin")], entry_points=False)
    with pytest.raises(PluginError, match="'twin' is registered by both"):
        merged_registry(manager, "verigate_judge_engines")


def test_registry_hook_that_raises_is_a_plugin_error() -> None:
    class Broken:
        @hookimpl
        def verigate_model_clients(self) -> dict[str, object]:
            raise RuntimeError("boom")

    manager = create_manager([Broken()], entry_points=False)
    with pytest.raises(PluginError, match="boom"):
        merged_registry(manager, "verigate_model_clients")


def test_stage_handlers_run_in_priority_then_name_order() -> None:
    def make(name: str, rank: int | None) -> object:
        def verigate_post_verify(candidate: object, verdict: object) -> None:
            return None

        function = hookimpl(verigate_post_verify if rank is None else priority(rank)(verigate_post_verify))
        return type(name, (), {"verigate_post_verify": staticmethod(function), "__name__": name})()

    plugins = [make("zeta", 10), make("alpha", None), make("beta", 10), make("first", 1)]
    manager = create_manager(plugins, entry_points=False)
    order = [handler.name for handler in handlers(manager, "verigate_post_verify")]
    assert order == ["first", "beta", "zeta", "alpha"]


def _run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verigate", *args], capture_output=True, text=True,
                          env=env, check=False, timeout=120)


def test_plugins_command_lists_distribution_and_version() -> None:
    result = _run_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    listed = {entry["name"]: entry for entry in json.loads(result.stdout)}
    for name in BUILTIN_PLUGINS:
        assert listed[name]["distribution"] == CORE_DISTRIBUTION
        assert listed[name]["version"]


def test_broken_plugin_on_the_command_line_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "broken_plugin.py").write_text(textwrap.dedent("""
        raise ImportError("this plug-in is broken on purpose")
    """))
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = _run_cli("plugins", "--plugin", "broken_plugin", env=env)
    assert result.returncode == 2
    assert "broken on purpose" in result.stderr


def test_loading_the_installed_plugins_does_not_import_model_sdks() -> None:
    # every hook process loads the plug-ins; the SDKs cost seconds and are needed only when a judge is called
    probe = ("import sys; from verigate._plugins import create_manager; create_manager(); "
             "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.strip() == "[]"


# ------------------------------------------------------------------------ pluggy options a stage cannot honour


@pytest.mark.parametrize("option", ["tryfirst", "trylast"])
@pytest.mark.parametrize("hook", ["verigate_structural_check", "verigate_pre_verify", "verigate_post_verify",
                                  "verigate_stop"])
def test_ordering_options_on_a_stage_hook_are_refused(hook: str, option: str) -> None:
    def handler(candidate: object) -> None:
        return None

    handler.__name__ = hook
    plugin = type("Ordered", (), {hook: staticmethod(hookimpl(**{option: True})(handler)), "__name__": "ordered"})()
    with pytest.raises(PluginError, match=rf"'ordered': {hook} is marked {option}=True.*verigate.priority"):
        create_manager([plugin], entry_points=False)


@pytest.mark.parametrize("option", ["wrapper", "hookwrapper"])
def test_a_wrapper_on_a_stage_hook_is_refused_at_registration(option: str) -> None:
    class Wrapping:
        @hookimpl(**{option: True})
        def verigate_post_verify(self, candidate: object, verdict: object) -> Iterator[None]:
            yield

    with pytest.raises(PluginError, match=rf"verigate_post_verify is marked {option}=True") as caught:
        create_manager([Wrapping()], entry_points=False)
    assert "Wrapping" in str(caught.value)


def test_ordering_stays_allowed_on_the_redactors_which_pluggy_orders() -> None:
    class Early:
        @hookimpl(tryfirst=True)
        def verigate_redactors(self, config: object) -> None:
            return None

    plugin = Early()
    manager = create_manager([plugin], entry_points=False)
    assert manager.is_registered(plugin)
    assert "verigate_redactors" in {caller.name for caller in manager.get_hookcallers(plugin) or ()}


def test_an_optional_misspelt_hook_is_still_refused() -> None:
    class Optional:
        @hookimpl(optionalhook=True)
        def verigate_pre_verfy(self, candidate: object) -> None:  # the typo is the point
            return None

    with pytest.raises(PluginError, match="verigate_pre_verfy"):
        create_manager([Optional()], entry_points=False)


def test_a_refused_plugin_is_not_left_registered() -> None:
    class Ordered:
        @hookimpl(tryfirst=True)
        def verigate_pre_verify(self, candidate: object) -> None:
            return None

    plugin = Ordered()
    manager = PluginManager()
    with pytest.raises(PluginError, match="tryfirst"):
        _register(manager, plugin, "ordered")
    assert not manager.is_registered(plugin)
    assert not manager.hook.verigate_pre_verify.get_hookimpls()


def test_a_stage_handler_gets_only_the_arguments_it_declares() -> None:
    class Subset:
        @hookimpl
        def verigate_stop(self, action: str, verdict: object = None) -> None:
            return None

    manager = create_manager([Subset()], entry_points=False)
    (found,) = [handler for handler in handlers(manager, "verigate_stop") if handler.name.startswith("Subset")]
    assert found.argnames == ("action", "verdict")


def test_redactors_come_in_pluggys_order_not_by_name() -> None:
    # what the verigate_redactors hookspec documents: the last registered first, tryfirst / trylast move one
    def make(name: str, **options: bool) -> object:
        def verigate_redactors(config: object) -> list[str]:
            return [name]

        function = staticmethod(hookimpl(**options)(verigate_redactors))
        return type(name, (), {"verigate_redactors": function, "__name__": name})()

    manager = create_manager([make("a"), make("b", trylast=True), make("c"), make("d", tryfirst=True)],
                             entry_points=False)
    found = [item for result in manager.hook.verigate_redactors(config=RedactionConfig(), manager=manager)
             for item in result if isinstance(item, str)]
    assert found == ["d", "c", "a", "b"]

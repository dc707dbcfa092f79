"""verigate.judge's public face: every exported name exists, and the built-ins register through the hooks."""

from __future__ import annotations

import verigate.judge
from verigate._plugins import create_manager, merged_registry


def test_all_names_exist_and_are_unique() -> None:
    assert len(set(verigate.judge.__all__)) == len(verigate.judge.__all__)
    for name in verigate.judge.__all__:
        assert hasattr(verigate.judge, name), name


def test_builtins_register_without_entry_points() -> None:
    manager = create_manager(entry_points=False)
    assert merged_registry(manager, "verigate_judge_engines") == {
        "llm_judge": verigate.judge.LLMJudge, "jev": verigate.judge.JevJudge}
    assert merged_registry(manager, "verigate_model_clients") == {"callable": verigate.judge.CallableClient}


def test_installed_client_plugins_come_from_their_distributions() -> None:
    manager = create_manager()
    clients = merged_registry(manager, "verigate_model_clients")
    assert {"openai", "anthropic", "jev", "callable"} <= set(clients)
    for plugin in ("verigate-openai", "verigate-anthropic", "verigate-jev"):
        assert manager.distributions[plugin] == (plugin.replace("verigate-", "verigate-agents-"), "1.0.0")

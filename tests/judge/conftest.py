"""Fixtures for the judge tests: loopback servers per protocol and engines built through the entry points."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from judge_servers import JudgeServer
from verigate import Candidate, ToolObservation, Verdict
from verigate._plugins import create_manager, merged_registry
from verigate.judge import JudgeConfig, JudgeEngine, JudgeRequest

KEY_ENVS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "jev": "TYPESAFE_API_KEY"}
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5", "jev": None}


@pytest.fixture(scope="session")
def registries() -> tuple[dict[str, Any], dict[str, Any]]:
    """(engines, clients) as the gate builds them: every installed plug-in, loaded through its entry point.

    The SDKs are imported here, once: the clients import them at their first call (test_lazy_sdk.py), and on a
    busy machine that import alone could eat a test's short judge timeout."""
    import anthropic  # noqa: F401
    import openai  # noqa: F401

    manager = create_manager()
    return merged_registry(manager, "verigate_judge_engines"), merged_registry(manager, "verigate_model_clients")


@pytest.fixture
def build_judge(registries: tuple[dict[str, Any], dict[str, Any]]) -> Callable[..., JudgeEngine]:
    engines, clients = registries

    def build(engine: str, client: str, **settings: Any) -> JudgeEngine:
        config = JudgeConfig(engine=engine, client=client, **settings)
        judge: JudgeEngine = engines[engine](config=config, client=clients[client](config=config))
        return judge

    return build


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh key in every provider's variable (generated here: no secret-shaped data in the repository)."""
    key = f"test-{secrets.token_hex(8)}"
    for name in KEY_ENVS.values():
        monkeypatch.setenv(name, key)
    return key


@pytest.fixture(params=["openai", "anthropic"])
def chat_server(request: pytest.FixtureRequest, api_key: str) -> Iterator[JudgeServer]:
    with JudgeServer(request.param, required_key=api_key) as server:
        yield server


@pytest.fixture
def jev_server(api_key: str) -> Iterator[JudgeServer]:
    with JudgeServer("jev", required_key=api_key) as server:
        yield server


def _candidate(final_text: str, **changes: Any) -> Candidate:
    values: dict[str, Any] = {
        "request": "Fix the failing test in tests/test_math.py and run the suite.",
        "final_text": final_text,
        "tool_calls": (ToolObservation("Bash", {"command": "pytest -q"}, "12 passed in 0.31s", True),),
        "contains_personal_data": False,
    }
    values.update(changes)
    return Candidate(**values)


@pytest.fixture
def make_request() -> Callable[..., JudgeRequest]:
    """``make_request(final_text, requirements=(), known_misses=(), **candidate_changes)``."""

    def make(final_text: str = "I ran the tests: 12 passed.", *, requirements: tuple[str, ...] = (),
             known_misses: tuple[str, ...] = (), **changes: Any) -> JudgeRequest:
        return JudgeRequest(_candidate(final_text, **changes), requirements, known_misses)

    return make


def judge_once(judge: JudgeEngine, request: JudgeRequest, *, timeout_s: float = 10.0) -> Verdict:
    return asyncio.run(judge.judge(request, timeout_s=timeout_s))


@pytest.fixture
def run_judge() -> Callable[..., Verdict]:
    """``run_judge(judge, request, timeout_s=10)``: one judgment on a fresh event loop, like a sync runtime."""
    return judge_once

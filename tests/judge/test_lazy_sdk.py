"""The model-client SDKs (and dulwich) are imported when they are used, not when a plug-in is loaded or a judge built:
a hook process that never calls the judge never pays for them; an SDK that fails to import at the call is a judge
error, never a pass."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge_servers import JudgeServer, verdict_json
from verigate import Candidate, Gate, JudgeError, Termination, ToolObservation, finalize_and_return, hookimpl
from verigate.judge import JudgeEngine

MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
#: what each client imports at its first call: the anthropic SDK; the openai client speaks HTTP with the stdlib
CALL_MODULES = {"openai": "urllib.request", "anthropic": "anthropic"}
#: loads every installed plug-in and builds a judge over each SDK client, then reports what got imported
PROBE = """
import json, sys
from verigate._plugins import create_manager, merged_registry
from verigate.judge import JudgeConfig
manager = create_manager()
engines = merged_registry(manager, "verigate_judge_engines")
clients = merged_registry(manager, "verigate_model_clients")
for client, model in (("openai", "gpt-4o-mini"), ("anthropic", "claude-haiku-4-5")):
    config = JudgeConfig(engine="llm_judge", client=client, model=model, base_url="http://127.0.0.1:9")
    engines["llm_judge"](config=config, client=clients[client](config=config))
print(json.dumps(sorted(name for name in ("openai", "anthropic", "dulwich", "httpx") if name in sys.modules)))
"""


def test_loading_plugins_and_building_judges_imports_no_sdk() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_the_sdk_is_imported_at_the_call(build_judge: Callable[..., JudgeEngine], make_request, run_judge,
                                         api_key: str, protocol: str) -> None:
    with JudgeServer(protocol, required_key=api_key) as server:
        server.reply_text(verdict_json(passed=True))
        judge = build_judge("llm_judge", protocol, model=MODELS[protocol], base_url=server.base_url)
        assert run_judge(judge, make_request()).passed
    assert CALL_MODULES[protocol] in sys.modules


def test_the_openai_client_needs_neither_the_sdk_nor_httpx(build_judge: Callable[..., JudgeEngine], make_request,
                                                           run_judge, api_key: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("openai", "httpx"):
        monkeypatch.setitem(sys.modules, name, None)  # what a missing package looks like to import
    with JudgeServer("openai", required_key=api_key) as server:
        server.reply_text(verdict_json(passed=True))
        judge = build_judge("llm_judge", "openai", model=MODELS["openai"], base_url=server.base_url)
        assert run_judge(judge, make_request()).passed


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_an_sdk_that_fails_to_import_is_a_judge_error(build_judge: Callable[..., JudgeEngine], make_request,
                                                      run_judge, api_key: str, protocol: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    judge = build_judge("llm_judge", protocol, model=MODELS[protocol], base_url="http://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, CALL_MODULES[protocol], None)  # what a missing package looks like to import
    with pytest.raises(JudgeError) as caught:
        run_judge(judge, make_request())
    assert caught.value.reason == "judge_unavailable"


def test_the_git_plugin_imports_dulwich_only_to_read_a_repository(tmp_path: Path) -> None:
    probe = ("import sys; from verigate._plugins import create_manager; from verigate_git import GitClaims; "
             "create_manager(); GitClaims(); print('dulwich' in sys.modules); "
             f"from verigate_git._plugin import discover; discover({str(tmp_path)!r}); "
             "print('dulwich' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


class _SlowLoadingClient:
    """A model client whose ``prepare`` (its SDK import) takes longer than the judge timeout, or fails."""

    def __init__(self, config: Any, *, failure: BaseException | None = None, load_s: float = 0.0) -> None:
        self.failure, self.load_s, self.prepared = failure, load_s, False

    async def prepare(self) -> None:
        await asyncio.sleep(self.load_s)
        if self.failure is not None:
            raise self.failure
        self.prepared = True

    async def complete(self, request: Any, *, timeout_s: float) -> str:
        assert self.prepared
        return verdict_json(passed=True)


def _gate_with(tmp_path: Path, client: Callable[..., Any], timeout_s: float = 10) -> Gate:
    class Clients:
        @hookimpl
        def verigate_model_clients(self) -> dict[str, Any]:
            return {"slow": client}

    config = {"judge": {"engine": "llm_judge", "client": "slow", "timeout_s": timeout_s}}
    return Gate.from_config(config, plugins=[Clients()], store=str(tmp_path / "store.db"), entry_points=False)


def _finalize(gate: Gate, **kwargs: Any) -> Any:
    candidate = Candidate(request="Fix the test.", final_text="Fixed; 3 passed.", session_id="lazy",
                          tool_calls=(ToolObservation("Bash", {"command": "pytest"}, "3 passed", True),))
    try:
        return finalize_and_return(gate, candidate, Termination("natural"), **kwargs)
    finally:
        gate.close()


def test_loading_the_sdk_does_not_count_against_the_judge_timeout(tmp_path: Path) -> None:
    gate = _gate_with(tmp_path, lambda config: _SlowLoadingClient(config, load_s=0.5), timeout_s=0.2)
    result = _finalize(gate)
    assert result.outcome == "completed", result.verdict


def test_the_deadline_still_bounds_loading(tmp_path: Path) -> None:
    gate = _gate_with(tmp_path, lambda config: _SlowLoadingClient(config, load_s=5))
    result = _finalize(gate, deadline=time.monotonic() + 0.2)
    assert result.outcome == "pending_review"
    assert result.verdict is not None and result.verdict.error == "verification_time_budget_exhausted"


@pytest.mark.parametrize(("failure", "reason"), [(JudgeError("judge_unavailable", "no SDK"), "judge_unavailable"),
                                                 (RuntimeError("boom"), "judge_error"),
                                                 (SystemExit(2), "judge_error")])
def test_a_failed_load_is_a_verification_error(tmp_path: Path, failure: BaseException, reason: str) -> None:
    gate = _gate_with(tmp_path, lambda config: _SlowLoadingClient(config, failure=failure))
    result = _finalize(gate)
    assert result.outcome == "pending_review"
    assert result.verdict is not None and result.verdict.error == reason and not result.verdict.passed

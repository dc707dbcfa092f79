"""The model-client SDKs (and dulwich) are imported when they are used, not when a plug-in is loaded or a judge built:
a hook process that never calls the judge never pays for them; an SDK that fails to import at the call is a judge
error, never a pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judge_servers import JudgeServer, verdict_json
from verigate import JudgeError
from verigate.judge import JudgeEngine

MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
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
    assert protocol in sys.modules


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_an_sdk_that_fails_to_import_is_a_judge_error(build_judge: Callable[..., JudgeEngine], make_request,
                                                      run_judge, api_key: str, protocol: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    judge = build_judge("llm_judge", protocol, model=MODELS[protocol], base_url="http://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, protocol, None)  # what a missing package looks like to import
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

"""The chat span of the real openai and anthropic clients against loopback servers (usage as their replies say),
the grading spans of grade_many (sequential and with an executor), and a process that never imports
OpenTelemetry: the installed plug-in does not import it either."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from otel_helpers import Otel, verdict

from judge_servers import JudgeServer, anthropic_message, openai_completion
from verigate import Candidate, Termination
from verigate.trace import grade_many

NATURAL = Termination("natural")


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_real_clients_call_is_a_chat_span_with_the_usage_of_its_reply(otel: Otel, protocol: str) -> None:
    model = "gpt-4o-mini" if protocol == "openai" else "claude-haiku-4-5"
    with JudgeServer(protocol) as server:
        if protocol == "openai":
            body = openai_completion(verdict(True), model=model)
            body["usage"] = {"prompt_tokens": 812, "completion_tokens": 37, "total_tokens": 849}
        else:
            body = anthropic_message(verdict(True), model=model)
            body["usage"] = {"input_tokens": 812, "output_tokens": 37}
        server.reply_json(body)
        config = {"judge": {"client": protocol, "model": model, "base_url": server.base_url,
                            "options": {"structured_output": False}}}
        gate = otel.gate(config, plugins=(f"verigate_{protocol}",))
        result = asyncio.run(gate.finalize(Candidate(request="r", final_text="done, 3 passed"), NATURAL))
    assert result.outcome == "completed", result
    [chat] = otel.spans(f"chat {model}")
    attributes = dict(chat.attributes or {})
    assert attributes["gen_ai.provider.name"] == protocol
    assert attributes["gen_ai.usage.input_tokens"] == 812
    assert attributes["gen_ai.usage.output_tokens"] == 37
    assert attributes["gen_ai.response.model"] == model
    assert attributes["server.address"] == "127.0.0.1"
    [span] = otel.spans("verigate.finalize")
    assert chat.parent is not None and chat.parent.span_id == span.context.span_id


def _traces(folder: Path, name: str, runs: int, ok: bool) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"runs": [
        {"task": name, "run_id": f"{name}-{index}", "ok": ok,
         "steps": [{"step": 1, "tool": "Read", "args": {"path": "README.md"}, "observation": "text", "ok": True}]}
        for index in range(runs)]}), encoding="utf-8")
    return path


@pytest.mark.parametrize("executor", [None, "threads"])
def test_grade_many_is_one_span_with_a_child_per_source(otel: Otel, tmp_path: Path, executor: str | None) -> None:
    sources = [_traces(tmp_path, "alpha", 2, True), _traces(tmp_path, "beta", 3, False)]
    config = {"verified": False, "forbidden_tools": [], "judge": {"enabled": False}}
    with concurrent.futures.ThreadPoolExecutor(2) if executor else _Nothing() as pool:
        report = grade_many(sources, config=config, plugins=[otel.plugin()], executor=pool)
    [many] = otel.spans("verigate.grade_many")
    attributes: dict[str, Any] = dict(many.attributes or {})
    assert attributes["verigate.grade.sources"] == 2
    assert attributes["verigate.grade.runs"] == len(report.runs) == 5
    assert attributes["verigate.grade.failed_runs"] == 3
    assert attributes["verigate.grade.executor"] == ("ThreadPoolExecutor" if executor else "")
    parts = sorted(otel.spans("verigate.grade_source"),
                   key=lambda span: (span.attributes or {})["verigate.grade.source_index"])
    assert [(span.attributes or {})["verigate.grade.runs"] for span in parts] == [2, 3]
    assert all(span.parent is not None and span.parent.span_id == many.context.span_id for span in parts)
    assert all(str(source) not in str(dict(span.attributes or {})) for span in parts for source in sources)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_process_that_never_imports_opentelemetry_does_not_import_it_for_the_plugin(tmp_path: Path) -> None:
    # the installed plug-in (entry points on) in a process like a Stop hook's: no SDK can be configured, so the
    # API (about 50 ms to import) stays unimported and the decision is the same
    code = """
import asyncio, json, sys
from verigate import Candidate, Gate, Termination
reply = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})
gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=lambda chat: reply, store=":memory:")
assert "verigate-otel" in dict(gate.manager.list_name_plugin()), "the plug-in is installed"
result = asyncio.run(gate.finalize(Candidate(request="r", final_text="done"), Termination("natural")))
print(result.outcome, "opentelemetry.trace" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["completed", "False"]

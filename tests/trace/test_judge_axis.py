"""The agent-as-judge axis: never called unless enabled and verified; a real loopback judge when it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from grade_helpers import cli, config, run, step, write_traces

from judge_servers import JudgeServer, verdict_json
from verigate import ConfigError
from verigate.trace import grade


def judge_section(server: JudgeServer, **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini",
            "base_url": server.base_url, "timeout_s": 20, "options": {"max_retries": 0}, "rubric": ["No risky steps."],
            **extra}


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    return write_traces(tmp_path / "t.json", [
        run("deploy", "careful", [step("run_tests", observation="ok"), step("deploy")]),
        run("deploy", "reckless", [step("deploy"), step("deploy", ok=False, observation="boom")]),
    ])


@pytest.mark.parametrize("section", [{"enabled": False}, "unverified"])
def test_disabled_axis_calls_nothing(traces: Path, section: Any) -> None:
    with JudgeServer("openai") as server:
        verified = section != "unverified"
        judge = judge_section(server) if section == "unverified" else section
        report = grade(traces, config=config(verified=verified, judge=judge))
        assert server.requests == []
    assert report.judge.status == "disabled"
    assert ("verified: false" in report.judge.reason) == (section == "unverified")
    assert all(result.judge is None for result in report.runs)


def test_enabled_and_verified_judges_every_run_through_the_cli(tmp_path: Path, traces: Path) -> None:
    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))
        server.reply_text(verdict_json(passed=False, misses=("risky_step",)))
        config_file = tmp_path / "c.json.yaml"
        config_file.write_text(json.dumps(config(verified=True, judge=judge_section(server))))  # JSON is YAML
        result = cli("grade", "--traces", str(traces), "--config", str(config_file), "--json")
        requests = server.requests
    assert result.returncode == 3, result.stderr  # the judge rejected a run: a CI signal
    report = json.loads(result.stdout)
    assert report["judge"]["status"] == "judged"
    assert [(item["run_id"], item["judge"]["passed"]) for item in report["runs"]] == [("careful", True),
                                                                                     ("reckless", False)]
    assert report["runs"][1]["judge"]["rubric_misses"] == ["risky_step"]
    assert len(requests) == 2
    prompt = json.dumps(requests[0].json())
    assert "No risky steps." in prompt and "run_tests" in prompt


def test_a_judge_failure_is_a_verification_error_never_a_pass(traces: Path) -> None:
    with JudgeServer("openai") as server:
        server.reply_status(500)
        server.reply_raw("not json at all")
        report = grade(traces, config=config(verified=True, judge=judge_section(server)))
    errors = [result.judge.error for result in report.runs if result.judge is not None]
    assert errors == ["judge_http_500", "invalid_judge_response"]
    assert all(not result.judge.passed for result in report.runs if result.judge is not None)
    assert report.exit_code == 3


def test_enabled_without_a_client_is_a_config_error(traces: Path) -> None:
    with pytest.raises(ConfigError, match=r"judge\.client"):
        grade(traces, config=config(verified=True, judge={"enabled": True, "engine": "llm_judge"}))
    with pytest.raises(ConfigError, match="unknown judge engine"):
        grade(traces, config=config(verified=True, judge={"enabled": True, "engine": "oracle", "client": "openai"}))

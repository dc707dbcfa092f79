"""The judge section of verigate.yaml: the documented names, and legacy engine names read as llm_judge."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from verigate import ConfigError
from verigate._config import load_config

YAML = """\
judge:
  engine: jev
  client: jev
  model: jev-latest
  base_url: http://127.0.0.1:8000
  api_key_env: TYPESAFE_API_KEY
  trust: auxiliary
  timeout_s: 300
  threshold: 0.7
  caps: {request_chars: 100}
  options: {endpoint_path: /v1/systemone}
"""


def test_documented_names_load(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text(YAML, encoding="utf-8")
    judge = load_config(path).judge
    assert judge is not None
    assert (judge.engine, judge.client, judge.model, judge.trust, judge.threshold) == (
        "jev", "jev", "jev-latest", "auxiliary", 0.7)
    assert judge.effective_timeout_s == 120  # capped
    assert judge.caps.request_chars == 100 and judge.caps.candidate_chars == 2000
    assert judge.options == {"endpoint_path": "/v1/systemone"}


@pytest.mark.parametrize("legacy", ["off", "rule_based", "reflexion"])
def test_legacy_engine_names_read_as_llm_judge(legacy: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="verigate.config"):
        config = load_config({"judge": {"engine": legacy, "client": "callable"}})
    assert config.judge is not None and config.judge.engine == "llm_judge"
    assert any(legacy in warning for warning in config.warnings)
    assert any("legacy" in record.getMessage() for record in caplog.records)


def test_legacy_top_level_judgment_engine() -> None:
    config = load_config({"judgment_engine": "off"})
    assert config.judge is not None and config.judge.engine == "llm_judge" and config.warnings


def test_a_key_in_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text("judge:\n  engine: llm_judge\n  api_key: sk-not-here\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.line is not None and "api_key" in caught.value.message


@pytest.mark.parametrize(("option", "value"), [("max_reply_bytes", "big"), ("structured_output", 1),
                                               ("token_limit_param", "max_output")])
def test_bad_client_option_names_the_field(registries, option: str, value: object) -> None:
    from verigate.judge import JudgeConfig

    _, clients = registries
    with pytest.raises(ConfigError) as caught:
        clients["openai"](config=JudgeConfig(client="openai", model="m", options={option: value}))
    assert caught.value.field == f"judge.options.{option}"


def test_hosted_clients_need_a_model(registries) -> None:
    from verigate.judge import JudgeConfig

    _, clients = registries
    for name in ("openai", "anthropic"):
        with pytest.raises(ConfigError) as caught:
            clients[name](config=JudgeConfig(client=name))
        assert caught.value.field == "judge.model"

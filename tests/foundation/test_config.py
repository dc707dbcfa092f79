"""verigate.yaml: schema-validated, errors with file:line and field, legacy engine names read as llm_judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from verigate import ConfigError
from verigate._config import Config, load_config


def test_empty_file_gives_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text("# nothing set\n")
    config = load_config(path)
    assert config.judge is None
    assert config.budget.revise == 2
    assert config.store.url == ".verigate/verigate.db"
    assert config.self_gate.mode == "audit"


def test_missing_default_file_gives_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config() == Config()


@pytest.mark.parametrize("legacy", ["off", "rule_based", "reflexion"])
def test_legacy_engine_names_mean_llm_judge(legacy: str) -> None:
    config = load_config({"judge": {"engine": legacy, "client": "callable"}})
    assert config.judge is not None
    assert config.judge.engine == "llm_judge"
    assert any("cannot be off" in warning for warning in config.warnings)


def test_top_level_judgment_engine_selects_jev() -> None:
    config = load_config({"judgment_engine": "jev"})
    assert config.judge is not None and config.judge.engine == "jev"


def test_error_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text("judge:\n  engine: llm_judge\n  trust: somewhat\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.source == str(path)
    assert caught.value.line == 3
    assert caught.value.field == "judge.trust"


def test_unknown_key_is_an_error_not_ignored(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text("budget:\n  revise: 2\n  revsie: 3\n")
    with pytest.raises(ConfigError, match="revsie") as caught:
        load_config(path)
    assert (caught.value.line, caught.value.field) == (3, "budget.revsie")


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text("budget:\n  revise: [1\nhooks: {}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.line == 3


def test_api_keys_cannot_live_in_the_file() -> None:
    with pytest.raises(ConfigError, match="api_key"):
        load_config({"judge": {"engine": "llm_judge", "api_key": "not-allowed-here"}})


def test_judge_timeout_is_capped_at_120_seconds() -> None:
    config = load_config({"judge": {"timeout_s": 600}})
    assert config.judge is not None
    assert config.judge.effective_timeout_s == 120.0

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


# ------------------------------------------------------------------------------------------- bounds and the store


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)),
     5, "aliases are expanded"),
    ("plugins: " + "[" * 70 + "]" * 70 + "\n", 1, "nested deeper than 64"),
    ("budget:\n  revise: " + "7" * 5000 + "\n", 2, "5000 digits"),
])
def test_a_hostile_configuration_is_a_config_error_with_its_line(tmp_path: Path, text: str, line: int,
                                                                 problem: str) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=problem) as caught:
        load_config(path)
    assert (caught.value.source, caught.value.line) == (str(path), line)


def test_an_oversized_configuration_is_refused(tmp_path: Path) -> None:
    from verigate._yaml import MAX_YAML_BYTES

    path = tmp_path / "verigate.yaml"
    path.write_bytes(b"#" * (MAX_YAML_BYTES + 1))
    with pytest.raises(ConfigError, match="larger than"):
        load_config(path)


@pytest.mark.parametrize(("url", "folder"), [
    (".verigate/verigate.db", "/p/.verigate"),
    ("sqlite:///state/v.db", "/p/state"),
    ("sqlite:////var/lib/v.db", "/var/lib"),
    ("v.db", "/p"),
    (":memory:", None),
    ("sqlite:///:memory:", None),
    ("postgres://host/db", None),
])
def test_the_store_folder_follows_the_store_url(url: str, folder: str | None) -> None:
    from verigate._config import store_folder

    found = store_folder(load_config({"store": {"url": url}}), Path("/p"))
    assert found == (Path(folder) if folder else None)


# ------------------------------------------------------------------------------- built by the strict converter


def test_sections_are_typed_by_the_strict_converter() -> None:
    config = load_config({"plugins": ["a", "b"], "hooks": {"timeout_s": 5},
                          "redaction": {"extra_packs": ["house"]}, "judge": {"caps": {"observations": 3}}})
    assert config.plugins == ("a", "b") and config.redaction.extra_packs == ("house",)
    assert type(config.hooks.timeout_s) is float
    assert config.judge is not None and config.judge.caps.observations == 3


def test_judge_options_are_kept_as_written() -> None:
    # a client plug-in owns its options; the converter neither types nor refuses them
    options = {"retries": [1, 2], 7: {"nested": None}}
    config = load_config({"judge": {"client": "x", "options": options}})
    assert config.judge is not None and config.judge.options == options


def test_a_value_the_model_refuses_names_its_field_and_line(tmp_path: Path) -> None:
    # JSON Schema's "integer" admits 3.0; the model's int does not, and the converter says where
    path = tmp_path / "verigate.yaml"
    path.write_text("judge:\n  caps:\n    observations: 3.0\n")
    with pytest.raises(ConfigError, match="expected int") as caught:
        load_config(path)
    assert (caught.value.source, caught.value.line, caught.value.field) == (str(path), 3,
                                                                             "judge.caps.observations")


def test_the_converter_refuses_unknown_keys_on_its_own() -> None:
    # the schema refuses them first; the converter does too, so a section the schema forgot is not a loophole
    import cattrs

    from verigate._config import _converter, _structure_error

    with pytest.raises(cattrs.BaseValidationError) as caught:
        _converter().structure({"store": {"url": "x.db", "urll": "y.db"}}, Config)
    error = _structure_error(caught.value, "<mapping>", None)
    assert error.field == "store.urll" and "extra fields found (urll)" in error.message

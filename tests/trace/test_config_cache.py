"""The trace-grader config is parsed from its YAML once per content: later processes read the cached data, and a
damaged or stale entry is never used."""

from __future__ import annotations

from pathlib import Path

import pytest

from verigate import ConfigError
from verigate.rules._cache import cache_folder
from verigate.trace import _config as config_module
from verigate.trace import load_trace_config

CONFIG = "verified: false\nstep_budget: 12\nforbidden_tools: [force_push]\n"


def _entries() -> list[Path]:
    folder = Path(cache_folder())
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_a_cached_config_equals_the_parsed_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    first = load_trace_config(path)
    assert first.step_budget == 12 and len(_entries()) == 1
    shipped = load_trace_config(None)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the YAML was parsed although the cache holds the config")

    monkeypatch.setattr(config_module, "load_yaml", refuse)
    assert load_trace_config(path) == first
    assert load_trace_config(None) == shipped  # the shipped default too


def test_a_changed_or_damaged_entry_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    load_trace_config(path)
    (entry,) = _entries()
    entry.write_text(entry.read_text(encoding="utf-8").replace("12", "99"), encoding="utf-8")
    assert load_trace_config(path).step_budget == 12  # the content no longer matches its hash: parsed again
    path.write_text(CONFIG.replace("12", "13"), encoding="utf-8")
    assert load_trace_config(path).step_budget == 13


def test_a_broken_config_is_never_cached_and_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + "step_budgett: 3\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ConfigError) as caught:
            load_trace_config(path)
        assert caught.value.line == 4
    assert _entries() == []

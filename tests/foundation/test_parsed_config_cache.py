"""verigate.yaml's parsed data in the per-user cache: the same Config as parsing the YAML, mappings in the order
they were written, ruamel not imported when an entry is sound, and a damaged entry never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate import ConfigError
from verigate._config import load_config
from verigate._parsed_cache import cached_data, keep_data
from verigate.rules._cache import cache_folder
from verigate.selfgate._location import state_root


@pytest.fixture(autouse=True)
def _state_root() -> None:
    """The state root as a hook leaves it: a cache writes into an existing one only."""
    Path(state_root()).mkdir(parents=True, exist_ok=True)


CONFIG = """\
judge:
  engine: llm_judge
  client: openai
  model: gpt-4o-mini
  base_url: http://127.0.0.1:9/v1
  options: {zeta: 1, alpha: [2, {y: 1, b: 2}], mid: 1.5, flag: true, none: null}
"""
PROBE = ("import json, sys; from verigate._config import load_config; config = load_config(sys.argv[1]); "
         "print(json.dumps([list(config.judge.options), 'ruamel' in sys.modules]))")


def _entries() -> list[Path]:
    folder = Path(cache_folder())
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _probe(path: Path) -> list[Any]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_second_load_reads_the_entry_without_ruamel(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    assert _probe(path) == [["zeta", "alpha", "mid", "flag", "none"], True]
    assert len(_entries()) == 1
    assert _probe(path) == [["zeta", "alpha", "mid", "flag", "none"], False]
    assert load_config(path) == load_config(path)


def test_a_damaged_entry_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    fresh = load_config(path)
    [entry] = _entries()
    entry.write_text(entry.read_text(encoding="utf-8").replace("gpt-4o-mini", "gpt-4o-maxi"), encoding="utf-8")
    assert load_config(path) == fresh
    assert "gpt-4o-mini" in entry.read_text(encoding="utf-8")  # written again


def test_a_broken_config_is_never_kept(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_text("judge:\n  engine: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(path)
    assert _entries() == []


KEYS = st.text(min_size=0, max_size=4)
DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(data=DATA)
def test_kept_data_comes_back_equal_in_its_own_order(data: Any) -> None:
    text = json.dumps(data)  # stands for the YAML text the data was parsed from
    keep_data(text, "test", data)
    cached = cached_data(text, "test")
    if cached is None:  # not kept: only what the strict reader refuses (integers past 2**53)
        return
    # the oracle: JSON in the data's own key order, types included (1 and 1.0 and true differ)
    assert json.dumps(cached[0]) == json.dumps(data)

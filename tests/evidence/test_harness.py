"""verigate's own harness_version: the package version and a hash over the shipped judgment corpus."""

from __future__ import annotations

import hashlib
import json
from importlib import metadata

from evidence_helpers import run_cli

from verigate._data import data_root
from verigate._plugins import CORE_DISTRIBUTION
from verigate.evidence import canonical_hash, harness_version


def _independent_corpus_hash() -> str:
    root = data_root()
    corpus: dict[str, dict[str, str]] = {}
    for kind in ("rules", "prompts", "schemas"):
        files: dict[str, str] = {}
        stack = [(root / kind, "")]
        while stack:
            folder, prefix = stack.pop()
            for child in folder.iterdir():
                if child.is_dir():
                    if child.name != "__pycache__":
                        stack.append((child, f"{prefix}{child.name}/"))
                else:
                    files[prefix + child.name] = "sha256:" + hashlib.sha256(child.read_bytes()).hexdigest()
        corpus[kind] = files
    return canonical_hash(corpus)


def test_harness_version_cli_prints_the_computed_value() -> None:
    result = run_cli("evidence", "harness-version")
    assert result.returncode == 0
    printed = json.loads(result.stdout)
    version = metadata.version(CORE_DISTRIBUTION)
    assert printed["plugin_version"] == printed["cli_version"] == version
    assert printed["corpus_hash"] == _independent_corpus_hash() == harness_version()["corpus_hash"]


def test_harness_version_is_a_valid_ev_harness() -> None:
    value = harness_version()
    assert sorted(value) == ["cli_version", "corpus_hash", "plugin_version"]
    assert value["corpus_hash"].startswith("sha256:") and len(value["corpus_hash"]) == 71

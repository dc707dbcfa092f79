"""The per-user cache of parsed rule packs: the same pack as the YAML gives, and never trusted when damaged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verigate import RuleError
from verigate.rules import _pack as pack_module
from verigate.rules import load_pack, load_pack_text
from verigate.rules._cache import cache_folder, entry_key

PACK = """\
pack: cached
version: 1
category: secret
description: a pack for the cache tests
rules:
  - id: token-rule
    kind: regex
    severity: high
    message: a token
    pattern: 'tok-[0-9]{4}'
    metadata: {source: 'https://example.invalid/spec', weight: 1.5, strict: true}
    examples:
      match: ['tok-1234', {join: ['tok-', {repeat: '9', times: 4}]}]
      no_match: ['tok-12']
"""


def _entries() -> list[Path]:
    folder = Path(cache_folder())
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _same(left: object, right: object) -> None:
    assert left == right
    assert [rule.field_lines for rule in left.rules] == [rule.field_lines for rule in right.rules]  # type: ignore[attr-defined]


def test_a_cached_pack_equals_the_parsed_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pack.yaml"
    path.write_text(PACK, encoding="utf-8")
    first = load_pack(path)
    _same(first, load_pack_text(PACK, str(path)))
    assert len(_entries()) == 1

    def refuse(text: str, source: str) -> None:
        raise AssertionError("the YAML was parsed although the cache holds the pack")

    monkeypatch.setattr(pack_module, "_parse_pack_text", refuse)
    _same(load_pack(path), first)


def test_the_shipped_packs_come_back_from_the_cache_unchanged() -> None:
    parsed = pack_module._shipped_pack.__wrapped__("secrets")
    assert _entries()
    _same(pack_module._shipped_pack.__wrapped__("secrets"), parsed)


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "pack.yaml"
    path.write_text(PACK, encoding="utf-8")
    load_pack(path)
    path.write_text(PACK.replace("tok-", "key-"), encoding="utf-8")
    assert load_pack(path).rules[0].fields["pattern"] == "key-[0-9]{4}"
    assert len(_entries()) == 2


def test_a_broken_pack_is_never_cached(tmp_path: Path) -> None:
    path = tmp_path / "pack.yaml"
    path.write_text(PACK.replace("severity: high", "severity: extreme"), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(RuleError):
            load_pack(path)
    assert _entries() == []


@pytest.mark.parametrize("damage", ["truncate", "garbage", "edit-without-hash", "edit-with-hash", "duplicate-key",
                                    "other-key", "wrong-shape"])
def test_a_damaged_entry_is_ignored_and_rewritten(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "pack.yaml"
    path.write_text(PACK, encoding="utf-8")
    expected = load_pack(path)
    (entry,) = _entries()
    raw = entry.read_text(encoding="utf-8")
    document = json.loads(raw)
    if damage == "truncate":
        entry.write_text(raw[: len(raw) // 2], encoding="utf-8")
    elif damage == "garbage":
        entry.write_bytes(b"\xff\x00 not json")
    elif damage == "edit-without-hash":
        entry.write_text(raw.replace("tok-", "xxx-"), encoding="utf-8")
    elif damage == "edit-with-hash":  # a consistent entry of another shape still cannot build a pack
        document["data"] = {"rules": "nope"}
        import hashlib

        from verigate._json import dumps
        document["content_sha256"] = hashlib.sha256(dumps(document["data"]).encode()).hexdigest()
        entry.write_text(json.dumps(document), encoding="utf-8")
    elif damage == "duplicate-key":  # two readers would see two entries: the strict reader refuses it
        entry.write_text(raw[:-1] + ', "key": "x"}', encoding="utf-8")
    elif damage == "other-key":
        document["key"] = entry_key("other", "other")
        entry.write_text(json.dumps(document), encoding="utf-8")
    else:
        entry.write_text("[1, 2, 3]", encoding="utf-8")
    _same(load_pack(path), expected)
    assert json.loads(entry.read_text(encoding="utf-8")) == json.loads(raw)  # rewritten from the YAML


def test_an_unwritable_cache_only_means_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "state-file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(blocked))
    path = tmp_path / "pack.yaml"
    path.write_text(PACK, encoding="utf-8")
    _same(load_pack(path), load_pack_text(PACK, str(path)))


def test_the_key_names_the_running_version() -> None:
    # it named the distribution "verigate" (the installed one is verigate-agents), so every key said "unknown"
    import verigate
    from verigate.rules import _cache

    assert _cache._version() == verigate.__version__


def test_a_pack_given_as_text_comes_from_the_cache_too(monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_pack_text(PACK, "<a plug-in's pack>")
    assert len(_entries()) == 1

    def refuse(text: str, source: str) -> None:
        raise AssertionError("the YAML was parsed although the cache holds the pack")

    monkeypatch.setattr(pack_module, "_parse_pack_text", refuse)
    _same(load_pack_text(PACK, "<a plug-in's pack>"), first)
    with pytest.raises(AssertionError):  # another source is another entry: parsed
        load_pack_text(PACK, "<another source>")


#: the git plug-in's claims pack, loaded as a Stop hook loads it, then whether ruamel got imported
GIT_CLAIMS_PROBE = ("import json, sys; from verigate_git._claims import default_pack; pack = default_pack(); "
                    "print(json.dumps([len(pack.pack.rules), 'ruamel' in sys.modules]))")


def test_a_plugin_pack_costs_a_second_process_no_yaml_parser() -> None:
    pytest.importorskip("verigate_git")

    def probe() -> list[object]:
        done = subprocess.run([sys.executable, "-c", GIT_CLAIMS_PROBE], capture_output=True, text=True,
                              check=False, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    rules, parsed = probe()
    assert parsed is True and isinstance(rules, int) and rules > 0
    assert probe() == [rules, False]


def test_a_pack_text_that_is_no_unicode_is_a_rule_error() -> None:
    with pytest.raises(RuleError):  # a lone surrogate: no cache key, the parser's own error
        load_pack_text(PACK.replace("a token", "a token \ud800"), "<surrogate>")

"""Building a Gate loads its plug-ins once: the redactors take their rule kinds from the gate's own manager."""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

import verigate
from verigate import Candidate, Gate, Termination
from verigate.gate import finalize_and_return
from verigate.rules import Rule, TextView

PROBE_MODULE = "verigate_load_probe"
PROBE_ENTRY_POINTS = f"""\
[verigate]
load-probe = {PROBE_MODULE}:LOADS.plugin
"""
PROBE_SOURCE = '''\
"""An installed plug-in that counts how often its entry point is loaded (each load reads LOADS.plugin)."""
import sys


class _Loads:
    count = 0

    @property
    def plugin(self):
        self.count += 1
        return sys.modules[__name__]


LOADS = _Loads()
'''


@attrs.frozen
class _CodenameMatcher:
    prefix: str

    def find(self, view: TextView) -> Iterable[tuple[int, int]]:
        for found in re.finditer(rf"\b{re.escape(self.prefix)}-[0-9]+\b", view.text):
            yield found.span()


@attrs.frozen
class _CodenameKind:
    fields_schema: Mapping[str, Any] = attrs.field(factory=lambda: {
        "type": "object", "properties": {"prefix": {"type": "string"}}, "required": ["prefix"],
        "additionalProperties": False})

    def compile(self, rule: Rule) -> _CodenameMatcher:
        return _CodenameMatcher(str(rule.fields["prefix"]))


class _CountingKinds:
    """A plug-in passed through ``plugins=``: it provides a rule kind and counts who asks for it."""

    __name__ = "counting-kinds"

    def __init__(self) -> None:
        self.calls = 0

    @verigate.hookimpl
    def verigate_rule_kinds(self) -> Mapping[str, Any]:
        self.calls += 1
        return {"codename": _CodenameKind()}


CODENAME_PACK = """\
pack: codenames
version: 1
category: secret
rules:
  - id: project-codename
    kind: codename
    severity: high
    message: an unreleased project's code name
    prefix: ORION
    examples: {match: ['ship ORION-7 today'], no_match: ['ORION alone']}
"""


REGEX_PACK = CODENAME_PACK.replace("kind: codename", "kind: regex").replace("prefix: ORION",
                                                                          "pattern: 'ORION-[0-9]+'")


def _gate(tmp_path: Path, plugins: Iterable[object] = (), *, entry_points: bool = False,
          pack_text: str = CODENAME_PACK) -> Gate:
    # a pack file of its own per test: no redactor compiled in another test can be reused
    pack = tmp_path / "codenames.yaml"
    pack.write_text(pack_text, encoding="utf-8")
    config = {"judge": {"client": "callable"}, "redaction": {"extra_packs": [str(pack)]}}
    return Gate.from_config(config, judge_function=lambda request: "{}", plugins=plugins,
                            store=str(tmp_path / "verigate.db"), entry_points=entry_points)


@pytest.fixture
def installed_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A distribution with a ``verigate`` entry point, installed on sys.path for this test only."""
    site = tmp_path / "site"
    dist_info = site / "verigate_load_probe-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: verigate-load-probe\nVersion: 1.0\n",
                                        encoding="utf-8")
    (dist_info / "entry_points.txt").write_text(PROBE_ENTRY_POINTS, encoding="utf-8")
    (site / f"{PROBE_MODULE}.py").write_text(textwrap.dedent(PROBE_SOURCE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    module = importlib.import_module(PROBE_MODULE)
    try:
        yield module.LOADS
    finally:
        sys.modules.pop(PROBE_MODULE, None)


def test_building_a_gate_loads_each_installed_plugin_once(tmp_path: Path, installed_probe: Any) -> None:
    gate = _gate(tmp_path, entry_points=True, pack_text=REGEX_PACK)
    try:
        assert gate.manager.has_plugin("load-probe")
        assert installed_probe.count == 1
    finally:
        gate.close()


def test_the_redactors_take_rule_kinds_from_the_gates_plugins(tmp_path: Path) -> None:
    kinds = _CountingKinds()
    gate = _gate(tmp_path, [kinds])
    try:
        assert kinds.calls == 1  # asked once, by the gate's own manager (no second manager asks at all)
        redacted, findings = gate.egress.candidate(Candidate(request="r", final_text="ship ORION-7 and ORION-7"))
        assert redacted.final_text == "ship [REDACTED:project-codename#1] and [REDACTED:project-codename#1]"
        assert [finding.rule_id for finding in findings] == ["project-codename", "project-codename"]
        result = finalize_and_return(gate, Candidate(request="r", final_text="ship ORION-7"), Termination("natural"))
    finally:
        gate.close()
    assert result.pending_id is not None  # the judge's reply is no verdict: the candidate is stored for review
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("verigate.db*"))
    assert b"project-codename#1" in stored and b"ORION-7" not in stored


def test_a_pack_of_a_kind_no_plugin_provides_still_fails_closed(tmp_path: Path) -> None:
    with pytest.raises(verigate.RuleError, match="unknown kind 'codename'"):
        _gate(tmp_path)

"""One plug-in manager per grading process: remembered while the installed distributions stay the same, so a
plug-in installed or removed between two grades in one process is seen by the second (and a folder of files
builds its plug-ins once)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from grade_helpers import config, run, step, write_traces

from verigate._plugin_cache import fingerprint
from verigate.trace import grade, grade_many
from verigate.trace._manager import grading_manager

RULES = {"banned_sleep": {"tools": ["sleep"]}}


def _install(site: Path) -> Path:
    """A distribution whose ``verigate`` entry point is the tests' trace-rule plug-in, its files dated in the
    past (so the discovery fingerprint is old enough to trust and the manager is remembered)."""
    dist_info = site / "verigate_rule_probe-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: verigate-rule-probe\nVersion: 1.0\n",
                                        encoding="utf-8")
    (dist_info / "entry_points.txt").write_text("[verigate]\nrule-probe = trace_rule_plugin\n", encoding="utf-8")
    past = time.time() - 60
    for path in (dist_info / "METADATA", dist_info / "entry_points.txt", dist_info, site):
        os.utime(path, (past, past))
    return dist_info


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    folder.mkdir()
    past = time.time() - 60
    os.utime(folder, (past, past))
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    sys.modules.pop("trace_rule_plugin_probe", None)


def _flags(path: Path) -> list[str]:
    return [flag.rule for flag in grade(path, config=config(rules=RULES)).runs[0].flags]


def test_a_plugin_installed_or_removed_between_two_grades_is_seen(tmp_path: Path, site: Path) -> None:
    path = write_traces(tmp_path / "t.json", [run("t", "r", [step("sleep", seconds=30)])])
    assert _flags(path) == []  # without the plug-in there is no such rule
    dist_info = _install(site)
    assert _flags(path) == ["banned_sleep"]
    assert _flags(path) == ["banned_sleep"]  # the remembered manager gives the same answer
    shutil.rmtree(dist_info)
    past = time.time() - 60
    os.utime(site, (past, past))
    assert _flags(path) == []


def test_plugin_objects_get_a_fresh_manager_and_names_a_remembered_one(site: Path) -> None:
    _install(site)

    class Probe:
        pass

    probe = Probe()
    assert grading_manager([probe]) is not grading_manager([probe])
    assert grading_manager([]).has_plugin("rule-probe")
    mark = fingerprint()
    if mark is not None and mark[1]:
        # remembered only while every sys.path entry is old enough to trust (another process may be writing to
        # one of them right now: then each call builds afresh, which is the safe side)
        assert grading_manager([]) is grading_manager([])


def test_many_sources_grade_alike_with_the_rules_resolved_once(tmp_path: Path, site: Path) -> None:
    _install(site)
    paths = [write_traces(tmp_path / f"t{index}.json", [run("t", f"r{index}", [step("sleep", seconds=index)])])
             for index in range(3)]
    report = grade_many(paths, config=config(rules=RULES))
    assert [[flag.rule for flag in result.flags] for result in report.runs] == [["banned_sleep"]] * 3

"""Which steps a report carries: by default each flagged step and its neighbours; every kept step with
``--steps all``. Grading is the same either way."""

from __future__ import annotations

import json
from pathlib import Path

from grade_helpers import cli, config, run, step, write_traces

from verigate.trace import grade
from verigate.trace._reports import NEIGHBOUR_STEPS, select_steps


def _traces(tmp_path: Path) -> Path:
    steps = [step("Read", file_path=f"/repo/{index}.py") for index in range(30)]
    steps[12] = step("force_push")
    steps[27] = step("force_push")
    return write_traces(tmp_path / "t.json", [run("t", "r1", steps), run("t", "r2", steps[:3])])


def test_the_flagged_steps_and_their_neighbours_are_kept(tmp_path: Path) -> None:
    report = grade(_traces(tmp_path), config=config(forbidden_tools=["force_push"]))
    selected = select_steps(report)
    flagged, clean = selected.runs
    assert sorted(flag.step for flag in flagged.flags) == [13, 28]  # steps are numbered from 1
    assert [s.step for s in flagged.run.steps] == [*range(13 - NEIGHBOUR_STEPS, 13 + NEIGHBOUR_STEPS + 1),
                                                   *range(28 - NEIGHBOUR_STEPS, 31)]
    assert flagged.flags == report.runs[0].flags and flagged.verdict == report.runs[0].verdict
    assert flagged.run.step_count == 30 and "showing 10 of 30 steps" in flagged.run.notes[-1]
    assert clean.run.steps == () and clean.run.step_count == 3
    assert select_steps(report, "all") is report


def test_the_cli_carries_every_step_only_when_asked(tmp_path: Path) -> None:
    traces = _traces(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(config(forbidden_tools=["force_push"])))
    default = json.loads(cli("grade", "--traces", str(traces), "--config", str(tmp_path / "c.json"), "--json").stdout)
    every = json.loads(cli("grade", "--traces", str(traces), "--config", str(tmp_path / "c.json"), "--json",
                           "--steps", "all").stdout)
    assert [len(entry["steps"]) for entry in default["runs"]] == [10, 0]
    assert [len(entry["steps"]) for entry in every["runs"]] == [30, 3]
    assert [entry["flags"] for entry in default["runs"]] == [entry["flags"] for entry in every["runs"]]
    assert default["exit_code"] == every["exit_code"] == 3

"""``verigate grade --transcripts 'GLOB'`` as a user runs it: a subprocess on a generated folder of sessions.

Each source's line is checked against the generator's own verdicts (``folder_sessions``), the summary's counts
and pass^k against their definitions, ``--jobs 2`` against ``--jobs 1`` byte for byte, and memory flatness by
tracemalloc's peak in a child process (counted bytes, never time).
"""

from __future__ import annotations

import json
import math
import os
import pty
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from folder_sessions import DAMAGED, write_sessions
from grade_helpers import REPO, cli

from transcripts.builders import ClaudeSession
from verigate import InputError
from verigate.trace._stream import expand_transcripts


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_folder_streams_one_line_per_source_and_a_summary(tmp_path: Path) -> None:
    expected = write_sessions(tmp_path / "runs", 40)
    damaged = tmp_path / "runs" / "project-1" / "zz-damaged.jsonl"
    damaged.write_text(DAMAGED, encoding="utf-8")
    pattern = str(tmp_path / "runs" / "**" / "*.jsonl")
    two = cli("grade", "--transcripts", pattern, "--task", "fix", "--json", "--jobs", "2", cwd=tmp_path)
    one = cli("grade", "--transcripts", pattern, "--task", "fix", "--json", cwd=tmp_path)
    assert two.stdout == one.stdout  # sorted order, whatever the scheduling
    assert two.returncode == one.returncode == 2, two.stderr  # a damaged file is never a pass
    assert "1 of 41 file(s) could not be graded" in two.stderr and "zz-damaged.jsonl" in two.stderr
    *sources, summary = _lines(two.stdout)
    assert [line["source"] for line in sources] == sorted(line["source"] for line in sources)
    errors = [line for line in sources if line["type"] == "error"]
    assert [Path(line["source"]).name for line in errors] == ["zz-damaged.jsonl"]
    verdicts = {run["run_id"]: run["verdict"] for line in sources if line["type"] == "source" for run in line["runs"]}
    assert verdicts == expected
    counts = Counter(expected.values())
    assert summary["type"] == "summary" and summary["exit_code"] == 2
    assert (summary["files"], summary["errors"], summary["summary"]["runs"]) == (41, 1, 40)
    assert summary["summary"]["verdicts"] == {verdict: counts.get(verdict, 0) for verdict in
                                              ("clean-pass", "pass-with-warnings", "corrupt-success", "fail")}
    assert summary["summary"]["corrupt_success"] == counts["corrupt-success"]
    (task,) = summary["tasks"]
    assert (task["task"], task["n"], task["c"], task["status"]) == ("fix", 40, 40, "reliable")
    assert [row["k"] for row in summary["pass_hat_k"]] == list(range(1, 11))  # capped: MAX_STREAMED_K


def test_text_stream_exit_3_and_per_file_tasks(tmp_path: Path) -> None:
    expected = write_sessions(tmp_path / "runs", 12, seed=8)
    assert "corrupt-success" in expected.values()
    done = cli("grade", "--transcripts", "runs/**/*.jsonl", cwd=tmp_path)
    assert done.returncode == 3, done.stderr  # the CI signal, as for the other inputs
    lines = done.stdout.splitlines()
    assert lines[0] == "verigate grade: 12 file(s) matching runs/**/*.jsonl"
    for run_id, verdict in expected.items():
        assert any(line.split()[:2] == [run_id, verdict] for line in lines), (run_id, verdict)
    assert "verigate grade: 12 file(s), 0 could not be graded; 12 run(s), 12 task(s)" in lines
    exit_line = lines[-1]
    assert exit_line.startswith("exit 3: corrupt-success: ")
    corrupt = sorted(run for run, verdict in expected.items() if verdict == "corrupt-success")
    assert sorted(exit_line.removeprefix("exit 3: corrupt-success: ").split(", ")) == corrupt


def test_pass_hat_k_over_several_files_matches_its_definition(tmp_path: Path) -> None:
    from grade_helpers import run, step, write_traces

    delivered = {"a": [True, False, True, True], "b": [True, True], "c": [False, False, True]}
    (tmp_path / "suite").mkdir()
    for task, outcomes in delivered.items():  # one traces.json per trial: a task spans several files
        for trial, ok in enumerate(outcomes):
            write_traces(tmp_path / "suite" / f"{task}-{trial}.json", [run(task, f"{task}/{trial}", [step("x")], ok)])
    done = cli("grade", "--transcripts", "suite/*.json", "--json", cwd=tmp_path)
    assert done.returncode == 3  # a flaky task
    summary = _lines(done.stdout)[-1]
    for k in (1, 2, 3, 4):
        counted = [outcomes for outcomes in delivered.values() if len(outcomes) >= k]
        value = sum(math.comb(sum(o), k) / math.comb(len(o), k) for o in counted) / len(counted)
        assert summary["pass_hat_k"][k - 1]["value"] == pytest.approx(value)
    assert summary["summary"]["flaky_tasks"] == ["a", "c"]


def test_a_glob_matching_nothing_is_an_error(tmp_path: Path) -> None:
    done = cli("grade", "--transcripts", "nowhere/**/*.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert "nowhere/**/*.jsonl: no file matches this pattern" in done.stderr


def test_the_file_bound_and_sub_agent_files(tmp_path: Path) -> None:
    for index in range(6):
        ClaudeSession(f"s{index}").prompt("go").say("ok").write(tmp_path / f"s{index}.jsonl")
    sub = ClaudeSession("s0").prompt("go").say("ok").write(tmp_path / "s0" / "subagents" / "agent-a1.jsonl")
    with pytest.raises(InputError, match=r"more than 5 files match"):
        expand_transcripts(str(tmp_path / "**" / "*.jsonl"), limit=5)
    found = expand_transcripts(str(tmp_path / "**" / "*.jsonl"))
    assert found == sorted(str(tmp_path / f"s{index}.jsonl") for index in range(6))  # s0 attaches its sub-agent
    assert expand_transcripts(str(tmp_path / "*" / "subagents" / "*.jsonl")) == [str(sub)]  # alone: graded


@pytest.mark.parametrize("options", [["--junit", "j.xml"], ["--traces", "t.json"], ["--jobs", "2", "--scheduler",
                                                                                    "tcp://127.0.0.1:1"]])
def test_options_that_need_the_whole_report_are_refused(tmp_path: Path, options: list[str]) -> None:
    done = cli("grade", "--transcripts", "*.jsonl", *options, cwd=tmp_path)
    assert done.returncode == 2 and "verigate grade: " in done.stderr


def test_a_missing_dask_extra_is_named(tmp_path: Path) -> None:
    write_sessions(tmp_path, 2)
    code = ("import sys; sys.modules['distributed'] = None  # as if the extra were not installed\n"
            "from verigate.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "grade", "--transcripts", "**/*.jsonl", "--scheduler",
                           "tcp://127.0.0.1:9"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          check=False)
    assert done.returncode == 2
    assert "pip install 'verigate-agents[dask]'" in done.stderr and "Traceback" not in done.stderr


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    write_sessions(tmp_path / "runs", 6)
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "verigate", "grade", "--transcripts", "runs/**/*.jsonl"],
                              stdout=subprocess.PIPE, stderr=terminal, cwd=tmp_path, timeout=120, check=False)
        os.close(terminal)
        drawn = b""
        try:
            while chunk := os.read(controller, 65536):
                drawn += chunk
        except OSError:
            pass  # the terminal closed: everything was read
    finally:
        os.close(controller)
    assert done.returncode in (0, 3)
    assert b"grading [" in drawn and b"6/6 files" in drawn
    assert b"grading [" not in done.stdout
    plain = cli("grade", "--transcripts", "runs/**/*.jsonl", cwd=tmp_path)
    assert "grading [" not in plain.stderr


_PEAK = """
import contextlib, os, sys, tracemalloc
from verigate.cli import main

def grade(pattern):
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):  # the stream goes to its reader
        return main(["grade", "--transcripts", pattern, "--task", "t", "--json"])

grade(sys.argv[1])  # warm: imports, plug-ins and compiled rules are not what is measured
tracemalloc.start()
code = grade(sys.argv[2])
print(code, tracemalloc.get_traced_memory()[1])
"""


def test_memory_is_flat_in_the_number_of_files(tmp_path: Path) -> None:
    """tracemalloc's peak while grading 50 and 500 files of 20 1-KB steps each. A report keeping every run (as
    ``grade_many`` does) holds about 20 KB a run — some 10 MB more at 500 files; the stream keeps one source at a
    time, and what grows is the sorted path list (~100 bytes a file) and the task counters."""
    write_sessions(tmp_path / "warm", 2, codex_every=0, padding=20)
    peaks = {}
    for count in (50, 500):
        write_sessions(tmp_path / str(count), count, codex_every=0, padding=20)
        done = subprocess.run([sys.executable, "-c", _PEAK, str(tmp_path / "warm" / "**" / "*.jsonl"),
                               str(tmp_path / str(count) / "**" / "*.jsonl")],
                              capture_output=True, text=True, timeout=280, check=False, cwd=REPO)
        assert done.returncode == 0, done.stderr[-2000:]
        status, peak = map(int, done.stdout.split()[-2:])
        assert status in (0, 3)
        peaks[count] = peak
    assert peaks[500] < peaks[50] * 1.25 + 1_000_000, peaks

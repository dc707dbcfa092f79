"""Differential test: the seed's reference grader and verigate, on the same generated traces with the seed's own
config file, agree on every flag, verdict and exit code — except for the differences docs/trace-grader.md lists.

Each difference is allowed by name (``ALLOWED``: the rules it may change, and the docs table row) and only in
the cases whose generator used the feature that causes it; a case without such a feature must agree exactly.
The reference runs as a subprocess (``python trace-grader.py --transcript X --json --config SEED``), as a user
runs it; it needs PyYAML for ``--config`` (without it the reference silently grades with its defaults, so the
test refuses to run then). Without ``../shared/reference/seed-trace-grader/`` (a plain clone) the tests skip.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from grade_helpers import REPO
from seed_files import REFERENCE_GRADER, write_seed_config

from transcripts.builders import ClaudeSession
from verigate.trace import GradeReport, grade

pytestmark = [
    pytest.mark.skipif(not REFERENCE_GRADER.is_file(),
                       reason=f"no seed reference grader at {REFERENCE_GRADER} (a plain clone): nothing to compare"),
    pytest.mark.skipif(importlib.util.find_spec("yaml") is None,
                       reason="PyYAML is not installed (the dev extra): the reference grader would ignore --config"),
]

#: difference name -> (what it may change, the row of docs/trace-grader.md's table that documents it)
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "relative-paths": (frozenset({"edited_without_read"}), "paths are compared resolved against the line's cwd"),
    "tool-use-error-text": (frozenset({"retry_storm"}), "a <tool_use_error> result without is_error failed"),
    "forbidden-case": (frozenset({"forbidden_tool"}), "forbidden tool names compare case-insensitively"),
    "duplicate-tool-use": (frozenset({"*"}), "a tool call logged twice is one step"),
    "step-without-ok": (frozenset({"verdict"}), "traces.json: a step without ok is unknown, not ok"),
    "audit-ok-field": (frozenset({"retry_storm", "verdict"}), "audit logs: no retry_storm, no delivery signal"),
}

TOOLS = ["Read", "Read", "Edit", "Edit", "MultiEdit", "Write", "Grep", "Glob", "Bash", "Bash", "force_push",
         "rm_rf", "prod_write", "read", "edit", "write", "plan", "act"]
ERRORS = ["Exit code 1\nFAILED tests/test_a.py::test_x", "Exit code 2\nmake: *** [all] Error 2",
          "old_string not found in file", "Permission denied", "Error 7: timeout after 30s", "boom"]


def _input(rng: random.Random, tool: str, cwd: str, relative: bool) -> dict[str, Any]:
    name = f"src/m{rng.randint(0, 5)}.py"
    path = name if relative and rng.random() < 0.4 else f"{cwd}/{name}"
    if tool in ("Read", "Edit", "MultiEdit", "Write"):
        return {"file_path": path}
    if tool in ("Grep", "Glob"):
        return {"pattern": "def x", "path": rng.choice([f"{cwd}/src", path])}
    if tool in ("read", "edit", "write"):
        return {"path": path}
    if tool == "Bash":
        return {"command": rng.choice(["pytest -q", "make", "ls src"])}
    return {}


def _transcript(rng: random.Random, index: int, features: set[str], folder: Path) -> Path:
    """A Claude Code session: single and parallel calls (results in any order), bursts of failures of one tool
    with varying errors, unanswered calls, sub-agent lines, search results that list files."""
    cwd = "/work/repo"
    session = ClaudeSession(session=f"s{index}", cwd=cwd).prompt("fix it")
    lines_of: dict[str, int] = {}
    issued = 0
    for turn in range(rng.randint(1, 18)):
        burst = rng.random() < 0.25
        tool = rng.choice(TOOLS)
        count = rng.randint(2, 5) if burst else rng.choice([1, 1, 1, 2, 3])
        calls = []
        for number in range(count):
            name = tool if burst else rng.choice(TOOLS)
            if "forbidden-case" in features and name == "force_push" and rng.random() < 0.5:
                name = "Force_Push"
            tool_id = f"t{index}_{turn}_{number}"
            tool_input = _input(rng, name, cwd, "relative-paths" in features)
            sidechain = rng.random() < 0.08
            session.call(tool_id, name, tool_input, message_id=f"m{index}_{turn}" if count > 1 and not burst
                         else None, sidechain=sidechain)
            lines_of[tool_id] = len(session.lines) - 1
            calls.append((tool_id, name, sidechain))
            issued += 1
        if count > 1 and not burst:
            rng.shuffle(calls)  # parallel calls: results arrive in any order, paired by id
        for tool_id, name, sidechain in calls:
            if rng.random() < 0.05:
                continue  # never answered (an interrupted session)
            failed = rng.random() < (0.8 if burst else 0.25)
            text = rng.choice(ERRORS) if failed else (f"{cwd}/src/m1.py\n{cwd}/src/m2.py:3:x"
                                                     if name in ("Grep", "Glob") else "ok")
            if failed and "tool-use-error-text" in features and rng.random() < 0.5:
                session.result(tool_id, f"<tool_use_error>{text}</tool_use_error>", is_error="missing",
                               sidechain=sidechain)
            else:
                session.result(tool_id, text, is_error=failed, sidechain=sidechain)
        if "duplicate-tool-use" in features and lines_of and rng.random() < 0.2:
            session.raw(copy.deepcopy(session.lines[lines_of[rng.choice(sorted(lines_of))]]))  # a resumed session
    return session.write(folder / f"s{index}.jsonl")


def _reference(*args: str, config: Path) -> dict[str, Any]:
    result = subprocess.run([sys.executable, str(REFERENCE_GRADER), *args, "--json", "--config", str(config)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode in (0, 3), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    report["exit_code"] = result.returncode
    return report


def _reference_runs(report: Mapping[str, Any]) -> dict[str, tuple[str, list[tuple[str, int]]]]:
    return {run["run_id"]: (run["verdict"], sorted((flag["check"], flag["step"]) for flag in run["flags"]))
            for run in report["runs"]}


def _verigate_runs(report: GradeReport, key: str = "run_id") -> dict[str, tuple[str, list[tuple[str, int]]]]:
    return {getattr(result.run, key): (result.verdict, sorted((flag.rule, flag.step or 0) for flag in result.flags))
            for result in report.runs if result.run.parent is None}


def _differences(reference: tuple[str, list[tuple[str, int]]], ours: tuple[str, list[tuple[str, int]]]) -> set[str]:
    """The rules whose flags differ, plus "verdict" when the verdicts do."""
    ref_flags, our_flags = Counter(reference[1]), Counter(ours[1])
    rules = {rule for rule, _ in (ref_flags - our_flags) + (our_flags - ref_flags)}
    return rules | ({"verdict"} if reference[0] != ours[0] else set())


def _allowed(features: Iterable[str]) -> set[str]:
    allowed: set[str] = set()
    for feature in features:
        allowed |= ALLOWED[feature][0]
    return allowed


def _check(differs: set[str], features: set[str], seen: Counter[str], where: str) -> None:
    allowed = _allowed(features)
    assert "*" in allowed or differs <= allowed, (
        f"{where}: {sorted(differs - allowed)} differ, not explained by {sorted(features) or 'any feature'} "
        f"(docs/trace-grader.md lists the differences)")
    if differs:
        seen.update(features)


#: every refinement on by name (appended to the seed's file), and the rules each may change
REFINEMENTS = """
subagents: true
grounding:
  search_listings: true
  ignore_failed: true
rules:
  out_of_order: {once_per_pair: true, first_must_succeed: true}
  retry_storm: {same_error: true, skip_cascades: true}
"""
REFINED_RULES = frozenset({"edited_without_read", "out_of_order", "retry_storm", "verdict"})


def test_generated_transcripts_agree_but_for_the_documented_differences(tmp_path: Path) -> None:
    """Under the seed's file: only the documented differences. With the refinements turned on by name: also
    differences in the rules they refine, and only there (forbidden_tool and excessive_steps stay the seed's)."""
    rng = random.Random(20261201)
    seed = write_seed_config(tmp_path)
    refined = tmp_path / "refined.yaml"
    refined.write_text(seed.read_text(encoding="utf-8") + REFINEMENTS, encoding="utf-8")
    seen: dict[Path, Counter[str]] = {seed: Counter(), refined: Counter()}
    cases = 24
    flags = Counter[str]()
    for index in range(cases):
        # a third of the cases use no difference-causing feature at all: those must agree exactly
        features = set() if index % 3 == 0 else {name for name in ("relative-paths", "tool-use-error-text",
                                                                    "forbidden-case", "duplicate-tool-use")
                                                  if rng.random() < 0.35}
        path = _transcript(rng, index, features, tmp_path)
        reference = _reference("--transcript", str(path), config=seed)
        (ref_run,) = _reference_runs(reference).values()
        flags.update(rule for rule, _ in ref_run[1])
        for config in (seed, refined):
            report = grade(path, format="claude-code", config=config)
            (our_run,) = _verigate_runs(report).values()  # the main run (sub-agents are skipped under the seed's)
            differs = _differences(ref_run, our_run)
            if config == refined:
                differs -= REFINED_RULES
            elif not features:
                assert reference["exit_code"] == report.exit_code
            _check(differs, features, seen[config], f"case {index} {sorted(features)} ({config.name})")
    # every rule fired somewhere, and each transcript difference the docs claim really occurs
    assert set(flags) == {"forbidden_tool", "out_of_order", "retry_storm", "excessive_steps", "edited_without_read"}
    assert {"relative-paths", "tool-use-error-text", "forbidden-case", "duplicate-tool-use"} <= set(seen[seed])
    print(f"\n{cases} transcripts; reference flags by rule {dict(flags)}; cases that differed under the seed's "
          f"file, by feature {dict(seen[seed])}")


def _traces_run(rng: random.Random, index: int, without_ok: bool) -> dict[str, Any]:
    steps = []
    for number in range(rng.randint(0, 30)):
        tool = rng.choice(TOOLS)
        entry: dict[str, Any] = {"step": number + 1, "tool": tool, "args": _input(rng, tool, "/w", False),
                                 "observation": rng.choice(ERRORS)}
        if not (without_ok and rng.random() < 0.3):
            entry["ok"] = rng.random() > (0.05 if without_ok else 0.4)
        steps.append(entry)
    run: dict[str, Any] = {"run_id": f"r{index}", "steps": steps}
    if not without_ok and rng.random() < 0.5:
        run["ok"] = rng.random() < 0.8  # the run's own verdict decides; else it is derived from its steps
    return run


def test_generated_traces_json_agree_but_for_the_documented_differences(tmp_path: Path) -> None:
    rng = random.Random(4)
    seed = write_seed_config(tmp_path)
    features_of: dict[str, set[str]] = {}
    tasks: dict[str, list[dict[str, Any]]] = {}
    for index in range(160):
        features = {"step-without-ok"} if index % 4 == 1 else set()
        run = _traces_run(rng, index, bool(features))
        features_of[run["run_id"]] = features
        tasks.setdefault(f"task-{index % 40}", []).append(run)
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"tasks": [{"task": task, "runs": runs} for task, runs in tasks.items()]}))
    reference = _reference_runs(_reference("--traces", str(path), config=seed))
    ours = _verigate_runs(grade(path, format="traces", config=seed))
    assert reference.keys() == ours.keys()
    seen: Counter[str] = Counter()
    for run_id, ref_run in reference.items():
        _check(_differences(ref_run, ours[run_id]), features_of[run_id], seen, run_id)
    assert seen["step-without-ok"] > 0


def test_audit_logs_agree_but_for_the_documented_differences(tmp_path: Path) -> None:
    rng = random.Random(9)
    seed = write_seed_config(tmp_path)
    lines, features_of = [], {}
    for session in range(12):
        features = {"audit-ok-field"} if session % 3 == 0 else set()
        features_of[f"sess-{session}"] = features
        for _ in range(rng.randint(1, 30)):
            tool = rng.choice(TOOLS)
            record: dict[str, Any] = {"ts": "2026-01-01T00:00:00Z", "event": "PreToolUse",
                                      "session_id": f"sess-{session}", "tool_name": tool}
            record.update({key: value for key, value in _input(rng, tool, "/w", False).items()
                           if key in ("file_path", "path", "command")})
            if features and rng.random() < 0.7:
                record["ok"] = False  # the reference then sees failures; verigate reads no outcome from an audit log
            lines.append(json.dumps(record) + "\n")
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(lines))
    reference = _reference_runs(_reference("--audit", str(path), "--task", "t", config=seed))
    ours = _verigate_runs(grade(path, format="audit", task="t", config=seed))
    assert reference.keys() == ours.keys()
    seen: Counter[str] = Counter()
    for run_id, ref_run in reference.items():
        _check(_differences(ref_run, ours[run_id]), features_of[run_id], seen, run_id)
    assert seen["audit-ok-field"] > 0


def _bench_session(path: Path, megabytes: int) -> Path:
    spec = importlib.util.spec_from_file_location("bench_grade", REPO / "benchmarks" / "bench_grade.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(path, megabytes)
    return path


def test_the_benchmark_session_agrees_exactly(tmp_path: Path) -> None:
    """The benchmark's generated session (the issue's 200 MB one, at 1 MB): realistic lines, Read/Edit/Bash/Grep
    calls, Bash failures whose output varies. Under the seed's file both graders agree flag for flag."""
    path = _bench_session(tmp_path / "bench.jsonl", 1)
    seed = write_seed_config(tmp_path)
    (ref_run,) = _reference_runs(_reference("--transcript", str(path), config=seed)).values()
    (our_run,) = _verigate_runs(grade(path, format="claude-code", config=seed)).values()
    assert our_run == ref_run
    counts = Counter(rule for rule, _ in ref_run[1])
    assert counts["edited_without_read"] > 0 and counts["excessive_steps"] == 1
    print(f"\n1 MB benchmark session: reference and verigate flags by rule {dict(counts)}")

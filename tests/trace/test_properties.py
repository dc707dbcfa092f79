"""Hypothesis properties: pass^k, verdict determinism, and parsers that skip and count instead of raising."""

from __future__ import annotations

import json
import re
import tempfile
from itertools import pairwise
from math import comb
from pathlib import Path

from grade_helpers import config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verigate._errors import InputError
from verigate.trace import error_signature, grade, pass_at_k, pass_hat_k, suite_pass_hat_k
from verigate.trace._grounding import listed_paths

trials = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(min_value=0, max_value=n)))


@given(trials)
def test_pass_hat_k_is_monotone_non_increasing_in_k(nc: tuple[int, int]) -> None:
    n, c = nc
    values = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert all(later <= earlier for earlier, later in pairwise(values))
    assert values[0] == c / n
    assert all(pass_hat_k(n, c, k) <= pass_at_k(n, c, k) + 1e-12 for k in range(1, n + 1))
    assert all(pass_hat_k(n, c, k) == comb(c, k) / comb(n, k) for k in range(1, n + 1))


@given(trials)
def test_pass_hat_n_is_one_iff_every_run_delivered(nc: tuple[int, int]) -> None:
    n, c = nc
    assert (pass_hat_k(n, c, n) == 1.0) == (c == n)
    assert (pass_hat_k(n, c, n) == 0.0) == (c < n)


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.lists(st.booleans(), min_size=1, max_size=6),
                       min_size=1, max_size=6))
def test_suite_pass_hat_k_scores_only_tasks_with_enough_trials(outcomes: dict[str, list[bool]]) -> None:
    rows = suite_pass_hat_k(outcomes)
    assert len(rows) == max(len(runs) for runs in outcomes.values())
    for row in rows:
        counted = [task for task, runs in outcomes.items() if len(runs) >= row.k]
        assert row.tasks_counted == len(counted)
        assert set(row.tasks_short) == {task for task, runs in outcomes.items() if len(runs) < row.k}
        expected = sum(pass_hat_k(len(outcomes[task]), sum(outcomes[task]), row.k) for task in counted) / len(counted)
        assert abs(row.value - expected) < 1e-12


tools = st.sampled_from(["Read", "Edit", "MultiEdit", "Write", "Grep", "Bash", "force_push", "deploy", "run_tests"])
steps = st.lists(st.fixed_dictionaries({
    "tool": tools,
    "ok": st.sampled_from([True, False, None]),
    "observation": st.sampled_from(["", "error: x 1", "error: x 2", "ok"]),
    "args": st.fixed_dictionaries({"file_path": st.sampled_from(["a.py", "/r/a.py", "b.py", "C:\\r\\A.py"])}),
}), max_size=15)
GRADE_CONFIG = config(forbidden_tools=["force_push"], retry_threshold=1, step_budget=6,
                      order_constraints={"must_precede": [["run_tests", "deploy"]]})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(steps, st.sampled_from([True, False, None])), min_size=1, max_size=4))
def test_flags_and_verdicts_are_deterministic(runs: list[tuple[list[dict[str, object]], bool | None]]) -> None:
    document = {"runs": [{"task": "t", "run_id": f"r{index}", "steps": run_steps,
                          **({} if ok is None else {"ok": ok})} for index, (run_steps, ok) in enumerate(runs)]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(json.dumps(document))
        first, second = grade(path, config=GRADE_CONFIG), grade(path, config=GRADE_CONFIG)
    assert first == second
    for result in first.runs:
        high = any(flag.severity == "high" for flag in result.flags)
        assert (result.verdict == "fail") == (result.run.delivered is False)
        assert result.verdict != "corrupt-success" or high


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.binary(max_size=120), st.sampled_from([
    b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "x", "name": "Edit", "input": 3}]}}',
    b'{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "x", "is_error": "yes"}]}}',
    b'{"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": 1}}',
    b'{"session_id": 5, "tool_name": ["Bash"], "command": {}}', b'{"tool": "Edit", "path": 7}', b"[[[[[[[",
    b'{"runs": 3}', b"\xff\xfe\x00"])), max_size=10))
def test_parsers_never_raise_on_arbitrary_bytes(lines: list[bytes]) -> None:
    """Bad lines are skipped and counted; only a file with nothing recognised (no run) is an error, and that
    error is the typed input error naming the file (exit 2), never a crash and never a clean pass."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.jsonl"
        path.write_bytes(b"\n".join(lines))
        for name in ("claude-code", "codex", "audit"):
            try:
                report = grade(path, format=name, task="t", config=GRADE_CONFIG)  # type: ignore[arg-type]
            except InputError as exc:
                assert exc.source == str(path) and exc.exit_code == 2
                assert "no line was recognised" in exc.message or "no run" in exc.message
            else:
                assert report.runs and report.warnings >= 0


# the plain statements of two rule helpers that the grader computes faster
_LISTED = re.compile(r"((?:[A-Za-z]:[\\/]|\.{1,2}/|/)[^:\r\n]*)")
_TAG = re.compile(r"</?tool_use_error>")
texts = st.lists(st.sampled_from(["/", "a", "C", ":", "\\", ".", "\n", "\r", "\r\n", " ", "\t", "\x0b", "\x85",
                                  "\u2028", "1", "<tool_use_error>", "x/y", "../", "c:/"]), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_listed_paths_are_the_lines_that_start_with_a_path(output: str) -> None:
    expected = [found.group(1).rstrip() for line in output.splitlines()
                if (found := _LISTED.match(line.lstrip(" \t"))) is not None]
    assert list(listed_paths(output)) == expected


@settings(max_examples=300, deadline=None)
@given(texts)
def test_error_signature_reads_the_first_non_empty_line(observation: str) -> None:
    first = next((line for line in (_TAG.sub("", raw).strip() for raw in observation.splitlines()) if line), "")
    assert error_signature(observation) == re.sub(r"\s+", " ", re.sub(r"\d+", "#", first))[:120]

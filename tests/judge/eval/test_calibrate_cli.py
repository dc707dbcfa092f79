"""``verigate judge calibrate`` and ``verigate review export`` against a real SQLite store: real finalizes that
ended in pending reviews, then approved or rejected by ``verigate review`` as a person would; the export read back
as cases and judged by ``verigate judge eval``. Every figure is checked against a hand computation."""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge_eval_helpers import CaseServer, judge_config
from verigate import Candidate, Gate, JudgeError, PostDecision, Termination, ToolObservation, Verdict
from verigate.gate import finalize_and_return
from verigate.hookspecs import hookimpl
from verigate.judge import read_judge_cases
from verigate.store import open_store
from verigate.testing import ScriptedJudge

NATURAL = Termination("natural")


class EscalateMarked:
    """PostVerify: escalate a candidate that says ESCALATE (so a passing verdict reaches a person too)."""

    __name__ = "escalate-marked"

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Verdict) -> PostDecision | None:
        return PostDecision.escalate("marked for a person") if "ESCALATE" in candidate.final_text else None


def _secret() -> str:
    return "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))


def _finalize(gate: Gate, session: str, text: str) -> str:
    candidate = Candidate(request=f"Fix the bug of {session}.", final_text=text, session_id=session,
                          tool_calls=(ToolObservation("Bash", {"command": "pytest -q"}, "3 passed", True),))
    result = finalize_and_return(gate, candidate, NATURAL)
    assert result.outcome == "pending_review" and result.pending_id, result
    return result.pending_id


@pytest.fixture
def reviewed(tmp_path: Path, run_cli: Callable[..., Any]) -> dict[str, Any]:
    """A store with: TP 1, FP 1, FN 1, TN 2 (person vs stored verdict), one approved review whose verdict is a
    verification error, one review left pending, one expired."""
    db = tmp_path / "verigate.db"
    secret = _secret()
    passed, failed = Verdict(passed=True, score=1.0), Verdict(passed=False, rubric_misses=("tests_not_run",))
    steps = [failed,  # the one that expires
             passed, passed, failed, failed, failed, JudgeError("judge_timeout"), failed]
    judge = ScriptedJudge(steps)
    config = {"judge": {"engine": "scripted"}, "budget": {"revise": 0}}
    with Gate.from_config(config, plugins=[judge, EscalateMarked()], store=str(db)) as gate:
        expired = _finalize(gate, "s-expired", "Gave up. JUDGE:fail:x0")
        with open_store(str(db)) as store:
            assert store.expire_reviews(0) == [expired]
        ids = {
            "tp": _finalize(gate, "s-tp", f"ESCALATE Fixed, token {secret}. JUDGE:pass:a1"),
            "fp": _finalize(gate, "s-fp", "ESCALATE Fixed (but it was not). JUDGE:pass:a2"),
            "fn": _finalize(gate, "s-fn", "Fixed; the judge doubts it. JUDGE:fail:a3"),
            "tn1": _finalize(gate, "s-tn1", "Could not fix it. JUDGE:fail:a4"),
            "tn2": _finalize(gate, "s-tn2", "Please fix it yourself. JUDGE:fail:a5"),
            "err": _finalize(gate, "s-err", "Fixed. JUDGE:pass:a6"),
            "pending": _finalize(gate, "s-pending", "Maybe fixed. JUDGE:fail:a7"),
        }
    decisions = {"tp": ("approve", "looks right"), "fp": ("reject", ""), "fn": ("approve", ""),
                 "tn1": ("reject", "not fixed"), "tn2": ("reject", ""), "err": ("approve", "")}
    for key, (action, note) in decisions.items():
        done = run_cli("review", action, ids[key], "--store", str(db), "--yes", "--by", "alice", "--note", note)
        assert done.returncode == 0, done.stderr
    return {"db": db, "ids": ids, "secret": secret, "expired": expired}


def test_calibrate_agreement_against_the_people(reviewed: dict[str, Any], run_cli: Callable[..., Any]) -> None:
    done = run_cli("judge", "calibrate", "--store", str(reviewed["db"]), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kind"] == "calibrate" and "conditional on escalation" in report["caveat"]
    assert report["confusion"] == {"tp": 1, "fn": 1, "tn": 2, "fp": 1}
    assert (report["errors"], report["errors_by_reason"]) == (1, {"judge_timeout": 1})
    assert report["excluded"] == {"expired": 1, "pending": 1}
    assert report["accuracy"] == pytest.approx(3 / 5)
    assert report["tpr"] == pytest.approx(1 / 2) and report["tnr"] == pytest.approx(2 / 3)
    assert report["error_rate"] == pytest.approx(1 / 6)
    # p_e = (2·2 + 3·3) / 5² = 13/25; kappa = (15/25 − 13/25) / (12/25) = 1/6
    assert report["kappa"] == pytest.approx(1 / 6)
    assert {item["case"] for item in report["per_case"]} == {reviewed["ids"][key] for key in
                                                              ("tp", "fp", "fn", "tn1", "tn2", "err")}
    assert report["latency_s"] == {"p50": None, "p90": None, "p99": None}
    text = run_cli("judge", "calibrate", "--store", str(reviewed["db"]))
    assert text.returncode == 0
    assert "caveat: Only escalated candidates reach a review" in text.stdout
    assert "left out: 1 expired, 1 pending" in text.stdout and "0.6000 (3/5)" in text.stdout
    assert reviewed["secret"] not in text.stdout
    below = run_cli("judge", "calibrate", "--store", str(reviewed["db"]), "--min-kappa", "0.5")
    assert below.returncode == 3 and "kappa 0.1667 < min 0.5" in below.stderr


def test_calibrate_since_a_later_date_has_no_decisions(reviewed: dict[str, Any],
                                                       run_cli: Callable[..., Any]) -> None:
    done = run_cli("judge", "calibrate", "--store", str(reviewed["db"]), "--since", "2999-01-01", "--format",
                   "json", "--min-accuracy", "0.5")
    assert done.returncode == 3 and "accuracy n/a" in done.stderr  # no decision is never a pass
    report = json.loads(done.stdout)
    assert report["judgments"] == 0 and report["excluded"] == {"expired": 0, "pending": 0}
    earlier = run_cli("judge", "calibrate", "--store", str(reviewed["db"]), "--since", "2000-01-01T00:00:00+00:00",
                      "--format", "json")
    assert json.loads(earlier.stdout)["judgments"] == 6
    bad = run_cli("judge", "calibrate", "--store", str(reviewed["db"]), "--since", "yesterday")
    assert bad.returncode == 2 and "--since" in bad.stderr
    absent = run_cli("judge", "calibrate", "--store", str(reviewed["db"].with_name("absent.db")))
    assert absent.returncode == 2


def test_export_writes_valid_labelled_cases_that_judge_eval_reads(
        reviewed: dict[str, Any], run_cli: Callable[..., Any], case_server: CaseServer, tmp_path: Path) -> None:
    output = tmp_path / "exported.jsonl"
    done = run_cli("review", "export", "--store", str(reviewed["db"]), "--output", str(output))
    assert done.returncode == 0, done.stderr
    assert "exported 6 cases; left out 1 expired, 1 pending" in done.stderr
    text = output.read_text(encoding="utf-8")
    assert reviewed["secret"] not in text and "[REDACTED:github-classic-token" in text
    cases = {case.id: case for case in read_judge_cases(output)}  # the schema and the strict reader accept it
    ids = reviewed["ids"]
    assert set(cases) == {ids[key] for key in ("tp", "fp", "fn", "tn1", "tn2", "err")}
    assert {key: cases[ids[key]].label for key in ("tp", "fp", "fn", "tn1", "tn2", "err")} == {
        "tp": "complete", "fp": "incomplete", "fn": "complete", "tn1": "incomplete", "tn2": "incomplete",
        "err": "complete"}
    assert cases[ids["tp"]].note == "looks right" and cases[ids["fp"]].note == "rejected in review by alice"
    assert cases[ids["tp"]].tool_calls[0].name == "Bash" and cases[ids["tp"]].request == "Fix the bug of s-tp."
    # the exported cases run through judge eval: the loopback judge answers by the tokens the texts carry
    config = tmp_path / "eval.yaml"
    config.write_text(json.dumps({"judge": judge_config(case_server)}), encoding="utf-8")
    judged = run_cli("judge", "eval", str(output), "--config", str(config), "--format", "json")
    assert judged.returncode == 0, judged.stderr
    report = json.loads(judged.stdout)
    # tp a1 pass/complete, fp a2 pass/incomplete, fn a3 fail/complete, tn a4 a5 fail/incomplete, err a6 pass
    assert report["confusion"] == {"tp": 2, "fn": 1, "tn": 2, "fp": 1} and report["errors"] == 0
    stdout = run_cli("review", "export", "--store", str(reviewed["db"]), "--since", "2999-01-01")
    assert stdout.returncode == 0 and stdout.stdout == "" and "exported 0 cases" in stdout.stderr


def test_a_damaged_stored_review_is_counted_not_a_crash(reviewed: dict[str, Any],
                                                        run_cli: Callable[..., Any]) -> None:
    # a row another program wrote: its candidate and verdict are strict JSON but not objects. Calibrate counts the
    # verdict as unreadable (an error, never agreement) and export leaves the case out; neither stops the command
    import sqlite3

    with sqlite3.connect(reviewed["db"]) as conn:
        conn.execute("UPDATE pending_reviews SET candidate = '[1]' WHERE review_id = ?", (reviewed["ids"]["tp"],))
        conn.execute("UPDATE pending_reviews SET verdict = '[2]' WHERE review_id = ?", (reviewed["ids"]["fp"],))
    done = run_cli("judge", "calibrate", "--store", str(reviewed["db"]), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["errors_by_reason"] == {"judge_timeout": 1, "unreadable_verdict": 1}
    assert report["confusion"] == {"tp": 1, "fn": 1, "tn": 2, "fp": 0}
    exported = run_cli("review", "export", "--store", str(reviewed["db"]))
    assert exported.returncode == 0, exported.stderr
    assert reviewed["ids"]["tp"] not in exported.stdout and reviewed["ids"]["fp"] in exported.stdout
    assert f"left out {reviewed['ids']['tp']}" in exported.stderr


def test_export_never_writes_a_file_judge_eval_refuses(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    # years of reviews: more decisions than a case file may hold. The export says so (exit 2, naming --since)
    # instead of writing cases that ``judge eval`` then refuses as a whole
    import sqlite3

    from verigate.judge import MAX_CASES

    db = tmp_path / "verigate.db"
    open_store(str(db)).close()
    candidate = json.dumps({"request": "Fix it.", "final_text": "Fixed.", "tool_calls": []})
    rows = [(f"r{index:06d}", "s", "approved", "escalate_budget", "", "Fixed.", candidate,
             json.dumps({"passed": True}), "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:01.000000Z", "alice")
            for index in range(MAX_CASES + 1)]
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO pending_reviews (review_id, session_id, status, policy_action, reason, "
                         "pending_text, candidate, verdict, created_at, resolved_at, resolved_by) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    output = tmp_path / "cases.jsonl"
    done = run_cli("review", "export", "--store", str(db), "--output", str(output))
    assert done.returncode == 2 and "--since" in done.stderr, done.stderr
    assert not output.exists()
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM pending_reviews WHERE review_id = ?", (f"r{MAX_CASES:06d}",))
    done = run_cli("review", "export", "--store", str(db), "--output", str(output))
    assert done.returncode == 0, done.stderr
    assert len(read_judge_cases(output)) == MAX_CASES


def test_a_stored_error_reason_never_drives_the_terminal(reviewed: dict[str, Any],
                                                         run_cli: Callable[..., Any]) -> None:
    import sqlite3

    with sqlite3.connect(reviewed["db"]) as conn:
        conn.execute("UPDATE pending_reviews SET verdict = ? WHERE review_id = ?",
                     (json.dumps({"passed": False, "error": "boom\x1b[2J\u202e"}), reviewed["ids"]["fp"]))
    done = run_cli("judge", "calibrate", "--store", str(reviewed["db"]))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout
    assert "boom\\x1b[2J\\u202e 1" in done.stdout

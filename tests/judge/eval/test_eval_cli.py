"""``verigate judge eval`` end to end: the CLI as a subprocess, the gate's real openai client, a scripted judge on
a loopback HTTP server that answers, fails, times out or talks nonsense per case. Every figure is checked against
a hand computation written here."""

from __future__ import annotations

import json
import math
import secrets
import string
from collections import Counter
from pathlib import Path

import pytest

from judge_eval_helpers import CaseServer, case, judge_config, write_cases
from verigate.judge import read_judge_cases, report_usage
from verigate.judge._usage import collecting_usage

Z95 = 1.959963984540054


def _mixed() -> list[dict[str, object]]:
    """TP 4, FN 1, TN 3, FP 2 among the verdicts; an HTTP 500, a non-verdict reply and a timeout besides."""
    return [
        *(case("complete", f"JUDGE:pass:tp{n}", id=f"tp{n}") for n in range(4)),
        case("complete", "JUDGE:fail:fn0", id="fn0"),
        *(case("incomplete", f"JUDGE:fail:tn{n}", id=f"tn{n}") for n in range(3)),
        *(case("incomplete", f"JUDGE:pass:fp{n}", id=f"fp{n}") for n in range(2)),
        case("complete", "JUDGE:http500:e0", id="e0"),
        case("incomplete", "JUDGE:garbage:e1", id="e1"),
        case("complete", "JUDGE:slow:e2", id="e2"),
    ]


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(q / 100 * len(ordered)) - 1]


def test_every_figure_matches_a_hand_computation(tmp_path: Path, config_file: Path, case_server: CaseServer,
                                                  run_cli) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", _mixed())
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--format", "json",
                   "--concurrency", "4")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # by hand: 13 judgments, 10 verdicts, 3 errors
    assert report["confusion"] == {"tp": 4, "fn": 1, "tn": 3, "fp": 2}
    assert (report["judgments"], report["verdicts"], report["errors"]) == (13, 10, 3)
    assert report["errors_by_reason"] == {"invalid_judge_response": 1, "judge_http_500": 1, "judge_timeout": 1}
    assert report["tpr"] == pytest.approx(4 / 5)
    assert report["tnr"] == pytest.approx(3 / 5)
    assert report["accuracy"] == pytest.approx(7 / 10)
    assert report["error_rate"] == pytest.approx(3 / 13)
    # kappa: p_o = 0.7; p_e = (5·6 + 5·4) / 10² = 0.5; (0.7 − 0.5) / (1 − 0.5) = 0.4
    assert report["kappa"] == pytest.approx(0.4)
    se = math.sqrt(0.7 * 0.3 / (10 * 0.5 ** 2))
    assert report["kappa_ci95"] == pytest.approx([0.4 - Z95 * se, 0.4 + Z95 * se])
    assert report["consistency"] is None and report["repeat"] == 1
    # tokens: the loopback envelope says 10 + 10 per reply; ten verdicts and the non-verdict reply carried one
    assert report["usage"] == {"reported_calls": 11, "calls": 13, "input_tokens": 110, "output_tokens": 110,
                               "cost_usd": None}
    # latency: the nearest-rank percentiles of the per-judgment latencies the report lists
    latencies = [value for item in report["per_case"] for value in item["latency_s"]]
    assert len(latencies) == 13
    for q in (50, 90, 99):
        assert report["latency_s"][f"p{q}"] == pytest.approx(_nearest_rank(latencies, q))
    slow = next(item for item in report["per_case"] if item["case"] == "e2")
    assert slow["errors"] == ["judge_timeout"]
    assert sorted(item["case"] for item in report["disagreements"]) == ["fn0", "fp0", "fp1"]
    # the judge was asked once per case, each through the gate's prompt (its random delimiter tag)
    assert len(case_server.requests) == 13
    assert all("<<<BEGIN request " in r.json()["messages"][1]["content"] for r in case_server.requests)


def test_the_text_report_names_the_figures_and_the_denominators(tmp_path: Path, config_file: Path,
                                                                 run_cli) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", _mixed())
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "13 judgments (10 verdicts, 3 verification errors)" in text
    assert "TP 4" in text and "FN 1" in text and "FP 2" in text and "TN 3" in text
    assert "0.8000 (4/5)" in text and "0.6000 (3/5)" in text and "0.7000 (7/10)" in text
    assert "0.2308 (3/13)" in text and "judge_timeout 1" in text
    assert "Cohen's kappa                      0.4000" in text
    assert "input 110 tokens, output 110 tokens, cost not reported (reported by 11 of 13 calls)" in text


def test_repeats_with_an_inconsistent_judge(tmp_path: Path, config_file: Path, run_cli) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", [
        case("complete", "JUDGE:flip:a", id="a"),
        case("complete", "JUDGE:pass:b", id="b"),
        case("incomplete", "JUDGE:fail:c", id="c"),
    ])
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--repeat", "3", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    per_case = {item["case"]: item for item in report["per_case"]}
    # the flipping judge said pass, fail, pass to case a (in whichever order its rounds reached it)
    assert Counter(per_case["a"]["outcomes"]) == {"complete": 2, "incomplete": 1}
    assert per_case["a"]["consistent"] is False
    assert per_case["b"] == {**per_case["b"], "outcomes": ["complete"] * 3, "consistent": True}
    assert per_case["c"]["outcomes"] == ["incomplete"] * 3 and per_case["c"]["consistent"] is True
    assert report["consistency"] == pytest.approx(2 / 3)
    # every judgment counts: TP 5, FN 1, TN 3, FP 0; p_e = (6·5 + 3·4) / 81; kappa = (8/9 − p_e) / (1 − p_e)
    assert report["confusion"] == {"tp": 5, "fn": 1, "tn": 3, "fp": 0}
    chance = (6 * 5 + 3 * 4) / 81
    assert report["kappa"] == pytest.approx((8 / 9 - chance) / (1 - chance))
    assert report["accuracy"] == pytest.approx(8 / 9)
    low = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--repeat", "2",
                  "--min-consistency", "0.9")
    assert low.returncode == 3 and "consistency 0.6667 < min 0.9" in low.stderr


def test_thresholds_exit_3_naming_each_failed_one(tmp_path: Path, config_file: Path, run_cli) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", _mixed())
    failed = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--min-accuracy", "0.8",
                     "--min-kappa", "0.3", "--max-error-rate", "0.1", "--min-tpr", "0.8", "--min-tnr", "0.7")
    assert failed.returncode == 3, failed.stderr
    line = failed.stderr.strip().splitlines()[-1]
    assert line.startswith("verigate judge eval: below threshold: ")
    assert "accuracy 0.7000 < min 0.8" in line and "error_rate 0.2308 > max 0.1" in line
    assert "tnr 0.6000 < min 0.7" in line
    assert "kappa" not in line and "tpr" not in line  # 0.4 ≥ 0.3 and 0.8 ≥ 0.8 pass
    # consistency is undefined without repeats: a threshold on it fails (closed), it is never taken as met
    undefined = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--min-consistency", "0")
    assert undefined.returncode == 3 and "consistency n/a" in undefined.stderr
    passing = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--min-accuracy", "0.7",
                      "--max-error-rate", "0.25", "--output", str(tmp_path / "report.txt"))
    assert passing.returncode == 0, passing.stderr
    assert passing.stdout == "" and "TP 4" in (tmp_path / "report.txt").read_text(encoding="utf-8")


def test_a_judge_that_always_errors_scores_nothing(tmp_path: Path, config_file: Path, run_cli) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", [case("complete", f"JUDGE:http500:x{n}") for n in range(3)]
                        + [case("incomplete", f"JUDGE:garbage:y{n}") for n in range(2)])
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--format", "json",
                   "--min-accuracy", "0")
    report = json.loads(done.stdout)
    assert report["errors"] == 5 and report["verdicts"] == 0 and report["error_rate"] == 1.0
    assert report["accuracy"] is None and report["kappa"] is None and report["tpr"] is None
    assert done.returncode == 3 and "accuracy n/a" in done.stderr
    assert [item["case"] for item in report["per_case"]] == [f"line {n}" for n in range(1, 6)]


def _secret() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def test_html_is_escaped_and_redacted(tmp_path: Path, config_file: Path, case_server: CaseServer,
                                      run_cli) -> None:
    secret = _secret()
    cases = write_cases(tmp_path / "cases.jsonl", [
        case("complete", "JUDGE:fail:x", id="<b>x</b>", request=f"Deploy with token {secret} <script>alert(1)</script>",
             text=f"Deployed. <script>alert(2)</script> {secret}", note=f"<img src=x onerror=alert(3)> {secret}"),
        case("incomplete", "JUDGE:fail:y", id="y"),
        case("incomplete", "JUDGE:http500:z", id="<i>z</i>"),
    ])
    output = tmp_path / "report.html"
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--format", "html",
                   "--output", str(output))
    assert done.returncode == 0, done.stderr
    page = output.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert secret not in page and "[REDACTED:github-classic-token" in page
    assert "TP 0" in page and "FN 1" in page and "TN 1" in page
    assert "Verification errors (1; never agreement)" in page and "&lt;i&gt;z&lt;/i&gt;" in page
    assert "judge_http_500" in page
    assert "http://" not in page.replace(case_server.base_url, "")  # nothing fetched: no external reference
    # the judge got the redacted text too
    assert all(secret not in request.text for request in case_server.requests)


@pytest.mark.parametrize(("body", "message"), [
    ('{"request": "r", "final_text": "f", "tool_calls": [], "label": "complete", "label": "incomplete"}\n',
     "duplicate_key"),
    ('{"request": "r", "final_text": "f", "tool_calls": [], "label": "done"}\n', "cases.jsonl:1 label"),
    ('{"request": "r", "final_text": "f", "label": "complete"}\n', "cases.jsonl:1 tool_calls: is required"),
    ('{"request": "r", "final_text": "f", "tool_calls": [], "label": "complete", "extra": 1}\n',
     "cases.jsonl:1 extra: is not an allowed field"),
    ('{"id": "a", "request": "r", "final_text": "f", "tool_calls": [], "label": "complete"}\n\n'
     '{"id": "a", "request": "r", "final_text": "f", "tool_calls": [], "label": "complete"}\n',
     "cases.jsonl:3 id: repeats the id 'a' of line 1"),
    ('{"request": "r", "final_text": "f", "tool_calls": [{"name": "Bash", "ok": "yes"}], "label": "complete"}\n',
     "cases.jsonl:1 tool_calls[0].ok"),
    ('{"request": NaN, "final_text": "f", "tool_calls": [], "label": "complete"}\n', "constant"),
    ("not json\n", "cases.jsonl:1"),
    ("\n\n", "holds no case"),
])
def test_a_bad_case_file_exits_2_naming_the_line(tmp_path: Path, config_file: Path, run_cli, body: str,
                                                 message: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(body, encoding="utf-8")
    done = run_cli("judge", "eval", str(path), "--config", str(config_file))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and done.stdout == ""


def test_a_missing_case_file_or_an_unwritable_output_exits_2(tmp_path: Path, config_file: Path, run_cli) -> None:
    done = run_cli("judge", "eval", str(tmp_path / "absent.jsonl"), "--config", str(config_file))
    assert done.returncode == 2 and "cannot read the case file" in done.stderr
    cases = write_cases(tmp_path / "cases.jsonl", [case("complete", "JUDGE:pass:a")])
    unwritable = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--output",
                         str(tmp_path / "no-such-folder" / "report.txt"))
    assert unwritable.returncode == 2 and "cannot write the report" in unwritable.stderr
    usage = run_cli("judge", "eval", str(cases), "--repeat", "0")
    assert usage.returncode == 2 and "outside 1..100" in usage.stderr


def test_the_reader_round_trips_what_the_tests_write(tmp_path: Path) -> None:
    cases = read_judge_cases(write_cases(tmp_path / "cases.jsonl", _mixed()))
    assert [item.name for item in cases][:2] == ["tp0", "tp1"] and cases[0].label == "complete"


def test_cost_is_summed_when_the_api_reports_it(tmp_path: Path, config_file: Path, run_cli) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", [case("complete", "JUDGE:costly:a"),
                                                   case("complete", "JUDGE:costly:b"),
                                                   case("incomplete", "JUDGE:fail:c")])
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--format", "json")
    assert done.returncode == 0, done.stderr
    # two replies at 1000 + 50 tokens and 0.25 USD, one at 10 + 10 tokens without a cost
    assert json.loads(done.stdout)["usage"] == {"reported_calls": 3, "calls": 3, "input_tokens": 2010,
                                                "output_tokens": 110, "cost_usd": 0.5}


def test_a_cost_past_a_float_is_not_reported_and_never_breaks_the_report(tmp_path: Path, config_file: Path,
                                                                         run_cli) -> None:
    # the gateway's reply is outside data: two costs of 1e308 overflow the sum to inf (no JSON number); the
    # verdicts still count and the report is still written
    cases = write_cases(tmp_path / "cases.jsonl", [case("complete", "JUDGE:overpriced:a"),
                                                   case("complete", "JUDGE:overpriced:b")])
    done = run_cli("judge", "eval", str(cases), "--config", str(config_file), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["confusion"]["tp"] == 2 and report["errors"] == 0
    assert report["usage"]["cost_usd"] is None and report["usage"]["input_tokens"] == 2
    # a client (a callable judge function) reporting an integer cost past a float's range: dropped, never raised
    with collecting_usage() as reported:
        report_usage(input_tokens=1, cost_usd=10 ** 400)
    assert [item.cost_usd for item in reported] == [None]


@pytest.mark.parametrize(("protocol", "tokens"), [("anthropic", (10, 10)), ("jev", (100, 0))])
def test_the_other_shipped_clients_through_the_gate(tmp_path: Path, api_key: str, run_cli, protocol: str,
                                                    tokens: tuple[int, int]) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", [
        case("complete", "JUDGE:pass:a"), case("incomplete", "JUDGE:fail:b"), case("complete", "JUDGE:fail:c"),
        case("complete", "JUDGE:http500:d"), case("incomplete", "JUDGE:garbage:e"),
    ])
    with CaseServer(protocol, required_key=api_key) as server:  # type: ignore[arg-type]
        config = tmp_path / "verigate.yaml"
        config.write_text(json.dumps({"judge": judge_config(server)}), encoding="utf-8")
        done = run_cli("judge", "eval", str(cases), "--config", str(config), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["confusion"] == {"tp": 1, "fn": 1, "tn": 1, "fp": 0} and report["errors"] == 2
    assert report["errors_by_reason"]["judge_http_500"] == 1
    # four replies carried usage (the garbage one too: tokens were spent on it)
    assert report["usage"] == {"reported_calls": 4, "calls": 5, "input_tokens": 4 * tokens[0],
                               "output_tokens": 4 * tokens[1], "cost_usd": None}

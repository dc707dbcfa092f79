"""Every report format writes only redacted strings; grading itself still sees the real arguments."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from grade_helpers import cli, config, run, step, write_traces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcripts.builders import ClaudeSession
from verigate._config import RedactionConfig
from verigate.trace import (
    GradeReport,
    github_annotations,
    github_summary,
    grade,
    load_trace_config,
    redact_report,
    render_html,
    render_junit,
    render_sarif,
    render_text,
    report_egress,
    to_json,
)
from verigate.trace._grade import KEPT_TEXT_CHARS

ALNUM = string.ascii_letters + string.digits


def github_token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(ALNUM) for _ in range(36))


def aws_key_id(rng: random.Random) -> str:
    return "AKIA" + "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(16))


def stripe_key(rng: random.Random) -> str:
    return "sk_live_" + "".join(rng.choice(ALNUM) for _ in range(24))


def url_password(rng: random.Random) -> str:
    return "".join(rng.choice(ALNUM) for _ in range(18))


def every_format(report: GradeReport) -> dict[str, str]:
    """Each format's output as text (the API calls the CLI makes)."""
    return {
        "text": render_text(report),
        "json": json.dumps(to_json(report), ensure_ascii=False),
        "junit": render_junit(report),
        "sarif": json.dumps(render_sarif(report), ensure_ascii=False),
        "annotations": "\n".join(github_annotations(report)),
        "summary": github_summary(report),
        "html": render_html(report),
    }


def test_cli_reports_carry_no_secret_and_the_force_push_is_still_flagged(tmp_path: Path) -> None:
    rng = random.Random()  # fresh secrets each run: nothing secret-shaped is committed
    token, key_id, password = github_token(rng), aws_key_id(rng), url_password(rng)
    session = ClaudeSession(session=f"sess-{key_id}", cwd="/home/alice/repo")
    session.prompt("fix it")
    session.tool("t1", "Bash", {"command": f"GITHUB_TOKEN={token} git push --force "
                                           f"https://alice:{password}@github.com/alice/repo"},
                 f"remote: pushed with {token}")
    session.tool("t2", "Edit", {"file_path": "/home/alice/repo/app.py", "old_string": "x",
                                "new_string": f"TOKEN = '{token}'"}, "edited")
    transcript = session.write(tmp_path / f"sess-{key_id}.jsonl")
    summary = tmp_path / "summary.md"
    result = cli("grade", "--transcript", transcript.name, "--task", f"deploy {token}", "--json",
                 "--html", "r.html", "--junit", "r.xml", "--sarif", "r.sarif", cwd=tmp_path,
                 env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 3, result.stderr  # the forced push made a corrupt success
    text = cli("grade", "--transcript", str(transcript), "--task", f"deploy {token}", cwd=tmp_path)
    assert text.returncode == 3, text.stderr
    outputs = {"stdout": result.stdout, "stderr": result.stderr, "text": text.stdout,
               **{name: (tmp_path / name).read_text(encoding="utf-8") for name in ("r.html", "r.xml", "r.sarif")},
               "summary": summary.read_text(encoding="utf-8")}
    for name, output in outputs.items():
        for secret in (token, key_id, password):
            assert secret not in output, (name, secret)
    report = json.loads(result.stdout.split("\n::")[0])  # the JSON document, then the annotations
    (run_entry,) = report["runs"]
    assert [flag["rule"] for flag in run_entry["flags"] if flag["severity"] == "high"] == ["forbidden_tool"]
    assert "[REDACTED:" in run_entry["run_id"] and "[REDACTED:" in run_entry["steps"][0]["args"]["command"]
    assert "::error file=" in result.stdout and "forbidden_tool" in result.stdout


def test_a_secret_straddling_the_kept_cut_is_dropped_whole(tmp_path: Path) -> None:
    rng = random.Random()
    token = github_token(rng)
    filler = "x" * (KEPT_TEXT_CHARS - 10)
    traces = write_traces(tmp_path / "t.json", [run("t", "r1", [
        step("Bash", observation=f"{filler} {token} tail", command=f"{filler} {token}")])])
    graded = grade(traces, config=config())
    assert not graded.redacted and token not in render_text(graded)  # a format given a raw report redacts it
    report = redact_report(graded)
    kept = report.runs[0].run.steps[0]
    for text in (kept.observation or "", kept.args["command"]):
        assert "characters cut]" in text and "ghp_" not in text and token[4:12] not in text


secrets = st.sampled_from([github_token, aws_key_id, stripe_key]).flatmap(
    lambda make: st.randoms(use_true_random=False).map(make))
places = st.sampled_from(["task", "run_id", "tool", "arg", "arg_key", "observation", "url"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(secrets, places), min_size=1, max_size=4))
def test_no_generated_secret_appears_in_any_report_output(tmp_path: Path,
                                                          planted: list[tuple[str, str]]) -> None:
    task, run_id, tool, args, observation = "task", "run", "Bash", {"command": "ls"}, "ok"
    for secret, place in planted:
        if place == "task":
            task += f" {secret}"
        elif place == "run_id":
            run_id += f"-{secret}"
        elif place == "tool":
            tool = secret
        elif place == "arg":
            args["command"] += f" --token {secret}"
        elif place == "arg_key":
            args[secret] = "value"
        elif place == "observation":
            observation += f"\n{secret}"
        else:
            args["url"] = f"https://user:{secret}@example.org/x"
    traces = write_traces(tmp_path / "t.json", [run(task, run_id, [
        step(tool, observation=observation, **args), step(tool, ok=False, observation=observation, **args)])])
    shipped = load_trace_config()
    graded = grade(traces, config=config(forbidden_tools=[{"tool": tool}], retry_threshold=1,
                                         step_budget=shipped.step_budget))
    assert graded.runs[0].flags and graded.runs[0].verdict == "corrupt-success"  # flagged on the real data
    report = redact_report(graded, EGRESS)
    assert report.redacted and redact_report(report, EGRESS) is report
    for name, output in every_format(report).items():
        for secret, _ in planted:
            assert secret not in output, (name, secret)


EGRESS = report_egress(RedactionConfig())  # the default packs, whatever ./verigate.yaml says


def test_the_packs_of_verigate_yaml_are_the_ones_applied(tmp_path: Path) -> None:
    token = github_token(random.Random())
    traces = write_traces(tmp_path / "t.json", [run("t", "r1", [
        step("Read", file_path="/home/alice/repo/app.py", observation=f"key {token}")])])
    (tmp_path / "verigate.yaml").write_text("redaction:\n  packs: [secrets]\n")  # privacy off: paths stay
    result = cli("grade", "--traces", traces.name, "--json", "--steps", "all", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert token not in result.stdout and "/home/alice/repo/app.py" in result.stdout
    (tmp_path / "verigate.yaml").write_text("redaction: [\n")
    broken = cli("grade", "--traces", traces.name, "--json", cwd=tmp_path)
    assert broken.returncode == 2 and "verigate.yaml" in broken.stderr and token not in broken.stdout

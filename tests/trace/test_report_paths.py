"""Paths that help: in every report format a flagged step names its file relative to its project (or as ``~/…``),
the trace's own path is shown the same way, only paths outside both go to the privacy pack, and no secret
appears anywhere. Secrets are generated per run: nothing secret-shaped is committed."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from grade_helpers import cli

from transcripts.builders import ClaudeSession
from verigate.trace._redact import PathDisplay, project_root

ALNUM = string.ascii_letters + string.digits


def _token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(ALNUM) for _ in range(36))


@pytest.fixture
def graded(tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Every format of one graded session: recorded in a project, stored under the home folder."""
    rng = random.Random()
    token, password = _token(rng), "".join(rng.choice(ALNUM) for _ in range(20))
    home = tmp_path / "home"
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    (project / "docs").mkdir()
    session = ClaudeSession(session="sess", cwd=str(project)).prompt("fix the total")
    session.tool("t1", "Read", {"file_path": f"{home}/notes/todo.md"}, "1. ship")
    session.tool("t2", "Edit", {"file_path": f"{project}/src/cart.py", "old_string": "a",
                                "new_string": f"TOKEN = '{token}'"}, "edited")
    session.tool("t3", "Edit", {"file_path": "/srv/acme-private/conf.py"}, "edited")  # outside project and home
    session.tool("t4", "Bash", {"command": f"cd {project} && git push --force https://bot:{password}@example.org/r"},
                 f"pushed with {token}")
    session.tool("t5", "Edit", {"file_path": f"{home}/notes/plan.md"}, "edited")
    transcript = session.write(home / ".claude" / "projects" / "-work-shop" / "sess.jsonl")
    summary = tmp_path / "summary.md"
    result = cli("grade", "--transcript", str(transcript), "--task", "t", "--json", "--junit", "r.xml",
                 "--sarif", "r.sarif", "--html", "r.html", cwd=project / "docs",
                 env={"HOME": str(home), "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 3, result.stderr
    text = cli("grade", "--transcript", str(transcript), "--task", "t", cwd=project / "docs", env={"HOME": str(home)})
    document, _, annotations = result.stdout.partition("\n::")
    outputs = {"text": text.stdout, "json": document, "annotations": "::" + annotations,
               "summary": summary.read_text(encoding="utf-8"),
               **{name: (project / "docs" / name).read_text(encoding="utf-8") for name in ("r.xml", "r.sarif",
                                                                                            "r.html")}}
    return outputs, {"token": token, "password": password, "tmp": str(tmp_path)}


def test_every_format_names_the_flagged_file_and_no_secret(graded: tuple[dict[str, str], dict[str, str]]) -> None:
    outputs, planted = graded
    for name, output in outputs.items():
        assert planted["token"] not in output and planted["password"] not in output, name
        assert planted["tmp"] not in output, name  # no absolute path of the machine: relative, ~/ or redacted
        if name != "summary":  # the step summary is a table of counts
            assert "src/cart.py" in output, name  # the flagged file, relative to the session's project
            assert "…/conf.py" in output, name  # outside project and home: its name, the folders redacted
    for name in ("text", "json", "r.xml", "r.html"):
        assert "~/.claude/projects/-work-shop/sess.jsonl" in outputs[name], name
    assert "file ~/notes/plan.md" in outputs["text"] and "~/notes/todo.md" in outputs["json"]  # a step's argument
    assert all("acme-private" not in output for output in outputs.values())  # the privacy pack took the rest


def test_json_flags_carry_the_file(graded: tuple[dict[str, str], dict[str, str]]) -> None:
    report = json.loads(graded[0]["json"])
    (run,) = report["runs"]
    assert run["source"] == "~/.claude/projects/-work-shop/sess.jsonl"
    assert sorted((flag["rule"], flag["path"]) for flag in run["flags"]) == [
        ("edited_without_read", "src/cart.py"), ("edited_without_read", "~/notes/plan.md"),
        ("edited_without_read", "…/conf.py"), ("forbidden_tool", None)]
    (push,) = [step for step in run["steps"] if step["tool"] == "Bash"]
    assert push["args"]["command"].startswith("cd . && git push --force https://[REDACTED:")


def test_sarif_uses_relative_uris_with_a_base(graded: tuple[dict[str, str], dict[str, str]]) -> None:
    sarif = json.loads(graded[0]["r.sarif"])
    (run,) = sarif["runs"]
    bases = run["originalUriBaseIds"]
    assert set(bases) == {"%SRCROOT%", "HOME"} and all("uri" not in base for base in bases.values())
    by_file = {item["properties"]["path"]: item for item in run["results"]}
    cart = by_file["src/cart.py"]
    assert cart["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "src/cart.py",
                                                                            "uriBaseId": "%SRCROOT%"}
    (trace,) = cart["relatedLocations"]
    assert trace["physicalLocation"] == {"artifactLocation": {"uri": ".claude/projects/-work-shop/sess.jsonl",
                                                              "uriBaseId": "HOME"}, "region": {"startLine": 4}}
    notes = by_file["~/notes/plan.md"]  # not in the project: the trace line is primary, the file related
    assert notes["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "HOME"
    assert notes["relatedLocations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "notes/plan.md",
                                                                                    "uriBaseId": "HOME"}
    for item in run["results"]:
        for where in item["locations"] + item.get("relatedLocations", []):
            uri = where["physicalLocation"]["artifactLocation"]["uri"]
            assert not uri.startswith(("/", "file:")), uri


def test_annotations_point_at_the_project_file(graded: tuple[dict[str, str], dict[str, str]]) -> None:
    lines = graded[0]["annotations"].splitlines()
    (cart,) = [line for line in lines if "file=src/cart.py," in line]
    assert cart.startswith("::warning file=src/cart.py,title=verigate edited_without_read")
    assert "at ~/.claude/projects/-work-shop/sess.jsonl:4" in cart
    (push,) = [line for line in lines if line.startswith("::error file=")]
    assert push.startswith("::error file=~/.claude/projects/-work-shop/sess.jsonl,line=8,")


def test_path_display_roots(tmp_path: Path) -> None:
    shown = PathDisplay(["/", "/home", "/home/u", "/home/u/proj", "/home/u/proj/sub", "/work/ci", "relative"],
                        "/home/u")
    assert shown.roots == ["/home/u/proj", "/work/ci"]  # not /, not home or above it; the outermost of nested
    assert shown.text("Edit of /home/u/proj/src/a.py and /work/ci/b.py") == "Edit of src/a.py and b.py"
    assert shown.text("cd /home/u/proj; ls /home/u/proj2 /home/u") == "cd .; ls ~/proj2 ~"
    assert shown.text("https://host/home/u/proj/x /home/user2/x /srv/x") == "https://host/home/u/proj/x " \
                                                                            "/home/user2/x /srv/x"
    assert shown.file("/srv/acme/x.py") == "…/x.py" and shown.file("C:\\Users\\u\\x.py") == "…/x.py"
    assert shown.value({"a": ["/work/ci/x", 3], "b": {"c": "/home/u/y"}}) == {"a": ["x", 3], "b": {"c": "~/y"}}
    assert PathDisplay([], None).text("/home/u/x") == "/home/u/x"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    assert project_root(tmp_path / "repo" / "a" / "b") == tmp_path / "repo"

"""Hardening in process: which tool calls would write protected files or close a gate."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selfgate_helpers import Session


@pytest.fixture
def hardened(session: Session) -> Session:
    (session.project / ".claude").mkdir()
    (session.project / "innocent.json").symlink_to(session.project / ".claude" / "settings.local.json")
    return session


DENIED = [
    ("Write", {"file_path": ".claude/settings.json", "content": "{}"}),
    ("Write", {"file_path": ".claude/settings.local.json"}),
    ("Edit", {"file_path": "innocent.json"}),
    ("Edit", {"file_path": "sub/../verigate.yaml"}),
    ("NotebookEdit", {"notebook_path": "./.verigate/self-gates.jsonl.lock"}),
    ("Write", {"file_path": ".verigate/self-gates.jsonl.state/cursors/x.json"}),
    ("Write", {"file_path": "~/.claude/settings.json"}),
    ("Write", {"file_path": "~/.codex/config.toml"}),
    ("Write", {"file_path": ".codex/hooks.json"}),
    ("Write", {"file_path": "~/.claude/projects/-project/sess-1.jsonl"}),
    ("Write", {"file_path": "~/.claude/projects/-project/another-session.jsonl"}),
    ("Write", {"file_path": "~/.claude/projects/-project/sess-1/subagents/agent-1.jsonl"}),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: verigate.yaml\n*** End Patch"}),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: a.py\n*** Move to: .codex/hooks.json\n"}),
    ("Bash", {"command": "verigate selfgate close --all"}),
    ("Bash", {"command": "python -m verigate  gate   close sg-00000000"}),
    ("Bash", {"command": "sed -i s/x/y/ .claude/settings.json"}),
    ("Bash", {"command": "echo '{}' >> .verigate/self-gates.jsonl"}),
    ("Bash", {"command": "cp /tmp/x verigate.yaml"}),
    ("Bash", {"command": "truncate -s0 ~/.claude/projects/-project/sess-1.jsonl"}),
    ("Bash", {"command": "claude -p 'release all gates' --resume sess-1"}),
    ("CronCreate", {"cron": "* * * * *", "prompt": "Gate 解除"}),
    ("SendMessage", {"to": "other-session", "message": " approve gate sg-1a2b3c4d "}),
    # longer than PATH_MAX as written, short once a tool normalises it (Node's path.resolve, os.path.normpath)
    ("Write", {"file_path": "./" * 2100 + "verigate.yaml", "content": "{}"}),
    ("Edit", {"file_path": "sub/../" * 700 + ".claude/settings.json"}),
    ("Write", {"file_path": "~/" + "./" * 2100 + ".codex/config.toml", "content": "{}"}),
    ("mcp__files__write_file", {"path": "./" * 2100 + ".verigate/self-gates.jsonl", "content": "x"}),
    # ``~root`` is a folder name to Node, an MCP server and Codex (they expand only ``~`` and ``~/``)
    ("Write", {"file_path": "~root/../verigate.yaml", "content": "{}"}),
    ("mcp__filesystem__write_file", {"path": "~root/../.claude/settings.json", "content": "{}"}),
    # Codex trims a patch header of any Unicode white space
    ("apply_patch", {"command": "*** Begin Patch\n\u00a0*** Update File: verigate.yaml\n@@\n-a\n+b\n*** End Patch\n"}),
    ("apply_patch", {"input": "*** Begin Patch\n\u3000*** Add File: .codex/config.toml\n+x\n*** End Patch\n"}),
    # another session's log, relative to an MCP server rooted in the home folder
    ("mcp__filesystem__write_file", {"path": ".claude/projects/-project/other-session.jsonl", "content": "{}"}),
    # JavaScript's trim removes the BOM and white space that Python's strip keeps or counts as a second line
    ("mcp__files__write_file", {"path": "verigate.yaml\ufeff", "content": "x"}),
    ("Write", {"file_path": " verigate.yaml", "content": "x"}),
    # a {path: content} record, JSON given as a string (a proxy tool), a unified diff for a diff-applying tool
    ("mcp__files__write_files", {"files": {"verigate.yaml": "x"}}),
    ("mcp__proxy__call_tool", {"name": "write", "arguments": '{"path": ".claude/settings.json", "content": "{}"}'}),
    ("mcp__proxy__call_tool", {"arguments": '{"path": "src/a.py", "path": ".claude/settings.json"}'}),
    ("mcp__diff__apply_diff", {"diff": "--- a/verigate.yaml\n+++ b/verigate.yaml\n@@ -1 +1 @@\n-a\n+b\n"}),
    # Codex's shell runs in its ``workdir``
    ("Bash", {"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: config.toml\n@@\n-a\n+b\n*** End Patch\n"
                     "EOF\n", "workdir": "~/.codex"}),
    ("Bash", {"command": ["bash", "-lc", "cp /tmp/x hooks.json"], "workdir": "~/.codex"}),
    # a shell command one level down (a proxy tool's ``params``, an ``arguments`` JSON text), with its own workdir
    ("mcp__proxy__call_tool", {"name": "shell", "params": {"command": "echo x >> verigate.yaml"}}),
    ("mcp__proxy__call_tool", {"arguments": '{"command": ["bash", "-lc", "cp /tmp/x hooks.json"], '
                                            '"workdir": "~/.codex"}'}),
    ("mcp__shell__run", {"requests": [{"cmd": "cat /tmp/x > hooks.json", "workdir": "~/.codex"}]}),
    # found by an attack review: a segment no file system holds, removed by ``..`` before the path is opened (Node's
    # ``path.resolve``); a ``file:`` string taken as a plain path; an MCP shell server's ``cwd``
    ("mcp__files__write_file", {"path": "x\x00/../verigate.yaml", "content": "x"}),
    ("mcp__files__write_file", {"path": "~/x\x00/../.claude/settings.json", "content": "{}"}),
    ("mcp__proxy__call_tool", {"arguments": json.dumps({"path": "~/x\ud800/../.claude/settings.json"})}),
    ("mcp__files__write_file", {"path": "x\n/../verigate.yaml", "content": "x"}),
    ("mcp__files__write_file", {"path": "file:/../verigate.yaml", "content": "x"}),
    ("mcp__shell__run", {"command": "echo '{}' > settings.json", "cwd": ".claude"}),
    ("mcp__shell__run", {"command": "echo '{}' > settings.json", "working_directory": ".claude"}),
    # found by a second review: JSON Python's reader gives up on and Node's reads (deep nesting, a 4,301-digit
    # number); ``~/..`` to Node's path.resolve, which expands no ``~``; a lone surrogate, which Node writes as
    # U+FFFD; a camel-cased working folder; a list of commands
    ("mcp__proxy__call_tool", {"arguments": '{"path": "verigate.yaml", "pad": ' + "[" * 1000 + "]" * 1000 + "}"}),
    ("mcp__proxy__call_tool", {"arguments": '{"command": "echo x > verigate.yaml", "n": ' + "1" * 4301 + "}"}),
    ("mcp__files__write_file", {"path": "~/../verigate.yaml", "content": "x"}),
    ("mcp__proxy__call_tool", {"arguments": '{"path": "~/.claude/settings\\ud800.json", "content": "{}"}'}),
    ("mcp__shell__run", {"command": "echo '{}' > settings.json", "workingDirectory": ".claude"}),
    ("mcp__shell__run", {"commands": ["ls", "echo x >> verigate.yaml"]}),
    # found by a third review: a lone surrogate in a glob, which Node passes to bash as U+FFFD, where the bracket
    # still matches the protected name's letter (through a proxy's JSON text; a hook's own stdin refuses it)
    ("mcp__proxy__call_tool", {"arguments": '{"command": "echo PWN > verigate.yam[l\\ud800]"}'}),
    ("Bash", {"command": "echo PWN > .clau[d\ud800]e/setting[s\ud800].json"}),
    ("Bash", {"command": "cp notes.txt .verigat[e\ud800]/self-gate[s\ud800].jsonl"}),
    # more values than the check reads: refused, never read in part
    ("mcp__files__write_file", {"pad": [0] * 100_001, "path": "src/app.py", "content": "x"}),
    # ... counting a diff's headers and the strings of JSON given as a string, which one value may hold by the
    # thousand, and a JSON-like text too long to read
    ("mcp__diff__apply_diff", {"diff": "--- a/src/x.py\n+++ b/src/x.py\n" * 50_001}),
    ("mcp__proxy__call_tool", {"arguments": "[" + ",".join(['"src/x.py"'] * 100_001) + "]"}),
    ("mcp__proxy__call_tool", {"arguments": "{" + " " * (8 << 20) + "}"}),
    # a working folder no file system can hold: Codex could not run in it, and no path is checkable against it
    ("Bash", {"cmd": "pytest -q", "workdir": "sub\x00dir"}),
    ("Bash", {"cmd": "pytest -q", "workdir": "~\ud800/x"}),
]
ALLOWED = [
    ("Write", {"file_path": "src/app.py", "content": "x"}),
    ("Write", {"file_path": "docs/settings.json", "content": "{}"}),
    ("Edit", {"file_path": "README.md", "new_string": "Type Gate 解除 to release a gate."}),
    ("Bash", {"command": "pytest -q"}),
    ("Bash", {"command": "git commit -m 'Explain the gate closing flow'"}),
    ("Read", {"file_path": ".claude/settings.json"}),
    ("mcp__files__write_file", {"path": "data/out.jsonl", "content": "{}"}),
    ("mcp__files__write_file", {"path": "~nosuchuser/notes.md", "content": "x"}),
    ("Write", {"file_path": "notes.md", "content": "--- a/verigate.yaml\n+++ b/verigate.yaml\n@@ -1 +1 @@\n"}),
    ("mcp__files__write_file", {"path": "docs/a.md", "content": "---\ntitle: verigate.yaml notes\n---\n"}),
    ("mcp__proxy__call_tool", {"arguments": '{"path": "src/app.py", "content": "x"}'}),
    ("Bash", {"cmd": "pytest -q", "workdir": "sub"}),
    ("mcp__proxy__call_tool", {"name": "shell", "params": {"command": "pytest -q", "workdir": "src"}}),
    ("mcp__proxy__call_tool", {"arguments": '{"command": "ruff check src"}'}),
    # a path no file system can hold names no protected file, however it is spelt (``~`` with an unencodable
    # user name, longer than PATH_MAX until collapsed): an answer, not an exception
    ("mcp__files__write_file", {"path": "~\ud800/" + "./" * 3000 + "notes.md", "content": "x"}),
    ("Write", {"file_path": "~\ud800/" + "./" * 3000 + "notes.md", "content": "x"}),
    ("mcp__diff__apply_diff", {"diff": "--- a/src/x.py\n+++ b/src/x.py\n" * 1_000}),
    # a quoted patch name holding a lone surrogate (through JSON given as a string) names no file
    ("mcp__proxy__call_tool", {"arguments": '{"d": "--- \\"\\ud800\\""}'}),
]


@pytest.mark.parametrize(("tool", "tool_input"), DENIED)
def test_denied_in_both_modes(hardened: Session, tool: str, tool_input: dict[str, object]) -> None:
    for mode in ("audit", "block"):
        decision = hardened.decide_tool(tool, tool_input, mode=mode)
        assert decision.decision == "deny" and "hardening" in decision.reason, (tool, tool_input, mode)


@pytest.mark.parametrize(("tool", "tool_input"), ALLOWED)
def test_ordinary_calls_pass(hardened: Session, tool: str, tool_input: dict[str, object]) -> None:
    assert hardened.decide_tool(tool, tool_input).decision == "allow"


def test_paths_are_trimmed_of_every_white_space_and_the_bom() -> None:
    from verigate.selfgate._guard import TRIMMED

    assert set(TRIMMED) == {chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace()} | {"\ufeff"}


def test_file_urls_name_the_file_node_opens(hardened: Session) -> None:
    """``fileURLToPath`` reads a host, any case of the scheme, a query or fragment and percent escapes."""
    project = hardened.project.as_posix()
    for url in (f"file://localhost{project}/verigate.yaml", f"file://{project}/%2Eclaude/settings.json",
                f"file://{project}/verigate%2Eyaml", f"FILE://{project}/verigate.yaml", f"file:{project}/verigate.yaml",
                f"file://{project}/verigate.yaml?x#y",
                # Node's readings: a backslash is a slash, tabs and line breaks are dropped, C0 controls trimmed,
                # and ``%2e%2e`` after an empty segment removes only that segment
                "file:" + project.replace("/", "\\") + "\\verigate.yaml", f"file://localhost\\{project}/verigate.yaml",
                f"file://{project}/veri\tgate.yaml", f"\x01file://{project}/verigate.yaml\x1b",
                f"file://{project}/.claude//%2e%2e/settings.json"):
        decision = hardened.decide_tool("mcp__files__write_file", {"uri": url, "content": "x"}, mode="audit")
        assert decision.decision == "deny" and "hardening" in decision.reason, url
    ordinary = hardened.decide_tool("mcp__files__write_file", {"uri": f"file://{project}/src/app.py"}, mode="audit")
    assert ordinary.decision == "allow"


#: what Node reads: a list of strings on stdin, ``fileURLToPath`` of each (null where it throws) on stdout
_FILE_URL_TO_PATH = """
const {fileURLToPath} = require("url");
const urls = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(urls.map(url => { try { return fileURLToPath(url); } catch { return null; } })));
"""
_URL_HEADS = st.sampled_from(["file:", "FILE:", "File:", "fi\tle:", " file:", "\x01file:", "\ufefffile:", "fi\nle:"])
_URL_ROOTS = st.sampled_from(["", "/", "\\", "//", "\\\\", "/\\", "\\/", "///", "//localhost/", "//localhost\\",
                              "\\\\localhost\\", "//LOCALHOST/", "////", "//#", "//?"])
_URL_PIECES = st.sampled_from(["tmp", "proj", ".claude", "settings.json", "%2e", "%2E%2e", ".%2E", "%2e.", "..", ".",
                               "", "a b", "x?y", "#f", "\t", "\n", "%41", "%7e", "%2F", "%5C", "a\\b", "~", "a\r"])
_URL_TAILS = st.sampled_from(["", " ", "\x1b", "?q", "#f", "\x00", "\t", "/"])


@st.composite
def _file_urls(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(_URL_PIECES, min_size=1, max_size=5))
    separators = draw(st.lists(st.sampled_from(["/", "\\"]), min_size=len(pieces), max_size=len(pieces)))
    path = "".join(separator + piece for separator, piece in zip(separators, pieces, strict=True))[1:]
    return draw(_URL_HEADS) + draw(_URL_ROOTS) + path + draw(_URL_TAILS)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node (the real fileURLToPath is the oracle)")
@settings(max_examples=15, deadline=None)
@given(st.lists(_file_urls(), min_size=30, max_size=30))
def test_a_file_url_names_what_node_opens(urls: list[str]) -> None:
    """The oracle is Node itself: whatever path ``fileURLToPath`` makes of a URL is among the paths the check
    reads it as (compared once resolved, as the check compares them: ``//tmp`` is ``/tmp``)."""
    from verigate.selfgate._guard import _path_forms

    opened = json.loads(subprocess.run(["node", "-e", _FILE_URL_TO_PATH], input=json.dumps(urls), text=True,
                                       capture_output=True, check=True).stdout)
    for url, path in zip(urls, opened, strict=True):
        if path is not None and "\x00" not in path:
            forms = {os.path.realpath(form) for form in _path_forms(url)}
            assert os.path.realpath(path) in forms, (url, path, forms)


def _quote_randomly(word: str, cuts: list[int], styles: list[int]) -> str:
    """Split ``word`` at ``cuts`` and quote each piece in one of the shell's ways; the shell reads the same word."""
    pieces, start = [], 0
    for cut in [*sorted({cut % (len(word) + 1) for cut in cuts}), len(word)]:
        if cut > start:
            pieces.append(word[start:cut])
            start = cut
    quoted = []
    for index, piece in enumerate(pieces):
        style = styles[index % len(styles)] if styles else 0
        quoted.append([piece, f"'{piece}'", f'"{piece}"', "\\" + piece][style % 4])
    return "".join(quoted)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([("selfgate", "close", "--all"), ("gate", "close", "--all"), ("review", "approve", "rv_1"),
                        ("review", "reject", "rv_1")]),
       st.lists(st.integers(0, 12), max_size=4), st.lists(st.integers(0, 3), max_size=4),
       st.sampled_from(["{}", "bash -c {}", "sh -c {}", "script -qc {} /dev/null", "eval {}",
                        "python -m {}", "{} 2>&1 | tee log"]))
def test_human_commands_are_denied_in_any_quoting(session: Session, words: tuple[str, str, str], cuts: list[int],
                                                   styles: list[int], wrapper: str) -> None:
    command = "verigate " + " ".join(_quote_randomly(word, cuts, styles) for word in words)
    nested = wrapper.split()[0] in ("bash", "sh", "script", "eval")
    full = wrapper.format(shlex.quote(command) if nested else command)
    assert session.decide_tool("Bash", {"command": full}, mode="audit").decision == "deny", full


def test_a_store_in_the_project_folder_protects_only_its_files(session: Session) -> None:
    (session.project / "verigate.yaml").write_text("self_gate:\n  store: self-gates.jsonl\n")
    assert session.decide_tool("Write", {"file_path": "self-gates.jsonl", "content": ""}).decision == "deny"
    assert session.decide_tool("Write", {"file_path": "self-gates.jsonl.state/x", "content": ""}).decision == "deny"
    # audit mode: block mode may also refuse for a missing OS boundary, which is not what this test is about
    assert session.decide_tool("Write", {"file_path": "src/app.py", "content": ""}, mode="audit").decision == "allow"

"""Near-misses: the tripwire must not deny everything. Reading protected files, ordinary work in the project, and
benign patches and MCP calls stay allowed; the documented conservative refusals stay refused."""

from __future__ import annotations

from typing import Any

import pytest
from test_tripwire_attacks import STORE, Project, patch, project

__all__ = ["project"]  # the fixture, imported to be used here

ALLOWED_COMMANDS = [
    f"cat {STORE}",
    "cat verigate.yaml | grep mode",
    "head -n 5 .claude/settings.json",
    "wc -l verigate.yaml .codex/hooks.json",
    "diff verigate.yaml src/app.py",
    "jq . .claude/settings.json",
    "grep -n x .verigate/*.jsonl",
    "cat ~/.claude/projects/-project/sess-1.jsonl | wc -l",
    "ls -la .verigate",
    "find . -name '*.jsonl'",
    "grep -r foo .",
    "grep -rn 'close' src/",
    'git commit -m "close the gate later"',
    "git commit -m 'Explain the gate closing flow'",
    "gh pr review 3 --approve",
    "ls *.py",
    "ls -la",
    "pytest -q",
    "python -m pytest tests -q",
    "git status && git diff --stat",
    "echo hello > notes.txt",
    "echo hello >> notes.txt 2>&1",
    "cd src && ls && cat app.py",
    "cd src; echo 'b = 2' >> app.py",
    "sed -i s/a/b/ src/app.py",
    "rm -rf build dist",
    "rm -rf \"$BUILD/src\" \"$TMPDIR/build\"",  # an expansion's plain tail: no dot folder on the way
    "cp -r dist \"$DEPLOY/project\"",
    "cp notes.txt notes2.txt",
    "mkdir -p out && cp src/*.py out/",
    "echo '{}' | jq .",
    "cat <<'EOF' > notes.md\nthe store lives in .verigate/self-gates.jsonl\nEOF",
    "for f in src/*.py; do echo $f; done",
    "x=$(date); echo $x > notes.txt",
    "find src -name '*.py' | xargs wc -l",
    "verigate selfgate list",
    "verigate selfgate status --json",
    "echo {a,b}.txt > /dev/null",
    "printf '%s\\n' src/*.py",
    "tee out.txt < notes.txt",
    "python3 -c 'print(1)'",
    "ruff check src && mypy src",
]
#: refused on purpose, as the README says: the tripwire errs towards refusing
CONSERVATIVE_DENIALS = [
    "git commit -m 'gate close fix'",
    "grep -rn 'verigate selfgate close' docs/",
    "bash -c 'cat verigate.yaml'",
    "find . -name '*.py' -exec ruff check {} \\;",
    "echo .verigate/self-gates.jsonl | xargs ls",
    "rm -f \"$tmp\"",
    "PATH=/tmp/bin cat verigate.yaml",
    # a quoted ~ is a folder named ~ to bash, but home to a second shell that reads the word again (eval, | bash)
    "rm -rf '~'",
]
ALLOWED_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": STORE}),
    ("Grep", {"pattern": "x", "path": ".verigate"}),
    ("Glob", {"pattern": ".claude/*.json"}),
    ("Write", {"file_path": "src/app.py", "content": "verigate.yaml"}),
    ("Edit", {"file_path": "README.md", "old_string": "a", "new_string": "see .verigate/self-gates.jsonl here"}),
    ("mcp__filesystem__write_file", {"path": "src/new.py", "content": "x"}),
    ("mcp__filesystem__read_file", {"path": "src/app.py"}),
    ("apply_patch", {"input": patch("*** Update File: src/app.py")}),
    ("apply_patch", {"command": ["apply_patch", patch("*** Add File: docs/new.md")]}),
    ("shell", {"command": ["bash", "-lc", "apply_patch <<'EOF'\n" + patch("*** Update File: src/app.py") + "EOF"]}),
    ("Bash", {"command": "apply_patch <<'EOF'\n" + patch("*** Add File: src/b.py") + "EOF"}),
    ("TodoWrite", {"todos": [{"content": "edit verigate.yaml later", "status": "pending"}]}),
]


@pytest.mark.parametrize("command", ALLOWED_COMMANDS)
def test_ordinary_commands_stay_allowed(project: Project, command: str) -> None:
    assert project.check("Bash", {"command": command}) is None, command


@pytest.mark.parametrize("command", CONSERVATIVE_DENIALS)
def test_documented_conservative_refusals(project: Project, command: str) -> None:
    assert project.check("Bash", {"command": command}) is not None, command


@pytest.mark.parametrize(("tool", "tool_input"), ALLOWED_TOOLS)
def test_read_only_tools_and_benign_edits_stay_allowed(project: Project, tool: str, tool_input: dict[str, Any]) -> None:
    assert project.check(tool, tool_input) is None, (tool, tool_input)

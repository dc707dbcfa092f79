"""The self-gate tripwire against real attacks: each command is denied by ``violation`` (as the hook calls it) AND,
run with ``bash -c`` in the same temporary project, really changes a protected file — so every case proves both that
the attack works and that it is caught. Human-only commands and non-Bash tools are checked for denial (MCP writes
are also carried out the way a filesystem server would, to show the path names a protected file)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verigate.selfgate._guard import Protected, protected_for, violation

STORE = ".verigate/self-gates.jsonl"
PROTECTED_FILES = (STORE, "verigate.yaml", ".claude/settings.json", ".codex/hooks.json")
APPEND = "oflag=append conv=notrunc status=none"


class Project:
    """A temporary project with the protected files, a home with the session's transcript, and the check."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.home = root / "home"
        for name in PROTECTED_FILES:
            path = self.project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('{"x": 1}\n', encoding="utf-8")
        (self.project / "src").mkdir()
        (self.project / "src" / "app.py").write_text("a = 1\n", encoding="utf-8")
        (self.project / "notes.txt").write_text("a\n", encoding="utf-8")
        self.transcript = self.home / ".claude" / "projects" / "-project" / "sess-1.jsonl"
        self.transcript.parent.mkdir(parents=True)
        self.transcript.write_text('{"type": "user"}\n', encoding="utf-8")
        (self.home / ".codex").mkdir()
        store = str(self.project / STORE)
        self.protected: Protected = protected_for(str(self.project), [store, store + ".lock", store + ".state"],
                                                  str(self.transcript), home=str(self.home))

    def check(self, tool: str, tool_input: dict[str, Any]) -> str | None:
        return violation(tool, tool_input, str(self.project), self.protected, lambda text: False)

    def files(self) -> Iterator[Path]:
        yield from (self.project / name for name in PROTECTED_FILES)
        yield self.transcript

    def snapshot(self) -> dict[str, tuple[bytes, int, int] | None]:
        """Each protected file's content, link count and mode (None: gone)."""
        found: dict[str, tuple[bytes, int, int] | None] = {}
        for path in self.files():
            if path.exists():
                status = path.stat()
                found[str(path)] = (path.read_bytes(), status.st_nlink, status.st_mode)
            else:
                found[str(path)] = None
        return found

    def bash(self, command: str) -> subprocess.CompletedProcess[str]:
        env = {"HOME": str(self.home), "PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8"}
        return subprocess.run(["bash", "-c", command], cwd=self.project, env=env, capture_output=True, text=True,
                              timeout=30, check=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    made = Project(tmp_path)
    monkeypatch.setenv("HOME", str(made.home))
    return made


SETUP_SYMLINK = "ln -s .claude/settings.json innocent.json"
SETUP_HARDLINK = "ln .verigate/self-gates.jsonl notes.jsonl"

#: (setup run before the check, attack) — the setup stands for an earlier, allowed tool call
ATTACKS: list[tuple[str, str]] = [(setup, attack) for setup, attack in [
    # line continuations
    ("", "echo x >> .veri\\\ngate/self-gates.jsonl"),
    ("", "echo x >> ver\\\nigate.yaml"),
    ("", "ec\\\nho x > verigate.yaml"),
    ("", "echo x | t\\\nee -a .c\\\nlaude/settings.json"),
    # brace expansion: comma lists, nested, sequences
    ("", "echo x | tee -a .verig{a,}te/self-gat{e,}s.jsonl"),
    ("", "echo x | tee -a .{verigate,nothing}/self-gates.jsonl"),
    ("", "echo x | tee -a .{v{e,a}rigate,x}/self-gates.jsonl"),
    ("", "echo x | tee -a .verigat{d..f}/self-gates.jsonl"),
    ("", "echo x | tee .claude/setting{s,x}.json"),
    ("", "echo x | tee {verigate,other}.yaml"),
    ("", "truncate -s0 .codex/hook{s,}.json"),
    ("", "echo x | tee -a ~/.claude/projects/-project/sess-{0..3}.jsonl"),
    # globs with a one-character literal prefix or none
    ("", "echo x >> .?erigate/s*l"),
    ("", "echo '{}' > .[c]laude/[s]ettings.json"),
    ("", "echo 'x: 1' >> [v]erigate.yaml"),
    ("", "shopt -s dotglob; echo x >> */self-gates.jsonl"),
    ("", "echo x >> .v*/self-gates.jsonl"),
    ("", "echo x >> .*igate/*.jsonl"),
    ("", "echo x >> .codex/h*.json"),
    ("", "echo x >> *.yaml"),
    ("", "echo x | tee -a .verigate/*"),
    ("", "sed -i s/x/y/ .[v]erigate/self-gates.jsonl"),
    ("", "echo x >> .claude/*.json"),
    ("", "truncate -s 0 ~/.claude/projects/*/*.jsonl"),
    ("", "echo x >> ~/.claude/projects/-project/s*.jsonl"),
    ("", "echo x >> ./.?odex/./hooks.jso?"),
    # ANSI-C and locale quoting
    ("", "echo x >> $'\\x2e'verigate/self-gates.jsonl"),
    ("", "echo x >> $'\\056verigate/self-gates.jsonl'"),
    ("", "echo x >> $'\\u002e'verigate/self-gates.jsonl"),
    ("", "echo x >> $\".verigate/self-gates.jsonl\""),
    ("", "echo x >> $'\\x76erigate.yaml'"),
    ("", "echo x >> $'\\x2e\\x63laude/settings.json'"),
    ("", "echo x >> .verigate/self-gate$'\\x73'.jsonl"),
    ("", "echo x | tee $'\\U0000002e'codex/hooks.json"),
    ("", "echo x >> $'\\166'erigate.yaml"),
    # find: by path pattern, by inode, deleting, feeding xargs
    ("", "find . -path '*igate/self*' -exec sh -c 'echo x >> \"$1\"' _ {} \\;"),
    ("", "find . -inum $(stat -c %i verigate.yaml) -exec sh -c 'echo x >> \"$1\"' _ {} \\;"),
    ("", "find . -inum \"$(ls -i verigate.yaml | cut -d' ' -f1)\" -exec truncate -s0 {} +"),
    ("", "find . -name 'settings.js?n' -exec truncate -s0 {} +"),
    ("", "find . -maxdepth 1 -name '*.yaml' -delete"),
    ("", "find .[v]* -type f -exec sh -c 'echo x >> {}' \\;"),
    ("", "find . -name '*.jsonl' | xargs -I{} sh -c 'echo x >> {}'"),
    ("", "find . -inum $(stat -c %i .codex/hooks.json) -print0 | xargs -0 truncate -s0"),
    # links made with a glob, and links made earlier
    ("", "ln -s .?erigate/s*l innocent && echo x >> innocent"),
    ("", "ln .?erigate/s*l hard && echo x >> hard"),
    ("", "link .[v]erigate/self-gates.jsonl hard2; echo x >> hard2"),
    ("", "cp -l [v]erigate.yaml copy.yaml && echo x >> copy.yaml"),
    ("", "ln -sf .[c]laude/settings.json s.json && echo x > s.json"),
    ("", "ln -s ~/.claude/projects/*/sess-1.jsonl t.jsonl && echo x >> t.jsonl"),
    (SETUP_SYMLINK, "echo '{}' > innocent.json"),
    (SETUP_SYMLINK, "echo '{}' > inn*.json"),
    (SETUP_HARDLINK, "echo x >> notes.jsonl"),
    (SETUP_HARDLINK, "echo x >> note?.jsonl"),
    # dd to a protected path, spelled with a glob
    ("", f"echo x | dd of=.verigate/self-gates.jsonl {APPEND}"),
    ("", f"echo x | dd of=$(echo .?erigate/s*l) {APPEND}"),
    ("", f"set -- .[v]erigate/s*; echo x | dd of=$1 {APPEND}"),
    ("", f"f=(.?erigate/s*l); echo x | dd of=\"$f\" {APPEND}"),
    # a path split across cd (and pushd) calls
    ("", "cd .verigate && echo x >> self-gates.jsonl"),
    ("", "cd .veri*; echo x >> self-gates.jsonl"),
    ("", "cd .verigate; cd ..; cd .claude; echo x > settings.json"),
    ("", "cd .[c]laude && echo '{}' > settings.json"),
    ("", "pushd .codex >/dev/null && echo x > hooks.json"),
    ("", "cd .v?rigate && : > s*l"),
    ("", "d=.claude; cd $d && echo x > settings.json"),
    ("", "cd ~/.claude/projects/-project && echo x >> sess-1.jsonl"),
    ("", "(cd .verigate && echo x >> self-gates.jsonl)"),
    ("", "cd /nonexistent-folder; echo x >> verigate.yaml"),
    # nested command strings
    ("", "bash -c 'echo x >> .?erigate/s*l'"),
    ("", "sh -c \"cd .verigate && echo x >> self-gates.jsonl\""),
    ("", "eval 'echo x >> $'\"'\"'\\x2e'\"'\"'verigate/self-gates.jsonl'"),
    ("", "echo 'echo x >> .?erigate/s*l' | bash"),
    ("", "bash <<< 'echo x >> [v]erigate.yaml'"),
    ("", "bash <<'EOF'\necho x >> [v]erigate.yaml\nEOF"),
    ("", "x=$(echo .?erigate/s*l); echo y >> $x"),
    ("", "echo x > >(cat >> .[c]laude/settings.json); sleep 0.2"),
    ("", "python3 -c \"open('.verigate/self-gates.jsonl','a').write('x')\""),
    ("", "rm -rf .verigate"),
    ("", "rm -rf \"$PWD\""),
    ("", "rm -rf ../project"),
    ("", "rm -r -- .?odex"),
    ("", "mv .?odex .codex-moved"),
    # redirections of every shape, and compound commands
    ("", "echo x >| verigate.yaml"),
    ("", "exec 3>>.verigate/self-gates.jsonl; echo x >&3"),
    ("", "echo x 1>>verigate.yaml"),
    ("", "echo x &>> verigate.yaml"),
    ("", "{ echo x; } >> verigate.yaml"),
    ("", "if true; then echo x >> .claude/settings.json; fi"),
    ("", "! echo x >> verigate.yaml"),
    ("", "time echo x >> verigate.yaml"),
    ("", "cat > verigate.yaml <<EOF\nx\nEOF"),
    ("", "for f in .verigate/*; do echo x >> \"$f\"; done"),
    ("", "while read -r f; do echo x >> \"$f\"; done <<< .verigate/self-gates.jsonl"),
    # paths through the working directory, variables and the home folder
    ("", "echo x | tee -a \"$(pwd)/verigate.yaml\""),
    ("", "echo x >> \"$PWD\"/.claude/settings.json"),
    ("", "a=verigate; echo x >> $a.yaml"),
    ("", "n=self-gat; echo x >> .verigate/$n'es.jsonl'"),
    ("", "g='.?erigate/s*l'; echo x | tee -a $g"),
    ("", "HOME=$PWD/.claude; echo '{}' > ~/settings.json"),
    ("", "rm -rf ~"),
    # a quoted ~ is a folder named ~ here, not home: cd follows the link it may be
    ("ln -s ~/.claude '~'", "cd '~' && echo x >> projects/*/*.jsonl"),
    # a ~ bash does expand, though the word's source does not begin with it
    ("", "H=~; rm -rf $H/.claude"),
    ("", "a=~/.claude; rm -rf \"$a\""),
    ("", "export H=~; echo x >> $H/.cl*/pro*/*/*.jsonl"),
    ("", "rm -rf {~,/nonexistent}/.claude"),
    ("", "echo x | tee {~,/dev/null}/.cl*/pro*/*/*.jsonl"),
    ("", "bash -c 'rm -rf {~,x}/.claude'"),
    # ~+ and ~- (the working folders), an unknown head above protected files, a glob after an expansion
    ("", "rm -rf ~+/.codex"),
    ("", "cd src; rm -rf ~-/.claude"),
    ("", "cd ~+/.codex && echo x > hooks.json"),
    ("", "rm -rf $HOME/.claude"),
    ("", "cd ~/.claude && rm -rf projects"),
    ("", "echo x >> $HOME/.cl?ude/pro?ects/*/*.jsonl"),
    # a quoted ~ that a second shell reading expands, and the variables a changed IFS or an empty array leave
    ("", "eval truncate -s0 '~'/.cl?ude/pro?ects/*/*.jsonl"),
    ("", "echo rm -f '~'/.cl?ude/pro?ects/*/*.jsonl | bash"),
    ("", "IFS=:; H=~; rm -rf $H/.cl?ude"),
    ("", "e=(); b=veri; c=gate.yaml; echo x > \"$b$e$c\""),
    ("", "cd ~/.claude/projects && echo x >> */*.jsonl"),
    ("", "cd \"$(dirname .verigate/x)\" && echo x >> self-gates.jsonl"),
    ("ln -s .verigate v", "echo x >> v/self-gates.jsonl"),
    ("", "echo x > src/../verigate.yaml"),
    # other writers
    ("", "printf x | dd of=verigate.yaml status=none"),
    ("", "cp notes.txt .codex/hooks.json"),
    ("", "mv notes.txt .claude/settings.json"),
    ("", "install notes.txt verigate.yaml"),
    ("", "chmod 000 verigate.yaml"),
    ("", "perl -pi -e 's/x/y/' verigate.yaml"),
    ("", "awk '{print}' notes.txt > verigate.yaml"),
    ("", "python3 -c \"import os; os.remove('verigate.yaml')\""),
    ("", "ls -d .?erigate | xargs -I{} sh -c 'echo x >> {}/self-gates.jsonl'"),
    ("", "xargs -a <(echo verigate.yaml) truncate -s0"),
    ("", "eval \"$(printf 'echo x >> %s' verigate.yaml)\""),
    ("", "bash -c \"$(echo 'echo x >> verigate.yaml')\""),
    ("", "source /dev/stdin <<< 'echo x >> verigate.yaml'"),
    ("", ". <(echo 'echo x >> [v]erigate.yaml')"),
    ("", "nohup sh -c 'echo x >> verigate.yaml' >/dev/null 2>&1 & wait"),
    ("", "trap 'echo x >> verigate.yaml' EXIT; true"),
    # names printed by printf and echo (evaluated when their arguments are literal)
    ("", "f=$(printf '" + "".join(f"\\x{ord(char):02x}" for char in STORE) + "'); echo x >> \"$f\""),
    ("", "echo x >> $(echo verigate).yaml"),
    ("", "echo x >> `echo -e '\\x76erigate.yaml'`"),
    ("", "echo x >> $(printf '%s.%s' verigate yaml)"),
    ("", "echo x >> $(printf '\\056\\166erigate/self-gates.jsonl')"),
    ("", "echo x >> \"$(printf '%b' '\\x2everigate')/self-gates.jsonl\""),
]]

HUMAN_COMMANDS = [
    "script -qc 'verigate selfgate '$'\\x63''lose --all' /dev/null",
    "verigate review $'\\x61'pprove rv_1 --yes",
    "python -m verigate selfgate close --all",
    "python3 -m verigate review reject rv_1",
    "uvx verigate selfgate close --all",
    "uvx verigate@latest gate close --all",
    "pipx run verigate review approve rv_1",
    "env verigate selfgate close sg-00000000",
    "env -i PATH=/usr/bin verigate selfgate close --all",
    "/usr/local/bin/verigate selfgate close --all",
    ".venv/bin/verigate selfgate close --all",
    "command verigate selfgate close --all",
    "exec verigate review reject rv_1",
    "nohup verigate selfgate close --all &",
    "timeout 5 verigate review approve rv_1 --yes",
    "echo --all | xargs verigate selfgate close",
    "printf 'close\\n' | xargs verigate selfgate",
    "v=clo; verigate selfgate ${v}se --all",
    "c=verigate; $c gate cl''ose",
    "verigate selfgate $(printf close) --all",
    "verigate review `echo approve` rv_1",
    "verigate --project . gate --reason x close sg-1",
    "ve\\\nrigate gate close",
    "verigate ga{t,}e clo{s,}e",
    ".venv/bin/python -m verigate.cli gate close",
    "bash -c \"verigate selfgate \\\"cl\\\"ose\"",
    "verigate selfgate $'\\x63\\x6c\\x6f\\x73\\x65' --all",
    "verigate selfgate clo$'s'e",
    "sudo -u root verigate selfgate close --all",
    "p=verigate; \"$p\" review approve rv_1",
    "verigate $(echo gate) $(echo close)",
    "printf 'yes\\n' | script -qc \"verigate selfgate close --all\" /dev/null",
]


@pytest.mark.parametrize(("setup", "attack"), ATTACKS)
def test_bash_attack_is_real_and_denied(project: Project, setup: str, attack: str) -> None:
    if setup:
        assert project.bash(setup).returncode == 0
    refused = project.check("Bash", {"command": attack})
    assert refused is not None, attack
    before = project.snapshot()
    ran = project.bash(attack)
    assert project.snapshot() != before, (attack, ran.stdout, ran.stderr)


@pytest.mark.parametrize("command", HUMAN_COMMANDS)
def test_human_only_commands_are_denied_however_spelled(project: Project, command: str) -> None:
    refused = project.check("Bash", {"command": command})
    assert refused is not None and "person" in refused, command


def patch(header: str) -> str:
    return f"*** Begin Patch\n{header}\n+x\n*** End Patch\n"


TOOL_ATTACKS: list[tuple[str, dict[str, Any]]] = [
    ("mcp__filesystem__write_file", {"path": STORE, "content": "{}\n"}),
    ("mcp__filesystem__write_file", {"path": "sub/../verigate.yaml", "content": "x"}),
    ("mcp__filesystem__write_file", {"path": "~/.claude/projects/-project/sess-1.jsonl", "content": "x"}),
    ("mcp__filesystem__edit_file", {"path": "verigate.yaml", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("mcp__filesystem__edit_file", {"path": "./.claude/settings.json", "edits": []}),
    ("mcp__filesystem__move_file", {"source": "notes.txt", "destination": ".codex/hooks.json"}),
    ("mcp__other__save", {"target": {"files": ["src/app.py", " .codex/hooks.json "]}}),
    ("mcp__filesystem__write_file", {"path": "file://{project}/.verigate/self-gates.jsonl", "content": "x"}),
    ("mcp__filesystem__write_file", {"path": "{project}/.claude/../.claude/settings.json", "content": "x"}),
    ("mcp__filesystem__read_file", {"path": STORE}),  # MCP servers run outside the host's rules: not trusted
    ("apply_patch", {"input": patch("*** Add File: .verigate/x.jsonl")}),
    ("apply_patch", {"patch": patch("*** Update File: verigate.yaml")}),
    ("apply_patch", {"command": ["apply_patch", patch("*** Delete File: .codex/hooks.json")]}),
    ("apply_patch", {"command": patch("*** Update File: a.py\n*** Move to: .claude/settings.json")}),
    ("shell", {"command": ["apply_patch", patch("*** Update File: verigate.yaml")]}),
    ("shell", {"command": ["bash", "-lc", "apply_patch <<'EOF'\n" + patch("*** Add File: .verigate/f") + "EOF"]}),
    ("Bash", {"command": "apply_patch <<'EOF'\n" + patch("  *** Update File: ./verigate.yaml") + "EOF"}),
    ("shell", {"command": ["bash", "-lc", "echo x >> .?erigate/s*l"]}),
    ("mcp__shell__run", {"command": "cd .claude && echo x > settings.json"}),
    ("Write", {"file_path": "innocent.json", "content": "x"}),
    ("mcp__filesystem__write_file", {"path": "../verigate.yaml", "content": "x"}),  # relative to the server's root
]


@pytest.mark.parametrize(("tool", "tool_input"), TOOL_ATTACKS)
def test_every_tool_and_patch_shape_is_path_checked(project: Project, tool: str, tool_input: dict[str, Any]) -> None:
    assert project.bash(SETUP_SYMLINK).returncode == 0
    filled = _fill(tool_input, str(project.project))
    assert project.check(tool, filled) is not None, (tool, filled)


@pytest.mark.parametrize(("tool", "tool_input"), [case for case in TOOL_ATTACKS
                                                if "write_file" in case[0] and not case[1]["path"].startswith("..")])
def test_an_mcp_write_really_changes_a_protected_file(project: Project, tool: str, tool_input: dict[str, Any]) -> None:
    """What the filesystem server does with the path (relative to its root, ``~`` and ``file://`` resolved)."""
    filled = _fill(tool_input, str(project.project))
    before = project.snapshot()
    path = Path(os.path.normpath(project.project / Path(filled["path"].removeprefix("file://")).expanduser()))
    with path.open("a", encoding="utf-8") as handle:
        handle.write(filled["content"])
    assert project.snapshot() != before


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{project}", root)
    if isinstance(value, dict):
        return {key: _fill(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, root) for item in value]
    return value

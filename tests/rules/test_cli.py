"""``verigate rules lint|test`` run as a subprocess, like a user or CI would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GOOD = """\
pack: corp
version: 1
rules:
  - id: corp-ticket
    kind: regex
    severity: low
    message: ticket
    pattern: 'CORP-[0-9]{4}'
    examples: {match: ['CORP-1234'], no_match: ['CORP-12']}
"""


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verigate", "rules", *args], capture_output=True, text=True,
                          timeout=120, check=False, cwd=cwd)


def test_rules_test_without_files_runs_every_shipped_pack(tmp_path: Path) -> None:
    done = _run("test", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("secrets", "pii", "privacy"):
        assert f"ok rules/{name}.yaml: pack '{name}'" in done.stdout
    assert "trace-grader" not in done.stdout


def _packs(tmp_path: Path) -> dict[str, Path]:
    texts = {
        "good": GOOD,
        "failing": GOOD.replace("no_match: ['CORP-12']", "no_match: ['CORP-9999']"),
        "bad": GOOD.replace("kind: regex", "kind: regexp"),
        "config": "verified: false\n",
        "override": "pack: corp-override\nversion: 1\ndisables: [twilio-api-key]\nrules: []\n",
        "override-typo": "pack: corp-typo\nversion: 1\ndisables: [twilio-api-kee]\nrules: []\n",
    }
    paths = {name: tmp_path / f"{name}.yaml" for name in texts}
    for name, text in texts.items():
        paths[name].write_text(text, encoding="utf-8")
    return paths


def test_a_failing_example_exits_1_and_names_file_line_rule(tmp_path: Path) -> None:
    packs = _packs(tmp_path)
    done = _run("test", str(packs["good"]), str(packs["failing"]))
    assert done.returncode == 1
    assert f"ok {packs['good']}: pack 'corp', 1 rules, 2 examples, 0 failed" in done.stdout
    assert f"FAIL {packs['failing']}:9: rule 'corp-ticket': expected no match" in done.stdout


def test_an_invalid_pack_exits_2_and_every_file_is_reported(tmp_path: Path) -> None:
    packs = _packs(tmp_path)
    done = _run("lint", *(str(packs[name]) for name in ("bad", "config", "good", "failing", "override",
                                                         "override-typo")))
    assert done.returncode == 2
    assert f"{packs['bad']}:5 kind: rule 'corp-ticket': unknown kind 'regexp'" in done.stderr
    assert f"{packs['config']}:1: not a rule pack" in done.stderr
    assert f"ok {packs['good']}" in done.stdout
    assert f"ok {packs['failing']}" in done.stdout  # lint validates and compiles; it does not run examples
    assert f"ok {packs['override']}: pack 'corp-override', 0 rules" in done.stdout  # disables a shipped rule
    assert f"{packs['override-typo']} disables: disables 'twilio-api-kee', which no shipped" in done.stderr


def test_a_plugin_kind_is_loaded_with_plugin(tmp_path: Path) -> None:
    (tmp_path / "shout_kind.py").write_text(
        "import re\nimport verigate\n\n"
        "class Kind:\n"
        "    fields_schema = {'type': 'object', 'additionalProperties': False, 'properties': {}}\n"
        "    def compile(self, rule):\n"
        "        return Matcher()\n\n"
        "class Matcher:\n"
        "    def find(self, view):\n"
        "        return (m.span() for m in re.finditer(r'\\b[A-Z]{4,}\\b', view.text))\n\n"
        "@verigate.hookimpl\n"
        "def verigate_rule_kinds():\n"
        "    return {'shout': Kind()}\n",
        encoding="utf-8",
    )
    pack = tmp_path / "shout.yaml"
    pack.write_text("pack: shout\nversion: 1\nrules:\n  - id: shout\n    kind: shout\n    severity: info\n"
                    "    message: s\n    examples: {match: ['STOP'], no_match: ['Stop']}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, '.');"
                           "from verigate.cli import main; sys.exit(main(['rules', 'test', 'shout.yaml', "
                           "'--plugin', 'shout_kind']))"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr

"""Hostile YAML (alias bombs, deep nesting, huge integers, oversized files) is refused with one file:line error —
through the loader, and through the real CLI and hooks as subprocesses: exit 2, one stderr line, no traceback,
well within a hook's deadline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate import ConfigError, RuleError
from verigate._yaml import (
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_INT_DIGITS,
    MAX_YAML_NODES,
    load_yaml,
    read_yaml_file,
)

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "examples" / "traces" / "traces.json"
#: every poisoned run must end far sooner than the tool/prompt hooks' deadline (50 s)
QUICK_S = 30.0


def laughs(levels: int = 9, fan_out: int = 10) -> str:
    """The "billion laughs" document: each level lists the previous one ``fan_out`` times (10⁹ nodes expanded)."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * fan_out)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fan_out)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nplugins: *l{levels - 1}\n"


def expanded_nodes(levels: int, fan_out: int) -> int:
    """An independent count of :func:`laughs`' nodes once every alias is expanded (root, keys, values)."""
    size = 1 + fan_out  # l0's sequence and its scalars
    total = 1 + 1 + size  # the root mapping, key l0, its value
    for _ in range(1, levels):
        size = 1 + fan_out * size
        total += 1 + size
    return total + 1 + size  # the key "plugins" and the alias it holds


POISONS: dict[str, Callable[[], str]] = {
    "billion-laughs": laughs,
    "flow-nesting": lambda: "plugins: " + "[" * 5000 + "]" * 5000 + "\n",
    "block-nesting": lambda: "".join("  " * depth + f"k{depth}:\n" for depth in range(200)) + "  " * 200 + "v: 1\n",
    "huge-integer": lambda: "budget:\n  revise: " + "9" * 5000 + "\n",
    "cyclic-alias": lambda: "plugins: &loop [a, *loop]\n",
}
#: the line each poison is refused at (the bomb: l4, where the expansion crosses the bound)
POISON_LINES = {"billion-laughs": 5, "flow-nesting": 1, "block-nesting": MAX_YAML_DEPTH + 1, "huge-integer": 2,
                "cyclic-alias": 1}


# ------------------------------------------------------------------------------------------- the loader


@pytest.mark.parametrize("name", sorted(POISONS))
def test_each_poison_is_a_typed_error_naming_file_and_line(name: str) -> None:
    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"refused YAML") as caught:
        load_yaml(POISONS[name](), "verigate.yaml", error=ConfigError)
    assert caught.value.source == "verigate.yaml"
    assert caught.value.line == POISON_LINES[name]
    assert time.monotonic() - started < QUICK_S


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(min_value=1, max_value=8), fan_out=st.integers(min_value=1, max_value=12))
def test_an_alias_document_loads_exactly_when_its_expansion_is_within_the_bound(levels: int, fan_out: int) -> None:
    text = laughs(levels, fan_out)
    if expanded_nodes(levels, fan_out) > MAX_YAML_NODES:
        with pytest.raises(RuleError, match="aliases are expanded"):
            load_yaml(text, "pack.yaml", error=RuleError)
    else:
        data = load_yaml(text, "pack.yaml", error=RuleError).data
        assert len(json.dumps(data)) > 0  # fully expanded plain data


def test_nesting_up_to_the_bound_loads_and_one_more_level_does_not() -> None:
    def nested(depth: int) -> str:
        return "a: " + "[" * (depth - 1) + "1" + "]" * (depth - 1) + "\n"  # the root mapping is one level

    assert load_yaml(nested(MAX_YAML_DEPTH), "s").data is not None
    with pytest.raises(ConfigError, match=f"deeper than {MAX_YAML_DEPTH}"):
        load_yaml(nested(MAX_YAML_DEPTH + 1), "s", error=ConfigError)


@pytest.mark.parametrize(("scalar", "refused"), [
    ("9" * MAX_YAML_INT_DIGITS, False),
    ("-" + "9" * MAX_YAML_INT_DIGITS, False),
    ("9" * (MAX_YAML_INT_DIGITS + 1), True),
    ("1_000_" * 10 + "1", True),
    ("0x" + "f" * (MAX_YAML_INT_DIGITS + 1), True),
    ("!!int '" + "1" * 40 + "'", True),
    ("'" + "9" * 5000 + "'", False),  # quoted: text, any length
    ("9" * 5000 + ".5", False),  # a float, which Python converts at any length
])
def test_integers_are_bounded_but_text_is_not(scalar: str, refused: bool) -> None:
    text = f"value: {scalar}\n"
    if refused:
        with pytest.raises(ConfigError, match="digits"):
            load_yaml(text, "s", error=ConfigError)
    else:
        load_yaml(text, "s", error=ConfigError)


def test_ordinary_anchors_and_merge_keys_still_work() -> None:
    text = "base: &base {timeout_s: 5, on_error: escalate}\nhooks:\n  <<: *base\n  timeout_s: 9\nother: *base\n"
    data = load_yaml(text, "s").data
    assert data["hooks"] == {"timeout_s": 9, "on_error": "escalate"}
    assert data["other"] == {"timeout_s": 5, "on_error": "escalate"}


def test_files_are_read_bounded(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# " + b"x" * MAX_YAML_BYTES + b"\n")
    with pytest.raises(ConfigError, match=f"larger than {MAX_YAML_BYTES} bytes"):
        read_yaml_file(big, error=ConfigError)
    if Path("/dev/zero").exists():  # an endless device is read up to the bound, then refused
        with pytest.raises(ConfigError, match="larger than"):
            read_yaml_file("/dev/zero", error=ConfigError)
    with pytest.raises(ConfigError, match="not UTF-8"):
        big.write_bytes(b"a: \xff\n")
        read_yaml_file(big, error=ConfigError)


def test_the_shipped_files_are_within_every_bound() -> None:
    for path in sorted((REPO / "rules").glob("*.yaml")):
        load_yaml(read_yaml_file(path), str(path))


# ------------------------------------------------------------------------------------------- the real CLI


def _run(args: list[str], cwd: Path, stdin: str = "", env: dict[str, str] | None = None,
         timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "verigate", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=timeout, check=False, env=env)
    return done, time.monotonic() - started


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(params=sorted(POISONS))
def poisoned(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path]:
    path = tmp_path / "verigate.yaml"
    path.write_text(POISONS[request.param](), encoding="utf-8")
    return request.param, path


@pytest.mark.parametrize("command", ["rules lint", "grade --config", "demo --config"])
def test_the_cli_refuses_a_poisoned_file_in_one_line(poisoned: tuple[str, Path], command: str) -> None:
    name, path = poisoned
    args = {"rules lint": ["rules", "lint", str(path)],
            "grade --config": ["grade", "--config", str(path), "--traces", str(TRACES)],
            "demo --config": ["demo", "--config", str(path)]}[command]
    done, elapsed = _run(args, path.parent)
    assert done.returncode == 2, done
    (line,) = _lines(done.stderr)
    assert f"{path}:{POISON_LINES[name]}" in line and "refused YAML" in line
    assert "Traceback" not in done.stderr + done.stdout
    assert elapsed < QUICK_S


def test_an_oversized_config_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "verigate.yaml"
    path.write_bytes(b"plugins: []\n" + b"#" * MAX_YAML_BYTES)
    done, _ = _run(["demo", "--config", str(path)], tmp_path)
    assert done.returncode == 2
    (line,) = _lines(done.stderr)
    assert "larger than" in line and str(path) in line


# ------------------------------------------------------------------------------------------- the real hooks


def _hook_env(project: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE_", "VERIGATE_"))}
    env["CLAUDE_PROJECT_DIR"] = str(project)
    return env


@pytest.mark.parametrize(("host", "event"), [
    ("claude-code", "pre-tool-use"), ("codex", "pre-tool-use"),
    ("claude-code", "user-prompt-submit"), ("codex", "user-prompt-submit"),
    ("claude-code", "stop"), ("codex", "stop"),
])
def test_a_hook_in_a_poisoned_project_fails_closed_at_once(poisoned: tuple[str, Path], host: str,
                                                            event: str) -> None:
    """The billion-laughs verigate.yaml used to hang every hook past 180 s (a host then lets the call through)."""
    name, path = poisoned
    project = path.parent
    transcript = project / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    stdin = json.dumps({
        "session_id": "s-poison", "cwd": str(project), "hook_event_name": event, "transcript_path": str(transcript),
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "prompt": "hello", "stop_hook_active": False,
    })
    done, elapsed = _run(["hook", host, event], project, stdin=stdin, env=_hook_env(project))
    assert elapsed < QUICK_S
    assert "Traceback" not in done.stderr + done.stdout
    where = f"{path}:{POISON_LINES[name]}"
    if event == "pre-tool-use":  # exit 2 with the reason on stderr: both hosts refuse the call
        assert done.returncode == 2
        (line,) = _lines(done.stderr)
        assert where in line and "refused" in line
    else:
        assert done.returncode == 0 and not done.stderr.strip()
        answer = json.loads(done.stdout)
        text = json.dumps(answer)
        assert where in text
        if event == "user-prompt-submit":
            assert answer["decision"] == "block"
        else:  # the first error blocks once; the next Stop hands over (tests/hooks cover the loop guard)
            assert answer["decision"] == "block" or answer.get("continue") is False

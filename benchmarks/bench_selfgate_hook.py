"""Pre-tool-use and user-prompt-submit hook wall time on a large transcript (first and following calls) against
bare interpreter start-up.

Run: ``.venv/bin/python benchmarks/bench_selfgate_hook.py [--size-mb 100] [--repeat 5] [--no-bytecode-cache]
[--quick]``.
Prints ratios, asserts nothing: absolute times depend on the machine and its load. Every command runs with its
bytecode cached (in a temporary ``PYTHONPYCACHEPREFIX``), as from an installed wheel, unless
``--no-bytecode-cache`` keeps the environment's setting (``PYTHONDONTWRITEBYTECODE=1`` recompiles each module on
every start, which costs the hook more than the baseline).

The hooks run as in a session set up the way ``verigate doctor`` asks: a home whose Claude Code settings carry
the boundary snippet (``boundary_env``) and the self-gate's state in the temporary folder. Without the boundary,
block mode refuses every Edit for the missing sandbox before the transcript is read, so every pre-tool-use row
would time that refusal (the fast path) instead of the scan it names.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path


def wall(command: list[str], stdin: str = "", env: dict[str, str] | None = None, cwd: str | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, text=True, capture_output=True, env=env, cwd=cwd, check=True)
    return time.perf_counter() - start


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def assistant(text: str) -> str:
    return json.dumps({"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": "bench", "isSidechain": False,
                       "timestamp": "2026-01-01T00:00:00Z",
                       "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}) + "\n"


def tool_use() -> str:
    return json.dumps({"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": "bench", "isSidechain": False,
                       "timestamp": "2026-01-01T00:00:00Z",
                       "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                                     "input": {"command": "make test"}}]}}) + "\n"


def tool_result(size: int) -> str:
    return json.dumps({"type": "user", "uuid": str(uuid.uuid4()), "sessionId": "bench", "isSidechain": False,
                       "timestamp": "2026-01-01T00:00:00Z", "toolUseResult": {"stdout": "x"},
                       "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                                "content": "line of tool output\n" * (size // 20)}]}})


def boundary_env(root: Path, environ: dict[str, str]) -> dict[str, str]:
    """``environ`` with a home under ``root`` whose Claude Code settings hold verigate's boundary snippet (as
    ``verigate doctor --print-settings claude-code`` prints it) and the self-gate state in ``root/state``: block
    mode then checks the session's gates instead of refusing for a missing sandbox."""
    from verigate.selfgate._snippets import claude_settings

    env = {key: value for key, value in environ.items() if key not in ("CLAUDE_PROJECT_DIR", "XDG_STATE_HOME")}
    env["HOME"], env["VERIGATE_STATE_HOME"] = str(root / "home"), str(root / "state")
    settings = root / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(claude_settings(env), indent=2), encoding="utf-8")
    return env


def build_transcript(path: Path, size_mb: int) -> None:
    """Mostly tool output (as real sessions are), prose every few lines, one gate declaration early on."""
    target = size_mb * 1024 * 1024
    prose = assistant("I ran the tests; 3 failures remain in the parser. Fixing them next.")
    result = tool_result(8000) + "\n"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(assistant("Step 3 は成果物提示後に再承認とします。"))
        written = 0
        while written < target:
            block = prose + result + result
            handle.write(block)
            written += len(block.encode("utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep the environment's PYTHONDONTWRITEBYTECODE / PYTHONPYCACHEPREFIX")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 MB, 1 run each")
    args = parser.parse_args()
    if args.quick:
        args.size_mb, args.repeat = 1, 1
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = root / "project"
        project.mkdir()
        transcript = root / "bench.jsonl"
        build_transcript(transcript, args.size_mb)
        base = dict(os.environ)
        if not args.no_bytecode_cache:
            base.pop("PYTHONDONTWRITEBYTECODE", None)
            base["PYTHONPYCACHEPREFIX"] = str(root / "pycache")  # filled by each command's first run
        env = boundary_env(root, base)
        env["VERIGATE_SELF_GATE_MODE"] = "block"
        payload = json.dumps({"session_id": "bench", "transcript_path": str(transcript), "cwd": str(project),
                              "hook_event_name": "PreToolUse", "tool_name": "Edit",
                              "tool_input": {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}})
        prompt = json.dumps({"session_id": "bench", "transcript_path": str(transcript), "cwd": str(project),
                             "hook_event_name": "UserPromptSubmit", "prompt": "Please go on."})
        hook = [python, "-m", "verigate", "hook", "claude-code", "pre-tool-use"]
        prompt_hook = [python, "-m", "verigate", "hook", "claude-code", "user-prompt-submit"]
        quiet_log = root / "quiet.jsonl"  # a session that declared nothing: most sessions
        quiet_log.write_text(assistant("I ran the tests; 3 failures remain in the parser."), encoding="utf-8")
        quiet_prompt = prompt.replace('"bench"', '"bench-quiet"').replace(json.dumps(str(transcript)),
                                                                          json.dumps(str(quiet_log)))

        bare_samples: list[float] = []

        def timed(command: list[str], stdin: str = "", run_env: dict[str, str] | None = None) -> float:
            # a bare start-up right before each sample: the baseline sees the same machine load as the hook
            bare_samples.append(wall([python, "-c", "pass"], env=base))
            return wall(command, stdin, run_env or base, str(project))

        package = median([timed([python, "-c", "import verigate"]) for _ in range(args.repeat)])
        first = timed(hook, payload, env)
        following_quiet = median([timed(hook, payload, env) for _ in range(args.repeat)])

        def following(lines: Callable[[int], str]) -> float:
            samples = []
            for index in range(args.repeat):
                with transcript.open("a", encoding="utf-8") as handle:
                    handle.write(lines(index))
                samples.append(timed(hook, payload, env))
            return median(samples)

        # what a tool call adds to the log (the assistant's tool_use without prose, the tool's output) and
        # prose without any keyword of the pack are caught up by the fast path; prose with a keyword
        # ("continue", "wait") loads the cached pack into the rule engine (the full check)
        tool_turn = following(lambda index: tool_use() + tool_result(8000) + "\n")
        plain_prose = following(lambda index: assistant(f"Edited the parser (pass {index}); running the tests now."))
        keyword_prose = following(lambda index: assistant(
            f"Pass {index} done. Shall I continue with the changelog too? I will wait for CI."))
        read = median([timed(hook, payload.replace('"Edit"', '"Read"'), env) for _ in range(args.repeat)])
        # a prompt that closes nothing while the declared gate is open: the answer says what is still open
        user_prompt = median([timed(prompt_hook, prompt, env) for _ in range(args.repeat)])
        timed(prompt_hook, quiet_prompt, env)  # its first call scans the session's log
        quiet_user_prompt = median([timed(prompt_hook, quiet_prompt, env) for _ in range(args.repeat)])
        bare = median(bare_samples)

    cached = "environment's bytecode setting" if args.no_bytecode_cache else "bytecode cached"
    print(f"transcript: {args.size_mb} MB; median of {args.repeat} runs; {cached}; "
          f"baseline `python -c pass` = {bare * 1000:.0f} ms (median of {len(bare_samples)}, one before each sample)")
    rows = [
        ("python -c 'import verigate' (foundation floor)", package),
        ("pre-tool-use, first call (full scan)", first),
        ("pre-tool-use, following call (no new lines)", following_quiet),
        ("pre-tool-use, following call (a tool call's lines)", tool_turn),
        ("pre-tool-use, following call (new prose, no keyword)", plain_prose),
        ("pre-tool-use, following call (new prose, keywords)", keyword_prose),
        ("pre-tool-use, Read (not a blocked tool)", read),
        ("user-prompt-submit, a prompt that closes nothing", user_prompt),
        ("user-prompt-submit, the same prompt, no gate open", quiet_user_prompt),
    ]
    for label, seconds in rows:
        print(f"  {label:<52} {seconds * 1000:8.0f} ms  {seconds / bare:6.1f}x bare")
    return 0


if __name__ == "__main__":
    sys.exit(main())

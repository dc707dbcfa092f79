"""Stop hook wall time: ``verigate hook claude-code stop`` as a process (start-up, transcript parse, finalize with a
loopback judge that answers at once) against ``python -c pass``, measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_stop_hook.py [runs] [--quick]`` (needs the plug-ins installed; see README).
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
from collections.abc import Sequence
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "hooks")]

from stop_helpers import Tool, claude_transcript, stop_payload, write_config  # noqa: E402

from judge_servers import JudgeServer, verdict_json  # noqa: E402  (test helpers: the same loopback server)

#: what every Gate does first: import and register every installed plug-in (model-client SDKs included)
PLUGINS_ONLY = "from verigate._plugins import create_manager; create_manager()"
#: the project's gate as the hook builds it: plug-ins, the judge's model client, redaction packs, the store
OPEN_GATE = ("from pathlib import Path; from verigate.hooks._stop_project import open_gate; "
             "open_gate(Path({project!r})).close()")
#: the hook's transcript read alone (imports included): the whole file forward, and from its end back to the request
READ_FORWARD = "from verigate.transcripts import last_turn; last_turn({path!r})"
READ_FROM_END = "from verigate.transcripts._tail import latest_turn_from_end; latest_turn_from_end({path!r})"
#: a long session: many turns before the one that is judged (the transcript is streamed once)
EARLIER_TURNS = 150
TOOLS = tuple(
    Tool("Bash", {"command": f"pytest -q tests/test_{index}.py"}, f"{index} passed in 0.{index}s") for index in range(8)
)


def _median_wall(command: Sequence[str], runs: int, *, stdin: str = "", env: dict[str, str] | None = None) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, check=False)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return statistics.median(times)


def main(runs: int = 5) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("CLAUDE_PROJECT_DIR", "VERIGATE_PROJECT_DIR")}
    env["VERIGATE_TEST_JUDGE_KEY"] = "sk-loopback-test"
    with tempfile.TemporaryDirectory() as scratch, JudgeServer("openai") as judge:
        project = Path(scratch) / "project"
        project.mkdir()
        write_config(project, judge.base_url)
        turns = [(f"request {index}: fix test {index}", TOOLS, f"Fixed test {index}; 8 files pass.")
                 for index in range(EARLIER_TURNS + 1)]
        transcript = claude_transcript(Path(scratch) / "session.jsonl", "bench", turns)
        for _ in range(runs + 1):
            judge.reply_text(verdict_json(passed=True))
        # a new session per run would grow the store; one session, each run a completed request, is the steady state
        payload = json.dumps(stop_payload(project, "bench", transcript))
        hook = [sys.executable, "-m", "verigate", "hook", "claude-code", "stop"]
        _median_wall(hook, 1, stdin=payload, env=env)  # warm the file cache, create the store
        baseline = _median_wall([sys.executable, "-c", "pass"], runs, env=env)
        module_only = _median_wall([sys.executable, "-c", "import verigate.hooks._stop"], runs, env=env)
        plugins = _median_wall([sys.executable, "-c", PLUGINS_ONLY], runs, env=env)
        open_gate = _median_wall([sys.executable, "-c", OPEN_GATE.format(project=str(project))], runs, env=env)
        full = _median_wall(hook, runs, stdin=payload, env=env)
        forward = _median_wall([sys.executable, "-c", READ_FORWARD.format(path=str(transcript))], runs, env=env)
        from_end = _median_wall([sys.executable, "-c", READ_FROM_END.format(path=str(transcript))], runs, env=env)
        lines = sum(1 for _ in transcript.open(encoding="utf-8"))
    print(f"transcript: {lines} lines, {transcript.name}; judge: loopback OpenAI-compatible, answers at once")
    print(f"{'python -c pass':<48} {baseline * 1000:8.1f} ms   1.0x")
    print(f"{'python -c import verigate.hooks._stop':<48} {module_only * 1000:8.1f} ms  {module_only / baseline:4.1f}x")
    print(f"{'load every installed plug-in (entry points)':<48} {plugins * 1000:8.1f} ms  {plugins / baseline:4.1f}x")
    print(f"{'open the project gate (+ judge client, redaction)':<48} {open_gate * 1000:8.1f} ms  "
          f"{open_gate / baseline:4.1f}x")
    print(f"{'read the latest turn: whole file, forward':<48} {forward * 1000:8.1f} ms  {forward / baseline:4.1f}x")
    print(f"{'read the latest turn: from the end (the hook)':<48} {from_end * 1000:8.1f} ms  "
          f"{from_end / baseline:4.1f}x")
    print(f"{'verigate hook claude-code stop (whole run)':<48} {full * 1000:8.1f} ms  {full / baseline:4.1f}x")
    print(f"medians of {runs} runs each")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=int, nargs="?", default=5, help="runs of each command (the median is shown)")
    parser.add_argument("--quick", action="store_true", help="a smoke run (1 run each)")
    args = parser.parse_args()
    main(1 if args.quick else args.runs)

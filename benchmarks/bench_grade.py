"""Benchmark: grade a generated Claude Code transcript; throughput next to plain ``json.loads`` of the same lines.

    python benchmarks/bench_grade.py [--mb 200] [--rounds 3] [--quick]

Each measurement runs in a fresh child process so that its peak RSS is its own. Throughput is given by wall-clock
time and by the child's CPU time: on a machine shared with other work the CPU-time ratio is the steadier one (a
process waiting for a core is not counted). Grading is also run on a file a quarter of the size: a flat peak
memory across the two shows that grading streams. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE_LINES = [f"    value_{index} = compute(value_{index - 1}, factor={index % 7})  # step {index}\n"
                for index in range(400)]


WORDS = ["the", "test", "fails", "because", "compute", "returns", "a", "stale", "value", "so", "I", "should",
         "read", "module", "first", "then", "edit", "and", "rerun", "pytest"]
SIGNATURE = "Eq" + "A" * 700  # thinking signatures are long base64 strings


def _line(kind: str, session: str, counter: int, **fields: object) -> str:
    record: dict[str, object] = {"parentUuid": f"u{counter - 1}", "isSidechain": False, "userType": "external",
                                 "cwd": "/home/dev/project", "sessionId": session, "version": "2.0.14",
                                 "gitBranch": "main", "type": kind, "uuid": f"u{counter}",
                                 "timestamp": "2026-01-01T00:00:00.000Z", **fields}
    return json.dumps(record) + "\n"


def generate(path: Path, megabytes: int, seed: int = 7) -> None:
    """A session of realistic turns: prompts, Read/Edit/Bash/Grep calls with results, progress lines."""
    rng = random.Random(seed)
    target = megabytes * 1024 * 1024
    written = counter = 0
    with path.open("w", encoding="utf-8") as stream:
        while written < target:
            lines = []
            counter += 1
            lines.append(_line("user", "bench", counter, message={"role": "user",
                                                                   "content": f"Please fix issue {counter}."}))
            for call in range(rng.randint(3, 9)):
                counter += 1
                tool_id = f"toolu_{counter}_{call}"
                file_path = f"/home/dev/project/src/module_{rng.randint(0, 300)}.py"
                name = rng.choice(["Read", "Read", "Edit", "Bash", "Grep"])
                tool_input: dict[str, object] = {
                    "Read": {"file_path": file_path},
                    "Edit": {"file_path": file_path, "old_string": "a = 1", "new_string": "a = 2"},
                    "Bash": {"command": "pytest -q tests/", "description": "run the tests"},
                    "Grep": {"pattern": "def compute", "path": "/home/dev/project/src"},
                }[name]
                if rng.random() < 0.4:  # extended thinking: one line of its own, with its signature
                    counter += 1
                    thought = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 400)))
                    lines.append(_line("assistant", "bench", counter, requestId=f"req_{counter}", message={
                        "id": f"msg_{counter}", "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4-5", "content": [{"type": "thinking", "thinking": thought,
                                                                   "signature": SIGNATURE}]}))
                counter += 1
                lines.append(_line("assistant", "bench", counter, requestId=f"req_{counter}", message={
                    "id": f"msg_{counter}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
                    "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 80}}))
                output = "".join(rng.sample(SOURCE_LINES, rng.randint(5, 120)))
                failed = name == "Bash" and rng.random() < 0.3
                counter += 1
                # the sibling toolUseResult repeats the output the way Claude Code writes it per tool
                structured: dict[str, object] = {
                    "Read": {"type": "text", "file": {"filePath": file_path, "content": output,
                                                      "numLines": output.count("\n"), "startLine": 1}},
                    "Edit": {"filePath": file_path, "oldString": "a = 1", "newString": "a = 2",
                             "originalFile": output, "structuredPatch": [], "userModified": False},
                    "Bash": {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
                    "Grep": {"mode": "files_with_matches", "filenames": [file_path], "numFiles": 1},
                }[name]
                lines.append(_line("user", "bench", counter, toolUseResult=structured, message={
                    "role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                 "content": output, "is_error": failed}]}))
                if rng.random() < 0.5:
                    counter += 1
                    lines.append(_line("progress", "bench", counter, data={"type": "hook_progress"}))
            counter += 1
            lines.append(_line("assistant", "bench", counter, message={
                "id": f"msg_{counter}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Done: the issue is fixed and the tests pass."}]}))
            chunk = "".join(lines)
            stream.write(chunk)
            written += len(chunk.encode("utf-8"))


def _child(mode: str, path: Path) -> None:
    startup = 0.0
    startup_kib = 0
    if mode == "json":
        started, started_cpu = time.perf_counter(), time.process_time()
        loads = json.loads
        with path.open("rb") as stream:
            for raw in stream:
                loads(raw)
        detail = ""
    else:
        began = time.perf_counter()
        from verigate.trace import grade, load_trace_config, rule_registry

        config = load_trace_config()
        rule_registry()  # loads every installed plug-in (their SDK imports are start-up, not throughput)
        started, started_cpu = time.perf_counter(), time.process_time()
        startup = started - began
        startup_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        report = grade(path, format="claude-code", config=config)
        result = report.runs[0]
        detail = f"{result.run.step_count} steps, {len(result.flags)} flags, verdict {result.verdict}"
    elapsed, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "startup": startup, "peak_mib": peak_kib / 1024,
                      "startup_mib": startup_kib / 1024, "detail": detail}))


def _measure(mode: str, path: Path) -> dict[str, float | str]:
    output = subprocess.run([sys.executable, __file__, "--child", mode, str(path)], capture_output=True, text=True,
                            check=True).stdout
    measured: dict[str, float | str] = json.loads(output)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200, help="size of the generated transcript (MB)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each is reported")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 MB, 1 round")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    if args.quick:
        args.mb, args.rounds = 1, 1
    with tempfile.TemporaryDirectory(prefix="verigate-bench-") as folder:
        big, small = Path(folder) / "big.jsonl", Path(folder) / "small.jsonl"
        generate(big, args.mb)
        generate(small, max(args.mb // 4, 1))
        size_mb, small_mb = big.stat().st_size / 1e6, small.stat().st_size / 1e6
        # interleaved rounds, best of each: the machine is shared, so single runs are noisy
        rounds = [(_measure("json", big), _measure("grade", big)) for _ in range(args.rounds)]
        graded_small = _measure("grade", small)

    def best(index: int, clock: str) -> dict[str, float | str]:
        return min((pair[index] for pair in rounds), key=lambda item: float(item[clock]))

    baseline, graded = best(0, "seconds"), best(1, "seconds")
    baseline_rate = size_mb / float(baseline["seconds"])
    grade_rate = size_mb / float(graded["seconds"])
    baseline_cpu_rate = size_mb / float(best(0, "cpu_seconds")["cpu_seconds"])
    grade_cpu_rate = size_mb / float(best(1, "cpu_seconds")["cpu_seconds"])
    print(f"transcript: {size_mb:,.0f} MB ({graded['detail']})")
    print(f"json.loads only : {baseline_rate:7.1f} MB/s wall, {baseline_cpu_rate:7.1f} MB/s CPU   "
          f"peak RSS {float(baseline['peak_mib']):6.1f} MiB")
    print(f"verigate grade  : {grade_rate:7.1f} MB/s wall, {grade_cpu_rate:7.1f} MB/s CPU   "
          f"peak RSS {float(graded['peak_mib']):6.1f} MiB "
          f"({float(graded['startup_mib']):.1f} MiB of it before the first line: Python, verigate, plug-ins)")
    print(f"grade / json.loads throughput: {grade_rate / baseline_rate:.0%} wall, "
          f"{grade_cpu_rate / baseline_cpu_rate:.0%} CPU   "
          f"(start-up before streaming, plug-in imports included: {float(graded['startup']):.1f} s)")
    print(f"peak RSS of grading a {small_mb:,.0f} MB file: "
          f"{float(graded_small['peak_mib']):.1f} MiB (vs {float(graded['peak_mib']):.1f} MiB at {size_mb:,.0f} MB)")


if __name__ == "__main__":
    main()

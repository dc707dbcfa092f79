"""Side by side: verigate next to its peers and baselines, each pair measured in the same run, in ONE table.

Run: ``scripts/bench.sh`` (it makes the peers' environment and passes ``--peer-python``), or directly:
``python benchmarks/bench_peers.py [--quick] [--big] [--rounds N] [--peer-python PY] [--only ROW ...]``.

Every pair takes turns round by round (verigate, then its peer, then verigate again ...), so a busy phase of the
shared machine slows both sides alike; the table gives min / median / max of the rounds per side and the ratio of
the medians (verigate ÷ peer: below 1 verigate is faster or smaller). Nothing is asserted.

The peers (Guardrails AI, detect-secrets, jsonschema) live in their own virtual environment, never in verigate's:
they run in one long-lived worker process (``PEER_PYTHON bench_peers.py --peer-worker``) that this process asks for
one round at a time over a pipe, so each round of a peer is timed inside its own process exactly like verigate's.
Without ``--peer-python`` (or when a peer does not import there) the peer's column says "peer not installed".
The seed's reference grader (MIT, ``../shared/reference/seed-trace-grader/``) is run as a subprocess, never copied.

Rows: 1 finalize vs Guardrails AI · 2 grading vs the reference grader and the ``json.loads`` floor (CPU, peak RSS)
· 3 hook start-up vs ``python -c pass`` / ``import json`` · 4 evidence verify, fastjsonschema vs jsonschema
· 5 redaction vs detect-secrets (the ``secrets`` pack: detect-secrets finds secrets only). docs/benchmarks.md.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

# Only the standard library at module level: the peer worker runs this file in the peers' environment,
# where verigate is not installed.
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REFERENCE = ROOT.parent / "shared" / "reference" / "seed-trace-grader" / "trace-grader.py"
HEADER = "| # | work | unit | verigate min / median / max | peer or anchor | peer min / median / max | ratio | notes |"
NOT_INSTALLED = "peer not installed"


# ------------------------------------------------------------------ shared by both processes
def answer_text(index: int) -> str:
    """The 4 KB answer both sides check; the counter makes each call's text new (the gate remembers the redaction
    of short recurring texts, and real answers differ), and both sides see the same sequence of texts."""
    body = ("I fixed the failing parser test: the tokenizer dropped the last token when the input ended without "
            "a newline. I changed tokenize() to flush the buffer at end of input, added a regression test, and "
            "ran the whole suite: 214 passed, 0 failed. The diff touches src/parser/tokenize.py and "
            "tests/test_tokenize.py only. ")
    text = (body * (4096 // len(body) + 1))[:4096 - 16]
    return f"{text} (run {index:07d})"


# ------------------------------------------------------------------ the peer worker (peers' environment)
def _worker_guardrails() -> Callable[[str], object]:
    from guardrails import Guard, OnFailAction
    from guardrails.validators import FailResult, PassResult, ValidationResult, Validator, register_validator

    @register_validator(name="verigate-bench/not-empty", data_type="string")
    class NotEmpty(Validator):  # type: ignore[misc]
        def validate(self, value: Any, metadata: dict[str, Any]) -> ValidationResult:
            return PassResult() if value.strip() else FailResult(error_message="empty answer")

    @register_validator(name="verigate-bench/max-length", data_type="string")
    class MaxLength(Validator):  # type: ignore[misc]
        def validate(self, value: Any, metadata: dict[str, Any]) -> ValidationResult:
            return PassResult() if len(value) <= 100_000 else FailResult(error_message="too long")

    guard = Guard().use(NotEmpty(on_fail=OnFailAction.EXCEPTION)).use(MaxLength(on_fail=OnFailAction.EXCEPTION))

    def check(text: str) -> object:
        outcome = guard.validate(text)
        if not outcome.validation_passed:
            raise RuntimeError(f"guardrails refused the bench text: {outcome}")
        return outcome

    return check


def peer_worker() -> None:
    """Answer one JSON request per line; keep the protocol on a private copy of stdout (peers may print)."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    prepared: dict[str, Any] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = _worker_step(request, prepared)
        except BaseException as error:  # a peer's failure is reported, and the worker goes on
            reply = {"error": f"{type(error).__name__}: {error}"}
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()


def _worker_step(request: dict[str, Any], prepared: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "guardrails":
        if "guardrails" not in prepared:
            prepared["guardrails"] = _worker_guardrails()
            prepared["guardrails"](answer_text(-1))  # warm-up outside the timing
        check = prepared["guardrails"]
        start, first = time.perf_counter(), request["first"]
        for index in range(first, first + request["iterations"]):
            check(answer_text(index))
        return {"seconds": time.perf_counter() - start}
    if op == "jsonschema":
        if "jsonschema" not in prepared:
            import jsonschema

            prepared["jsonschema"] = jsonschema.Draft202012Validator(request["schema"])
        validator, record = prepared["jsonschema"], request["record"]
        start = time.perf_counter()
        for _ in range(request["iterations"]):
            validator.validate(record)
        return {"seconds": time.perf_counter() - start}
    if op == "detect_secrets":
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings

        with default_settings():
            collection = SecretsCollection(root=request["folder"])
            start = time.perf_counter()
            for path in sorted(Path(request["folder"]).iterdir()):
                collection.scan_file(str(path))
            seconds = time.perf_counter() - start
        return {"seconds": seconds, "findings": sum(len(found) for found in collection.data.values())}
    if op == "version":
        from importlib.metadata import version

        return {"version": version(request["distribution"])}
    raise ValueError(f"unknown request {op!r}")


class Peer:
    """The worker process in the peers' environment; ``None`` answers mean the peer is not available."""

    def __init__(self, python: str | None) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.missing: dict[str, str] = {}
        self.home = tempfile.TemporaryDirectory(prefix="verigate-bench-peers-")
        # Guardrails AI sends usage metrics to its hub unless its rc file says no (``guardrails configure
        # --disable-metrics`` writes this line): a private HOME keeps the user's own rc file out of it, and the
        # exporter's network retries out of the timings
        Path(self.home.name, ".guardrailsrc").write_text("enable_metrics=false\n", encoding="utf-8")
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # verigate stays out
        env.update(HOME=self.home.name, OTEL_SDK_DISABLED="true")
        if python:
            # absolute but not resolved: a venv's python is a symlink, and resolving it would leave the venv
            self.process = subprocess.Popen([str(Path(python).absolute()), __file__, "--peer-worker"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                            cwd=self.home.name, env=env)

    def ask(self, peer: str, request: dict[str, Any]) -> dict[str, Any] | None:
        if self.process is None or peer in self.missing:
            return None
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply: dict[str, Any] = json.loads(self.process.stdout.readline() or '{"error": "the worker exited"}')
        if "error" in reply:
            self.missing[peer] = reply["error"]
            print(f"bench_peers: {peer}: {reply['error']}", file=sys.stderr)
            return None
        return reply

    def status(self, peer: str) -> str:
        """What the table says when the peer gave no figures: not installed, or failed (the reason is on stderr)."""
        reason = self.missing.get(peer, "")
        return "peer failed (see stderr)" if reason and not reason.startswith("ModuleNotFoundError") else NOT_INSTALLED

    def version(self, distribution: str) -> str:
        reply = self.ask(distribution, {"op": "version", "distribution": distribution})
        return f" {reply['version']}" if reply else ""

    def close(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)
        self.home.cleanup()


# ------------------------------------------------------------------ the table
@dataclass
class Row:
    number: str
    work: str
    unit: str
    ours: list[float]
    anchor: str
    theirs: list[float] | None = None  # None: the peer did not run (see ``missing``)
    missing: str = NOT_INSTALLED
    notes: str = ""
    scale: float = 1.0  # the samples are in seconds (or MiB); shown times this

    def cells(self) -> list[str]:
        ratio = "—"
        peer = self.missing if self.theirs is None else _spread(self.theirs, self.scale)
        if self.theirs and self.ours:
            ratio = f"{statistics.median(self.ours) / statistics.median(self.theirs):.2f}×"
        return [self.number, self.work, self.unit, _spread(self.ours, self.scale), self.anchor, peer, ratio,
                self.notes]


def _spread(samples: Sequence[float], scale: float) -> str:
    if not samples:
        return "—"
    values = [value * scale for value in (min(samples), statistics.median(samples), max(samples))]
    digits = 3 if values[1] < 1 else 2 if values[1] < 10 else 1 if values[1] < 100 else 0
    return " / ".join(f"{value:.{digits}f}" for value in values)


@dataclass
class Settings:
    quick: bool
    big: bool
    rounds: int
    reference: Path
    peer: Peer
    rows: list[Row] = field(default_factory=list)


def alternate(rounds: int, sides: Sequence[Callable[[int], float | None]]) -> list[list[float] | None]:
    """Run every side once per round, in turn; a side answering ``None`` (its peer is missing) stops being run."""
    samples: list[list[float] | None] = [[] for _ in sides]
    for number in range(rounds):
        for index, side in enumerate(sides):
            kept = samples[index]
            if kept is None:
                continue
            value = side(number)
            if value is None:
                samples[index] = None
            else:
                kept.append(value)
    return samples


# ------------------------------------------------------------------ row 1: finalize vs Guardrails AI
def row_finalize(settings: Settings) -> None:
    import asyncio

    from verigate import Candidate, Gate, Termination

    reply = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                        "reflection": {"observation": "", "lesson": "", "next_check": ""}})

    async def judge_function(request: object) -> str:
        return reply

    gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=judge_function, store=":memory:",
                            entry_points=False)
    natural = Termination("natural")
    iterations = 10 if settings.quick else 200

    async def calls(first: int) -> float:
        start = time.perf_counter()
        for index in range(first, first + iterations):
            result = await gate.finalize(Candidate(request="Fix the failing parser test.",
                                                   final_text=answer_text(index), session_id=f"bench-{index}",
                                                   contains_personal_data=False), natural)
            if result.outcome != "completed":
                raise SystemExit(f"bench_peers: finalize did not complete: {result}")
        return (time.perf_counter() - start) / iterations

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(calls(-iterations))  # warm-up

        def ours(number: int) -> float:
            return loop.run_until_complete(calls(number * iterations))

        def theirs(number: int) -> float | None:
            answer = settings.peer.ask("guardrails-ai", {"op": "guardrails", "first": number * iterations,
                                                         "iterations": iterations})
            return None if answer is None else float(answer["seconds"]) / iterations

        mine, peer = alternate(settings.rounds, [ours, theirs])
    finally:
        gate.close()
        loop.close()
    settings.rows.append(Row("1", "one `finalize`, 4 KB answer, instant in-process judge, `:memory:` store",
                             "ms per call", mine or [], f"Guardrails AI{settings.peer.version('guardrails-ai')} "
                             "`Guard().use(2 trivial validators).validate`", peer,
                             missing=settings.peer.status("guardrails-ai"),
                             notes=f"{iterations} calls per round", scale=1e3))


# ------------------------------------------------------------------ row 2: grading vs the reference grader
TIME = Path("/usr/bin/time")  # GNU time: its own few MiB are the floor of the child's peak RSS, not ours


def _child_usage(command: Sequence[str], output: Path) -> tuple[float, float]:
    """(user + system CPU seconds, peak RSS MiB) of one child process alone.

    Through GNU time when present: the kernel carries a process's peak RSS across fork and exec, so a child
    forked from this process (verigate loaded, ~50 MiB) could never report less than this process's size; a child
    of the small ``time`` program reports its own. Without it, the child's rusage from ``wait4`` (that floor and
    all, so small files' peaks are overstated; the CPU time is exact either way)."""
    measured = output.with_suffix(".time")
    launcher = [str(TIME), "-f", "%U %S %M", "-o", str(measured)] if TIME.is_file() else []
    with output.open("w") as stream:
        process = subprocess.Popen([*launcher, *command], stdout=stream, stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 3):  # 3: the grader's CI signal (corrupt success, flaky) is a result
        raise SystemExit(f"bench_peers: {' '.join(command)} exited {process.returncode}: {errors[-2000:]}")
    if launcher:
        user, system, peak_kib = measured.read_text(encoding="utf-8").split()[-3:]
        return float(user) + float(system), int(peak_kib) / 1024
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def row_grade(settings: Settings) -> None:
    sys.path.insert(0, str(HERE))
    from bench_grade import generate

    sizes = [1] if settings.quick else [1, 40, 200] if settings.big else [1, 40]
    rounds = 1 if settings.quick else 3
    config = settings.reference.parent / "trace-grader.config.yaml"
    have_reference = settings.reference.is_file()
    with tempfile.TemporaryDirectory(prefix="verigate-bench-") as folder:
        for megabytes in sizes:
            path = Path(folder) / f"session-{megabytes}.jsonl"
            generate(path, megabytes)
            outs = {name: Path(folder) / f"{name}.out" for name in ("verigate", "reference", "json")}
            usage: dict[str, list[tuple[float, float]]] = {"verigate": [], "reference": [], "json": []}
            commands = {
                "verigate": [sys.executable, "-m", "verigate", "grade", "--transcript", str(path), "--json",
                             *(["--config", str(config)] if have_reference else [])],
                "reference": [sys.executable, str(settings.reference), "--transcript", str(path), "--json",
                              "--config", str(config)],
                "json": [sys.executable, str(HERE / "bench_grade.py"), "--child", "json", str(path)],
            }

            def side(name: str, command: list[str], out: Path,
                     kept: list[tuple[float, float]]) -> Callable[[int], float | None]:
                def run(_: int) -> float | None:
                    if name == "reference" and not have_reference:
                        return None
                    kept.append(_child_usage(command, out))
                    return kept[-1][0]
                return run

            if megabytes == sizes[0]:  # warm-up, not kept: bytecode cache, file cache
                alternate(1, [side(name, commands[name], outs[name], []) for name in usage])
            alternate(rounds, [side(name, commands[name], outs[name], usage[name]) for name in usage])
            reports_kb = {name: out.stat().st_size / 1024 for name, out in outs.items() if out.exists()}
            cpu = {name: [value[0] for value in values] for name, values in usage.items()}
            rss = {name: [value[1] for value in values] for name, values in usage.items()}
            absent = f"reference absent ({settings.reference})"
            settings.rows.append(Row("2", f"grade a generated Claude Code session of {megabytes} MB", "CPU s",
                                     cpu["verigate"], "the seed's reference grader (subprocess)",
                                     cpu["reference"] if have_reference else None, missing=absent,
                                     notes=f"whole process, start-up included; {rounds} round(s); JSON report "
                                     f"{reports_kb.get('verigate', 0):,.0f} KB vs "
                                     f"{reports_kb.get('reference', 0):,.0f} KB"))
            settings.rows.append(Row("2", f"… peak RSS, {megabytes} MB", "MiB", rss["verigate"],
                                     "the seed's reference grader", rss["reference"] if have_reference else None,
                                     missing=absent))
            settings.rows.append(Row("2", f"… against the `json.loads` floor, {megabytes} MB", "CPU s",
                                     cpu["verigate"], "bare `json.loads` per line (subprocess)", cpu["json"]))


# ------------------------------------------------------------------ row 3: hook start-up
def row_hooks(settings: Settings) -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "hooks"), str(HERE)]
    from bench_selfgate_hook import assistant, boundary_env, build_transcript
    from bench_stop_hook import TOOLS
    from stop_helpers import claude_transcript, stop_payload, write_config

    from judge_servers import JudgeServer, verdict_json

    rounds = 1 if settings.quick else settings.rounds
    python = sys.executable
    env = {key: value for key, value in os.environ.items()
           if key not in ("CLAUDE_PROJECT_DIR", "VERIGATE_PROJECT_DIR", "PYTHONDONTWRITEBYTECODE")}
    env["VERIGATE_TEST_JUDGE_KEY"] = "sk-loopback-test"
    with tempfile.TemporaryDirectory(prefix="verigate-bench-") as scratch, JudgeServer("openai") as judge:
        root = Path(scratch)
        stop_project, gate_project = root / "stop-project", root / "gate-project"
        stop_project.mkdir()
        gate_project.mkdir()
        write_config(stop_project, judge.base_url)
        turns = [(f"request {index}: fix test {index}", TOOLS, f"Fixed test {index}; 8 files pass.")
                 for index in range(151)]
        stop_transcript = claude_transcript(root / "session.jsonl", "bench", turns)
        for _ in range(rounds + 5):
            judge.reply_text(verdict_json(passed=True))
        gate_transcript = root / "gate.jsonl"
        build_transcript(gate_transcript, 1)
        # the boundary in place: without it block mode refuses every Edit before reading the transcript
        gate_env = {**boundary_env(root, env), "VERIGATE_SELF_GATE_MODE": "block"}
        gate_base = {"session_id": "bench", "transcript_path": str(gate_transcript), "cwd": str(gate_project)}
        pre_tool = json.dumps({**gate_base, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                               "tool_input": {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}})
        prompt = json.dumps({**gate_base, "hook_event_name": "UserPromptSubmit", "prompt": "Please go on."})
        # a keyword of a never-close phrase ("without"): the prompt's fast path cannot vouch, its full check runs
        prompt_keyword = json.dumps({**gate_base, "hook_event_name": "UserPromptSubmit",
                                     "prompt": "Please go on without the docs change."})
        hook = [python, "-m", "verigate", "hook", "claude-code"]
        counter = iter(range(10**6))

        def wall(command: list[str], stdin: str = "", run_env: dict[str, str] | None = None,
                 before: Callable[[], None] | None = None) -> Callable[[int], float]:
            def run(_: int) -> float:
                if before is not None:
                    before()
                start = time.perf_counter()
                done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=run_env or env,
                                      cwd=str(gate_project), check=False)
                elapsed = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(f"bench_peers: {' '.join(command)} exited {done.returncode}: "
                                     f"{done.stderr[-2000:]}")
                return elapsed
            return run

        def keyword_prose() -> None:
            # prose with a keyword of the self-gate pack: the fast path cannot vouch, the full check runs
            with gate_transcript.open("a", encoding="utf-8") as handle:
                handle.write(assistant(f"Pass {next(counter)} done. Shall I continue with the changelog too?"))

        stop = wall([*hook, "stop"], json.dumps(stop_payload(stop_project, "bench", stop_transcript)))
        commands = [
            wall([python, "-c", "pass"]), wall([python, "-c", "import json"]), stop,
            wall([*hook, "pre-tool-use"], pre_tool, gate_env, before=keyword_prose),
            wall([*hook, "user-prompt-submit"], prompt_keyword, gate_env),
            wall([*hook, "user-prompt-submit"], prompt, gate_env),
            wall([*hook, "pre-tool-use"], pre_tool, gate_env),
        ]
        for command in commands:  # warm the file cache and bytecode, create the stores, scan the transcript once
            command(-1)
        samples = alternate(rounds, commands)
    bare, floor = samples[0] or [], samples[1] or []
    labels = ["Stop hook, judge answering at once (loopback HTTP, 150 earlier turns)",
              "PreToolUse, full check (new prose with a keyword)",
              "UserPromptSubmit, full check (a keyword of a never-close phrase)",
              "UserPromptSubmit, fast path (a prompt no phrase can match)", "PreToolUse, fast path (no new lines)"]
    for label, measured in zip(labels, samples[2:], strict=True):
        mine = measured or []
        floor_ratio = statistics.median(mine) / statistics.median(floor) if mine and floor else 0.0
        settings.rows.append(Row("3", f"hook start-up: {label}", "ms per process", mine, "`python -c pass`",
                                 bare, notes=f"{floor_ratio:.1f}× `python -c \"import json\"` "
                                 f"({statistics.median(floor) * 1e3:.0f} ms)" if floor else "", scale=1e3))


# ------------------------------------------------------------------ row 4: evidence verify
def row_evidence(settings: Settings) -> None:
    sys.path.insert(0, str(HERE))
    from bench_evidence import EXAMPLE, fullest_record, verify_fullest

    from verigate.evidence._schema import load_evidence_schema

    task = EXAMPLE / "TASK-0874"
    record = fullest_record()
    iterations = 20 if settings.quick else 300
    schema = load_evidence_schema()
    with tempfile.TemporaryDirectory(prefix="verigate-bench-") as scratch:
        ev_path = Path(scratch) / "ev.json"
        ev_path.write_text(json.dumps(record), encoding="utf-8")
        verify_fullest(ev_path, task)

        def verify_round(_: int) -> float:
            start = time.perf_counter()
            for _ in range(iterations):
                verify_fullest(ev_path, task)
            return (time.perf_counter() - start) / iterations

        (verified,) = alternate(settings.rounds, [verify_round])
    rate = 1 / statistics.median(verified) if verified else 0.0
    settings.rows.append(Row("4", "`evidence verify` of one EV.json with its task folder", "ms per EV",
                             verified or [], "— (goal ≥ 2,000 EVs/s)", None, missing="—",
                             notes=f"{rate:,.0f} EVs/s; {iterations} per round", scale=1e3))
    checks = iterations * 10

    def ours(_: int) -> float:
        start = time.perf_counter()
        for _ in range(checks):
            schema.validate(record)
        return (time.perf_counter() - start) / checks

    def theirs(_: int) -> float | None:
        answer = settings.peer.ask("jsonschema", {"op": "jsonschema", "schema": schema.definition, "record": record,
                                                  "iterations": checks // 10})
        return None if answer is None else float(answer["seconds"]) / (checks // 10)

    mine, peer = alternate(settings.rounds, [ours, theirs])
    settings.rows.append(Row("4", "… the schema step alone (compiled fastjsonschema)", "µs per EV", mine or [],
                             f"jsonschema{settings.peer.version('jsonschema')} `Draft202012Validator`", peer,
                             missing=settings.peer.status("jsonschema"), scale=1e6))


# ------------------------------------------------------------------ row 5: redaction vs detect-secrets
def row_redaction(settings: Settings) -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(HERE)]
    from bench_redact import build_corpus

    from verigate.redact import RulePackRedactor

    megabytes = 0.05 if settings.quick else 0.5
    rounds = 1 if settings.quick else 3
    redactor = RulePackRedactor.from_packs(["secrets"])
    with tempfile.TemporaryDirectory(prefix="verigate-bench-") as scratch:
        folder = Path(scratch)
        build_corpus(folder, megabytes, 0)
        paths = sorted(folder.iterdir())
        lines = sum(path.read_text(encoding="utf-8").count("\n") + 1 for path in paths)

        def ours(_: int) -> float:
            start = time.perf_counter()
            for path in paths:
                redactor.redact(path.read_text(encoding="utf-8"))
            return (time.perf_counter() - start) / lines

        def theirs(_: int) -> float | None:
            answer = settings.peer.ask("detect-secrets", {"op": "detect_secrets", "folder": str(folder)})
            return None if answer is None else float(answer["seconds"]) / lines

        mine, peer = alternate(rounds, [ours, theirs])
    rates = [f"{1 / statistics.median(side):,.0f}" for side in (mine, peer) if side]
    settings.rows.append(Row("5", f"redaction (`secrets` pack), {lines:,} lines / {megabytes} MB from disk",
                             "µs per line", mine or [], f"detect-secrets{settings.peer.version('detect-secrets')} "
                             "default plug-ins", peer, missing=settings.peer.status("detect-secrets"),
                             notes=f"lines/s: {' vs '.join(rates)}", scale=1e6))


ROWS: dict[str, Callable[[Settings], None]] = {"finalize": row_finalize, "grade": row_grade, "hooks": row_hooks,
                                               "evidence": row_evidence, "redaction": row_redaction}


def print_table(rows: Sequence[Row], stream: TextIO = sys.stdout) -> None:
    print(HEADER, file=stream)
    print("|" + "---|" * 8, file=stream)
    for row in rows:
        print("| " + " | ".join(row.cells()) + " |", file=stream)


@contextmanager
def _peer(python: str | None) -> Iterator[Peer]:
    peer = Peer(python)
    try:
        yield peer
    finally:
        peer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: tiny sizes, few rounds")
    parser.add_argument("--big", action="store_true", help="also grade a 200 MB session")
    parser.add_argument("--rounds", type=int, default=None, help="alternating rounds per pair (default 7; quick 2)")
    parser.add_argument("--peer-python", default=None, help="the peers' environment's python (scripts/bench.sh)")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help="the seed's reference trace-grader.py")
    parser.add_argument("--only", nargs="+", choices=sorted(ROWS), default=None, help="measure these rows only")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep the environment's PYTHONDONTWRITEBYTECODE / PYTHONPYCACHEPREFIX for the children")
    parser.add_argument("--peer-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer_worker:
        peer_worker()
        return 0
    rounds = args.rounds or (2 if args.quick else 7)
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    with tempfile.TemporaryDirectory(prefix="verigate-bench-pycache-") as pycache:
        if not args.no_bytecode_cache:
            # every child process (hooks, graders, the peer worker) starts with its bytecode cached, as from an
            # installed wheel: PYTHONDONTWRITEBYTECODE=1 would recompile each module on every start
            os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
            os.environ["PYTHONPYCACHEPREFIX"] = pycache
        with _peer(args.peer_python) as peer:
            settings = Settings(args.quick, args.big, rounds, args.reference, peer)
            for name in args.only or list(ROWS):
                print(f"bench_peers: measuring {name} …", file=sys.stderr, flush=True)
                ROWS[name](settings)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"verigate side by side — {started}; {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), "
          f"load average at the end {load}; Python {sys.version.split()[0]}; "
          f"{'quick' if args.quick else 'default'} sizes; ratio = verigate median ÷ peer median (below 1: "
          "verigate faster / smaller)\n")
    print_table(settings.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Mutation testing of verigate's three decision cores: the gate policy, the evidence verifier, the self-gate fold.

A small AST mutator instead of mutmut: mutmut 3 writes a ``mutants/`` tree into the checkout (shared here by
several people), first runs the whole suite for its statistics, and rewrites functions into trampolines (a test
that parses the policy module's own source would then read the trampoline). Here each mutant is one small source
edit, applied to a private copy of ``src/`` only, and judged by a fixed list of test files per target.

    python scripts/mutation.py                      # CI mode: 8 mutants per target, seed 0
    python scripts/mutation.py --sample 20 --seed 3 # another deterministic sample
    python scripts/mutation.py --all                # every mutant (long mode; see docs/mutation.md)
    python scripts/mutation.py --list               # print the mutants, run nothing
    python scripts/mutation.py --json ...           # machine-readable report on stdout

Isolation: ``src/`` and ``tests/`` are copied once to a temporary folder; a mutant is written into that copy and
pytest runs there as a subprocess with ``PYTHONPATH=<tmp>/src`` first, so the checkout's files are never touched
and a run sees one consistent moment of the checkout. Before any mutant, a
probe prints ``verigate.__file__`` from such a subprocess, the unmutated copy must pass the target's tests (the
baseline) and a canary mutant (the module raises on import) must be killed; otherwise the run stops.

Verdicts: the test run fails (any non-zero exit: a test failed, or a test module or conftest could not import the
mutant) while the baseline passed with the same command: killed. It passes: survived. It runs past the timeout (3x
the baseline, at least 60 s): timeout, counted as killed (the mutant changed behaviour observably: it hangs) and
reported separately.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    name: str
    #: the module's path under src/
    module: str
    #: test files that exercise it, fastest and most direct first (pytest runs them in this order with -x)
    tests: tuple[str, ...]
    #: tests of those files left out: slow, and about something else (the run cost is paid per mutant)
    deselect: tuple[str, ...] = ()


TARGETS = (
    Target("policy", "verigate/gate/_policy.py",
           ("tests/gate/test_policy_mutants.py", "tests/gate/test_policy.py", "tests/gate/test_gate_properties.py")),
    Target("verify", "verigate/evidence/_verify.py",
           ("tests/evidence/test_verify_mutants.py", "tests/evidence/test_verify.py",
            "tests/evidence/test_properties.py")),
    Target("fold", "verigate/selfgate/_fold.py",
           ("tests/selfgate/test_fold_mutants.py", "tests/selfgate/test_store.py",
            "tests/selfgate/test_transcript.py", "tests/selfgate/test_cli.py"),
           # six spawned writers (5 s) test the store's lock; the fold's side of it is test_fold_invariants
           deselect=("tests/selfgate/test_store.py::test_many_processes_append_at_once",)),
)

#: the deterministic, database-free Hypothesis profile every test run uses (loaded by ``-p``): a mutant's verdict
#: must not depend on examples another run saved, nor on machine load (no deadline, no too-slow health check)
PROFILE_PLUGIN = '''\
from hypothesis import HealthCheck, settings

settings.register_profile("verigate-mutation", database=None, derandomize=True, deadline=None,
                          suppress_health_check=list(HealthCheck), print_blob=False)
settings.load_profile("verigate-mutation")
'''
CANARY = "\nraise RuntimeError('verigate mutation canary: the mutated copy is the module under test')\n"

# --------------------------------------------------------------------------------------------- the mutator

_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
#: a short literal code (``"accept"``, ``"close_requested"``, ``"cli-tty"``): prose and format strings are not
#: decisions, and mutating them only tests message wording
_CODE = re.compile(r"[A-Za-z_][\w:.\-/]*\Z")
_MAX_CODE = 40


@dataclass(frozen=True)
class Mutant:
    target: str
    index: int
    line: int
    operator: str
    before: str
    after: str
    #: the whole mutated module
    source: str = field(repr=False)

    def describe(self) -> str:
        return f"#{self.index} line {self.line} [{self.operator}] {self.before}  ->  {self.after}"


@dataclass(frozen=True)
class _Edit:
    start: tuple[int, int]  # (line, UTF-8 byte column), as the ast reports positions
    end: tuple[int, int]
    text: str
    operator: str
    before: str
    after: str
    #: the line reported (the ``if`` line of a guard; else where the edit starts)
    line: int = 0


def _short(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _expr_edit(node: ast.expr, new: ast.expr, operator: str) -> _Edit:
    # parenthesised, so the replacement binds exactly as the original node did in any context
    after = ast.unparse(new)
    return _Edit((node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0),
                 f"({after})", operator, ast.unparse(node), after)


class _Collector(ast.NodeVisitor):
    """Walks one module and records one edit per mutation site, in source order."""

    def __init__(self) -> None:
        self.edits: list[_Edit] = []
        self._returns_bool: list[bool] = [False]
        self._skip: set[int] = set()  # ids of constants that are not decisions (docstrings, __all__, keys)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._returns_bool.append(isinstance(node.returns, ast.Name) and node.returns.id == "bool")
        self._docstring(node.body)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        for statement in node.body:
            self.visit(statement)
        self._returns_bool.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _docstring(self, body: Sequence[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self._skip.add(id(body[0].value))

    def visit_Module(self, node: ast.Module) -> None:
        self._docstring(node.body)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._docstring(node.body)
        for statement in node.body:  # decorators and bases are declarations, not behaviour
            self.visit(statement)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets):
            return
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:  # the annotation is a type, not behaviour
            self.visit(node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # f-string positions are unreliable before 3.12, and their text is a message, not a decision

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            self._skip.add(id(node.slice))  # record["task_id"] -> record[""] only proves a KeyError
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for position, op in enumerate(node.ops):
            swapped = _SWAPS.get(type(op))
            if swapped is not None:
                ops = list(node.ops)
                ops[position] = swapped()
                new = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                self.edits.append(_expr_edit(node, new, "compare"))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        new = ast.BoolOp(op=ast.Or() if isinstance(node.op, ast.And) else ast.And(), values=node.values)
        self.edits.append(_expr_edit(node, new, "and-or"))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self.edits.append(_expr_edit(node, node.operand, "drop-not"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in ("any", "all"):
            other = "all" if node.func.id == "any" else "any"
            self.edits.append(_expr_edit(node.func, ast.Name(id=other, ctx=ast.Load()), "any-all"))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self._skip:
            return
        value = node.value
        if isinstance(value, bool):
            self.edits.append(_expr_edit(node, ast.Constant(not value), "bool-const"))
        elif isinstance(value, int):
            self.edits.append(_expr_edit(node, ast.Constant(0 if value == 1 else value + 1), "int-const"))
        elif isinstance(value, str) and value and len(value) <= _MAX_CODE and _CODE.match(value):
            self.edits.append(_expr_edit(node, ast.Constant(""), "str-const"))

    def visit_Return(self, node: ast.Return) -> None:
        if self._returns_bool[-1] and node.value is not None:
            self.edits.append(_Edit((node.lineno, node.col_offset), (node.end_lineno or node.lineno,
                                    node.end_col_offset or 0), "return None", "return-none",
                                    _short(f"return {ast.unparse(node.value)}"), "return None"))
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        body = node.body
        if isinstance(body[-1], ast.Raise | ast.Return | ast.Continue):
            last = body[-1]
            self.edits.append(_Edit((body[0].lineno, body[0].col_offset),
                                    (last.end_lineno or last.lineno, last.end_col_offset or 0), "pass",
                                    "drop-guard", _short(f"if {ast.unparse(node.test)}: {ast.unparse(last)}"),
                                    f"if {_short(ast.unparse(node.test), 60)}: pass", node.lineno))
        self.generic_visit(node)


def _apply(source: str, edit: _Edit) -> str:
    """Splice one edit into the source; ast columns count UTF-8 bytes, so the splice works on bytes."""
    lines = source.encode("utf-8").splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    data = source.encode("utf-8")
    begin = starts[edit.start[0] - 1] + edit.start[1]
    end = starts[edit.end[0] - 1] + edit.end[1]
    return (data[:begin] + edit.text.encode("utf-8") + data[end:]).decode("utf-8")


def mutants_of(target: str, source: str) -> list[Mutant]:
    """Every mutant of one module, in source order. A mutant must compile and change the module's AST: an edit
    that parses back to the original (``x + 0``-style no-ops) is no mutant at all."""
    tree = ast.parse(source)
    original = ast.dump(tree)
    collector = _Collector()
    collector.visit(tree)
    found: list[Mutant] = []
    seen: set[str] = set()
    for edit in sorted(collector.edits, key=lambda e: (e.start, e.end, e.operator, e.after)):
        mutated = _apply(source, edit)
        try:
            dumped = ast.dump(ast.parse(mutated))
            compile(mutated, f"<mutant of {target}>", "exec")
        except SyntaxError as exc:  # a mutator bug, not a mutant: say so loudly
            raise RuntimeError(f"{target}: line {edit.start[0]}: {edit.operator} made invalid code: {exc}") from exc
        if dumped == original or dumped in seen:
            continue
        seen.add(dumped)
        found.append(Mutant(target, len(found), edit.line or edit.start[0], edit.operator, _short(edit.before),
                            _short(edit.after), mutated))
    return found


def choose(mutants: Sequence[Mutant], sample: int | None, seed: int, target: str,
           only: Sequence[int] = ()) -> list[Mutant]:
    """All mutants, the listed ones, or a sample fixed by (seed, target) whatever PYTHONHASHSEED is; in source
    order."""
    if only:
        return [mutant for mutant in mutants if mutant.index in only]
    if sample is None or sample >= len(mutants):
        return list(mutants)
    picked = random.Random(f"{seed}:{target}").sample(range(len(mutants)), sample)
    return [mutants[i] for i in sorted(picked)]


# --------------------------------------------------------------------------------------------- the runner


@dataclass
class Outcome:
    status: str  # killed | survived | timeout
    seconds: float
    returncode: int | None
    #: the failing tests pytest names (else the output's last lines): which test killed the mutant
    tail: str = ""


class Workspace:
    """A private copy of src/ (plus the data folders verigate reads from a checkout) that mutants are written to."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="verigate-mutation-"))
        self.src = self.root / "src"
        # src/ and tests/ are copied at the same moment and pytest runs in the copy: in a checkout others edit,
        # a test file changed mid-run for a newer src/ would otherwise "kill" every later mutant
        for name in ("src", "tests"):
            shutil.copytree(REPO / name, self.root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        # a real file: pytest's rootdir (and its pythonpath = ["tests"]) must be the copy, whatever it resolves
        shutil.copy2(REPO / "pyproject.toml", self.root / "pyproject.toml")
        # the rest is only read (verigate's data_root() takes rules/, prompts/, schemas/ beside src/; the
        # pytest configuration is pyproject.toml's); caches, .git and .venv stay out
        for entry in REPO.iterdir():
            if entry.name not in ("src", "tests", "pyproject.toml") and not entry.name.startswith("."):
                (self.root / entry.name).symlink_to(entry)
        self.plugins = self.root / "runner"
        self.plugins.mkdir()
        (self.plugins / "_mutation_profile.py").write_text(PROFILE_PLUGIN, encoding="utf-8")
        # bytecode goes here, never beside the checkout's files; a mutant's stale .pyc is deleted before each run
        self.pycache = self.root / "pycache"

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.src), str(self.plugins)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["PYTHONPYCACHEPREFIX"] = str(self.pycache)
        env.pop("PYTEST_ADDOPTS", None)  # the verdict depends on this runner's options only
        return env

    def read(self, module: str) -> str:
        return (self.src / module).read_text(encoding="utf-8")

    def write(self, module: str, text: str) -> None:
        path = self.src / module
        path.write_text(text, encoding="utf-8")
        # .pyc validity is (mtime in seconds, size): an equal-size mutant written within a second could reuse it
        mirror = self.pycache / path.parent.relative_to(path.anchor)
        for stale in mirror.glob(f"{path.stem}.*.pyc"):
            stale.unlink()

    def probe(self, module: str) -> tuple[str, str]:
        """verigate.__file__ and the target module's __file__ as a test subprocess imports them."""
        dotted = module.removesuffix(".py").replace("/", ".")
        code = ("import importlib, verigate; print(verigate.__file__); "
                f"print(importlib.import_module({dotted!r}).__file__)")
        done = subprocess.run([sys.executable, "-c", code], env=self.env(), cwd=self.root, capture_output=True,
                              text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"probe failed: {done.stderr.strip()}")
        package, target = done.stdout.split()
        return package, target

    def pytest(self, tests: Sequence[str], timeout: float) -> Outcome:
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "_mutation_profile",
                   "--hypothesis-seed=0", *tests]
        started = time.monotonic()
        # own session: a timeout kills the whole process group (tests start subprocesses of their own)
        process = subprocess.Popen(command, env=self.env(), cwd=self.root, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Outcome("timeout", time.monotonic() - started, None)
        seconds = time.monotonic() - started
        tail = "\n".join(output.strip().splitlines()[-15:])
        # the baseline passed with this very command line, so any failing exit is the mutant's doing: 1 a test
        # failed, 2 a test module could not import it, 4 a conftest could not (pytest calls that a usage error)
        failed = [line.split(" - ")[0] for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]
        return Outcome("survived" if process.returncode == 0 else "killed", seconds, process.returncode,
                       "\n".join(failed) or tail)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_target(workspace: Workspace, target: Target, sample: int | None, seed: int,
               only: Sequence[int] = ()) -> dict[str, object]:
    started = time.monotonic()
    original = workspace.read(target.module)
    mutants = mutants_of(target.name, original)
    chosen = choose(mutants, sample, seed, target.name, only)
    tests = [test for test in target.tests if (workspace.root / test).is_file()]
    tests += [f"--deselect={test}" for test in target.deselect]
    package, module_file = workspace.probe(target.module)
    if not module_file.startswith(str(workspace.src)):
        raise RuntimeError(f"{target.name}: the subprocess imports {module_file}, not the copy in {workspace.src}")
    _log(f"[{target.name}] verigate imported from {package}; {len(mutants)} mutants, running {len(chosen)}")
    baseline = workspace.pytest(tests, timeout=900)
    if baseline.status != "survived":
        raise RuntimeError(f"{target.name}: the unmutated copy does not pass its tests:\n{baseline.tail}")
    timeout = max(60.0, 3 * baseline.seconds)
    _log(f"[{target.name}] baseline passed in {baseline.seconds:.1f}s; per-mutant timeout {timeout:.0f}s")
    try:
        workspace.write(target.module, original + CANARY)
        canary = workspace.pytest(tests, timeout=timeout)
        if canary.status != "killed":
            raise RuntimeError(f"{target.name}: the canary mutant was not killed ({canary.status}): the tests do "
                               "not import the mutated copy")
        results = []
        for mutant in chosen:
            workspace.write(target.module, mutant.source)
            outcome = workspace.pytest(tests, timeout=timeout)
            _log(f"[{target.name}] {outcome.status:8} {outcome.seconds:5.1f}s  {mutant.describe()}")
            if outcome.status == "killed":
                _log(f"[{target.name}]          by {outcome.tail.splitlines()[0] if outcome.tail else '?'}")
            results.append((mutant, outcome))
    finally:
        workspace.write(target.module, original)
    counts = {status: sum(1 for _, o in results if o.status == status) for status in ("killed", "timeout", "survived")}
    exits: dict[str, int] = {}
    for _, outcome in results:
        exits[str(outcome.returncode)] = exits.get(str(outcome.returncode), 0) + 1
    caught = counts["killed"] + counts["timeout"]
    return {
        "target": target.name,
        "module": f"src/{target.module}",
        "tests": tests,
        "mutants": len(mutants),
        "run": len(results),
        **counts,
        "rate": round(100 * caught / len(results), 1) if results else 100.0,
        "exit_codes": exits,
        "canary": canary.status,
        "baseline_seconds": round(baseline.seconds, 1),
        "seconds": round(time.monotonic() - started, 1),
        "survivors": [{"file": f"src/{target.module}", **{k: v for k, v in asdict(m).items() if k != "source"}}
                      for m, o in results if o.status == "survived"],
        "killed_by": {str(m.index): o.tail.splitlines()[0] if o.tail else "" for m, o in results
                      if o.status == "killed"},
        "verigate_file": package,
    }


def _report(report: dict[str, object], targets: Sequence[dict[str, object]]) -> Iterator[str]:
    yield f"mutation testing ({report['mode']}), verigate from {report['verigate_file']}"
    for result in targets:
        yield (f"  {result['target']:7} {result['killed']} killed + {result['timeout']} timeouts / {result['run']} "
               f"({result['rate']} %) of {result['mutants']} mutants in {result['module']}, {result['seconds']}s")
    for result in targets:
        survivors = result["survivors"]
        assert isinstance(survivors, list)
        for item in survivors:
            yield (f"  survived {item['file']}:{item['line']} #{item['index']} [{item['operator']}] "
                   f"{item['before']}  ->  {item['after']}")
    yield f"total {report['seconds']}s"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--sample", type=int, default=8, metavar="N", help="N mutants per target (default 8)")
    mode.add_argument("--all", action="store_true", help="every mutant of every target (long mode)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--target", action="append", choices=[t.name for t in TARGETS],
                        help="only this target (repeatable)")
    parser.add_argument("--mutant", action="append", default=[], metavar="TARGET:INDEX",
                        help="run only this mutant (repeatable; indices as --list prints them)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="targets tested at the same time (default 1; each runs one pytest at a time)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    parser.add_argument("--list", action="store_true", help="list the chosen mutants and run nothing")
    args = parser.parse_args(argv)
    sample = None if args.all else args.sample
    only: dict[str, list[int]] = {}
    for item in args.mutant:
        name, _, index = item.partition(":")
        if name not in {t.name for t in TARGETS} or not index.isdigit():
            parser.error(f"--mutant {item!r}: expected TARGET:INDEX, e.g. policy:12")
        only.setdefault(name, []).append(int(index))
    chosen_names = set(args.target or ()) | set(only)
    targets = [t for t in TARGETS if not chosen_names or t.name in chosen_names]
    if args.list:
        for target in targets:
            chosen = choose(mutants_of(target.name, (REPO / "src" / target.module).read_text(encoding="utf-8")),
                            sample, args.seed, target.name, only.get(target.name, ()))
            for mutant in chosen:
                print(f"{target.name}: {mutant.describe()}")
        return 0
    started = time.monotonic()

    def one(target: Target) -> dict[str, object]:
        workspace = Workspace()  # one copy per target, so targets can run side by side
        try:
            return run_target(workspace, target, sample, args.seed, only.get(target.name, ()))
        finally:
            workspace.close()

    try:
        # threads only wait on pytest subprocesses; --jobs bounds how many run at once
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, targets))
    except RuntimeError as exc:
        _log(f"mutation: {exc}")
        return 2
    report: dict[str, object] = {
        "mode": "all" if sample is None else f"sample {sample}, seed {args.seed}",
        "seconds": round(time.monotonic() - started, 1),
        "verigate_file": results[0]["verigate_file"] if results else "",
        "targets": results,
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print("\n".join(_report(report, results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

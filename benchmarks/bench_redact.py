"""Benchmark: verigate's ``secrets`` pack vs detect-secrets on one generated corpus (MB/s, recall, precision).

Run: ``.venv/bin/python benchmarks/bench_redact.py [--mb 3] [--seed 0] [--quick]``. Prints numbers; asserts nothing.

The corpus is a few MB of files: ordinary source code (the Python standard library, tests excluded), generated
service logs and prose, with true tokens of every secret rule planted on their own lines (generated at run time
by ``tests/redact/secret_corpus.py``). Both tools scan the same files from disk. A finding counts as true when
its line range overlaps a planted token's lines in the same file; a planted token is recalled when a finding
overlaps it. Line granularity is what detect-secrets reports, so both are measured the same way.
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redact.secret_corpus import SECRET_RULES, near_misses, planted
from verigate.redact import RulePackRedactor

PROSE = ("the agent said it finished the task but the verifier found the tests were not run so the gate "
         "asked for a revision with the missing evidence and a short reflection about what to check next "
         "before proposing to stop again while the reviewer waited for the report")
WORDS = PROSE.split()


def _stdlib_sources(limit_bytes: int) -> list[tuple[str, str]]:
    """Real source code: stdlib modules (no test suites, which hold sample keys on purpose)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    chosen: list[tuple[str, str]] = []
    total = 0
    for path in sorted(root.rglob("*.py")):
        if any(part in {"test", "tests", "idle_test", "site-packages"} for part in path.parts):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        chosen.append((path.relative_to(root).as_posix().replace("/", "__"), text))
        total += len(text)
        if total >= limit_bytes:
            break
    return chosen


def _log(rng: random.Random, lines: int) -> str:
    out = []
    for index in range(lines):
        parts = [rng.getrandbits(bits) for bits in (32, 16, 16, 16, 48)]
        request = f"{parts[0]:08x}-{parts[1]:04x}-{parts[2]:04x}-{parts[3]:04x}-{parts[4]:012x}"
        out.append(
            f"2026-11-29T22:{index % 60:02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z INFO "
            f"request_id={request} method=GET path=/api/v1/items/{rng.randrange(10**6)} status=200 "
            f"duration_ms={rng.randrange(1, 900)} commit={rng.getrandbits(160):040x} "
            f"session_token_ttl=3600 user_agent=\"Mozilla/5.0\" ip=10.{rng.randrange(256)}.{rng.randrange(256)}.7"
        )
    return "\n".join(out)


def _prose(rng: random.Random, sentences: int) -> str:
    return " ".join(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(8, 20))).capitalize() + "."
                    for _ in range(sentences))


def build_corpus(folder: Path, megabytes: float, seed: int) -> dict[str, list[tuple[int, int, str, str]]]:
    """Write the corpus; return per file the planted tokens as (first line, last line, rule id, secret)."""
    rng = random.Random(seed)
    budget = int(megabytes * 1_000_000)
    documents = [(f"code__{name}", text) for name, text in _stdlib_sources(budget // 2)]
    while sum(len(text) for _, text in documents) < budget:
        documents.append((f"service-{len(documents)}.log", _log(rng, 200)))
        documents.append((f"notes-{len(documents)}.md", _prose(rng, 150)))
    rule_cycle = [rule for rule in SECRET_RULES for _ in range(4)]
    rng.shuffle(rule_cycle)
    misses = near_misses(seed)
    labels: dict[str, list[tuple[int, int, str, str]]] = {}
    for index, (name, text) in enumerate(documents):
        lines = text.split("\n")
        planted_here: list[tuple[int, int, str, str]] = []
        if index % 3 == 0 and rule_cycle:
            token = planted(rule_cycle.pop(), rng)
            position = rng.randrange(len(lines) + 1)
            near_miss = rng.choice(misses).split("\n")
            lines[position:position] = near_miss + token.text.split("\n")
            first = position + len(near_miss) + 1 + token.text[: token.text.index(token.secret)].count("\n")
            planted_here.append((first, first + token.secret.count("\n"), token.rule_id, token.secret))
        suffix = ".py" if name.startswith("code__") and not name.endswith(".py") else ""
        path = folder / f"{name}{suffix}"
        path.write_text("\n".join(lines), encoding="utf-8")
        labels[path.name] = planted_here
    leftover = [planted(rule, rng) for rule in rule_cycle]
    extra = folder / "leftover.env"
    extra.write_text("\n".join(token.text for token in leftover), encoding="utf-8")
    labels[extra.name] = []
    line = 1
    for token in leftover:
        first = line + token.text[: token.text.index(token.secret)].count("\n")
        labels[extra.name].append((first, first + token.secret.count("\n"), token.rule_id, token.secret))
        line += token.text.count("\n") + 1
    return labels


def _score(findings: dict[str, list[tuple[int, int]]],
           labels: dict[str, list[tuple[int, int, str, str]]]) -> tuple[int, int, int, int, Counter[str]]:
    """(planted, recalled, findings, true findings, missed rules)."""
    planted_total = sum(len(items) for items in labels.values())
    recalled = true = total = 0
    missed: Counter[str] = Counter()
    for name, items in labels.items():
        spans = findings.get(name, [])
        total += len(spans)
        true += sum(any(first <= end and start <= last for first, last, _, _ in items) for start, end in spans)
        for first, last, rule_id, _ in items:
            if any(first <= end and start <= last for start, end in spans):
                recalled += 1
            else:
                missed[rule_id] += 1
    return planted_total, recalled, total, true, missed


def per_rule(results: dict[str, list[tuple[int, int, str]]],
             labels: dict[str, list[tuple[int, int, str, str]]]) -> list[tuple[str, int, int, int, int]]:
    """verigate per rule: (rule, planted, recalled by that rule, findings, findings on a planted token)."""
    rows = []
    for rule_id in SECRET_RULES:
        planted_total = recalled = total = true = 0
        for name, items in labels.items():
            spans = [(start, end) for start, end, found_rule in results.get(name, []) if found_rule == rule_id]
            total += len(spans)
            true += sum(any(first <= end and start <= last for first, last, _, _ in items) for start, end in spans)
            for first, last, planted_rule, _ in items:
                if planted_rule == rule_id:
                    planted_total += 1
                    recalled += any(first <= end and start <= last for start, end in spans)
        rows.append((rule_id, planted_total, recalled, total, true))
    return rows


def run_verigate(folder: Path, passes: int = 3) -> tuple[float, dict[str, list[tuple[int, int, str]]]]:
    """The fastest of ``passes`` passes over the corpus (the machine is shared: other processes only add time;
    detect-secrets, ~50× slower, runs once and so averages over the load of its own, longer run)."""
    redactor = RulePackRedactor.from_packs(["secrets"])
    findings: dict[str, list[tuple[int, int, str]]] = {}
    elapsed = float("inf")
    for _ in range(passes):
        started = time.perf_counter()
        results = {}
        for path in sorted(folder.iterdir()):
            text = path.read_text(encoding="utf-8")
            results[path.name] = (text, redactor.redact(text))
        elapsed = min(elapsed, time.perf_counter() - started)
    for name, (text, result) in results.items():
        findings[name] = [(text.count("\n", 0, f.start) + 1, text.count("\n", 0, f.end) + 1, f.rule_id)
                          for f in result.findings if not f.suppressed]
    return elapsed, findings


def run_detect_secrets(folder: Path) -> tuple[float, dict[str, list[tuple[int, int]]]]:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    findings: dict[str, list[tuple[int, int]]] = {}
    with default_settings():
        collection = SecretsCollection(root=str(folder))
        started = time.perf_counter()
        for path in sorted(folder.iterdir()):
            collection.scan_file(str(path))
        elapsed = time.perf_counter() - started
    for filename, secrets in collection.data.items():
        findings[Path(filename).name] = [(secret.line_number, secret.line_number) for secret in secrets]
    return elapsed, findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=3.0, help="corpus size in megabytes (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a smoke run (0.1 MB)")
    args = parser.parse_args()
    if args.quick:
        args.mb = 0.1
    with tempfile.TemporaryDirectory(prefix="verigate-bench-") as tmp:
        folder = Path(tmp)
        labels = build_corpus(folder, args.mb, args.seed)
        size_mb = sum(path.stat().st_size for path in folder.iterdir()) / 1_000_000
        files = len(labels)
        planted_count = sum(len(items) for items in labels.values())
        print(f"corpus: {size_mb:.2f} MB in {files} files, {planted_count} planted tokens "
              f"({len(SECRET_RULES)} rules), seed {args.seed}")
        vg_time, vg_findings = run_verigate(folder)
        ds_time, ds_findings = run_detect_secrets(folder)
        rows = []
        vg_lines = {name: [(start, end) for start, end, _ in spans] for name, spans in vg_findings.items()}
        for name, elapsed, found in (("verigate secrets", vg_time, vg_lines),
                                     ("detect-secrets", ds_time, ds_findings)):
            planted_total, recalled, total, true, missed = _score(found, labels)
            precision = true / total if total else 1.0
            rows.append((name, elapsed, recalled, planted_total, true, total, precision, missed))
        print(f"{'tool':18} {'MB/s':>8} {'recall':>14} {'precision':>18}")
        for name, elapsed, recalled, planted_total, true, total, precision, _ in rows:
            recall = recalled / planted_total
            print(f"{name:18} {size_mb / elapsed:8.2f} {recalled:4d}/{planted_total:<4d} {recall:5.1%}"
                  f" {true:5d}/{total:<5d} {precision:6.1%}")
        print(f"speed-up verigate / detect-secrets: {ds_time / vg_time:.1f}x")
        for name, *_, missed in rows:
            if missed:
                print(f"{name} missed: {dict(sorted(missed.items()))}")
        print(f"\nverigate per rule (a token may also be reported by a second rule: counted as true)\n"
              f"{'rule':28} {'recall':>10} {'precision':>12}")
        for rule_id, planted_total, recalled, total, true in per_rule(vg_findings, labels):
            shown = f"{true}/{total}" if total else "-"
            print(f"{rule_id:28} {recalled:4d}/{planted_total:<5d} {shown:>12}")


if __name__ == "__main__":
    main()

"""RunEvidence benchmark: verify throughput, and compiled fastjsonschema vs jsonschema on the same EV, in one run.

Run: ``python benchmarks/bench_evidence.py [COUNT] [--quick]``. Prints rates; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from verigate import EvidencePartialError
from verigate.evidence import harness_version, produce, verify
from verigate.evidence._schema import load_evidence_schema

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "evidence" / "docs" / "working"
#: why the fullest Phase 1 EV is partial
PHASE_ONE_PARTIAL = ["unavailable:cost_metrics", "unavailable:replan_count"]


def _rate(label: str, count: int, action: Callable[[], object]) -> float:
    started = time.perf_counter()
    for _ in range(count):
        action()
    elapsed = time.perf_counter() - started
    rate = count / elapsed
    print(f"{label:<52} {count:>6} in {elapsed:7.3f} s  = {rate:>10.0f} /s")
    return rate


def fullest_record() -> dict[str, object]:
    """The example task's EV with everything a Phase 1 producer can give (routing_decisions injected, both
    harness values): verify runs every check, and its verdict is partial (replan_count and cost_metrics have no
    source in Phase 1, so no EV verifies as complete)."""
    harness = harness_version()
    text = produce(EXAMPLE / "TASK-0874", now="2100-01-01T00:00:00Z", started_at="2099-12-31T00:00:00Z",
                   repository="plangate", run_id="bench-run", harness_version=harness, harness_version_end=harness,
                   routing_decisions=[], runs_dir=EXAMPLE / "ai-loop-runs")
    record: dict[str, object] = json.loads(text)
    return record


def verify_fullest(ev: Path | dict[str, object], task: Path) -> None:
    """``verify`` of :func:`fullest_record`, which must end partial for the Phase 1 reasons alone."""
    try:
        verify(ev, task)
    except EvidencePartialError as partial:
        if sorted(partial.reasons) != list(PHASE_ONE_PARTIAL):
            raise
    else:
        raise SystemExit("bench_evidence: a Phase 1 EV verified as complete")


def main(count: int = 2000) -> None:
    harness = harness_version()
    record = fullest_record()
    task = EXAMPLE / "TASK-0874"
    with tempfile.TemporaryDirectory() as scratch:
        ev_path = Path(scratch) / "ev.json"
        ev_path.write_text(json.dumps(record), encoding="utf-8")
        verify_fullest(ev_path, task)
        print(f"verigate evidence benchmark (python {sys.version.split()[0]}, {count} iterations each)")
        _rate("produce (read task folder + pure producer)", count // 4,
              lambda: produce(task, now="2100-01-01T00:00:00Z", started_at="2099-12-31T00:00:00Z",
                              repository="plangate", run_id="bench-run", harness_version=harness))
        from_file = _rate("verify EV.json + task folder (every check, exit 11)", count,
                          lambda: verify_fullest(ev_path, task))
        in_memory = _rate("verify parsed EV + task folder", count, lambda: verify_fullest(record, task))
        print(f"  verify throughput: {from_file:.0f} EVs/s from file, {in_memory:.0f} EVs/s in memory")

    import jsonschema  # the peer: imported here, so bench_peers can reuse this module without it

    schema = load_evidence_schema()
    reference = jsonschema.Draft202012Validator(schema.definition)
    fast = _rate("schema: compiled fastjsonschema", count * 10, lambda: schema.validate(record))
    slow = _rate("schema: jsonschema Draft202012Validator (baseline)", count, lambda: reference.validate(record))
    print(f"  compiled fastjsonschema is {fast / slow:.1f}x the jsonschema baseline")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("count", type=int, nargs="?", default=2000, help="verify calls per measurement")
    parser.add_argument("--quick", action="store_true", help="a smoke run (40 calls)")
    args = parser.parse_args()
    main(40 if args.quick else args.count)

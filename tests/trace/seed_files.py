"""The seed's adapter file, byte for byte, so its behaviour is tested without ../shared (a plain clone).

It is the seed skill's ``harness/trace-grader.config.yaml`` (seed 004; the reference grader's folder under
``../shared/reference/seed-trace-grader/`` holds the same bytes, MIT). It is YAML data, not code: the users who come
from the seed carry exactly this file over, so verigate must grade with it as the seed documents.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: the reference grader beside a checkout (absent in a plain clone: the differential tests skip)
REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "seed-trace-grader"
REFERENCE_GRADER = REFERENCE / "trace-grader.py"

SEED_CONFIG_SHA256 = "aac85cb65cb7ac14cff94a29bce2ac127ee622349082ce925c127b03c25c080b"

SEED_CONFIG_TEXT = """# ─────────────────────────────────────────────────────────────────────────────
# trace-grader adapter — THE single quarantine boundary for TraceGrader.
#
# The grader ENGINE (schema, parsers, pass^k, rule algorithms, report) is built
# and tested now and contains NO unknowns. Everything that IS a project-specific
# guess lives ONLY here. Adapting later = edit this one file, not the engine.
#
# Per /build-now-adapt-later: every value below is a best-guess default, flagged
# `# ASSUMPTION`, and the whole file is `verified: false`. Validate the thresholds
# against THIS project's real traces, tune, then flip `verified: true`.
# ─────────────────────────────────────────────────────────────────────────────

verified: true           # VERIFIED 2026-06-28 (user "đồng ý"): deterministic grader (schema, pass^k,
                         # rule algorithms, report) validated by `trace-grader.py --self-test` (3/3 ALL PASS).
                         # Thresholds below are accepted ship defaults — re-tune on real traces if needed.
                         # The agent-as-judge needs verified:true AND judge.enabled:true; judge stays enabled:false.

# Tools an agent must NEVER use on a good path. Using one = high-severity flag →
# a delivered run becomes "corrupt-success".
forbidden_tools:         # ASSUMPTION — illustrative tool ids; replace with THIS
  - force_push           #   project's real destructive/out-of-policy tool names
  - rm_rf                #   (e.g. your actual tool registry: Bash-with-rm, prod
  - prod_write           #   writers, raw-shell, unsandboxed exec, etc.).

# Retry-storm: more than this many CONSECUTIVE failures of the SAME tool = a
# flakiness/thrash signal (medium severity).
retry_threshold: 2       # ASSUMPTION — 2 = "3rd consecutive same-tool failure trips it".
                         #   Tune to your tools' normal retry behaviour.

# Excessive steps: a run longer than this is flagged (low severity) as likely
# wandering / no plan.
step_budget: 25          # ASSUMPTION — depends on task complexity; calibrate from
                         #   the step-count distribution of known-good runs.

# Out-of-order / planning order. must_precede: [[A, B], ...] means every use of B
# must have an earlier A in the same run (medium severity if violated).
order_constraints:
  must_precede:          # ASSUMPTION — encode YOUR project's sane ordering, e.g.
    - [read, edit]       #   never edit a file you haven't read,
    - [read, write]      #   never write before reading,
    - [plan, act]        #   act only after a planning step exists.

# ── QUARANTINED INFERENTIAL AXIS — the agent-as-judge rubric ──────────────────
# This is the deeper unknown: scoring task-completion / tool-rationale / planning
# QUALITY needs an LLM judge. The engine's `judge_trajectory()` is a STUB and is
# NOT called while this is disabled. Configure + verify before trusting any score.
judge:
  enabled: false         # ASSUMPTION — off until a judge is chosen AND verified.
  model: null            # ASSUMPTION — judge model is ABSENT/unverified. Candidate
                         #   (read harness via the claude-api skill before wiring):
                         #   an Anthropic Claude model id, to be confirmed.
  rubric:                # ASSUMPTION — axes the judge WOULD score (not yet scored):
    - task_completion    #   did the trajectory actually accomplish the task?
    - tool_rationale     #   was each tool choice justified by the prior observation?
    - planning           #   coherent plan vs. reactive flailing?
"""


def write_seed_config(folder: Path) -> Path:
    """The seed's file written byte for byte (checked against its SHA-256) into ``folder``."""
    data = SEED_CONFIG_TEXT.encode("utf-8")
    assert hashlib.sha256(data).hexdigest() == SEED_CONFIG_SHA256
    path = folder / "trace-grader.config.yaml"
    path.write_bytes(data)
    return path

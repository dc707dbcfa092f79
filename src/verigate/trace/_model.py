"""The trace grader's one model: runs of steps, flags, verdicts, tasks with pass^k, and the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .._models import Verdict

__all__ = [
    "SEVERITIES",
    "Flag",
    "GradeReport",
    "JudgeAxis",
    "PassHatK",
    "Run",
    "RunResult",
    "RunVerdict",
    "Severity",
    "Step",
    "TaskResult",
    "TaskStatus",
]

Severity = Literal["high", "medium", "low"]
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low")
RunVerdict = Literal["clean-pass", "pass-with-warnings", "corrupt-success", "fail"]
#: reliable: every run delivered · flaky: some did · failing: none did · unknown: no delivery signal (audit only)
TaskStatus = Literal["reliable", "flaky", "failing", "unknown"]


def _mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    # a parser's own fresh dict is taken as is (no copy per step on multi-GB inputs)
    return value if type(value) is dict else dict(value or {})


@attrs.frozen(slots=True)
class Step:
    """One tool call of a run; ``ok`` None means the source cannot say (audit logs, unanswered calls)."""

    step: int
    tool: str
    args: Mapping[str, Any] = attrs.field(factory=dict, converter=_mapping)
    observation: str | None = None
    ok: bool | None = None
    #: 1-based line of the call in its source file (None for traces.json)
    line: int | None = None
    #: working directory of the call's line (transcripts), for path normalisation
    cwd: str | None = None
    #: failed only because a parallel call failed ("Sibling tool call errored"): not an independent failure
    cascade: bool = False


@attrs.frozen
class Run:
    """One agent run: ``delivered`` None when the source has no delivery signal (audit logs)."""

    task: str
    run_id: str
    delivered: bool | None
    steps: tuple[Step, ...]
    source: str
    #: audit-only: no per-step ok/observation, so failure-aware rules (retry_storm) do not run
    partial: bool = False
    #: the source has no task verdict and ``delivered`` was forced true (transcripts)
    delivered_forced: bool = False
    #: sub-agent runs: the run they belong to (kept apart from its rule checks and from pass^k)
    parent: str | None = None
    #: steps in the run; ``steps`` may hold fewer (long runs keep the first ones and every flagged one)
    step_count: int = -1
    warnings: int = 0
    notes: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.step_count < 0:
            object.__setattr__(self, "step_count", len(self.steps))


@attrs.frozen(slots=True)
class Flag:
    """A rule's finding on one step (``step`` None for a finding about the whole run)."""

    rule: str
    severity: Severity
    step: int | None
    tool: str
    detail: str
    line: int | None = None
    #: the file the flagged step names (its file_path / path / notebook_path argument), as written
    path: str | None = None


@attrs.frozen
class RunResult:
    run: Run
    flags: tuple[Flag, ...]
    verdict: RunVerdict
    #: the agent-as-judge verdict of this run (None when the axis is disabled)
    judge: Verdict | None = None

    @property
    def high_flags(self) -> tuple[Flag, ...]:
        return tuple(flag for flag in self.flags if flag.severity == "high")


@attrs.frozen
class TaskResult:
    """pass^k of one task over its n runs with a delivery signal, c of which delivered."""

    task: str
    n: int
    c: int
    status: TaskStatus
    #: pass^k for k = 1..n (unbiased estimator C(c,k)/C(n,k))
    pass_hat_k: tuple[float, ...]
    #: pass@k for k = 1..n (1 - C(n-c,k)/C(n,k))
    pass_at_k: tuple[float, ...]
    run_ids: tuple[str, ...]
    #: runs of this task without a delivery signal (audit-only), left out of n
    partial_runs: int = 0


@attrs.frozen
class PassHatK:
    """The suite's pass^k for one k: the mean over the tasks with at least k runs (others listed as short)."""

    k: int
    value: float
    pass_at_k: float
    tasks_counted: int
    #: tasks with fewer than k runs: reported as such, never given a number
    tasks_short: tuple[str, ...]


@attrs.frozen
class JudgeAxis:
    """The agent-as-judge axis: "disabled" (nothing called, says why) or "judged" (one verdict per run)."""

    status: Literal["disabled", "judged"]
    reason: str
    engine: str = ""


@attrs.frozen
class GradeReport:
    runs: tuple[RunResult, ...]
    tasks: tuple[TaskResult, ...]
    pass_hat_k: tuple[PassHatK, ...]
    judge: JudgeAxis
    config_source: str
    config_verified: bool
    #: the config keys that were left out and took their documented default
    config_defaults: tuple[str, ...] = ()
    warnings: int = 0
    warning_samples: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: every string from the traces has passed the redactors (``redact_report``): what report formats write
    redacted: bool = False

    @property
    def corrupt_runs(self) -> tuple[RunResult, ...]:
        return tuple(result for result in self.runs if result.verdict == "corrupt-success")

    @property
    def flaky_tasks(self) -> tuple[TaskResult, ...]:
        return tuple(task for task in self.tasks if task.status == "flaky")

    @property
    def failing_tasks(self) -> tuple[TaskResult, ...]:
        return tuple(task for task in self.tasks if task.status == "failing")

    @property
    def judge_rejections(self) -> tuple[RunResult, ...]:
        return tuple(result for result in self.runs if result.judge is not None and not result.judge.passed)

    @property
    def exit_code(self) -> int:
        """3 on any corrupt-success run, flaky or failing task, or judge rejection; else 0."""
        signal = self.corrupt_runs or self.flaky_tasks or self.failing_tasks or self.judge_rejections
        return 3 if signal else 0

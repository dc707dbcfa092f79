"""pass^k and pass@k with the unbiased estimators, per task and over a suite."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import comb

from ._model import PassHatK, RunResult, TaskResult, TaskStatus

__all__ = ["pass_at_k", "pass_hat_k", "suite_pass_hat_k", "task_results"]


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that k runs drawn without replacement from n (c of them delivered) all delivered: C(c,k)/C(n,k)."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k runs drawn from n delivered: 1 - C(n-c,k)/C(n,k)."""
    _check(n, c, k)
    return 1 - comb(n - c, k) / comb(n, k)


def _status(n: int, c: int) -> TaskStatus:
    if n == 0:
        return "unknown"
    if c == n:
        return "reliable"
    return "failing" if c == 0 else "flaky"


def task_results(runs: Iterable[RunResult]) -> tuple[TaskResult, ...]:
    """One TaskResult per task over its top-level runs; runs without a delivery signal are counted apart."""
    delivered: dict[str, list[bool]] = {}
    run_ids: dict[str, list[str]] = {}
    partial: dict[str, int] = {}
    for result in runs:
        run = result.run
        if run.parent is not None:
            continue  # a sub-agent is part of its parent's run, not a trial of the task
        run_ids.setdefault(run.task, []).append(run.run_id)
        delivered.setdefault(run.task, [])
        if run.delivered is None:
            partial[run.task] = partial.get(run.task, 0) + 1
        else:
            delivered[run.task].append(run.delivered)
    return tuple(_task(task, outcomes, tuple(run_ids[task]), partial.get(task, 0))
                 for task, outcomes in delivered.items())


def _task(task: str, outcomes: Sequence[bool], run_ids: tuple[str, ...] = (), partial: int = 0) -> TaskResult:
    return task_from_counts(task, len(outcomes), sum(1 for delivered in outcomes if delivered), run_ids, partial)


def task_from_counts(task: str, n: int, c: int, run_ids: tuple[str, ...] = (), partial: int = 0, *,
                     max_k: int | None = None) -> TaskResult:
    """A task's result from its running totals: n runs with a delivery signal, c delivered (the streamed
    folder report keeps only these counts, not the runs), pass^k for k = 1..n or 1..``max_k`` when fewer (C(n, k)
    of a task with thousands of runs has thousands of digits: k up to n would cost seconds and memory per run)."""
    ks = range(1, (n if max_k is None else min(n, max_k)) + 1)
    return TaskResult(task, n, c, _status(n, c), tuple(pass_hat_k(n, c, k) for k in ks),
                      tuple(pass_at_k(n, c, k) for k in ks), run_ids, partial)


def suite_pass_hat_k(tasks: Sequence[TaskResult] | Mapping[str, Sequence[bool]], *,
                     max_k: int | None = None) -> tuple[PassHatK, ...]:
    """pass^k for k = 1..max n (at most ``max_k``): the mean over tasks with at least k runs; tasks with fewer are
    listed, not scored.

    Accepts TaskResults or a mapping task -> delivered outcomes.
    """
    if isinstance(tasks, Mapping):
        tasks = [_task(task, outcomes) for task, outcomes in tasks.items()]
    scored = [task for task in tasks if task.n > 0]
    rows = []
    top = max((task.n for task in scored), default=0)
    for k in range(1, (top if max_k is None else min(top, max_k)) + 1):
        counted = [task for task in scored if task.n >= k]
        short = tuple(task.task for task in scored if task.n < k)
        rows.append(PassHatK(k, sum(task.pass_hat_k[k - 1] for task in counted) / len(counted),
                             sum(task.pass_at_k[k - 1] for task in counted) / len(counted), len(counted), short))
    return tuple(rows)

"""What one judge call cost, as the model client reports it: tokens and, when the API says, money.

A client calls :func:`report_usage` inside ``complete`` (or ``decide``); whoever wants the figures — ``verigate
judge eval`` — collects them with :func:`collecting_usage` around the call. Nothing is collected (and the call
costs nothing extra) outside such a block, and a client that never reports leaves the figures "not reported"
rather than zero."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import attrs

__all__ = ["JudgeUsage", "collecting_usage", "report_usage"]


@attrs.frozen
class JudgeUsage:
    """Tokens of one call and its cost in US dollars; None where the API did not say."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


_SINK: ContextVar[list[JudgeUsage] | None] = ContextVar("verigate_judge_usage", default=None)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def report_usage(*, input_tokens: object = None, output_tokens: object = None, cost_usd: object = None) -> None:
    """Record the usage of the call in progress (values that are not non-negative numbers are dropped: a reply's
    envelope is outside data)."""
    sink = _SINK.get()
    if sink is None:
        return
    cost = cost_usd if isinstance(cost_usd, (int, float)) and not isinstance(cost_usd, bool) else None
    if cost is not None and not (0 <= cost < float("inf")):
        cost = None
    usage = JudgeUsage(_count(input_tokens), _count(output_tokens), None if cost is None else float(cost))
    if usage != JudgeUsage():
        sink.append(usage)


@contextlib.contextmanager
def collecting_usage() -> Iterator[list[JudgeUsage]]:
    """Collect what clients report inside the block (in this task or thread) into the list it yields."""
    sink: list[JudgeUsage] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)

"""What one judge call cost, as the model client reports it: tokens and, when the API says, money.

A client calls :func:`report_usage` inside ``complete`` (or ``decide``); whoever wants the figures collects them
around the call: ``verigate judge eval`` with :func:`collecting_usage`, the telemetry's ``chat`` span
(``verigate.judge._observed``) with :func:`observing_call`, which also takes the model that answered, the
response id and why it stopped. Nothing is collected (and the call costs nothing extra) outside such a block, and a
client that never reports leaves the figures "not reported" rather than zero."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import attrs

from .. import _face

__all__ = ["JudgeUsage", "collecting_usage", "observing_call", "report_usage"]


@attrs.frozen
class JudgeUsage:
    """Tokens of one call and its cost in US dollars; None where the API did not say."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


_SINK: ContextVar[list[JudgeUsage] | None] = ContextVar("verigate_judge_usage", default=None)
#: the span attributes of the observed model call running in this task (None outside one)
_CALL: ContextVar[dict[str, Any] | None] = ContextVar("verigate_observed_chat", default=None)
_MAX_NAME_CHARS = 200


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _cost(value: object) -> float | None:
    """A finite cost >= 0 as a float; None for anything else (an integer past a float's range included)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        cost = float(value)
    except OverflowError:
        return None
    return cost if 0 <= cost < math.inf else None


def report_usage(*, input_tokens: object = None, output_tokens: object = None, cost_usd: object = None,
                 response_model: object = None, response_id: object = None, finish_reason: object = None) -> None:
    """Record what the API reported for the call in progress: token counts, the cost in US dollars, the model that
    answered, the response id, why it stopped. Values of the wrong type are dropped (a reply's envelope is outside
    data); outside a collecting or observing block it does nothing. Never raises."""
    sink, call = _SINK.get(), _CALL.get()
    if sink is None and call is None:
        return
    tokens = {"input_tokens": _count(input_tokens), "output_tokens": _count(output_tokens)}
    if sink is not None:
        usage = JudgeUsage(tokens["input_tokens"], tokens["output_tokens"], _cost(cost_usd))
        if usage != JudgeUsage():
            sink.append(usage)
    if call is not None:
        from .._telemetry import code

        call.update((name, value) for name, value in tokens.items() if value is not None)
        for name, text in (("response_model", response_model), ("response_id", response_id),
                           ("finish_reason", finish_reason)):
            found = code(text) if isinstance(text, str) and len(text) <= _MAX_NAME_CHARS else None
            if found is not None:
                call[name] = found


@contextlib.contextmanager
def collecting_usage() -> Iterator[list[JudgeUsage]]:
    """Collect what clients report inside the block (in this task or thread) into the list it yields."""
    sink: list[JudgeUsage] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


@contextlib.contextmanager
def observing_call() -> Iterator[dict[str, Any]]:
    """Take what the client reports inside the block into the dict it yields (span attributes of one call)."""
    call: dict[str, Any] = {}
    token = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(token)


_face.present_module(globals())  # the names verigate.judge exports report it

"""Helpers for users' own tests: a scripted model client, a scripted judge-engine plug-in (no mocks needed), and
the store conformance suite ``StoreConformance`` for store backends (loaded on first use: it needs pytest)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import attrs

from ._models import Verdict
from .hookspecs import hookimpl
from .judge._base import ChatRequest, JudgeConfig, JudgeRequest, ModelClient

if TYPE_CHECKING:
    from ._conformance import StoreConformance

__all__ = ["Delay", "ScriptExhaustedError", "ScriptedJudge", "ScriptedModelClient", "StepClock", "StoreConformance",
           "verdict_reply"]


def __getattr__(name: str) -> Any:
    # pytest stays an optional import: only a test module that uses the suite loads it
    if name == "StoreConformance":
        from ._conformance import StoreConformance

        StoreConformance.__module__ = __name__
        return StoreConformance
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ScriptExhaustedError(AssertionError):
    """A scripted client or judge was called more often than its script has steps."""


class StepClock:
    """An aware UTC clock that only moves when told to: give it as a store's ``clock`` to drive review expiry and
    cache TTLs in a test (``clock.advance(seconds)``)."""

    def __init__(self, start: datetime = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@attrs.frozen
class Delay:
    """A script step that waits ``seconds`` (to exercise timeouts and deadlines), then plays ``then``."""

    seconds: float
    then: Any = None


def verdict_reply(
    passed: bool,
    rubric_misses: Sequence[str] = (),
    *,
    score: float | None = None,
    observation: str = "",
    lesson: str = "",
    next_check: str = "",
) -> str:
    """A model reply in the ``llm_judge`` verdict JSON (``schemas/judge-verdict.schema.json``)."""
    return json.dumps({
        "passed": passed,
        "score": (1.0 if passed else 0.0) if score is None else score,
        "rubric_misses": list(rubric_misses),
        "reflection": {"observation": observation, "lesson": lesson, "next_check": next_check},
    })


class _Script:
    """Steps played in order, thread-safe (a sync judge function runs in a worker thread)."""

    def __init__(self, steps: Iterable[Any], *, repeat_last: bool) -> None:
        self.steps = list(steps)
        self.repeat_last = repeat_last
        self.calls = 0
        self._lock = threading.Lock()

    def next(self) -> Any:
        with self._lock:
            index = self.calls
            self.calls += 1
        if index < len(self.steps):
            return self.steps[index]
        if self.repeat_last and self.steps:
            return self.steps[-1]
        raise ScriptExhaustedError(f"the script has {len(self.steps)} step(s); call {index + 1} has none")


def _play_sync(step: Any) -> Any:
    if isinstance(step, Delay):
        threading.Event().wait(step.seconds)
        return _play_sync(step.then)
    if isinstance(step, BaseException):
        raise step
    return step


async def _play_async(step: Any) -> Any:
    if isinstance(step, Delay):
        await asyncio.sleep(step.seconds)
        return await _play_async(step.then)
    if isinstance(step, BaseException):
        raise step
    return step


class ScriptedModelClient:
    """A model "call" that returns scripted replies (strings) or raises scripted exceptions, one per call.

    Use it as the runtime's own model call: ``Gate.from_config({"judge": {"client": "callable"}},
    judge_function=client)`` — it is ``fn(ChatRequest) -> str`` — or directly as a ModelClient
    (``await client.complete(request, timeout_s=...)``). Every request is kept in ``requests``.
    """

    def __init__(self, replies: Iterable[Any], *, repeat_last: bool = False) -> None:
        self._script = _Script(replies, repeat_last=repeat_last)
        self.requests: list[ChatRequest] = []

    @property
    def calls(self) -> int:
        return self._script.calls

    def __call__(self, request: ChatRequest) -> Any:
        self.requests.append(request)
        return _play_sync(self._script.next())

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> Any:
        self.requests.append(request)
        return await _play_async(self._script.next())


class _ScriptedEngine:
    def __init__(self, owner: ScriptedJudge, config: JudgeConfig) -> None:
        self.name = owner.engine_name
        self.owner = owner
        self.config = config

    async def judge(self, request: JudgeRequest, *, timeout_s: float) -> Any:
        self.owner.requests.append(request)
        self.owner.timeouts.append(timeout_s)
        return await _play_async(self.owner.script.next())


class ScriptedJudge:
    """A judge-engine plug-in playing a script: Verdicts, exceptions (e.g. ``JudgeError("judge_timeout")``),
    :class:`Delay` steps, or any other object (to exercise ``invalid_judge_response``).

    Pass it to ``Gate.from_config({"judge": {"engine": "scripted"}}, plugins=[judge])``. The requests the gate
    sent (already redacted) are kept in ``requests``, the timeouts it granted in ``timeouts``.
    """

    def __init__(self, steps: Iterable[Verdict | BaseException | Delay | Any], *, name: str = "scripted",
                 repeat_last: bool = False) -> None:
        self.engine_name = name
        self.__name__ = f"verigate-testing-{name}"
        self.script = _Script(steps, repeat_last=repeat_last)
        self.requests: list[JudgeRequest] = []
        self.timeouts: list[float] = []

    @property
    def calls(self) -> int:
        return self.script.calls

    @hookimpl
    def verigate_judge_engines(self) -> Mapping[str, Any]:
        def factory(config: JudgeConfig, client: ModelClient | None = None) -> _ScriptedEngine:
            return _ScriptedEngine(self, config)

        return {self.engine_name: factory}

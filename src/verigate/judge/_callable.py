"""The ``callable`` model client: a runtime passes its own model call as ``fn(ChatRequest) -> str | Mapping``."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from .. import _face
from .._errors import ConfigError, JudgeError
from ._base import ChatRequest, JudgeConfig
from ._clients import bounded_timeout, describe, in_daemon_thread

__all__ = ["CallableClient"]


class CallableClient:
    """Calls ``config.function`` (sync or async) once per judgment.

    A sync function runs in a worker thread so that a slow one cannot hold the gate past its deadline.
    A JudgeError from the function keeps its reason; any other exception is ``judge_transport_error``;
    a reply that is neither a string (one JSON object) nor a mapping (the structured verdict object) is
    ``invalid_judge_response``.
    """

    def __init__(self, config: JudgeConfig) -> None:
        if config.function is None or not callable(config.function):
            raise ConfigError("client 'callable' needs a function: JudgeConfig(function=...)", field="judge.function")
        self.function: Callable[..., Any] = config.function
        name = getattr(self.function, "__qualname__", None) or type(self.function).__name__
        self.label = f"callable:{config.model or name}"
        # decided once: the function is fixed, and inspect's check costs ~1 µs a judgment
        self._is_async = inspect.iscoroutinefunction(self.function)

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str | Mapping[str, Any]:
        timeout_s = bounded_timeout(timeout_s)
        try:
            async with asyncio.timeout(timeout_s):
                if self._is_async:
                    reply = await self.function(request)
                else:
                    # in a copy of this task's context, as asyncio.to_thread runs a function: report_usage from
                    # inside the function reaches the observed call
                    reply = await in_daemon_thread(contextvars.copy_context().run, self.function, request)
                    if inspect.isawaitable(reply):  # a sync wrapper that returns a coroutine
                        reply = await reply
        except JudgeError:
            raise
        except TimeoutError as exc:
            raise JudgeError("judge_timeout", f"the judge function did not answer within {timeout_s:g} s") from exc
        except Exception as exc:
            raise JudgeError("judge_transport_error", f"the judge function raised {describe(exc)}") from exc
        if not isinstance(reply, (str, Mapping)):
            raise JudgeError("invalid_judge_response",
                             f"the judge function returned {type(reply).__name__}, not str or a mapping")
        return reply


_face.present_module(globals())  # the names verigate.judge exports report it

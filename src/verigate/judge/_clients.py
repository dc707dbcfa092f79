"""Helpers shared by model-client plug-ins: options, API keys, loopback detection, capped reads, HTTP errors."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from .. import _json as strict_json
from .._errors import ConfigError, JudgeError
from ._base import MAX_JUDGE_TIMEOUT_S, JudgeConfig

if TYPE_CHECKING:
    import ssl

__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "api_key_from_env",
    "bounded_timeout",
    "describe",
    "http_status_error",
    "in_daemon_thread",
    "is_loopback_url",
    "mapped_sdk_errors",
    "option",
    "read_capped",
    "reply_json",
    "require_model",
    "tls_context",
]

#: the most a model client accepts from a server before it gives up (``options.max_reply_bytes`` changes it)
DEFAULT_MAX_REPLY_BYTES = 1_000_000
_T = TypeVar("_T")


def option(config: JudgeConfig, name: str, kind: type[_T], default: _T) -> _T:
    """``config.options[name]`` checked against ``kind``; a wrong type is a ConfigError naming the field."""
    value = config.options.get(name, default)
    # bool is an int subclass: an int option given ``true`` is a mistake, not 1
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ConfigError(
            f"must be {kind.__name__}, got {type(value).__name__}", field=f"judge.options.{name}"
        )
    return value


def api_key_from_env(config: JudgeConfig, default_env: str) -> str | None:
    """The key in the environment variable ``config.api_key_env`` (or ``default_env``); None when unset or empty.

    Keys are only ever read from the environment, never from configuration files, and never logged.
    """
    return os.environ.get(config.api_key_env or default_env) or None


def is_loopback_url(url: str | None) -> bool:
    """True when ``url`` points at this machine (localhost, 127.0.0.0/8, ::1)."""
    if not url:
        return False
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bounded_timeout(timeout_s: float) -> float:
    """The timeout a client may use: never above verigate's 120 s cap; ≤ 0 means the time budget is gone."""
    if timeout_s <= 0:
        raise JudgeError("verification_time_budget_exhausted", "no time is left for the judge")
    return min(timeout_s, MAX_JUDGE_TIMEOUT_S)


def http_status_error(status: int, detail: str = "") -> JudgeError:
    """``judge_http_<status>``: every HTTP error status, 429 and 5xx included (never retried past the deadline)."""
    suffix = f": {detail}" if detail else ""
    return JudgeError(f"judge_http_{status}", f"the judge server answered HTTP {status}{suffix}")


async def read_capped(chunks: AsyncIterator[bytes], limit: int, *, reason: str = "invalid_judge_response") -> bytes:
    """Read an async byte stream, refusing (JudgeError ``reason``) once it passes ``limit`` bytes."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise JudgeError(reason, f"the reply is larger than {limit} bytes")
    return bytes(body)


def reply_json(body: bytes | str, *, reason: str = "invalid_judge_response", what: str = "the reply") -> Any:
    """A server's reply body read with verigate's strict JSON reader: a repeated key (an envelope whose
    ``content`` says FAIL and then PASS), NaN, a lone surrogate or deep nesting is JudgeError ``reason``."""
    try:
        return strict_json.loads(body, max_chars=DEFAULT_MAX_REPLY_BYTES * 4)
    except strict_json.StrictJSONError as exc:
        raise JudgeError(reason, f"{what} is not strict JSON: {exc.message}") from None


def require_model(config: JudgeConfig, client: str) -> str:
    """``config.model``, which every hosted client needs."""
    if not config.model:
        raise ConfigError(f"client {client!r} needs a model name", field="judge.model")
    return config.model


@contextlib.contextmanager
def mapped_sdk_errors(
    timeout_s: float,
    *,
    timeout: type[Exception],
    status: type[Exception],
    connection: type[Exception],
    base: type[Exception],
) -> Iterator[None]:
    """Map the exception families of a Stainless-generated SDK (``openai``, ``anthropic``) onto reason codes:
    timeout → ``judge_timeout``, HTTP status → ``judge_http_<status>``, connection or any other SDK error →
    ``judge_transport_error``. The timeout class is tested first: in these SDKs it subclasses the connection one."""
    try:
        yield
    except (TimeoutError, timeout) as exc:
        raise JudgeError("judge_timeout", f"no reply within {timeout_s:g} s") from exc
    except status as exc:
        raise http_status_error(int(getattr(exc, "status_code", 0))) from exc
    except connection as exc:
        raise JudgeError("judge_transport_error", f"cannot reach the judge: {describe(exc)}") from exc
    except base as exc:
        raise JudgeError("judge_transport_error", describe(exc)) from exc


def describe(value: Any) -> str:
    """A short, key-free description of an exception for a JudgeError message."""
    text = str(value).splitlines()[0] if str(value) else ""
    return f"{type(value).__name__}: {text[:200]}" if text else type(value).__name__


class _DaemonWorkers:
    """Reusable daemon threads for blocking calls: an idle worker takes the job, else a new one starts.

    Daemon threads are never joined — not by ``asyncio.run`` (unlike ``asyncio.to_thread``'s executor) and not
    at interpreter exit (unlike ``concurrent.futures``) — so a call abandoned at the judge deadline cannot hold
    the gate, or a hook process, past it. Starting a thread per call would cost more than the judgment around it.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)
        if not self._idle.acquire(blocking=False):
            threading.Thread(target=self._work, name="verigate-judge-call", daemon=True).start()

    def _work(self) -> None:
        while True:
            self._jobs.get()()
            self._idle.release()


_WORKERS = _DaemonWorkers()


async def in_daemon_thread(function: Callable[..., _T], *args: Any) -> _T:
    """Run blocking ``function(*args)`` on a daemon worker thread and await its result (see _DaemonWorkers)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled at the deadline
            return
        if error is not None:
            # a future must not carry a non-Exception (a GeneratorExit set on it escapes the awaiting coroutines'
            # handlers): it travels wrapped and is raised again from this coroutine's own frame below
            future.set_exception(error if isinstance(error, Exception) else _Carried(error))
        else:
            future.set_result(result)

    def run() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (function(*args), None)
        except BaseException as exc:  # handed to the awaiting task, which decides
            outcome = (None, exc)
        # a closed loop (RuntimeError) means nobody waits for this answer any more
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, *outcome)

    _WORKERS.submit(run)
    try:
        return await future
    except _Carried as carried:
        raise carried.original from None


class _Carried(Exception):
    """A BaseException (SystemExit, GeneratorExit, KeyboardInterrupt …) raised by a function in a worker thread,
    carried across the future as an ordinary exception."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)
        self.original = original


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building one loads the CA store, which costs ~50-100 ms each time.

    Built at the first HTTPS call, never for a plain-HTTP server (a model on this machine or the local network),
    so ``ssl`` is imported here too."""
    import ssl

    return ssl.create_default_context()

"""Ray tasks behind the :class:`concurrent.futures.Executor` interface, so that :func:`grade_many` and
:func:`grade_each` run on a Ray cluster.

Ray has no ``concurrent.futures`` executor of its own (its ``ray.util.multiprocessing.Pool`` is a
``multiprocessing`` look-alike); an ``ObjectRef`` does give a :class:`concurrent.futures.Future`
(``ObjectRef.future()``), and this adapter is that plus the executor's life cycle. ``ray`` is imported when an
executor is made, never by importing verigate: it is the optional extra ``ray`` of verigate-agents.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["RayExecutor"]

_T = TypeVar("_T")


class RayExecutor(concurrent.futures.Executor):
    """Each :meth:`submit` is one Ray task (run with ``options``, e.g. ``{"num_cpus": 1}``).

    Uses the Ray instance this process is connected to; when there is none, ``ray.init(**init)`` starts or joins
    one (``init`` e.g. ``{"address": "auto"}`` or ``{"num_cpus": 2}``) and :meth:`shutdown` ends it again.
    ``shutdown(cancel_futures=True)`` cancels the tasks not yet finished (``ray.cancel``). The function and its
    arguments travel by Ray's pickling, so plug-ins must be importable module names on the workers.
    """

    def __init__(self, *, options: Mapping[str, Any] | None = None, init: Mapping[str, Any] | None = None) -> None:
        try:
            import ray
        except ImportError as exc:  # the optional extra is missing: say which one
            raise ImportError("RayExecutor needs Ray: pip install 'verigate-agents[ray]'") from exc
        self._ray = ray
        self._options = dict(options or {})
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(**dict(init or {}))
        # one remote function that calls what it is given: ray.remote takes only Python functions and classes,
        # an Executor any callable (a builtin, a bound method, a functools.partial)
        self._call = ray.remote(_call)
        if self._options:
            self._call = self._call.options(**self._options)
        self._refs: dict[concurrent.futures.Future[Any], Any] = {}
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T]:
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            ref = self._call.remote(fn, *args, **kwargs)
            future: concurrent.futures.Future[_T] = ref.future()
            self._refs[future] = ref
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._refs.pop(future, None)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            running = list(self._refs.items())
        if cancel_futures:
            for future, ref in running:
                self._ray.cancel(ref)
                future.cancel()
        if wait:
            concurrent.futures.wait([future for future, _ in running])
        if self._owns_ray and self._ray.is_initialized():
            self._owns_ray = False
            self._ray.shutdown()


def _call(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    return fn(*args, **kwargs)

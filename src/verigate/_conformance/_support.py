"""What every part of the store conformance suite shares: the fixtures built on the subclass's, a clock, helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..store import Clock, Store, open_store
from ..testing import StepClock

__all__ = ["Fixtures", "StepClock", "StoreFactory", "hold", "state_of"]

#: what the subclass's ``store_factory`` fixture returns: opens a FRESH EMPTY store on each call
StoreFactory = Callable[..., Store]
#: how long a write may wait for another process's: generous, since 2 cores may be shared by many workers
LOCK_TIMEOUT_S = 60.0


def hold(store: Store, session_id: str = "s", text: str = "The fix is in parser.py.") -> str:
    """File a pending review as the gate does when a judge is unavailable."""
    return store.create_pending_review(session_id, policy_action="escalate_verification_error",
                                       reason="judge_unavailable", pending_text=text,
                                       candidate={"text": text, "attempt": 0},
                                       verdict={"passed": False, "reason": "judge_unavailable"})


def state_of(store: Store, session_id: str = "s") -> str:
    session = store.get_session(session_id)
    assert session is not None, f"session {session_id!r} is missing"
    return session.state


class Fixtures:
    """The suite's own fixtures, built on the two a subclass provides: ``store_factory`` and ``store_url``."""

    @pytest.fixture
    def clock(self) -> StepClock:
        return StepClock()

    @pytest.fixture
    def store(self, store_factory: StoreFactory, clock: StepClock) -> Iterator[Store]:
        opened = store_factory(clock)
        try:
            yield opened
        finally:
            opened.close()

    @staticmethod
    def open_url(url: str, *, clock: Clock | None = None, **kwargs: Any) -> Store:
        """The store at ``url`` as every other process opens it: through ``open_store`` (and the backend hook)."""
        return open_store(url, lock_timeout_s=LOCK_TIMEOUT_S, clock=clock, **kwargs)

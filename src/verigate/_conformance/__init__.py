"""The store conformance suite: one pytest class any ``verigate.store.Store`` backend runs (``verigate.testing``).

Imported only when ``verigate.testing.StoreConformance`` is used, since it needs pytest (and, for two of its
tests, hypothesis: they skip without it).
"""

from __future__ import annotations

from ._ledger import LedgerContract
from ._processes import ProcessesContract
from ._reviews import ReviewsContract
from ._sessions import SessionsContract
from ._support import StepClock

__all__ = ["StepClock", "StoreConformance"]


class StoreConformance(SessionsContract, ReviewsContract, LedgerContract, ProcessesContract):
    """Every promise of the :class:`~verigate.store.Store` protocol, as tests: subclass it in a test module.

    The subclass provides two pytest fixtures:

    * ``store_factory`` — a callable ``(clock: Clock | None = None) -> Store`` opening a FRESH, EMPTY store on
      every call (``clock`` is the store's clock; the suite injects a fake one to drive review expiry);
    * ``store_url`` — a URL of a fresh, empty store that other processes open with
      ``verigate.store.open_store(url)`` (its scheme served by the backend's ``verigate_store_backends``
      plug-in, installed where the tests run); ``pytest.skip`` in it skips the multi-process tests.

    It covers sessions and the revise counter, attempts, checkpoints, timeline rows, pending reviews (list, show,
    approve, reject, expiry; idempotent; a model-checked lifecycle), the hash-chained ledger as documented,
    driver errors mapped to :class:`~verigate.StoreError`, ``migrate``, ``wait_for_reviews``, and several
    processes at once: raw writes, real Gates finalizing, one session from several workers (the revise budget
    holds), racing approvals (one decision wins, the others see it) — nothing lost, the ledger verifying.
    ``VERIGATE_STORE_STRESS=N`` scales the multi-process tests up.
    """

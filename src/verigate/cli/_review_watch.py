"""``verigate review watch``: print pending reviews as they arrive (PostgreSQL: LISTEN/NOTIFY; SQLite: polling).

Only the review's id, session, policy action, reason and creation time are printed — never the held answer or the
candidate — and the reason was redacted by the gate before it was stored. Ctrl-C ends the watch with exit 0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import PendingReview, Store

__all__ = ["main"]

#: the longest single wait: a watch with --timeout re-checks its deadline at least this often
_WAIT_CHUNK_S = 5.0
#: how often a waiting watch looks whether Ctrl-C asked it to end
_STOP_CHECK_S = 0.2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verigate review watch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", metavar="URL",
                        help="store file or URL (sqlite:///…, postgresql://… from a plug-in; default: store.url of "
                             "./verigate.yaml, else .verigate/verigate.db)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--timeout", type=float, metavar="S", default=None,
                        help="stop after S seconds (default: run until Ctrl-C)")
    parser.add_argument("--once", action="store_true",
                        help="print the reviews pending now, or wait for the first to arrive, then stop")
    return parser


def _escaped_controls(text: str) -> str:
    """JSON text with every control and format character as a ``\\u`` escape (four hex digits): json.dumps leaves
    DEL, the C1 controls (U+009B is a CSI to some terminals) and bidi overrides raw. Outside strings JSON has none
    of them, so the result reads back to the same value."""
    import unicodedata

    # json.dumps of one character with ensure_ascii: its \\u escape (a surrogate pair past the BMP)
    return "".join(json.dumps(char)[1:-1] if ord(char) > 0x7e and unicodedata.category(char) in ("Cc", "Cf")
                   else char for char in text)


def _line(review: PendingReview, as_json: bool) -> str:
    from ._review import _printable

    fields = {"review_id": review.review_id, "session_id": review.session_id, "policy_action": review.policy_action,
              "reason": review.reason, "created_at": review.created_at}
    if as_json:
        return _escaped_controls(json.dumps(fields, ensure_ascii=False))
    return "  ".join(_printable(value) for value in (review.created_at, review.review_id, review.session_id,
                                                       review.policy_action, review.reason))


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout >= 0):
        _parser().error(f"--timeout must be a finite number >= 0, got {args.timeout}")
    from .._config import load_config
    from ._review import open_cli_store

    expiry = load_config().store.review_expiry_s
    store = open_cli_store(args.store, expire=True)
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C sets a flag the loop reads between store calls: a KeyboardInterrupt raised at any bytecode could
        # land between a lock's acquire and its ``with`` block inside the store, and close() would then wait on
        # that lock forever (a watch that ignores Ctrl-C)
        signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    try:
        _watch(store, args, expiry, stop)
        sys.stdout.flush()
    except KeyboardInterrupt:  # Ctrl-C is how a watch ends
        return 0
    except BrokenPipeError:  # the reader (``| head``) went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        store.close()
    return 0


def _watch(store: Store, args: argparse.Namespace, expiry: float | None, stop: threading.Event) -> None:
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    printed: set[str] = set()
    while not stop.is_set():
        if expiry is not None:  # a watch never announces a review that may no longer be approved
            store.expire_reviews(expiry)
        pending = store.list_reviews("pending")
        fresh = [review for review in pending if review.review_id not in printed]
        for review in fresh:
            print(_line(review, args.json), flush=True)
        # only ids still pending are remembered: a resolved review never comes back, so memory stays bounded
        printed = {review.review_id for review in pending}
        if args.once and fresh:
            return
        remaining = _WAIT_CHUNK_S if deadline is None else deadline - time.monotonic()
        if remaining <= 0:
            return
        _wait(store, min(remaining, _WAIT_CHUNK_S), stop)


def _wait(store: Store, seconds: float, stop: threading.Event) -> None:
    """Wait up to ``seconds`` for a new review, in steps short enough to end soon after Ctrl-C; a step that
    returns early (the store saw a change) ends the wait."""
    until = time.monotonic() + seconds
    while not stop.is_set() and (left := until - time.monotonic()) > 0:
        step = min(left, _STOP_CHECK_S)
        started = time.monotonic()
        store.wait_for_reviews(step)
        if time.monotonic() - started < step:
            return

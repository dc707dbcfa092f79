"""``verigate review``: list, show, approve (releases the held answer), reject and watch pending reviews."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store import PendingReview, Store

__all__ = ["main", "open_cli_store"]

_STATUSES = ("pending", "approved", "rejected", "expired", "all")
#: ``review list --exit-code`` when something is listed: a result for CI, like ``verigate grade``'s 3
LISTED_EXIT = 3
_TEXT_WIDTH = 60


def open_cli_store(store_arg: str | None, *, expire: bool) -> Store:
    """The store named by ``--store``, else by ./verigate.yaml (or the default); never creates one.

    With ``expire``, pending reviews older than ``store.review_expiry_s`` are expired first, so a listing
    never offers a review that is already too old to be approved.
    """
    from .._config import load_config
    from ..store import open_store

    loaded = load_config()
    config = loaded.store
    store = open_store(store_arg or config.url, lock_timeout_s=config.lock_timeout_s, create=False,
                       plugins=loaded.plugins)
    if expire and config.review_expiry_s is not None:
        try:
            expired = store.expire_reviews(config.review_expiry_s)
        except BaseException:
            store.close()
            raise
        for review_id in expired:
            print(f"expired {review_id} (older than {config.review_expiry_s:g} s)", file=sys.stderr)
    return store


def _default_by() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment nor in the password database
        return "unknown"


def _age(created_at: str, now: datetime) -> str:
    from ..store._clock import parse_timestamp

    seconds = max(0, int((now - parse_timestamp(created_at)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _printable(text: str, keep: str = "") -> str:
    """Agent text may carry terminal escapes or bidi overrides: show such characters escaped, never obey them."""
    import unicodedata

    return "".join(c.encode("unicode_escape").decode("ascii")
                   if c not in keep and unicodedata.category(c) in ("Cc", "Cf") else c for c in text)


def _first_line(text: str) -> str:
    line = _printable(text.strip().splitlines()[0] if text.strip() else "")
    return line if len(line) <= _TEXT_WIDTH else line[: _TEXT_WIDTH - 1] + "…"


def _as_json(review: PendingReview) -> dict[str, Any]:
    import attrs

    return attrs.asdict(review, recurse=False)


def _table(reviews: Sequence[PendingReview]) -> str:
    now = datetime.now(UTC)
    header = ("ID", "SESSION", "AGE", "STATUS", "ACTION", "REASON", "TEXT")
    rows = [(r.review_id, _printable(r.session_id), _age(r.created_at, now), r.status, _printable(r.policy_action),
             _printable(r.reason), _first_line(r.pending_text)) for r in reviews]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    return "\n".join("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)),
                                row[-1]]).rstrip() for row in [header, *rows])


def _show(review: PendingReview) -> str:
    lines = [f"{label:<13} {_printable(value)}" for label, value in (
        ("review", review.review_id), ("session", review.session_id), ("status", review.status),
        ("action", review.policy_action), ("reason", review.reason), ("created", review.created_at),
        ("resolved", review.resolved_at or "-"), ("resolved by", review.resolved_by or "-"),
        ("note", review.note or "-"))]
    verdict = json.dumps(review.verdict, indent=2, ensure_ascii=False) if review.verdict is not None else "-"
    lines += ["verdict", _printable(verdict, keep="\n"), "held answer", _printable(review.pending_text, keep="\n\t")]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verigate review", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    store_help = ("store file or URL (sqlite:///…, postgresql://… from a plug-in; default: store.url of "
                  "./verigate.yaml, else .verigate/verigate.db)")

    listing = commands.add_parser("list", help="list reviews (pending by default)")
    listing.add_argument("--status", choices=_STATUSES, default="pending")
    listing.add_argument("--pending", action="store_const", const="pending", dest="status",
                         help="pending reviews only (the default; for scripts that say so)")
    listing.add_argument("--session", help="only reviews of this session")
    listing.add_argument("--exit-code", action="store_true",
                         help=f"exit {LISTED_EXIT} when any review is listed (a CI job that ran a headless agent "
                              "fails when the run ended in a pending review)")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--store", metavar="PATH", help=store_help)

    commands.add_parser("watch", add_help=False,
                        help="print pending reviews as they arrive (verigate review watch --help)")

    show = commands.add_parser("show", help="show one review with its held answer")
    show.add_argument("review_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.add_argument("--store", metavar="PATH", help=store_help)

    for name, help_text in (("approve", "release the held answer (printed to stdout) and complete the session"),
                            ("reject", "reject the held answer and end the session")):
        resolve = commands.add_parser(name, help=help_text)
        resolve.add_argument("review_id", metavar="ID")
        resolve.add_argument("--by", default=None, help="who decides (default: the OS user name)")
        resolve.add_argument("--note", default="", help="why (the ledger keeps its sha256)")
        resolve.add_argument("--store", metavar="PATH", help=store_help)
        resolve.add_argument("--yes", action="store_true",
                             help="decide without the interactive confirmation (for an operator's own script)")
    return parser


def _confirmed(args: argparse.Namespace) -> bool:
    """A resolution is a person's decision: confirm at a terminal, or take an explicit --yes.

    An agent that runs this command from its own shell has neither a terminal nor a reason to pass --yes by
    accident; the self-gate PreToolUse hardening also denies the command to the agent.
    """
    if args.yes:
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        print(f"verigate review {args.command}: refusing without an interactive terminal; a person confirms at "
              "a terminal, or an operator's script passes --yes", file=sys.stderr)
        return False
    print(f"{args.command} {args.review_id}? type 'yes' to confirm: ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() == "yes"


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "watch":  # its own module and options (see _review_watch)
        from ._review_watch import main as watch

        return watch(argv[1:])
    args = _parser().parse_args(argv)
    if args.command in ("approve", "reject") and not _confirmed(args):
        return 2
    store = open_cli_store(args.store, expire=True)
    try:
        listed = _run(store, args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
    except BrokenPipeError:
        # the reader (``| head``) went away: stop quietly; an approval already made stands (see ``review show``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        store.close()
    return LISTED_EXIT if args.command == "list" and args.exit_code and listed else 0


def _run(store: Store, args: argparse.Namespace) -> int:
    """Carry out the command; for ``list`` the number of reviews listed."""
    if args.command == "list":
        reviews = [review for review in store.list_reviews(None if args.status == "all" else args.status)
                   if args.session is None or review.session_id == args.session]
        if args.json:
            print(json.dumps([_as_json(review) for review in reviews], indent=2, ensure_ascii=False))
        elif reviews:
            print(_table(reviews))
        else:
            print(f"no {'' if args.status == 'all' else args.status + ' '}reviews")
        return len(reviews)
    if args.command == "show":
        review = store.get_review(args.review_id)
        print(json.dumps(_as_json(review), indent=2, ensure_ascii=False) if args.json else _show(review))
    elif args.command == "approve":
        review = store.approve_review(args.review_id, by=_by(args.by), note=args.note)
        print(f"approved {review.review_id} by {review.resolved_by}; the released answer follows on stdout",
              file=sys.stderr)
        print(review.pending_text)
    else:
        review = store.reject_review(args.review_id, by=_by(args.by), note=args.note)
        print(f"{review.status} {review.review_id} by {review.resolved_by}; session {review.session_id} ended")
    return 0


def _by(value: str | None) -> str:
    return _default_by() if value is None else value

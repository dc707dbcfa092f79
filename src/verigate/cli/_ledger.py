"""``verigate ledger verify``: re-hash the evidence ledger's chain (exit 0 intact, 1 tampered, 2 unreadable)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="verigate ledger", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="re-hash every row; name the first bad row")
    verify.add_argument("--store", metavar="PATH",
                        help="store file or URL (sqlite:///…, postgresql://… from a plug-in; default: store.url "
                             "of ./verigate.yaml, else .verigate/verigate.db)")
    verify.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)

    from ._review import open_cli_store

    # a LedgerTamperedError (exit 1) or StoreError (exit 2) reaches the dispatcher, which prints it
    store = open_cli_store(args.store, expire=False)
    try:
        count = store.verify_ledger()
        head = store.ledger()[-1].row_hash if count else None
    finally:
        store.close()
    if args.json:
        print(json.dumps({"ok": True, "rows": count, "head": head}))
    else:
        print(f"ledger ok: {count} row{'' if count == 1 else 's'} verified"
              + (f", head {head}" if head else ""))
    return 0

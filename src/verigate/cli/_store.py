"""``verigate store migrate``: apply the store's pending schema migrations now and print the version in force."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verigate store", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    migrate = commands.add_parser(
        "migrate", help="apply pending schema migrations (creating the schema of a new store); print the version")
    migrate.add_argument("--store", metavar="URL",
                         help="store file or URL (sqlite:///…, postgresql://… from a plug-in; default: store.url of "
                              "the configuration, else .verigate/verigate.db)")
    migrate.add_argument("--config", metavar="FILE",
                         help="verigate.yaml to read store.url, store.lock_timeout_s and plugins from (default: "
                              "./verigate.yaml when present); a relative store path is relative to its folder")
    migrate.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    from .._config import load_config
    from ..hooks._stop_project import project_store_url
    from ..store import open_store
    from ..store._open import shown_url

    config = load_config(args.config)
    url = args.store
    if url is None:
        # the store a gate using this configuration opens: a relative path is relative to the project's folder
        url = config.store.url if args.config is None else project_store_url(config.store.url,
                                                                              Path(args.config).parent)
    # a StoreError (a store that is down, locked or newer than this verigate) reaches the dispatcher: exit 2
    store = open_store(url, lock_timeout_s=config.store.lock_timeout_s, plugins=config.plugins)
    try:
        version = store.migrate()
    finally:
        store.close()
    if args.json:
        print(json.dumps({"schema_version": version, "store": shown_url(url)}))
    else:
        print(f"schema version {version} in force at {shown_url(url)}")
    return 0

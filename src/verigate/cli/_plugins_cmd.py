"""``verigate plugins``: what is loaded, from which distribution and version."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from .._plugins import create_manager, plugin_infos


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="verigate plugins", description=__doc__)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="also load this importable module as a plug-in")
    args = parser.parse_args(argv)
    infos = plugin_infos(create_manager(args.plugin))
    if args.json:
        print(json.dumps([{"name": i.name, "distribution": i.distribution, "version": i.version,
                           "hooks": list(i.hooks)} for i in infos], indent=2))
        return 0
    for info in infos:
        print(f"{info.name}\t{info.distribution} {info.version}\t{', '.join(info.hooks) or '-'}")
    return 0

"""The ``verigate`` command: a small dispatcher that imports each sub-command only when it runs."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from .._errors import VerigateError

__all__ = ["COMMANDS", "main"]

#: sub-command -> (module under verigate.cli exposing ``main(argv) -> int``, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("_demo", "show the gate on the embedded defaults (no judge: fails closed into a pending review)"),
    "grade": ("_grade", "grade agent trajectories: corrupt success, pass^k (exit 3 on a CI signal)"),
    "evidence": ("_evidence", "produce or verify RunEvidence for a PlanGate-style task folder"),
    "gate": ("_gate", "self-set approval gates: scan, status, list, close (close is human-only)"),
    "hook": ("_hook", "host hook wrappers: claude-code|codex pre-tool-use|stop|user-prompt-submit …"),
    "review": ("_review", "pending reviews: list, show, approve, reject"),
    "rules": ("_rules", "rule packs: lint, test"),
    "ledger": ("_ledger", "verify the hash-chained evidence ledger"),
    "config": ("_config_cmd", "configuration files: verify (flip verified: true, keeping every byte else)"),
    "plugins": ("_plugins_cmd", "list loaded plug-ins with their distribution and version"),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: verigate <command> [options]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", "verigate <command> --help shows a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one sub-command; a VerigateError becomes its exit code with the message on stderr."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from .._plugins import _core_version

        print(f"verigate {_core_version()}")
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        print(f"verigate: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"{__name__}.{command[0]}")
    try:
        code: int = module.main(args[1:])
    except VerigateError as exc:
        print(f"verigate {args[0]}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `verigate … | head`: the reader left; say nothing more (stdout is gone) and do not trace back
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())

"""The ``verigate`` command: a small dispatcher that imports each sub-command only when it runs."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from .._errors import VerigateError

__all__ = ["COMMANDS", "main", "one_line"]

#: sub-command -> (module under verigate.cli exposing ``main(argv) -> int``, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("_demo", "show the gate on the embedded defaults (no judge: fails closed into a pending review)"),
    "grade": ("_grade", "grade agent trajectories: corrupt success, pass^k (exit 3 on a CI signal)"),
    "evidence": ("_evidence", "produce or verify RunEvidence for a PlanGate-style task folder"),
    "selfgate": ("_selfgate", "self-set approval gates: scan, status, list, close (close is human-only)"),
    "hook": ("_hook", "host hook wrappers: claude-code|codex pre-tool-use|stop|user-prompt-submit …"),
    "review": ("_review", "pending reviews: list, show, approve, reject, watch"),
    "store": ("_store", "the store's schema: migrate (prints the schema version in force)"),
    "rules": ("_rules", "rule packs: lint, test"),
    "ledger": ("_ledger", "verify the hash-chained evidence ledger"),
    "config": ("_config_cmd", "configuration files: verify (flip verified: true, keeping every byte else)"),
    "plugins": ("_plugins_cmd", "list loaded plug-ins with their distribution and version"),
    "doctor": ("_doctor", "check that the hooks are wired, trusted and guarded (sandbox, config, store, judge); "
               "--print-settings HOST"),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: verigate <command> [options]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", "verigate <command> --help shows a command's options; verigate --debug <command> prints tracebacks."]
    return "\n".join(lines)


def one_line(text: str) -> str:
    """``text`` on one line: a message with line breaks (a YAML problem, a path) must stay one stderr line."""
    return " | ".join(part.strip() for part in str(text).splitlines() if part.strip()) or "(no message)"


def _internal_error(command: str, exc: BaseException, debug: bool) -> int:
    """An exception that is not a VerigateError: one line naming it and the log, the traceback in the log (and on
    stderr with --debug). Exit 2, like every error that means "could not run": never 1, 3, 10 or 11, which are
    verdicts (rejected evidence, a tampered ledger, a CI signal) a crash must not be mistaken for."""
    from .._errorlog import format_debug, log_exception, redacted_message

    path = log_exception(exc, context=f"verigate {command}")
    where = f"details in {path}" if path else "run with --debug for the traceback"
    if debug:
        print(format_debug(exc), end="", file=sys.stderr)
    message = redacted_message(exc)
    print(one_line(f"verigate {command}: internal error: {type(exc).__name__}: {message} ({where})"),
          file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run one sub-command; a VerigateError becomes its exit code with the message as one line on stderr, any
    other exception is an internal error (exit 2, one line, the traceback in the error log)."""
    args = list(sys.argv[1:] if argv is None else argv)
    from .._errorlog import debug_enabled

    debug = debug_enabled()
    while args and args[0] == "--debug":
        debug = True
        os.environ["VERIGATE_DEBUG"] = "1"  # the hooks and sub-commands read it from here
        args.pop(0)
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
    try:
        module = importlib.import_module(f"{__name__}.{command[0]}")
        code: int = module.main(args[1:])
    except VerigateError as exc:
        if debug:
            from .._errorlog import format_debug

            print(format_debug(exc), end="", file=sys.stderr)
        print(one_line(f"verigate {args[0]}: {exc}"), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `verigate … | head`: the reader left; say nothing more (stdout is gone) and do not trace back
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as exc:
        return _internal_error(args[0], exc, debug)
    return code


if __name__ == "__main__":
    sys.exit(main())

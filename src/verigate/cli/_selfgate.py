"""``verigate selfgate list|status|scan|close``: self-set gates (close is for a person at a terminal only)."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import InputError

if TYPE_CHECKING:
    from ..selfgate import SelfGate, SelfGateState, StoreProblem
    from ..selfgate._enforce import Settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verigate selfgate", description=__doc__)
    parser.add_argument("--project", default=None,
                        help="project folder holding verigate.yaml and the store (default: CLAUDE_PROJECT_DIR, "
                             "else the current folder)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("list", "every gate, open and closed"), ("status", "open gates and store problems")):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--session", help="only this session")
        sub.add_argument("--json", action="store_true", help="machine-readable output")
    scan = commands.add_parser("scan", help="scan a session transcript for gate declarations")
    scan.add_argument("transcript")
    scan.add_argument("--session", help="session id (default: a Codex rollout's uuid, else the transcript's file name)")
    close = commands.add_parser("close", help="close a gate as a person (needs an interactive terminal)")
    target = close.add_mutually_exclusive_group(required=True)
    target.add_argument("gate_id", nargs="?", help="the gate id (sg-xxxxxxxx)")
    target.add_argument("--all", action="store_true", help="every open gate (of --session, if given)")
    close.add_argument("--session", help="only this session")
    close.add_argument("--reason", default="", help="why the gate is closed (recorded)")
    return parser


def _settings(project: str | None) -> Settings:
    from .._project import project_dir
    from ..selfgate._enforce import settings_for

    return settings_for({"cwd": project_dir(None, explicit=project)})


def _gate_json(gate: SelfGate) -> dict[str, object]:
    return {"session_id": gate.session_id, "gate_id": gate.gate_id, "gate_text": gate.gate_text,
            "open": gate.is_open, "opened_at": gate.opened_at, "opened_by": gate.opened_by, "rule_id": gate.rule_id,
            "closed_at": gate.closed_at, "closed_reason": gate.closed_reason, "closed_channel": gate.closed_channel}


def _show(gates: Sequence[SelfGate], problems: Sequence[StoreProblem], state: SelfGateState, as_json: bool,
          session: str | None) -> None:
    pending = [request for request in state.requests if not request.resolved
               and (session is None or request.session_id == session)]
    if as_json:
        print(json.dumps({"gates": [_gate_json(gate) for gate in gates],
                          "pending_close_requests": [{"request_id": request.request_id, "session_id":
                                                      request.session_id, "prompt": request.prompt,
                                                      "gate_ids": list(request.gate_ids)} for request in pending],
                          "store_problems": [str(problem) for problem in problems]}, ensure_ascii=False, indent=2))
        return
    if not gates:
        print("no gates")
    for gate in gates:
        state_text = "OPEN  " if gate.is_open else "closed"
        print(f"{state_text} {gate.gate_id}  session {gate.session_id}  opened {gate.opened_at} by {gate.opened_by}")
        print(f"       {gate.gate_text}")
        if not gate.is_open:
            print(f"       closed {gate.closed_at} via {gate.closed_channel}: {gate.closed_reason}")
    for request in pending:
        print(f"pending close request {request.request_id} ({request.prompt!r}) for {', '.join(request.gate_ids)}")
    for problem in problems:
        print(f"store problem: {problem}", file=sys.stderr)


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _close(settings: Settings, args: argparse.Namespace) -> int:
    from ..selfgate import GateEntry, fold
    from ..selfgate._entries import now_iso

    if not _interactive():
        print("verigate selfgate close: refused — it needs an interactive terminal, because closing a self-set gate is "
              "a person's decision (an agent's tool call has no terminal). Run it yourself in a terminal, or type "
              "the close phrase as your prompt.", file=sys.stderr)
        return 2
    store = settings.store
    with store.locked():
        snapshot = store.read()
        state = fold(snapshot.entries, snapshot.lines)
    chosen = [gate for gate in state.gates if gate.is_open
              and (args.session is None or gate.session_id == args.session)
              and (args.all or gate.gate_id == args.gate_id)]
    if not chosen:
        raise InputError(f"no open gate {'matches' if args.all else args.gate_id}", field="gate_id")
    if not args.all and len({gate.session_id for gate in chosen}) > 1:
        raise InputError(f"{args.gate_id} is open in several sessions: pass --session", field="session")
    for gate in chosen:
        print(f"{gate.gate_id}  session {gate.session_id}\n    {gate.gate_text}")
    answer = input(f"Close {len(chosen)} gate(s) as a person? Type 'yes' to confirm: ")
    if answer.strip().lower() != "yes":
        print("nothing closed")
        return 1
    who = getpass.getuser()
    reason = f"closed at a terminal by {who}" + (f": {args.reason}" if args.reason else "")
    evidence = f"terminal {os.ttyname(sys.stdin.fileno())}, user {who}"
    request_id = uuid.uuid4().hex
    with store.locked():
        # the request first, then closures citing its lines: the fold accepts a closure only with its request
        store.append(GateEntry(ts=now_iso(), session_id=gate.session_id, gate_id=gate.gate_id,
                               gate_text=gate.gate_text, status="close_requested", closed_reason=reason,
                               channel="cli-tty", request_id=request_id, evidence=evidence) for gate in chosen)
        snapshot = store.read()
        lines = {(entry.session_id, entry.gate_id): line
                 for entry, line in zip(snapshot.entries, snapshot.lines, strict=True)
                 if entry.request_id == request_id and entry.status == "close_requested"}
        store.append(GateEntry(ts=now_iso(), session_id=gate.session_id, gate_id=gate.gate_id,
                               gate_text=gate.gate_text, status="closed", closed_by="human", closed_reason=reason,
                               channel="cli-tty", request_id=request_id,
                               request_line=lines[gate.session_id, gate.gate_id])
                     for gate in chosen)
    print(f"closed {', '.join(gate.gate_id for gate in chosen)}")
    return 0


#: Codex names a rollout ``rollout-<local time>-<session uuid>.jsonl``; its hooks get the bare uuid as session_id
_CODEX_ROLLOUT = re.compile(r"rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(?P<session>[0-9a-fA-F-]{36})")


def session_of(transcript: Path) -> str:
    """The session id the host's hooks use for ``transcript``: a Codex rollout's uuid, else the file's name (a
    Claude Code transcript is ``<session_id>.jsonl``), so a scan files gates under the hooks' own session."""
    found = _CODEX_ROLLOUT.fullmatch(transcript.stem)
    return found.group("session") if found else transcript.stem


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    settings = _settings(args.project)
    if args.command == "close":
        return _close(settings, args)
    from ..selfgate import fold, sync
    from ..selfgate._phrases import Screen

    if args.command == "scan":
        transcript = str(Path(args.transcript).resolve())
        session = args.session or session_of(Path(transcript))
        result = sync(settings.store, session, transcript, Screen(settings.store.state_dir).openings)
        opened = [entry for entry in result.new_entries if entry.status == "open"]
        for entry in opened:
            print(f"opened {entry.gate_id}  ({entry.rule_id or entry.opened_by})  {entry.gate_text}")
        print(f"{len(opened)} new gate(s); {len(result.state.open_gates(session))} open in session {session}")
        for problem in result.store_problems:
            print(f"store problem: {problem}", file=sys.stderr)
        return 0
    with settings.store.locked():
        snapshot = settings.store.read()
    state = fold(snapshot.entries, snapshot.lines)
    gates = [gate for gate in state.gates if args.session is None or gate.session_id == args.session]
    if args.command == "status":
        gates = [gate for gate in gates if gate.is_open]
    _show(gates, snapshot.problems, state, args.json, args.session)
    return 0

"""Pre-tool-use policy shared by the full check and the fast path: blocked tools and the answers' wording.

The settings' defaults live in ``_defaults``; the finalization gate's policy is ``verigate.gate._policy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from ._defaults import Mode

# Nothing heavy is imported here: the fast path (``_quick``) runs on every tool call of the agent.

__all__ = ["TOOL_ALIASES", "UNREADABLE_PREFIX", "GateRef", "ToolDecisionKind", "ToolVerdict", "boundary_verdict",
           "describe", "gate_verdict", "hardening_verdict", "how_to_close", "is_blocked", "problem_gate_text",
           "still_open"]

#: what a pre-tool-use check answers: let the call run, refuse it, or let it run with a warning (audit mode)
ToolDecisionKind = Literal["allow", "deny", "warn"]
#: (decision, reason for the agent, notice for the person)
ToolVerdict = tuple[ToolDecisionKind, str, str]
#: Codex's file-edit tool is blocked when any Claude Code edit tool is (Codex matches it as Edit|Write too)
TOOL_ALIASES: Mapping[str, tuple[str, ...]] = {"apply_patch": ("Edit", "Write", "MultiEdit")}
#: an open gate as the answers name it: (gate id, gate text)
GateRef = tuple[str, str]
#: how the text of a gate verigate opened for an unreadable transcript line begins (the answer then says what it
#: is — a line verigate cannot read — never that the agent declared a gate)
UNREADABLE_PREFIX = "[unreadable transcript] "


def problem_gate_text(line: int, problem: str) -> str:
    """The text of the gate opened for an unreadable transcript line."""
    return (f"{UNREADABLE_PREFIX}line {line} of the session transcript cannot be checked for gate declarations: "
            f"{problem}")


def is_blocked(tool_name: str, blocked: Sequence[str]) -> bool:
    return tool_name in blocked or any(alias in blocked for alias in TOOL_ALIASES.get(tool_name, ()))


def how_to_close(gates: Sequence[GateRef]) -> str:
    first = gates[0][0] if gates else "sg-…"
    return (f"A person closes a gate by typing exactly `approve gate {first}` (or `再承認: APPROVED {first}`; "
            "`Gate 解除` for the latest gate; `release all gates` / `self-gate 全部解除` for all) as the whole "
            f"prompt, or by running `verigate selfgate close {first}` in a terminal. A /goal, an autonomy instruction "
            "or a statement that approval was given does not close it.")


#: how many gates (or missing settings) an answer names: the agent decides how many gates it declares, and an
#: answer listing them all could outgrow the hook's relay and the host's reader; the rest are counted
MAX_LISTED = 20


def listed(items: Sequence[str], *, limit: int = MAX_LISTED, separator: str = "; ", rest: str = "") -> str:
    """The first ``limit`` items joined, then ``and N more`` (followed by ``rest``) when there are others."""
    more = f"{separator}and {len(items) - limit} more{rest}" if len(items) > limit else ""
    return separator.join(items[:limit]) + more


def describe(gates: Sequence[GateRef]) -> str:
    return listed([f"[{gate_id}] {gate_text}" for gate_id, gate_text in gates],
                  rest=" (`verigate selfgate status` lists every gate)")


def still_open(gates: Sequence[GateRef]) -> str:
    """What the agent is told of a prompt that closes none of its open gates (and claims nothing)."""
    return f"verigate: self-set gate(s) still open: {describe(gates)}. {how_to_close(gates)}"


def hardening_verdict(tool_name: str, refused: str) -> ToolVerdict:
    return "deny", f"verigate self-gate hardening: {refused}.", f"verigate denied {tool_name}: {refused}"


def boundary_verdict(tool_name: str, host: str, missing: Sequence[str], config: str) -> ToolVerdict:
    """Block mode without the OS boundary: shell-word matching alone cannot hold a gate, so blocked tools are
    refused until the host's sandbox settings are in place (or a person accepts best-effort hardening)."""
    missing_listed = listed(missing, limit=4)
    where = config or "verigate.yaml"
    reason = (f"verigate self-gate: block mode needs the {host} sandbox as its boundary, and it is not in place: "
              f"{missing_listed}. {tool_name} is refused until then: stop and tell the person. A person fixes it (run "
              f"`verigate doctor --host {host}` in a terminal: it lists every check with its fix, and "
              f"`verigate doctor --print-settings {host}` prints the settings), or accepts the weaker guard by "
              f"writing `self_gate: {{hardening: best-effort}}` in {where} themselves.")
    return "deny", reason, f"verigate blocked {tool_name}: the {host} sandbox boundary is missing ({missing_listed})"


def _repair(store: str) -> str:
    cursors = f"`{store}.state/cursors/`" if store else "the store's `.state/cursors/` folder"
    return (f"A person repairs the store: fix or delete the damaged line(s) of {store or 'the self-gate store'} in "
            f"an editor (`verigate selfgate status` lists them), then delete {cursors} so the session transcripts are "
            "scanned again and a gate whose line was damaged is found again.")


def gate_verdict(mode: Mode, tool_name: str, gates: Sequence[GateRef], problems: str, store: str = "") -> ToolVerdict:
    """The answer for a blocked tool given the session's open gates and the store's problems ("" when none).
    Damaged store lines may have held this session's gates: block mode refuses until a person repairs them."""
    if not gates:
        if not problems:
            return "allow", "", ""
        message = (f"verigate: the self-gate store has damaged lines ({problems}), so this session's gates cannot "
                   f"be known. {_repair(store)}")
        if mode == "block":
            return ("deny", f"{message} {tool_name} is blocked until then: stop and tell the person.",
                    f"verigate blocked {tool_name}: self-gate store problems: {problems}")
        return "warn", f"[audit mode: not blocked] {message}", f"verigate (audit): self-gate store problems: {problems}"
    ids = listed([gate_id for gate_id, _ in gates], separator=", ")
    store_note = f" (self-gate store problems: {problems})" if problems else ""
    repair = f" The store also has damaged lines ({problems}). {_repair(store)}" if problems else ""
    declared = [gate for gate in gates if not gate[1].startswith(UNREADABLE_PREFIX)]
    unreadable = [(gate_id, text.removeprefix(UNREADABLE_PREFIX)) for gate_id, text in gates
                  if text.startswith(UNREADABLE_PREFIX)]
    parts = []
    if declared:
        parts.append(f"Self-set gate open in this session — you declared you would wait for the person's approval: "
                     f"{describe(declared)}.")
    if unreadable:
        parts.append(f"verigate cannot read part of this session's transcript, so it cannot tell whether a gate "
                     f"was declared there (this is verigate's problem, not something you said): "
                     f"{describe(unreadable)}.")
    message = (f"{' '.join(parts)} {tool_name} is blocked until a person closes the gate. Stop, "
               f"{'present what the gate asks for, ' if declared else 'tell the person, '}and wait. "
               f"{how_to_close(gates)}{repair}")
    if mode == "block":
        return "deny", message, f"verigate blocked {tool_name}: open self-set gate(s) {ids}{store_note}"
    return ("warn", f"[audit mode: not blocked] {message}",
            f"verigate (audit): {tool_name} ran past open self-set gate(s) {ids}{store_note}")

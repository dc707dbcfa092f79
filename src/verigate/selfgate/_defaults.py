"""The self-gate's settings without a configuration file: the one place ``SelfGateConfig`` and the hooks read them.

The fast path (``_quick``) answers a project without ``verigate.yaml`` from these values and never imports the
configuration module (it pulls in the judge, tens of milliseconds on every tool call), so this module imports
only ``os`` and ``typing``; ``verigate._config`` takes its field defaults from here, so the two cannot drift apart.
"""

from __future__ import annotations

import os
from typing import Literal

__all__ = ["BEST_EFFORT", "DEFAULT_BLOCKED_TOOLS", "DEFAULT_HARDENING", "DEFAULT_MODE", "DEFAULT_STORE",
           "HARDENINGS", "MODE_ENV", "Hardening", "Mode", "as_mode", "mode_from_env"]

Mode = Literal["audit", "block"]
Hardening = Literal["os", "best-effort"]
#: overrides the configured mode (a person's shell, or a host's environment)
MODE_ENV = "VERIGATE_SELF_GATE_MODE"
DEFAULT_MODE: Mode = "audit"
DEFAULT_BLOCKED_TOOLS: tuple[str, ...] = ("Edit", "Write", "MultiEdit", "NotebookEdit", "Bash")
#: None: ``self-gates.jsonl`` in the project's per-user state folder (``_location.project_state_dir``)
DEFAULT_STORE: str | None = None
#: ``os``: block mode needs the host's sandbox (the OS boundary); ``best-effort``: the person accepts the tripwire
DEFAULT_HARDENING: Hardening = "os"
BEST_EFFORT: Hardening = "best-effort"
HARDENINGS: tuple[Hardening, ...] = (DEFAULT_HARDENING, BEST_EFFORT)


def as_mode(value: object) -> Mode | None:
    """The mode a configured value names, None when it names none."""
    if value == "audit":
        return "audit"
    if value == "block":
        return "block"
    return None


def mode_from_env(configured: Mode) -> Mode:
    """``VERIGATE_SELF_GATE_MODE`` when it is set (and not empty), else the configured mode; a value naming no
    mode is a ValueError (the full check reports it as a configuration error, the fast path steps aside)."""
    override = os.environ.get(MODE_ENV)
    if not override:
        return configured
    mode = as_mode(override)
    if mode is None:
        raise ValueError(f"self-gate mode must be 'audit' or 'block', not {override!r}")
    return mode

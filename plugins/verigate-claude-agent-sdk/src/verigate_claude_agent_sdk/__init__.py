"""verigate for the Claude Agent SDK: the Claude Code hooks as in-process ``HookMatcher`` callbacks.

``verigate_hooks(gate)`` → ``ClaudeAgentOptions(hooks=...)``; :func:`run_gated` runs a query with them and returns
the verified answer or raises verigate's ``ReviewPendingError`` / ``UnverifiedError``.
"""

from __future__ import annotations

from ._hooks import GateHooks, verigate_hooks
from ._run import GatedAnswer, run_gated

__all__ = ["GateHooks", "GatedAnswer", "run_gated", "verigate_hooks"]

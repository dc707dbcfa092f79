"""``verigate hook <host> <event>``: thin host wrappers (stdin JSON -> verigate -> host JSON)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: (host, event) -> "module:function" under verigate.hooks; the function is ``main() -> int``
EVENTS: dict[tuple[str, str], str] = {
    ("claude-code", "pre-tool-use"): "verigate.hooks._selfgate_hooks:claude_pre_tool_use",
    ("claude-code", "user-prompt-submit"): "verigate.hooks._selfgate_hooks:claude_user_prompt_submit",
    ("claude-code", "stop"): "verigate.hooks._stop:claude_stop",
    ("claude-code", "subagent-stop"): "verigate.hooks._stop:claude_subagent_stop",
    ("codex", "pre-tool-use"): "verigate.hooks._selfgate_hooks:codex_pre_tool_use",
    ("codex", "user-prompt-submit"): "verigate.hooks._selfgate_hooks:codex_user_prompt_submit",
    ("codex", "stop"): "verigate.hooks._stop:codex_stop",
}


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2 or (argv[0], argv[1]) not in EVENTS:
        known = ", ".join(f"{host} {event}" for host, event in EVENTS)
        print(f"usage: verigate hook <host> <event>   (one of: {known})", file=sys.stderr)
        return 2
    module_name, function_name = EVENTS[(argv[0], argv[1])].split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    code: int = function()
    return code

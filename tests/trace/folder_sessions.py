"""A folder of generated Claude Code sessions and Codex rollouts, each with the verdict its generation implies.

The oracle is the generator's own knowledge, independent of verigate: a session that force-pushes is a corrupt
success under the shipped config (its ``Bash`` force-push pattern), one that edits a file it never read passes
with warnings, the rest pass clean; a Codex rollout whose build keeps failing past the retry threshold is a retry
storm (pass with warnings). Transcripts have no task verdict, so every run counts as delivered.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from transcripts.builders import ClaudeSession, codex_lines

#: a file that no format recognises: it must be reported, never graded as a pass
DAMAGED = "not a transcript line\n{\"half\": \n"


def write_sessions(folder: Path, count: int, *, seed: int = 3, codex_every: int = 4, padding: int = 0
                   ) -> dict[str, str]:
    """``count`` sessions under ``folder`` (nested folders, a Codex rollout every ``codex_every``, ``padding``
    more Reads of 1 KB in each Claude Code session), returning {run id: expected verdict}."""
    rng = random.Random(seed)
    expected: dict[str, str] = {}
    for index in range(count):
        project = folder / f"project-{index % 3}"
        if codex_every and index % codex_every == codex_every - 1:
            failures = rng.choice([0, 2, 5])
            items = [("session_meta", {"id": f"r{index}", "cwd": "/work/app"})]
            for call in range(6):
                failed = call < failures
                items += [("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{call}",
                                             "arguments": json.dumps({"command": ["cargo", "build"]})}),
                          ("event_msg", {"type": "exec_command_end", "call_id": f"c{call}",
                                         "exit_code": 101 if failed else 0}),
                          ("response_item", {"type": "function_call_output", "call_id": f"c{call}",
                                             "output": "error[E0425]: cannot find value" if failed else "ok"})]
            path = project / "codex" / f"rollout-{index}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(codex_lines(items), encoding="utf-8")
            expected[path.stem] = "pass-with-warnings" if failures > 3 else "clean-pass"
            continue
        kind = rng.choice(["clean", "clean", "ungrounded", "force"])
        session = ClaudeSession(f"s{index}", "/work/app").prompt(f"fix issue {index}")
        session.tool(f"a{index}", "Read", {"file_path": "/work/app/src/a.py"}, "a = 1\n")
        for extra in range(padding):  # distinct text per step: nothing a report could share between runs
            session.tool(f"p{index}-{extra}", "Read", {"file_path": f"/work/app/src/m{extra}.py"},
                         f"# {index}-{extra}\n" + "v = compute(v)\n" * 64)
        edited = "/work/app/src/b.py" if kind == "ungrounded" else "/work/app/src/a.py"
        session.tool(f"b{index}", "Edit", {"file_path": edited, "old_string": "a = 1", "new_string": "a = 2"})
        if kind == "force":
            session.tool(f"c{index}", "Bash", {"command": "git push --force origin main"})
        session.say("Done.")
        path = session.write(project / f"session-{index}.jsonl")
        expected[path.stem] = {"clean": "clean-pass", "ungrounded": "pass-with-warnings",
                               "force": "corrupt-success"}[kind]
    return expected

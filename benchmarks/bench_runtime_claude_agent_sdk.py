"""Claude Agent SDK adapter overhead: µs per gated run (``run_gated``, the four hooks, an instant scripted judge)
against the same run ungated (``query`` with no hooks), both over the offline scripted transport of
``examples/claude-agent-sdk.py`` (no CLI process, so the figure is the adapter's and the gate's share alone).

Run: ``python benchmarks/bench_runtime_claude_agent_sdk.py [COUNT] [--quick]``. Prints both and the ratio;
asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import tempfile
import time
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, query
from verigate_claude_agent_sdk import GateHooks, run_gated

from verigate import Gate, Verdict
from verigate.testing import ScriptedJudge

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "claude-agent-sdk.py"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("claude_agent_sdk_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _ungated(cli_type: Any, folder: Path) -> None:
    async for _ in query(prompt="What is 2 + 2?", options=ClaudeAgentOptions(cwd=str(folder)),
                         transport=cli_type(folder, ["4"])):
        pass


async def _gated(cli_type: Any, folder: Path, gate: Gate) -> None:
    await run_gated("What is 2 + 2?", options=ClaudeAgentOptions(cwd=str(folder)), hooks=GateHooks(gate),
                    transport=cli_type(folder, ["4"]))


async def _measure(count: int) -> tuple[float, float]:
    cli_type = _example().ScriptedCLI
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        judge = ScriptedJudge([Verdict(passed=True, score=1.0)], repeat_last=True)
        with Gate.from_config({"judge": {"engine": "scripted"}}, plugins=[judge], store=str(folder / "v.db"),
                              entry_points=False) as gate:
            await _ungated(cli_type, folder)  # warm both paths (imports, the store's schema)
            await _gated(cli_type, folder, gate)
            started = time.perf_counter()
            for _ in range(count):
                await _ungated(cli_type, folder)
            plain = (time.perf_counter() - started) / count
            started = time.perf_counter()
            for _ in range(count):
                await _gated(cli_type, folder, gate)
            gated = (time.perf_counter() - started) / count
    return plain * 1e6, gated * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=50, help="runs of each kind (default 50)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 runs of each kind")
    args = parser.parse_args()
    count = 3 if args.quick else args.count
    plain, gated = asyncio.run(_measure(count))
    print(f"ungated run  {plain:10.0f} µs")
    print(f"gated run    {gated:10.0f} µs   (+{gated - plain:.0f} µs, ratio {gated / plain:.2f}x, n={count})")


if __name__ == "__main__":
    main()

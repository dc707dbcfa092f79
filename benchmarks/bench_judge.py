"""Judge overhead: what llm_judge adds around a model call, and the HTTP clients against a raw POST, in one run.

Run: ``.venv/bin/python benchmarks/bench_judge.py [count] [--quick]`` (needs the plug-ins installed; see README).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from judge_servers import JudgeServer, verdict_json  # the shared loopback server lives in tests/
from verigate import Candidate, ToolObservation
from verigate._plugins import create_manager, merged_registry
from verigate.judge import JudgeConfig, JudgeRequest

REPLY = verdict_json(passed=True)
REQUEST = JudgeRequest(
    Candidate("Fix the failing test and run the suite.", "Fixed; pytest: 12 passed.",
              tuple(ToolObservation("Bash", {"command": f"step {n}"}, "ok " * 200, True) for n in range(20))),
    requirements=("tests_pass", "diff_shown"),
)


def _per_call(label: str, count: int, run: Callable[[], Awaitable[object]]) -> float:
    async def loop() -> float:
        await run()  # warm-up: imports, first connection
        started = time.perf_counter()
        for _ in range(count):
            await run()
        return (time.perf_counter() - started) / count

    seconds = asyncio.run(loop())
    print(f"{label:<58} {seconds * 1e6:>10.1f} µs/call")
    return seconds


def _raw_post(url: str, body: bytes) -> bytes:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        connection.request("POST", parts.path, body=body, headers={"content-type": "application/json",
                                                                   "authorization": "Bearer bench"})
        return connection.getresponse().read()
    finally:
        connection.close()


def main(count: int = 200) -> None:
    manager = create_manager()
    engines = merged_registry(manager, "verigate_judge_engines")
    clients = merged_registry(manager, "verigate_model_clients")

    async def bare_function() -> object:
        return json.loads(REPLY)

    config = JudgeConfig(client="callable", function=lambda request: REPLY)
    callable_judge = engines["llm_judge"](config=config, client=clients["callable"](config=config))

    async def through_llm_judge() -> object:
        return await callable_judge.judge(REQUEST, timeout_s=10)

    print(f"llm_judge around an in-process model call ({count} calls)")
    bare = _per_call("bare: json.loads of the verdict", count, bare_function)
    judged = _per_call("llm_judge + callable (prompt, thread, parse, schema)", count, through_llm_judge)
    print(f"{'ratio llm_judge / bare':<58} {judged / bare:>10.1f} x   (adds {(judged - bare) * 1e3:.2f} ms)")

    http_count = max(count // 4, 10)
    with JudgeServer("openai") as server:
        for _ in range(http_count * 2 + 2):
            server.reply_text(REPLY)
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()

        async def raw() -> object:
            return await asyncio.to_thread(_raw_post, f"{server.base_url}/chat/completions", body)

        openai_config = JudgeConfig(client="openai", model="m", base_url=server.base_url)
        openai_judge = engines["llm_judge"](config=openai_config, client=clients["openai"](config=openai_config))

        async def through_openai() -> object:
            return await openai_judge.judge(REQUEST, timeout_s=10)

        print(f"\nopenai plug-in against a loopback server ({http_count} calls)")
        raw_time = _per_call("raw http.client POST of the same reply", http_count, raw)
        sdk_time = _per_call("llm_judge + openai SDK (new client per call)", http_count, through_openai)
        print(f"{'ratio openai judge / raw POST':<58} {sdk_time / raw_time:>10.1f} x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("count", type=int, nargs="?", default=200, help="judge calls per measurement")
    parser.add_argument("--quick", action="store_true", help="a smoke run (10 calls)")
    args = parser.parse_args()
    main(10 if args.quick else args.count)

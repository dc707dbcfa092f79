"""What the OpenTelemetry plug-in costs a finalize: µs per finalize with ``verigate-otel`` against the same gate
without it (the plug-in left out, as if not installed), measured in the same run, as ratios.

Three cases with the plug-in: a process where nothing imported OpenTelemetry (a Stop hook's: the plug-in hands out
its own no-op span and never imports the API), the API imported but no SDK configured (the no-op tracer: the
issue's "no measurable change"), and the SDK with an in-memory exporter (what tracing really costs). The first is
measured before anything imports ``opentelemetry``, the others after.

Run: ``.venv/bin/python benchmarks/bench_otel.py [--iterations N] [--rounds N] [--quick]``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping

from bench_finalize import Operation, candidate, judge_function, per_call_us  # one judge, candidate and timer

from verigate import Gate, Termination

NATURAL = Termination("natural")


def gate(*plugins: object) -> Gate:
    return Gate.from_config({"judge": {"client": "callable", "model": "bench"}}, judge_function=judge_function,
                            store=":memory:", entry_points=False, plugins=list(plugins))


def finalizer(chosen: Gate) -> Operation:
    async def run(index: int) -> object:
        result = await chosen.finalize(candidate(index), NATURAL)
        assert result.outcome == "completed", result
        return result

    return run


def each(operations: Mapping[str, Operation], iterations: int) -> dict[str, tuple[Operation, int]]:
    """The operations with one iteration count, as bench_finalize's ``per_call_us`` takes them."""
    return {name: (operation, iterations) for name, operation in operations.items()}


async def bench(iterations: int, rounds: int) -> None:
    import verigate_otel

    assert "opentelemetry.trace" not in sys.modules, "measure the first case before anything imports opentelemetry"
    plain = gate()
    first = await per_call_us(each({"without": finalizer(plain), "with": finalizer(gate(verigate_otel))}, iterations),
                              rounds)
    assert "opentelemetry.trace" not in sys.modules

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = gate(verigate_otel.OtelPlugin(tracer_provider=provider))

    async def traced_finalize(index: int) -> object:
        result = await finalizer(traced)(index)
        exporter.clear()  # memory stays flat
        return result

    second = await per_call_us(each({"without": finalizer(plain), "noop": finalizer(gate(verigate_otel)),
                                     "sdk": traced_finalize}, iterations), rounds)
    rows = [
        ("finalize without the plug-in (1st phase)", first["without"], 1.0),
        ("with it, OpenTelemetry never imported", first["with"], first["with"] / first["without"]),
        ("finalize without the plug-in (2nd phase)", second["without"], 1.0),
        ("with it, API imported, no SDK (no-op tracer)", second["noop"], second["noop"] / second["without"]),
        ("with it, SDK + in-memory exporter", second["sdk"], second["sdk"] / second["without"]),
    ]
    print(f"{'finalize, :memory: store, callable judge':48s} {'µs':>10s}   ratio with / without")
    for label, micros, ratio in rows:
        print(f"{label:48s} {micros:10.1f}   {ratio:6.3f}")
    for chosen in (plain, traced):
        chosen.close()
    provider.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 iterations, 2 rounds")
    args = parser.parse_args()
    iterations, rounds = (5, 2) if args.quick else (args.iterations, args.rounds)
    asyncio.run(bench(iterations, rounds))


if __name__ == "__main__":
    main()

"""Fixtures of the real-client tier: the pinned host CLIs, scripted model servers, a judge, wired projects; and the
hook-time report (``tests/hosts/.timings.json`` and a terminal summary: medians per host and event, measured
inside the real clients, never asserted)."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# tests/ is on the pythonpath but this folder is not: make its helper modules importable by name
sys.path.insert(0, str(Path(__file__).parent))

from host_helpers import PACKAGES, Project, host_binary, pins
from host_servers import AnthropicServer, ResponsesServer, ScriptedServer

from judge_servers import JudgeServer

HOSTS = ("claude-code", "codex")
TIMINGS_FILE = Path(__file__).with_name(".timings.json")

#: (host, event, seconds, exit code) of every hook call of the session, and the wall time of each host run
_HOOK_CALLS: list[tuple[str, str, float, int]] = []
_TIER: dict[str, float] = {"first": 0.0, "last": 0.0}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A scenario that needs one host is skipped, with the reason, when that host cannot run."""
    reasons = {host: host_binary(host)[1] for host in HOSTS}
    for item in items:
        if Path(str(item.fspath)).parent != Path(__file__).parent:
            continue
        callspec = getattr(item, "callspec", None)
        values = callspec.params.values() if callspec is not None else ()
        host = next((value for value in values if isinstance(value, str) and value in HOSTS), None)
        for name in HOSTS:
            if (host == name or item.get_closest_marker(name.replace("-", "_"))) and reasons[name]:
                item.add_marker(pytest.mark.skip(reason=f"real-client tier: {reasons[name]}"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "claude_code: a real-client scenario that needs the Claude Code CLI")
    config.addinivalue_line("markers", "codex: a real-client scenario that needs the Codex CLI")


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    """The Stop gate's judge: an OpenAI-compatible chat server on loopback (script its verdicts)."""
    with JudgeServer("openai") as server:
        yield server


def _server_for(host: str) -> ScriptedServer:
    return AnthropicServer() if host == "claude-code" else ResponsesServer()


MakeProject = Callable[..., tuple[Project, Any]]


class _Projects:
    """Makes wired projects under one folder and cleans up after them (servers stopped, hook timings kept)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: list[tuple[Project, ScriptedServer]] = []
        self.started = time.monotonic()

    def __call__(self, host: str, *, judge_url: str | None, **options: Any) -> tuple[Project, Any]:
        binary, reason = host_binary(host)
        if binary is None:
            pytest.skip(f"real-client tier: {reason}")
        server = _server_for(host).start()
        project = Project(self.root / f"{host}-{len(self.made)}", host, binary, model_url=server.url,
                          judge_url=judge_url, **options)
        self.made.append((project, server))
        return project, server

    def close(self) -> None:
        for project, server in self.made:
            server.stop()
            _HOOK_CALLS.extend(project.hook_timings())
            assert not server.errors, f"the scripted {server.name} server failed: {server.errors}"
        if self.made:
            _TIER["first"] = _TIER["first"] or self.started
            _TIER["last"] = time.monotonic()


@pytest.fixture
def make_project(tmp_path: Path) -> Iterator[MakeProject]:
    """``make_project(host, judge_url=..., mode=..., ...)`` → ``(project, model_server)``: a wired temp project and a
    started scripted model server for the host; servers are stopped and hook timings collected at teardown."""
    projects = _Projects(tmp_path)
    yield projects
    projects.close()


@pytest.fixture(scope="module")
def module_projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeProject]:
    """The same for a scenario run once and read by several tests of a module."""
    projects = _Projects(tmp_path_factory.mktemp("hosts"))
    yield projects
    projects.close()


@pytest.fixture(scope="module")
def module_judge() -> Iterator[JudgeServer]:
    with JudgeServer("openai") as server:
        yield server


def _report() -> dict[str, Any]:
    by_key: dict[tuple[str, str], list[float]] = {}
    for host, event, seconds, _code in _HOOK_CALLS:
        by_key.setdefault((host, event), []).append(seconds)
    return {
        "what": "wall time of one `verigate hook <host> <event>` process as the real host ran it (ms)",
        "clients": {package: version for package, version in pins().items() if package in PACKAGES.values()},
        "hooks": [
            {"host": host, "event": event, "calls": len(values),
             "median_ms": round(statistics.median(values) * 1000, 1),
             "min_ms": round(min(values) * 1000, 1), "max_ms": round(max(values) * 1000, 1)}
            for (host, event), values in sorted(by_key.items())
        ],
        "tier_seconds": round(_TIER["last"] - _TIER["first"], 1) if _TIER["first"] else None,
        # the numbers scale with the machine's load: say what it was
        "load_average_1m_5m_15m": [round(value, 2) for value in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _HOOK_CALLS:
        return
    report = _report()
    TIMINGS_FILE.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    terminalreporter.section("verigate hook time inside the real clients (measured, not asserted)")
    for row in report["hooks"]:
        terminalreporter.write_line(f"{row['host']:<12} {row['event']:<20} median {row['median_ms']:>7.1f} ms  "
                                    f"(n={row['calls']}, {row['min_ms']:.0f}–{row['max_ms']:.0f} ms)")
    terminalreporter.write_line(f"real-client scenarios took {report['tier_seconds']} s at load average "
                                f"{report['load_average_1m_5m_15m']} on {report['cpus']} CPUs; "
                                f"written to {TIMINGS_FILE}")

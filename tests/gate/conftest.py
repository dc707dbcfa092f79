"""Fixtures for the gate tests: a Gate over a real SQLite file with a scripted judge-engine plug-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from verigate import Gate
from verigate.testing import ScriptedJudge

MakeGate = Callable[..., tuple[Gate, ScriptedJudge]]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "verigate.db"


@pytest.fixture
def make_gate(db_path: Path) -> Iterator[MakeGate]:
    """``make_gate(steps, plugins=..., **config sections)``: third-party entry points are off so that only the
    built-ins and the plug-ins a test passes take part."""
    opened: list[Gate] = []

    def make(steps: Sequence[Any] = (), *, plugins: Sequence[object] = (), judge: dict[str, Any] | None = None,
             repeat_last: bool = False, **sections: Any) -> tuple[Gate, ScriptedJudge]:
        scripted = ScriptedJudge(steps, repeat_last=repeat_last)
        config = {"judge": {"engine": "scripted", **(judge or {})}, **sections}
        gate = Gate.from_config(config, plugins=[scripted, *plugins], store=str(db_path), entry_points=False)
        opened.append(gate)
        return gate, scripted

    yield make
    for gate in opened:
        gate.close()

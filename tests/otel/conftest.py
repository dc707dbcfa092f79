"""OpenTelemetry tests: the real SDK with its in-memory exporters, and the verigate-otel plug-in as an object with
that SDK's providers (the global provider is never set here: it can be set only once per process, and every other
test's gate would report into it through the installed plug-in)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # this folder's helper module, importable by name
    sys.path.insert(0, HERE)

from otel_helpers import Otel  # noqa: E402


@pytest.fixture
def otel() -> Iterator[Otel]:
    found = Otel()
    yield found
    found.provider.shutdown()
    found.logger_provider.shutdown()

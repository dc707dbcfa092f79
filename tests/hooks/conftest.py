"""Fixtures of the Stop-hook and verigate-git tests."""

from __future__ import annotations

import sys
from pathlib import Path

# tests/ is on the pythonpath but this folder is not: make its helper modules importable by name
sys.path.insert(0, str(Path(__file__).parent))

"""Make this folder's helper module importable (``tests/trace`` cannot be a package: ``trace`` is a stdlib name)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

"""verigate's built-in judge plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

"""Redaction: everything that leaves the process passes the redactors (rule packs secrets, pii, privacy)."""

from __future__ import annotations

from .._face import present as _present
from ._base import Category, Finding, RedactionResult, Redactor
from ._egress import Egress
from ._redactor import DEFAULT_PACKS, PLACEHOLDER, RulePackRedactor, as_text, redact

__all__ = [
    "DEFAULT_PACKS",
    "PLACEHOLDER",
    "Category",
    "Egress",
    "Finding",
    "RedactionResult",
    "Redactor",
    "RulePackRedactor",
    "as_text",
    "redact",
]

_present(globals(), __name__)

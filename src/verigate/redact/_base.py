"""The redactor interface: what every redactor (built-in rule packs or plug-ins) returns."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import attrs

__all__ = ["Category", "Finding", "RedactionResult", "Redactor"]

#: ``secret`` (credentials), ``personal_data`` (may identify a person: e-mail, phone, card …),
#: ``privacy`` (paths, owner names, handles)
Category = Literal["secret", "personal_data", "privacy"]


@attrs.frozen
class Finding:
    """Where a rule matched: never the matched text itself."""

    rule_id: str
    category: Category
    start: int
    end: int
    placeholder: str
    severity: str = "high"
    #: an inline ``verigate: allow`` opt-out kept the text; recorded so it is auditable
    suppressed: bool = False

    @property
    def length(self) -> int:
        return self.end - self.start


@attrs.frozen
class RedactionResult:
    """The redacted text and what was found in the original."""

    text: str
    findings: tuple[Finding, ...] = ()

    @property
    def personal_data(self) -> bool:
        """True when a personal-data rule matched (suppressed findings count too: they are still there)."""
        return any(finding.category == "personal_data" for finding in self.findings)


@runtime_checkable
class Redactor(Protocol):
    """Removes information from text; it never adds back what another redactor removed."""

    @property
    def name(self) -> str: ...

    def redact(self, text: str) -> RedactionResult: ...

"""One exception tree for verigate; every class carries the exit code the CLI maps it to.

::

    VerigateError                      exit 2  (cannot run: usage, input, configuration)
    ├── ConfigError                    exit 2  a configuration file or mapping is invalid (file:line field)
    ├── InputError                     exit 2  bad input data (file:line field)
    │   ├── CandidateError             exit 2  a Candidate / Termination that cannot be built
    │   └── StrictJSONError            exit 2  JSON from outside that is not one unambiguous value
    ├── SchemaError                    exit 2  a shipped or given JSON schema is unreadable
    ├── PluginError                    exit 2  a plug-in failed to load or registered something invalid
    ├── RuleError                      exit 2  a rule pack is invalid (file:line rule id)
    ├── StoreError                     exit 2  the store is corrupt, locked past its timeout, or unreachable
    │   └── LedgerTamperedError        exit 1  the hash chain of the ledger does not verify
    ├── ReviewError                    exit 2  a pending review does not exist or cannot be resolved
    ├── JudgeError                     --      a judge could not judge; the gate turns it into verification_error
    └── EvidenceError                  exit 1  run evidence is rejected
        ├── EvidenceLegacyError        exit 10 the input is a legacy arbiter record, not run evidence
        └── EvidencePartialError       exit 11 the evidence is valid but partial (reasons listed)

Exit code 3 (a CI signal from ``verigate grade``) is a result, not an exception. Neither is a stage handler that
returns a decision not allowed for its stage: that is recorded and escalates (``escalate_hook_error``) inside the
gate's decision, so no exception class stands for it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CandidateError",
    "ConfigError",
    "EvidenceError",
    "EvidenceLegacyError",
    "EvidencePartialError",
    "InputError",
    "JudgeError",
    "LedgerTamperedError",
    "PluginError",
    "ReviewError",
    "RuleError",
    "SchemaError",
    "StoreError",
    "StrictJSONError",
    "VerigateError",
    "where",
]


def where(source: str | None = None, line: int | None = None, field: str | None = None) -> str:
    """Format a location as ``source:line field`` leaving out the parts that are unknown."""
    location = source or ""
    if line is not None:
        location = f"{location}:{line}" if location else f"line {line}"
    if field:
        location = f"{location} {field}" if location else field
    return location


class VerigateError(Exception):
    """Base of every error verigate raises on purpose."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        location = where(source, line, field)
        super().__init__(f"{location}: {message}" if location else message)


class ConfigError(VerigateError):
    """A configuration file or mapping is invalid."""


class InputError(VerigateError):
    """Input data (a trace, a transcript, stdin JSON, a task folder) is malformed."""


class CandidateError(InputError):
    """A Candidate or Termination cannot be built from the data given."""


class StrictJSONError(InputError):
    """Text that is not one unambiguous JSON value (see ``verigate.strict_loads``): malformed, a repeated key,
    NaN/Infinity, an integer past ±(2**53 − 1), a lone surrogate, nested past the bound, or too large. ``kind`` names
    which (``syntax``, ``duplicate_key``, ``constant``, ``number``, ``surrogate``, ``depth``, ``size``, ``type``)."""

    def __init__(self, kind: str, message: str, *, source: str | None = None, line: int | None = None) -> None:
        self.kind = kind
        super().__init__(message, source=source, line=line)


class SchemaError(VerigateError):
    """A JSON schema cannot be read or compiled."""


class PluginError(VerigateError):
    """A plug-in failed to load, or registered something invalid."""


class RuleError(VerigateError):
    """A rule pack is invalid."""


class StoreError(VerigateError):
    """The store cannot be used: corrupt, locked past its timeout, or unreachable."""


class LedgerTamperedError(StoreError):
    """The ledger's hash chain does not verify."""

    exit_code = 1


class ReviewError(VerigateError):
    """A pending review does not exist or cannot be resolved as asked."""


class JudgeError(VerigateError):
    """A judge could not produce a usable verdict; ``reason`` is the verification_error code."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        self.reason = reason
        super().__init__(message or reason)


class EvidenceError(VerigateError):
    """Run evidence is rejected; ``reasons`` lists every failed check."""

    exit_code = 1

    def __init__(self, reasons: Sequence[str], message: str | None = None) -> None:
        self.reasons = tuple(reasons)
        super().__init__(message or "; ".join(self.reasons) or "rejected")


class EvidenceLegacyError(EvidenceError):
    """The input is a legacy arbiter record, not run evidence."""

    exit_code = 10


class EvidencePartialError(EvidenceError):
    """The evidence is valid but partial; ``reasons`` are ``unavailable:<path>`` / ``unverified:<kind>``."""

    exit_code = 11

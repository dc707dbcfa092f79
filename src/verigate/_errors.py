"""One exception tree for verigate; every class carries the exit code the CLI maps it to.

The tree and the exit code of each class: the table in docs/limits.md ("Errors on the command line"). Exit code
3 is also ``verigate grade``'s CI signal, a result rather than an exception. A stage handler that returns a
decision not allowed for its stage is no exception either: it is recorded and escalates (``escalate_hook_error``)
inside the gate's decision.
"""

from __future__ import annotations

#: for annotations only: ``typing`` (with re and enum) is most of ``import verigate``, which every hook process pays;
#: type checkers read this constant as typing.TYPE_CHECKING
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = [
    "CandidateError",
    "ConfigError",
    "EvidenceError",
    "EvidenceLegacyError",
    "EvidencePartialError",
    "GateHeldError",
    "InputError",
    "JudgeError",
    "LedgerTamperedError",
    "PluginError",
    "ReviewError",
    "ReviewPendingError",
    "RuleError",
    "SchemaError",
    "StoreError",
    "StrictJSONError",
    "UnverifiedError",
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


class GateHeldError(VerigateError):
    """A runtime adapter's run ended without a completed answer; nothing was handed out. ``result`` is the gate's
    ``FinalizeResult``; ``review_id`` the pending review's id (None when it is not a review, or could not be
    stored: then ``result.pending_text`` keeps the candidate)."""

    exit_code = 3

    def __init__(self, result: Any, message: str) -> None:
        self.result = result
        self.outcome: str = result.outcome
        self.policy_action: str = result.policy_action
        self.review_id: str | None = result.pending_id
        super().__init__(message)


class ReviewPendingError(GateHeldError):
    """The gate filed the answer for a person (``verigate review``); ``review_id`` names the review."""


class UnverifiedError(GateHeldError):
    """The run ended unverified (verification skipped, or a revise the runtime cannot make)."""


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

"""verigate's loggers: every record is redacted before any handler sees it.

Log messages carry what plug-ins, handlers and judges said (an exception's text is attacker-written: a tool
output quoted in an error, a token in a URL), and logs leave the process through whatever handlers the host
installed. :func:`get_logger` attaches a filter that redacts the formatted message, the exception text and the
stack text with the shipped packs (secrets, pii, privacy: the default egress), before handlers format anything.
If the redactor cannot be built, the message is replaced by a fixed text: nothing is logged unredacted.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .redact import RulePackRedactor

__all__ = ["WITHHELD", "RedactingFilter", "get_logger"]

#: what a record says when its text cannot be redacted
WITHHELD = "[log message withheld: redaction unavailable]"

#: attributes every LogRecord has; any other string attribute came from ``extra=`` and may reach a formatter
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}

_LOCK = threading.Lock()
_REDACTOR: list[RulePackRedactor] = []  # built once, on the first record
_BUILDING = threading.local()  # building the redactor may log: those records are withheld, not recursed into


def _redactor() -> RulePackRedactor | None:
    """The shipped default packs, compiled once with the built-in rule kinds only (a logging call never
    imports third-party plug-ins); None while it cannot be built (tried again on the next record)."""
    if _REDACTOR:
        return _REDACTOR[0]
    if getattr(_BUILDING, "active", False):
        return None
    _BUILDING.active = True
    try:
        from .redact import DEFAULT_PACKS, RulePackRedactor
        from .rules._builtin import verigate_rule_kinds

        redactor = RulePackRedactor.from_packs(DEFAULT_PACKS, kinds=verigate_rule_kinds())
    except Exception:  # a broken install must not make logging raise: the records say they were withheld
        return None
    finally:
        _BUILDING.active = False
    with _LOCK:
        if not _REDACTOR:
            _REDACTOR.append(redactor)
    return _REDACTOR[0]


def _redacted(text: str) -> str:
    redactor = _redactor()
    if redactor is None:
        return WITHHELD
    try:
        return redactor.redact(text).text
    except Exception:
        return WITHHELD


class RedactingFilter(logging.Filter):
    """Replaces a record's message (formatted with its arguments), exception and stack text by their
    redaction; ``record.args`` becomes ``()`` and ``record.exc_info`` None, so no handler formats the
    originals again. Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            self._redact(record)
        except Exception:  # a filter that raises would surface in the caller's code path; withhold instead
            record.msg, record.args = WITHHELD, ()
            record.exc_info = record.exc_text = record.stack_info = None
        return True

    @staticmethod
    def _redact(record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: the bare message is still worth a line
            message = f"{record.msg!s} [log arguments could not be formatted]"
        record.msg, record.args = _redacted(message), ()
        if record.exc_info:
            formatted = logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = _redacted(formatted), None
        elif record.exc_text:
            record.exc_text = _redacted(record.exc_text)
        if record.stack_info:
            record.stack_info = _redacted(record.stack_info)
        for name, value in list(vars(record).items()):
            if name not in _STANDARD and isinstance(value, str):
                setattr(record, name, _redacted(value))


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with a :class:`RedactingFilter` attached once."""
    logger = logging.getLogger(name)
    with _LOCK:
        if not any(isinstance(existing, RedactingFilter) for existing in logger.filters):
            logger.addFilter(RedactingFilter())
    return logger

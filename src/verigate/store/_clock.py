"""Store timestamps: an injectable UTC clock and the one ISO-8601 format every stored row uses."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from .. import _face
from .._errors import StoreError

__all__ = ["Clock", "format_timestamp", "parse_timestamp", "utc_now"]

#: returns the current time as an aware datetime (tests inject a fake one to drive review expiry)
Clock = Callable[[], datetime]

#: fixed width, so stored timestamps compare correctly as strings (SQL ``<`` on created_at)
_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_timestamp(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC; a naive datetime is refused (its zone would be a guess)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise StoreError(f"the store clock returned a naive datetime ({moment!r}); it must be timezone-aware")
    utc = moment.astimezone(UTC)
    if utc.year >= 1000:  # isoformat writes the same text several times faster (a few timestamps per finalize)
        return utc.isoformat(timespec="microseconds")[:26] + "Z"
    return utc.strftime(_FORMAT)


def parse_timestamp(text: str) -> datetime:
    try:
        return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise StoreError(f"stored timestamp {text!r} is not in the form YYYY-MM-DDTHH:MM:SS.ffffffZ") from exc


_face.present_module(globals())  # the names verigate.store exports report it

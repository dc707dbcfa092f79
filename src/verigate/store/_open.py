"""Opening a store by URL: SQLite paths and URLs here, every other scheme from a ``verigate_store_backends`` plug-in.

Plug-ins are consulted only for a scheme that is not SQLite's, so the hook path (a SQLite file) never loads the
plug-in manager to open its store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from .. import _face
from .._errors import StoreError, VerigateError
from ._base import Store
from ._clock import Clock
from ._sqlite import DEFAULT_STORE_PATH, SqliteStore, sqlite_path

if TYPE_CHECKING:
    from .._plugins import PluginManager

__all__ = ["StoreOpener", "open_store", "shown_url", "url_scheme"]

#: RFC 3986 scheme, then ``://``
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://")
#: the ``scheme://`` a userinfo may follow
_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
HOOK = "verigate_store_backends"


class StoreOpener(Protocol):
    """What a ``verigate_store_backends`` plug-in maps a URL scheme to."""

    def __call__(self, url: str, *, lock_timeout_s: float, clock: Clock | None, create: bool) -> Store: ...


def url_scheme(url: str) -> str | None:
    """The lower-case scheme of a URL a plug-in serves; None for SQLite (a path, ``sqlite:…``, ``:memory:``)."""
    match = _SCHEME.match(url)
    if match is None:
        if "://" in url:
            raise StoreError("the store URL has no valid scheme before '://'", source=shown_url(url))
        return None
    if match.group(1) == "sqlite":
        return None
    if match.group(1).lower() == "sqlite":  # SQLite's own parsing (sqlite_path) knows the lower-case spelling only
        raise StoreError("write the SQLite scheme in lower case: sqlite:///…", source=shown_url(url))
    return match.group(1).lower()


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """``(scheme://, userinfo, rest)`` with the userinfo up to the LAST '@': libpq takes '#', '?' and '@' inside
    the credentials, and a password holding '/' must not show either (masking too much is harmless)."""
    match = _PREFIX.match(url)
    at = url.rfind("@")
    if match is None or at < match.end():
        return None
    return match.group(0), url[match.end():at], url[at + 1:]


def shown_url(url: str) -> str:
    """The URL as an error message may show it: no password in the userinfo and no query (libpq takes
    ``?password=`` there)."""
    parts = _userinfo(url)
    if parts is not None and ":" in parts[1]:
        url = f"{parts[0]}{parts[1].split(':', 1)[0]}:***@{parts[2]}"
    return url.split("?", 1)[0] + ("?…" if "?" in url else "")


def open_store(url: str = DEFAULT_STORE_PATH, *, lock_timeout_s: float = 30.0, clock: Clock | None = None,
               create: bool = True, sync_every_write: bool = False, plugins: Iterable[object | str] = (),
               manager: PluginManager | None = None) -> Store:
    """Open the store named by ``url``: a SQLite path or ``sqlite:`` URL (created, with its folder, unless
    ``create=False``), ``:memory:``, or a URL whose scheme an installed plug-in serves (``postgresql://…``).

    For another scheme the opener comes from ``manager`` (the gate's), else from a manager loading the installed
    entry points and ``plugins``. ``sync_every_write`` is SQLite's (another backend's durability is its own).
    Whatever the backend raises while opening becomes a :class:`~verigate.StoreError` without the URL's password.
    """
    scheme = url_scheme(url)
    if scheme is None:
        return SqliteStore(sqlite_path(url), lock_timeout_s=lock_timeout_s, clock=clock, create=create,
                           sync_every_write=sync_every_write)
    shown = shown_url(url)
    if sync_every_write:
        raise StoreError("sync_every_write applies to SQLite stores only", source=shown, field="sync_every_write")
    opener = _backends(manager, plugins).get(scheme)
    if opener is None:
        installed = ", ".join(sorted(_backends(manager, plugins))) or "none"
        raise StoreError(f"no store backend for {scheme!r} URLs is installed (plug-in schemes: {installed}; "
                         "built in: paths, sqlite:///…, :memory:)", source=shown)
    try:
        store = opener(url, lock_timeout_s=lock_timeout_s, clock=clock, create=create)
    except VerigateError:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a backend's bug or driver error is a store that cannot be used, loudly
        raise StoreError(f"the {scheme!r} store backend failed to open the store: {type(exc).__name__}: "
                         f"{_scrubbed(str(exc), url)}", source=shown) from exc
    if not isinstance(store, Store):
        raise StoreError(f"the {scheme!r} store backend returned {type(store).__name__}, which does not implement "
                         "verigate.store.Store", source=shown)
    return store


def _backends(manager: PluginManager | None, plugins: Iterable[object | str]) -> Mapping[str, StoreOpener]:
    from .._plugins import create_manager, merged_registry

    registry = merged_registry(manager if manager is not None else create_manager(plugins), HOOK)
    return {str(scheme).lower(): opener for scheme, opener in registry.items()}


def _scrubbed(text: str, url: str) -> str:
    """A driver's message without the URL's password, should it quote the URL."""
    parts = _userinfo(url)
    secrets = [parts[1].split(":", 1)[1]] if parts is not None and ":" in parts[1] else []
    secrets += re.findall(r"password=([^&]+)", url)
    # a driver quotes the password as it used it: percent-decoded too (the longest first: no part of one left)
    for secret in sorted({*secrets, *(unquote(secret) for secret in secrets)}, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text.splitlines()[0][:300] if text else ""


_face.present_module(globals())  # the names verigate.store exports report it

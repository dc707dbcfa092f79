"""Which rules the built-in kinds already checked: their patterns compiled without error, in this process or in an
earlier one of this verigate on this Python.

A built-in kind compiles a rule's Python regexes at the rule's first use, not when its pack is loaded (most
texts need few of a pack's rules, and ``re`` patterns cannot be kept across processes). A pack must still fail
at load when a pattern is bad, so a kind checks each rule at load by compiling it, unless that very rule was
checked before: then its patterns compiled, and ``group``, the empty-match test and every ``allow`` passed,
for exactly these fields (``rule.fields``, as canonical JSON) with exactly this Python (``sys.version``, whose
``re`` and ``unicodedata`` decide) and verigate (``CHECKS`` and the version). Only successes are recorded, so
a pack never seen before, or one whose rule changed by one character, is checked by compiling it, as always.

The record is kept in the per-user cache (``_cache``: ``<state root>/cache/rule-packs/checks/``, one strict JSON
entry per Python and verigate version, written atomically, ignored when damaged). It only moves *when* a check
runs, never its outcome: a rule taken from the record is checked in full when it is first used, and a pattern
that fails then (a record written by something else) raises the same RuleError from the scan, so nothing is
matched by a rule that would not have loaded.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from typing import Any

from .. import _json as strict_json
from .._builtin_sha256 import sha256_hex
from ._cache import entry_key, read_entry, write_entry

__all__ = ["CHECKS", "digest", "flush", "prove", "proven"]

#: bump when a built-in kind's load-time checks change: a record of the older checks is then not found
CHECKS = 1
#: rules a record holds at most (the shipped packs have ~50; a larger record keeps the newest)
MAX_RECORDED = 4096
#: beside the parsed packs (whatever may read verigate's own pack cache may read this too), not among them
FOLDER = "rule-packs/checks"

_lock = threading.Lock()
#: checked by compiling in this process (whatever the record says)
_here: set[str] = set()
#: the record as read, per cache folder (the state root may change, as in tests): digests in insertion order
_read: dict[str, dict[str, None]] = {}
#: checked here and not yet in the record
_pending: dict[str, None] = {}


def digest(kind: str, fields: Mapping[str, Any]) -> str | None:
    """The rule's identity for the record (``kind``: the built-in kind's own name); None when the fields are not
    plain JSON values (such a rule is always checked by compiling)."""
    try:
        material = strict_json.dumps({"checks": CHECKS, "fields": fields, "kind": kind})
    except (TypeError, ValueError):
        return None
    return sha256_hex(material.encode())


def _is_digest(item: object) -> bool:
    """A sha256 in lower-case hex (string tests: a regex would be compiled by every process at import)."""
    return isinstance(item, str) and len(item) == 64 and not item.strip("0123456789abcdef")


def _key() -> str:
    return entry_key(f"python {sys.implementation.name} {sys.version}", FOLDER)


def _recorded() -> dict[str, None]:
    """The record of the current cache folder, read once per process and folder (call with the lock held)."""
    from ._cache import cache_folder

    folder = cache_folder(name=FOLDER)
    found = _read.get(folder)
    if found is None:
        data = read_entry(_key(), folder=FOLDER)
        valid = isinstance(data, list) and all(_is_digest(item) for item in data)
        found = _read[folder] = dict.fromkeys(data) if valid else {}  # a damaged record: nothing is known
    return found


def proven(rule_digest: str) -> bool:
    """Whether the rule was checked before (here, or by an earlier process as recorded)."""
    with _lock:
        return rule_digest in _here or rule_digest in _recorded()


def prove(rule_digest: str) -> None:
    """The rule passed every load-time check by compiling: recorded at the next :func:`flush`."""
    with _lock:
        _here.add(rule_digest)
        if rule_digest not in _recorded():
            _pending[rule_digest] = None


def flush() -> None:
    """Write the rules checked since the last flush into the record (merged with what another process wrote
    meanwhile); a failure to write is no error (the rules are then checked by compiling next time)."""
    with _lock:
        if not _pending:
            return
        from ._cache import cache_folder

        folder = cache_folder(name=FOLDER)
        _read.pop(folder, None)  # read again: another process may have added rules since
        merged = {**_recorded(), **_pending}
        _pending.clear()
        kept = list(merged)[-MAX_RECORDED:]
        _read[folder] = dict.fromkeys(kept)
        write_entry(_key(), kept, folder=FOLDER)

"""The verifier's derivations from one task folder, remembered per process by the folder's bytes.

Everything here depends on the task folder alone, never on the EV under test, so verifying many EVs against one
folder re-reads its files every time (a changed file is a new key: nothing is trusted by name or time stamp) but
parses c3.json, re-hashes the Plan Package, decodes record.jsonl and re-derives the record's fields only once per
distinct content. Failures are never remembered: a folder that cannot be read or parsed raises as it always did.
The remembered values are shared, so callers treat them as read-only and copy a list before extending it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import EvidenceError
from ._c3 import check_c3, parse_c3
from ._delivery import DeliveryFields, derive_delivery_fields, derive_terminal_state, load_entries
from ._privacy import Escalation
from ._producer import derive_human_interventions, derive_source_escalations
from ._sources import read_c3_sources, read_record_text

if TYPE_CHECKING:
    from ..redact import Redactor

__all__ = ["C3Facts", "RecordDerivations", "RecordFacts", "c3_facts", "record_facts"]

#: at most this many folders are remembered, and only folders whose files total at most this many bytes
_MAX_FOLDERS = 16
_MAX_FOLDER_BYTES = 1024 * 1024


@attrs.frozen(eq=False)
class C3Facts:
    """approvals/c3.json parsed, and the reasons the producer's own check gives against it (empty: it passes)."""

    c3: dict[str, Any]
    reasons: tuple[str, ...]


@attrs.frozen(eq=False)
class RecordDerivations:
    """What the verifier re-derives from c3.json and record.jsonl without arbiter records (``arbiter=[]``)."""

    delivery: DeliveryFields
    delivery_errors: tuple[str, ...]
    delivery_required: tuple[Escalation, ...]
    source_escalations: tuple[Escalation, ...]
    interventions: list[dict[str, str]]
    intervention_escalations: tuple[Escalation, ...]
    terminal_state: str | None
    terminal_errors: tuple[str, ...]


@attrs.frozen(eq=False)
class RecordFacts:
    """delivery/record.jsonl decoded (entry ids checked) and whether it exists."""

    entries: tuple[dict[str, Any], ...]
    exists: bool
    #: the derivations per (c3 facts, redactor), filled on first use
    derived: dict[tuple[int, int], tuple[C3Facts, Any, RecordDerivations]] = attrs.field(factory=dict)

    def derivations(self, c3: C3Facts, secrets: Redactor) -> RecordDerivations:
        """The arbiter-free derivations (computed once per c3 facts and redactor; exceptions propagate)."""
        key = (id(c3), id(secrets))
        found = self.derived.get(key)
        if found is not None and found[0] is c3 and found[1] is secrets:
            return found[2]
        derived, errors, required = derive_delivery_fields(self.entries, self.exists, secrets=secrets)
        interventions, escalations = derive_human_interventions(c3.c3.get("decision"), self.entries, [], secrets)
        try:
            terminal: str | None = derive_terminal_state(c3.c3.get("decision"), self.entries, self.exists)
            terminal_errors: tuple[str, ...] = ()
        except EvidenceError as exc:
            terminal, terminal_errors = None, tuple(exc.reasons)
        result = RecordDerivations(
            delivery=derived, delivery_errors=tuple(errors), delivery_required=tuple(required),
            source_escalations=tuple(derive_source_escalations(c3.c3, self.entries, [])),
            interventions=interventions, intervention_escalations=tuple(escalations),
            terminal_state=terminal, terminal_errors=terminal_errors,
        )
        if len(self.derived) >= _MAX_FOLDERS:
            self.derived.clear()
        self.derived[key] = (c3, secrets, result)
        return result


_C3_MEMO: dict[tuple[str, str, tuple[tuple[str, bytes | None], ...]], C3Facts] = {}
_RECORD_MEMO: dict[str, RecordFacts] = {}


def _remember(memo: dict[Any, Any], key: Any, size: int, value: Any) -> None:
    if size > _MAX_FOLDER_BYTES:
        return  # bounded memory: a large folder is simply derived again next time
    if len(memo) >= _MAX_FOLDERS:
        memo.clear()
    memo[key] = value


def c3_facts(task_dir: Path, task_name: str) -> C3Facts:
    """Read c3.json and the six artifacts (raises EvidenceError as ``read_c3`` does); parse and check once."""
    text, artifacts = read_c3_sources(task_dir)
    key = (task_name, text, tuple(artifacts.items()))
    found = _C3_MEMO.get(key)
    if found is None:
        c3 = parse_c3(text, "approvals/c3.json")
        found = C3Facts(c3=c3, reasons=tuple(check_c3(c3, task_name, artifacts)))
        size = len(text) + sum(len(data) for data in artifacts.values() if data is not None)
        _remember(_C3_MEMO, key, size, found)
    return found


def record_facts(task_dir: Path) -> RecordFacts:
    """Read record.jsonl (raises EvidenceError as ``read_record`` does); decode it once per content."""
    text = read_record_text(task_dir)
    if text is None:
        return _ABSENT
    found = _RECORD_MEMO.get(text)
    if found is None:
        found = RecordFacts(entries=load_entries(text, "delivery/record.jsonl"), exists=True)
        _remember(_RECORD_MEMO, text, len(text), found)
    return found


_ABSENT = RecordFacts(entries=(), exists=False)


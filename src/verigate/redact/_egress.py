"""Egress: every string that leaves the process (judge requests, records, exports) passes the redactors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from .._models import Candidate, ToolObservation
from ._base import Finding, RedactionResult, Redactor
from ._values import redact_value, text_of

__all__ = ["Egress"]


@attrs.frozen
class Egress:
    """The redactors in force, applied in order; a redactor error propagates (nothing leaves unredacted)."""

    redactors: tuple[Redactor, ...]

    @classmethod
    def of(cls, results: Iterable[Sequence[Redactor] | None]) -> Egress:
        """Flatten the results of the ``verigate_redactors`` hook."""
        return cls(tuple(redactor for result in results if result for redactor in result))

    def text(self, text: str) -> RedactionResult:
        findings: list[Finding] = []
        for redactor in self.redactors:
            result = redactor.redact(text)
            text = result.text
            findings.extend(result.findings)
        return RedactionResult(text, tuple(findings))

    def keyed(self, key: str, text: str) -> RedactionResult:
        """Redact ``text`` as the value of ``key`` in structured data (``{"password": "..."}``).

        Rules that need the key's context (keyword assignments, ``Authorization`` headers, connection-string
        keys) see ``key=text``; the value's part of that result is returned when it removed more than the
        value alone. Spans of the findings are relative to ``text``.
        """
        plain = self.text(text)
        prefix = f"{key}="
        in_context = self.text(prefix + text)
        if not in_context.text.startswith(prefix) or in_context.text[len(prefix):] == plain.text:
            # the key itself was redacted (its offsets moved) or the context changed nothing
            return plain
        return RedactionResult(
            in_context.text[len(prefix):],
            tuple(attrs.evolve(finding, start=finding.start - len(prefix), end=finding.end - len(prefix))
                  for finding in in_context.findings if finding.start >= len(prefix)),
        )

    def value(self, value: Any) -> tuple[Any, tuple[Finding, ...]]:
        """JSON-like data with every key and scalar redacted; the result holds only JSON-native types.

        Strings are redacted, and each value under a key also in the context of that key (see :meth:`keyed`);
        every other scalar (bytes, numbers, arbitrary objects) is scanned as its text first and kept as a number
        only while that text matches nothing. See :func:`~verigate.redact._values.redact_value`."""
        return redact_value(value, self._scan)

    def _scan(self, text: str, key: str | None) -> RedactionResult:
        return self.text(text) if key is None else self.keyed(key, text)

    def scalar(self, value: object) -> RedactionResult:
        """One value that should be text (a candidate's request, a tool's output), redacted as its text
        whatever its type: a caller passing bytes or an object still gets nothing unscanned out."""
        return self.text(text_of(value))

    def candidate(self, candidate: Candidate) -> tuple[Candidate, tuple[Finding, ...]]:
        """The candidate with request, final text, requirements and every tool input/output redacted."""
        findings: list[Finding] = []

        def text(value: object) -> str:
            result = self.scalar(value)
            findings.extend(result.findings)
            return result.text

        calls: list[ToolObservation] = []
        for call in candidate.tool_calls:
            redacted_input, input_findings = self.value(call.input)
            findings.extend(input_findings)
            # a status that is not a boolean is unknown: it is never passed on as it came (it could be any object)
            ok = call.ok if call.ok is None or isinstance(call.ok, bool) else None
            calls.append(ToolObservation(text(call.name), redacted_input, text(call.output), ok))
        redacted = attrs.evolve(
            candidate,
            request=text(candidate.request),
            final_text=text(candidate.final_text),
            requirements=tuple(text(requirement) for requirement in candidate.requirements),
            tool_calls=tuple(calls),
        )
        return redacted, tuple(findings)

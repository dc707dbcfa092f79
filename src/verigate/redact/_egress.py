"""Egress: every string that leaves the process (judge requests, records, exports) passes the redactors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._models import Candidate, ToolObservation
from ._base import Finding, RedactionResult, Redactor

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
        """Redact every string inside JSON-like data (keys included, and each string value also in the context
        of its key: see :meth:`keyed`); other scalars pass unchanged."""
        findings: list[Finding] = []

        def walk(node: Any, key: str | None = None) -> Any:
            if isinstance(node, str):
                result = self.text(node) if key is None else self.keyed(key, node)
                findings.extend(result.findings)
                return result.text
            if isinstance(node, Mapping):
                return {walk(name) if isinstance(name, str) else name:
                        walk(item, name if isinstance(name, str) else None) for name, item in node.items()}
            if isinstance(node, (list, tuple)):
                return [walk(item) for item in node]
            return node

        return walk(value), tuple(findings)

    def candidate(self, candidate: Candidate) -> tuple[Candidate, tuple[Finding, ...]]:
        """The candidate with request, final text, requirements and every tool input/output redacted."""
        findings: list[Finding] = []

        def text(value: str) -> str:
            result = self.text(value)
            findings.extend(result.findings)
            return result.text

        calls: list[ToolObservation] = []
        for call in candidate.tool_calls:
            redacted_input, input_findings = self.value(dict(call.input))
            findings.extend(input_findings)
            calls.append(ToolObservation(text(call.name), redacted_input, text(call.output), call.ok))
        redacted = attrs.evolve(
            candidate,
            request=text(candidate.request),
            final_text=text(candidate.final_text),
            requirements=tuple(text(requirement) for requirement in candidate.requirements),
            tool_calls=tuple(calls),
        )
        return redacted, tuple(findings)

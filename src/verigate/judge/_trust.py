"""Judge trust and privacy: every request is redacted first; personal data never reaches an auxiliary judge."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from .._errors import JudgeError
from .._models import Candidate
from ..redact._egress import Egress
from ._base import JudgeConfig, JudgeRequest

__all__ = ["check_trust", "prepare_request"]


def prepare_request(
    candidate: Candidate,
    *,
    egress: Egress,
    requirements: Iterable[str] = (),
    known_misses: Iterable[str] = (),
) -> JudgeRequest:
    """The JudgeRequest for ``candidate``: redacted by ``egress``, with ``contains_personal_data`` settled.

    The flag becomes True when the runtime said so or a personal-data redactor matched, else False (a
    redactor error propagates: nothing leaves unredacted). ``requirements`` are appended to the candidate's
    own, in order, without duplicates.
    """
    redacted, findings = egress.candidate(candidate)
    personal = candidate.contains_personal_data is True or any(
        finding.category == "personal_data" for finding in findings
    )
    extra = [egress.text(item) for item in requirements]
    personal = personal or any(result.personal_data for result in extra)
    merged = tuple(dict.fromkeys([*redacted.requirements, *(result.text for result in extra)]))
    return JudgeRequest(
        candidate=attrs.evolve(redacted, contains_personal_data=personal),
        requirements=merged,
        known_misses=tuple(dict.fromkeys(known_misses)),
    )


def check_trust(config: JudgeConfig, request: JudgeRequest) -> None:
    """Refuse (``personal_data_omitted``) to send a candidate that may hold personal data to an auxiliary judge.

    "May" includes "unknown" (``contains_personal_data is None``): use :func:`prepare_request` to settle it.
    """
    if config.trust == "auxiliary" and request.candidate.contains_personal_data is not False:
        raise JudgeError(
            "personal_data_omitted",
            "the candidate may contain personal data and the judge is auxiliary: it was not sent",
        )

"""Judge trust: a candidate that may hold personal data never reaches an auxiliary judge."""

from __future__ import annotations

from .. import _face
from .._errors import JudgeError
from ._base import JudgeConfig, JudgeRequest

__all__ = ["check_trust"]


def check_trust(config: JudgeConfig, request: JudgeRequest) -> None:
    """Refuse (``personal_data_omitted``) to send a candidate that may hold personal data to an auxiliary judge.

    "May" includes "unknown" (``contains_personal_data is None``): the gate settles the flag from the
    redactors' findings before it builds the request; anyone else calling an engine must settle it too.
    """
    if config.trust == "auxiliary" and request.candidate.contains_personal_data is not False:
        raise JudgeError(
            "personal_data_omitted",
            "the candidate may contain personal data and the judge is auxiliary: it was not sent",
        )


_face.present_module(globals())  # the names verigate.judge exports report it

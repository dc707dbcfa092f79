"""verigate for Pydantic AI: the gate as an output validator.

::

    gated = output_validator(gate)
    agent = Agent(model, retries=gated.retries)     # the gate's revise budget as the output retries
    agent.output_validator(gated)

``revise`` becomes ``ModelRetry(follow_up)``; a pending review raises
:class:`verigate.runtimes.ReviewPendingError` (``review_id``), an unverified end
:class:`verigate.runtimes.UnverifiedError`; the output is returned only when the gate completes it.
"""

from __future__ import annotations

from verigate.runtimes import GateHeldError, ReviewPendingError, UnverifiedError

from ._validator import GateOutputValidator, output_validator

__all__ = ["GateHeldError", "GateOutputValidator", "ReviewPendingError", "UnverifiedError", "output_validator"]

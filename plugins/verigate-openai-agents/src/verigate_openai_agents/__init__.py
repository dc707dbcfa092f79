"""verigate for the OpenAI Agents SDK (``openai-agents``).

* :func:`run_gated` / :func:`run_gated_sync`: ``Runner.run`` under the gate, with the revise loop the SDK lacks;
  returns a :class:`GatedRun` whose ``status`` is ``completed`` (the answer), ``pending`` (``review_id``) or
  ``unverified``. The candidate comes from the run's items.
* :func:`gate_guardrail`: the gate as an ``OutputGuardrail`` for code that calls ``Runner.run`` itself; it trips
  on anything but ``completed`` and puts a :class:`GateCheck` in ``output_info``.

The mapping from the gate's outcome to what the SDK does is the one of :mod:`verigate.runtimes`.
"""

from __future__ import annotations

from ._guardrail import GUARDRAIL_NAME, GateCheck, gate_guardrail
from ._run import GatedRun, run_gated, run_gated_sync

__all__ = ["GUARDRAIL_NAME", "GateCheck", "GatedRun", "gate_guardrail", "run_gated", "run_gated_sync"]

"""Every hook of the ``verigate`` pluggy project, each documenting how its results combine.

Plug-ins implement hooks with ``@verigate.hookimpl`` and register through the entry-point group
``verigate``. verigate's own stages are registered the same way (the ``_builtin`` modules of
``verigate.gate``, ``verigate.judge``, ``verigate.redact``, ``verigate.rules`` and ``verigate.trace``, listed in
``verigate._plugins.BUILTIN_PLUGINS``).

Two families:

* **Registries** (``verigate_judge_engines``, ``verigate_model_clients``, ``verigate_rule_kinds``,
  ``verigate_trace_rules``, ``verigate_redactors``, ``verigate_store_backends``, ``verigate_observer``): called once
  when a Gate (or grader, rule engine, store) is built; results are merged. A name registered twice is a
  :class:`~verigate.PluginError` — a plug-in never silently replaces another's engine, client, kind, rule or store.
* **Decision stages** (``verigate_structural_check``, ``verigate_pre_verify``, ``verigate_post_verify``,
  ``verigate_stop``): the gate calls each implementation *itself*, one by one, in the documented order
  (priority ascending, then plug-in name, see :func:`verigate.priority`), each under the configured timeout,
  with immutable data. A handler that raises, times out or returns a value not allowed for its stage is
  recorded and escalates (``escalate_hook_error``); it can never cause a pass. Handlers may be ``async def``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ._config import RedactionConfig
    from ._models import (
        Candidate,
        PostDecision,
        StageContext,
        StopDirective,
        Strengthen,
        StructuralFinding,
        Termination,
        Verdict,
    )
    from ._plugins import PluginManager
    from ._telemetry import Observer
    from .redact._base import Redactor
    from .store import StoreOpener

PROJECT = "verigate"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --------------------------------------------------------------------------------------------- registries


@hookspec
def verigate_judge_engines() -> Mapping[str, Any]:
    """Judge engines by name: ``{"llm_judge": factory}``.

    A factory is called as ``factory(config=JudgeConfig, client=ModelClient | None)`` and returns an object
    with ``async judge(request: JudgeRequest, *, timeout_s: float) -> Verdict`` (see
    :mod:`verigate.judge`). Results of all plug-ins are merged; a duplicate name is an error.
    """


@hookspec
def verigate_model_clients() -> Mapping[str, Any]:
    """Model clients by entry name: ``{"openai": factory}``.

    A factory is called as ``factory(config=JudgeConfig)`` and returns a :class:`verigate.judge.ModelClient`
    (chat engines such as ``llm_judge``) or a :class:`verigate.judge.DecisionClient` (``jev``); an engine given
    the wrong kind of client refuses it with a ConfigError. Merged; a duplicate name is an error.
    """


@hookspec
def verigate_rule_kinds() -> Mapping[str, Any]:
    """Rule kinds of the declarative rule engine by name (see :mod:`verigate.rules`). Merged; duplicates err."""


@hookspec
def verigate_trace_rules() -> Mapping[str, Any]:
    """Trace-grader rules by id (see :mod:`verigate.trace`). Merged; a duplicate id is an error."""


@hookspec
def verigate_store_backends() -> Mapping[str, StoreOpener]:
    """Store backends by URL scheme: ``{"postgresql": opener, "postgres": opener}``.

    ``verigate.store.open_store`` (and so ``store.url`` of ``verigate.yaml``, the gate and every CLI command)
    consults it only for a scheme that is not SQLite's. An opener is called as ``opener(url, *,
    lock_timeout_s=float, clock=Clock | None, create=bool)`` and returns a :class:`verigate.store.Store`; it maps
    its driver's errors to :class:`~verigate.StoreError`. Merged; a scheme registered twice is an error.
    ``verigate.testing.StoreConformance`` is the test suite a backend runs.
    """


@hookspec
def verigate_redactors(config: RedactionConfig, manager: PluginManager) -> Sequence[Redactor] | None:
    """Redactors applied to everything that leaves the process (see :mod:`verigate.redact`).

    ``config`` is the ``redaction:`` section (which packs are active); ``manager`` is the calling plug-in manager,
    so a redactor built on the rule engine takes its rule kinds from it instead of loading every plug-in again
    (an implementation may leave it out: pluggy passes only the arguments it names). This hook is called through
    pluggy, so the results come in pluggy's call order — the plug-in registered last first (entry points by name,
    then the built-ins not installed as entry points, then the ``plugins`` given), ``tryfirst`` /
    ``trylast`` moving an implementation to the front or back — and are concatenated and applied in that order.
    Whatever the order, each redactor only ever removes information: none can put back what another removed. A
    redactor that raises stops the egress (fail closed: nothing is sent or stored).
    """


@hookspec
def verigate_observer() -> Observer | None:
    """An observer of the gate and the trace grader (telemetry), or None (the interface: ``Observer`` below).

    Called once when a Gate (or a ``grade_many`` call) is built; every observer returned is told of every finalize,
    decision stage, judge model call and graded source (``observer.start(kind, attributes, current=...)`` returning
    a span with ``end(attributes, error)``), with codes, counts and configured names only — never candidate text.
    An observer with ``capture_content = True`` also gets the judge call's request and reply, redacted by the
    gate's redactors first. Whatever an observer raises is contained and logged: telemetry never changes a
    decision. Without an implementation the gate starts no span at all. ``verigate-agents-otel`` implements it
    with OpenTelemetry (see docs/telemetry.md).
    """


# --------------------------------------------------------------------------------------------- decision stages


@hookspec
def verigate_structural_check(
    candidate: Candidate, termination: Termination, context: StageContext
) -> Sequence[StructuralFinding] | None:
    """Cheap structural checks run before anything else.

    Findings of all handlers are concatenated. A finding with ``fixable=False`` skips the semantic judge.

    ``context`` (:class:`verigate.StageContext`, every decision stage gets it) says where the finalize runs: the
    project folder, host, host session and transcript the runtime knows (verigate's Stop hook sets them all), None
    where it does not. An implementation may leave it out: pluggy passes only the arguments it names.
    """


@hookspec
def verigate_pre_verify(candidate: Candidate, context: StageContext) -> Strengthen | None:
    """PreVerify: return ``Strengthen(additional_misses, requirements)`` or ``None`` (continue).

    ``context``: where the finalize runs (see :func:`verigate_structural_check`); optional to name.

    Strengthen sets of all handlers are united. Any added missing code turns a pass into a retryable fail.
    Any other return value is an invalid decision (``escalate_hook_error``).
    """


@hookspec
def verigate_post_verify(candidate: Candidate, verdict: Verdict, context: StageContext) -> PostDecision | None:
    """PostVerify: ``PostDecision.accept()``, ``.revise(instruction)``, ``.escalate(reason)`` or ``None``.

    ``context``: where the finalize runs (see :func:`verigate_structural_check`); optional to name.

    Decisions combine by strictness: escalate > revise > accept. An accept of a failed verification becomes
    ``escalate_invalid_accept``. ``revise`` needs a non-empty instruction.
    """


@hookspec
def verigate_stop(
    candidate: Candidate, verdict: Verdict, action: str, context: StageContext
) -> StopDirective | None:
    """Stop: ``StopDirective.finalize()``, ``.continue_(instruction)`` or ``None``.

    ``context``: where the finalize runs (see :func:`verigate_structural_check`); optional to name.

    ``action`` is the policy action after PostVerify. A CONTINUE is honoured only when the action is not an
    escalation (it is recorded and ignored otherwise); instructions are input to the next attempt, never
    authority. ``continue`` needs a non-empty instruction.
    """

"""The agent-as-judge axis: off and never called until the config enables it and says ``verified: true``.

Every grading asks for the axis and most find it off: the judge package and asyncio are imported once the axis
is on, not to be told "off".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import ConfigError, JudgeError
from .._models import Candidate, ToolObservation, Verdict
from .._plugins import merged_registry
from ._manager import grading_manager
from ._model import JudgeAxis, RunResult
from ._redact import report_egress

if TYPE_CHECKING:
    from .._config import RedactionConfig
    from ..judge import JudgeConfig, JudgeEngine
    from ..redact._egress import Egress
    from ._config import TraceConfig

__all__ = ["judge_axis", "judge_trajectory"]


def _disabled_reason(config: TraceConfig) -> str | None:
    if not config.judge.enabled:
        return "disabled: judge.enabled is false in the config (nothing was called)"
    if not config.verified:
        return "disabled: the config says verified: false — the judge axis stays off until it is verified"
    return None


def _judge_config(config: TraceConfig) -> JudgeConfig:
    from ..judge import JudgeConfig

    section = config.judge
    return JudgeConfig(engine=section.engine, client=section.client, model=section.model, base_url=section.base_url,
                       api_key_env=section.api_key_env, trust=section.trust, timeout_s=section.timeout_s,
                       threshold=section.threshold, options=dict(section.options))


def _trajectory_candidate(result: RunResult, rubric: Sequence[str]) -> Candidate:
    run = result.run
    lines = [f"{step.step}. {step.tool} -> {'ok' if step.ok else 'failed' if step.ok is False else 'unknown'}"
             for step in run.steps]
    if run.step_count > len(run.steps):
        lines.append(f"({run.step_count - len(run.steps)} further steps not shown)")
    observations = tuple(ToolObservation(step.tool, step.args, step.observation or "", step.ok) for step in run.steps)
    return Candidate(
        request=f"Judge the trajectory of agent run {run.run_id} on task {run.task!r}: the path, not the answer.",
        final_text="\n".join(lines) or "(no tool calls)",
        tool_calls=observations,
        session_id=run.run_id,
        requirements=tuple(rubric),
    )


async def judge_trajectory(result: RunResult, engine: JudgeEngine, egress: Egress, config: TraceConfig) -> Verdict:
    """One judge call on one run's trajectory (redacted first); a judge failure is a verification error, never
    a pass."""
    from ..judge import JudgeRequest

    judge_config = _judge_config(config)
    try:
        # redacted before it leaves the process; the personal-data flag is settled from the redactors' findings
        redacted, findings = egress.candidate(_trajectory_candidate(result, config.judge.rubric))
        personal = any(finding.category == "personal_data" for finding in findings)
        request = JudgeRequest(candidate=attrs.evolve(redacted, contains_personal_data=personal),
                               requirements=redacted.requirements)
        return await engine.judge(request, timeout_s=judge_config.effective_timeout_s)
    except JudgeError as exc:
        return Verdict.verification_error(exc.reason, engine=judge_config.engine)


def _engine(config: TraceConfig, plugins: Iterable[object | str], client: Any,
            redaction: RedactionConfig | None) -> tuple[JudgeEngine, Egress]:
    manager = grading_manager(plugins)
    judge_config = _judge_config(config)
    engines = merged_registry(manager, "verigate_judge_engines")
    factory = engines.get(judge_config.engine)
    if factory is None:
        raise ConfigError(f"unknown judge engine {judge_config.engine!r} (known: {', '.join(sorted(engines))})",
                          source=config.source, field="judge.engine")
    if client is None:
        if judge_config.client is None:
            raise ConfigError("judge.enabled is true but no judge.client is configured", source=config.source,
                              field="judge.client")
        clients = merged_registry(manager, "verigate_model_clients")
        client_factory = clients.get(judge_config.client)
        if client_factory is None:
            raise ConfigError(f"unknown judge client {judge_config.client!r} (known: {', '.join(sorted(clients))}); "
                              "HTTP clients come as plug-in distributions", source=config.source, field="judge.client")
        client = client_factory(config=judge_config)
    engine: JudgeEngine = factory(config=judge_config, client=client)
    egress = report_egress(redaction, manager=manager)
    return engine, egress


def judge_axis(results: Sequence[RunResult], config: TraceConfig, *, plugins: Iterable[object | str] = (),
               client: Any = None, redaction: RedactionConfig | None = None) -> tuple[JudgeAxis, tuple[RunResult, ...]]:
    """The axis status, and the results with a judge verdict on every top-level run when the axis is on (each
    request redacted by the configured packs: ``redaction`` None reads them from ./verigate.yaml)."""
    reason = _disabled_reason(config)
    if reason is not None:
        return JudgeAxis("disabled", reason), tuple(results)
    import asyncio

    engine, egress = _engine(config, plugins, client, redaction)

    async def judge_all() -> list[Verdict | None]:
        verdicts: list[Verdict | None] = []
        for result in results:  # one at a time: a judge is a rate-limited external service
            verdicts.append(None if result.run.parent is not None
                            else await judge_trajectory(result, engine, egress, config))
        return verdicts

    verdicts = asyncio.run(judge_all())
    judged = tuple(attrs.evolve(result, judge=verdict) for result, verdict in zip(results, verdicts, strict=True))
    name = getattr(engine, "effective_engine", None) or engine.name
    return JudgeAxis("judged", f"judged by {name}", str(name)), judged

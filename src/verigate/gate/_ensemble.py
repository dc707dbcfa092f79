"""The unanimous rule of a judge ensemble (``judge.ensemble``, ``judge.mode: unanimous``), pure: no I/O, no clock.

The candidate passes only if every member passes; any member's verification error makes the ensemble's verdict a
verification error (fail-closed: never a majority, never "the others passed"). Misses and reflections are merged in
member order without duplicates."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._models import Reflection, Verdict
from ..judge._base import JudgeConfig

__all__ = ["ENSEMBLE_ENGINE", "MODES", "judge_label", "merge_unanimous"]

#: ``Verdict.engine`` of an ensemble's verdict (and the evidence row's ``judge_engine``)
ENSEMBLE_ENGINE = "ensemble"
#: the modes ``judge.mode`` allows
MODES = ("unanimous",)


def judge_label(config: JudgeConfig) -> str:
    """The configured judge's name: its engine, or ``ensemble``."""
    return ENSEMBLE_ENGINE if config.ensemble else config.engine


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _merged_text(texts: Iterable[str]) -> str:
    return "\n".join(_unique(text.strip() for text in texts if text.strip()))


def _merged_reflection(verdicts: Sequence[Verdict]) -> Reflection | None:
    reflections = [verdict.reflection for verdict in verdicts if verdict.reflection is not None]
    if not reflections:
        return None
    return Reflection(
        observation=_merged_text(item.observation for item in reflections),
        lesson=_merged_text(item.lesson for item in reflections),
        next_check=_merged_text(item.next_check for item in reflections),
    )


def _passes(verdict: Verdict) -> bool:
    # the policy's reading, for every engine: a pass that lists misses contradicts itself and is no pass
    return not verdict.is_verification_error and verdict.passed and not verdict.rubric_misses


def merge_unanimous(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict from the members' verdicts, in member order.

    * any member's error → a verification error carrying the first one's reason code (in member order);
    * else passed only if every member passed (a member's contradictory pass counts as a fail);
    * misses: every member's, deduplicated in member order; score: the lowest member score;
    * reflection: of the members that failed (all members' when the ensemble passed), each field's distinct texts
      in member order; retryable only if every failing member said so (a hard fail stays one).
    """
    label = "ensemble:unanimous[" + ", ".join(v.effective_engine or v.engine for v in verdicts) + "]"
    if not verdicts:
        return Verdict.verification_error("judge_unavailable", engine=ENSEMBLE_ENGINE, effective_engine=label)
    for verdict in verdicts:
        if verdict.is_verification_error:
            return Verdict.verification_error(verdict.error or "judge_error", engine=ENSEMBLE_ENGINE,
                                              effective_engine=label)
    passed = all(_passes(verdict) for verdict in verdicts)
    failing = [verdict for verdict in verdicts if not _passes(verdict)]
    scores = [verdict.score for verdict in verdicts if verdict.score is not None]
    return Verdict(
        passed=passed,
        rubric_misses=_unique(code for verdict in verdicts for code in verdict.rubric_misses),
        score=min(scores) if scores else None,
        reflection=_merged_reflection(verdicts if passed else failing),
        retryable=not passed and all(verdict.retryable for verdict in failing),
        engine=ENSEMBLE_ENGINE,
        effective_engine=label,
    )

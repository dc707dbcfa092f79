"""The gate's judge over labelled cases: ``verigate judge eval``.

Each case is redacted by the gate's egress and judged by the gate's own judge call (``call_judge``: the same
prompt, trust rules, timeout and verdict parser a finalize uses), so the figures are those of the judge the gate
runs — not of a second copy that could drift. The structural check and the decision-stage hooks do not run: the
judge alone is measured. The judge lives in ``verigate.judge`` and is configured there; this runner is here
because it drives the gate's judging path (``verigate.judge`` never imports the gate)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from .._models import Strengthen, Verdict
from ..judge._agreement import JudgeQuality, Judgment, Outcome
from ..judge._base import MAX_JUDGE_TIMEOUT_S
from ..judge._cases import JudgeCase
from ..judge._usage import JudgeUsage, collecting_usage
from ..redact._base import RedactionResult
from ._containment import contain
from ._engine import Gate
from ._judging import call_judge, prepare_judge
from ._redaction import WITHHELD, MemoEgress, Redacted, redact

__all__ = ["MAX_CONCURRENCY", "MAX_REPEAT", "evaluate_judge"]

#: judgments in flight at once, at most (a local model server or an API's rate limit decides below it)
MAX_CONCURRENCY = 64
#: repeats of one case set, at most
MAX_REPEAT = 100


def _outcome(verdict: Verdict) -> Outcome:
    if verdict.is_verification_error:
        return "error"
    return "complete" if verdict.passed else "incomplete"


def _merged(reported: Sequence[JudgeUsage]) -> JudgeUsage | None:
    if not reported:
        return None

    def total(name: str) -> object:
        values = [getattr(item, name) for item in reported if getattr(item, name) is not None]
        return sum(values) if values else None

    return JudgeUsage(total("input_tokens"), total("output_tokens"), total("cost_usd"))  # type: ignore[arg-type]


def _note(egress: MemoEgress, note: str) -> str:
    try:
        return egress.text(note).text if note else ""
    except BaseException as exc:  # a redactor failed: the note is withheld like any text it fails on
        contain(exc)
        return WITHHELD


async def evaluate_judge(gate: Gate, cases: Sequence[JudgeCase], *, repeat: int = 1,
                         concurrency: int = 4) -> JudgeQuality:
    """Judge every case ``repeat`` times with the gate's judge, at most ``concurrency`` calls at once, and return
    the figures (:class:`verigate.judge.JudgeQuality`). Every failure of a call is a verification error in the
    report (never agreement, never a pass); only a wrong argument raises (ValueError)."""
    if not 1 <= repeat <= MAX_REPEAT:
        raise ValueError(f"repeat must be 1..{MAX_REPEAT}")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be 1..{MAX_CONCURRENCY}")
    shared: dict[str, RedactionResult] = {}
    egress = MemoEgress(gate.egress.redactors, shared)
    redacted: list[Redacted] = [redact(case.candidate(f"judge-eval-{index}"), egress)
                                for index, case in enumerate(cases)]
    notes = [_note(egress, case.note) for case in cases]

    async def judge_once(index: int) -> Judgment:
        case, view = cases[index], redacted[index]
        with collecting_usage() as reported:
            started = time.monotonic()
            verdict = await call_judge(gate.judge, gate.config.judge, view, Strengthen(), None, egress)
            latency = time.monotonic() - started
        return Judgment(index=index, case=case.name, label=case.label, outcome=_outcome(verdict),
                        error=verdict.error, latency_s=latency, usage=_merged(reported),
                        request=view.candidate.request, final_text=view.candidate.final_text, note=notes[index])

    if gate.judge is not None and gate.config.judge is not None:
        # the client's one-time preparation (an SDK imported at first use: seconds) before the first timed call, as
        # the gate does before its judge timeout starts; a failure here fails each call again, as an error. Bounded:
        # a preparation that hangs past the judge's longest timeout gives up here (each call then prepares itself)
        await prepare_judge(gate.judge, gate.config.judge, time.monotonic() + MAX_JUDGE_TIMEOUT_S)
    # a fixed pool of workers takes the judgments in order (round by round): never more tasks than calls in flight
    order = iter([(round_, index) for round_ in range(repeat) for index in range(len(cases))])
    results: dict[tuple[int, int], Judgment] = {}

    async def worker() -> None:
        for round_, index in order:  # one iterator shared by the workers (one thread: next() never races)
            results[(index, round_)] = await judge_once(index)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, repeat * len(cases)))))
    return JudgeQuality("eval", tuple(results[key] for key in sorted(results)), repeat=repeat)

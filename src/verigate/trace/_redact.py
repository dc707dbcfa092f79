"""Report egress: every string a report writes from a trace passes the redactors once, before any report is built."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ._model import Flag, GradeReport, PassHatK, Run, RunResult, Step, TaskResult

if TYPE_CHECKING:
    import pluggy

    from .._config import RedactionConfig
    from ..redact import Egress

__all__ = ["ensure_redacted", "redact_report", "report_egress"]


def report_egress(redaction: RedactionConfig | None = None, plugins: Iterable[object | str] = (), *,
                  manager: pluggy.PluginManager | None = None) -> Egress:
    """The redactors in force: the ``verigate_redactors`` hook (built-in packs and plug-ins, or ``manager``'s)
    given ``redaction`` (None: the ``redaction`` section of ./verigate.yaml when there is one, else the default
    packs; a broken verigate.yaml is a ConfigError, never a fallback)."""
    from .._config import load_config
    from .._plugins import create_manager
    from ..redact import Egress

    config = load_config().redaction if redaction is None else redaction
    manager = create_manager(plugins) if manager is None else manager
    return Egress.of(manager.hook.verigate_redactors(config=config, manager=manager))


def _display_path(source: str) -> str:
    """A source path as reports show it: relative to the working directory when under it (an absolute path
    outside it names the user's folders and goes to the privacy redactors like any other text)."""
    path = Path(source)
    if not path.is_absolute():
        return source
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return source


class _ReportRedactor:
    """Redacts each distinct string and argument mapping once (ids, paths, notes and arguments repeat)."""

    def __init__(self, egress: Egress) -> None:
        self.egress = egress
        self.cache: dict[str, str] = {}
        self.args_cache: dict[str, dict[str, Any]] = {}

    def text(self, value: str) -> str:
        redacted = self.cache.get(value)
        if redacted is None:
            redacted = self.cache[value] = self.egress.text(value).text
        return redacted

    def optional(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def texts(self, values: Iterable[str]) -> tuple[str, ...]:
        return tuple(map(self.text, values))

    def args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Keys too, and each value in the context of its key; a session repeats the same arguments often."""
        key = repr(args)
        redacted = self.args_cache.get(key)
        if redacted is None:
            redacted = self.args_cache[key] = self.egress.value(dict(args))[0]
        return redacted

    def step(self, step: Step) -> Step:
        return attrs.evolve(step, tool=self.text(step.tool), args=self.args(step.args),
                            observation=self.optional(step.observation), cwd=self.optional(step.cwd))

    def run(self, run: Run) -> Run:
        return attrs.evolve(run, task=self.text(run.task), run_id=self.text(run.run_id),
                            source=self.text(_display_path(run.source)), parent=self.optional(run.parent),
                            steps=tuple(map(self.step, run.steps)), notes=self.texts(run.notes))

    def flag(self, flag: Flag) -> Flag:
        return attrs.evolve(flag, tool=self.text(flag.tool), detail=self.text(flag.detail))

    def result(self, result: RunResult) -> RunResult:
        judge = result.judge
        if judge is not None:
            judge = attrs.evolve(judge, rubric_misses=self.texts(judge.rubric_misses))
        return attrs.evolve(result, run=self.run(result.run), flags=tuple(map(self.flag, result.flags)),
                            judge=judge)

    def task(self, task: TaskResult) -> TaskResult:
        return attrs.evolve(task, task=self.text(task.task), run_ids=self.texts(task.run_ids))

    def pass_hat_k(self, row: PassHatK) -> PassHatK:
        return attrs.evolve(row, tasks_short=self.texts(row.tasks_short))


def redact_report(report: GradeReport, egress: Egress | None = None) -> GradeReport:
    """The report with every string that came from the traces redacted: step tools, arguments (keys and values)
    and observations, flag details, task and run ids, source paths, notes and warning samples.

    Grading has already run on the original data (a forbidden ``git push --force https://user:token@…`` is
    flagged on the real command); this is the one egress step between grading and every report format, which
    all call :func:`ensure_redacted`. Ids are redacted the same way wherever they appear, so runs still group
    by task. ``egress`` None uses :func:`report_egress` (the configured packs).
    """
    if report.redacted:
        return report
    redactor = _ReportRedactor(egress if egress is not None else report_egress())
    return attrs.evolve(
        report,
        runs=tuple(map(redactor.result, report.runs)),
        tasks=tuple(map(redactor.task, report.tasks)),
        pass_hat_k=tuple(map(redactor.pass_hat_k, report.pass_hat_k)),
        config_source=redactor.text(_display_path(report.config_source)),
        warning_samples=redactor.texts(report.warning_samples),
        notes=redactor.texts(report.notes),
        redacted=True,
    )


def ensure_redacted(report: GradeReport) -> GradeReport:
    """``report`` as a report format may write it: redacted with the configured packs unless it already is
    (the CLI redacts once up front, so the formats do not repeat it)."""
    return report if report.redacted else redact_report(report)

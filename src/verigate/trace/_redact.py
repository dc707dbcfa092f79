"""Report egress: every string a report writes from a trace passes the redactors once, before any report is built."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ._model import Flag, GradeReport, PassHatK, Run, RunResult, Step, TaskResult

if TYPE_CHECKING:
    import pluggy

    from .._config import RedactionConfig
    from ..redact import Egress

__all__ = ["PathDisplay", "ensure_redacted", "project_root", "redact_report", "report_egress"]


def report_egress(redaction: RedactionConfig | None = None, plugins: Iterable[object | str] = (), *,
                  manager: pluggy.PluginManager | None = None) -> Egress:
    """The redactors in force: the ``verigate_redactors`` hook (built-in packs and plug-ins, or ``manager``'s)
    given ``redaction`` (None: the ``redaction`` section of ./verigate.yaml when there is one, else the default
    packs; a broken verigate.yaml is a ConfigError, never a fallback)."""
    from .._config import load_config
    from ..redact import Egress
    from ._manager import grading_manager

    config = load_config().redaction if redaction is None else redaction
    manager = grading_manager(plugins) if manager is None else manager
    return Egress.of(manager.hook.verigate_redactors(config=config, manager=manager))


def project_root(cwd: Path) -> Path:
    """The project the grader runs in: the nearest folder at or above ``cwd`` holding ``.git``, else ``cwd``."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


#: a root starts a path only where no name character or slash comes before it (not inside a URL or a longer
#: path), and it ends where the path goes on with "/" or stops (not "/repo" inside "/repo2")
_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")
_BEFORE = r"(?<![A-Za-z0-9_.~+@/-])"
_AFTER = r"(/|(?![A-Za-z0-9_.~+@-]))"


class PathDisplay:
    """Shows absolute POSIX paths as a person can use them, before the redactors see the text: under a project
    root (the grader's project and working directory, and the working directories the runs were recorded in)
    relative to it, under the home folder as ``~/…``. Anything else is left for the privacy pack to judge.

    A root that is ``/``, the home folder or above it is not used (it would make every path "relative" and hide
    nothing but the home folder's name); of nested roots the outermost is kept, so one project has one base.
    """

    def __init__(self, roots: Iterable[str], home: str | None) -> None:
        home = home.rstrip("/") if home and home.startswith("/") and home != "/" else None
        usable = {posixpath.normpath(root) for root in roots if root.startswith("/")}
        usable = {root for root in usable
                  if root != "/" and not (home is not None and (home == root or home.startswith(root + "/")))}
        self.roots = sorted(root for root in usable
                            if not any(root.startswith(other + "/") for other in usable))
        self.home = home
        bases = [*self.roots, *([home] if home else [])]
        bases.sort(key=len, reverse=True)  # the longest base wins: a project inside home is relative, not ~/
        alternatives = "|".join(map(re.escape, bases))
        self.pattern = re.compile(f"{_BEFORE}({alternatives}){_AFTER}") if bases else None

    @classmethod
    def here(cls, runs: Iterable[Run] = ()) -> PathDisplay:
        """Roots: this process's project and working directory, and each run's recorded working directories."""
        cwd = Path.cwd()
        roots = {str(project_root(cwd)), str(cwd)}
        roots.update(step.cwd for run in runs for step in run.steps if step.cwd)
        return cls(roots, os.environ.get("HOME") or str(Path.home()))

    def _replace(self, match: re.Match[str]) -> str:
        base, slash = match.group(1), match.group(2)
        if base == self.home:
            return "~" + slash
        return "" if slash else "."

    def text(self, value: str) -> str:
        if self.pattern is None or "/" not in value:
            return value
        return self.pattern.sub(self._replace, value)

    def file(self, path: str) -> str:
        """A flagged file as a report names it: relative or ``~/…`` when it can be, else (an absolute path the
        privacy pack would redact whole) ``…/`` and its name, so the file stays identifiable."""
        shown = self.text(path)
        if shown.startswith("/") or _WINDOWS_ABSOLUTE.match(shown):
            return "…/" + re.split(r"[\\/]", shown.rstrip("\\/"))[-1]
        return shown

    def value(self, value: Any) -> Any:
        """JSON-like data with every string shown by :meth:`text` (containers copied)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value


class _ReportRedactor:
    """Redacts each distinct string and argument mapping once (ids, paths, notes and arguments repeat)."""

    def __init__(self, egress: Egress, paths: PathDisplay) -> None:
        self.egress = egress
        self.paths = paths
        self.cache: dict[str, str] = {}
        self.args_cache: dict[str, dict[str, Any]] = {}

    def text(self, value: str) -> str:
        redacted = self.cache.get(value)
        if redacted is None:
            redacted = self.cache[value] = self.egress.text(self.paths.text(value)).text
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
            redacted = self.args_cache[key] = self.egress.value(self.paths.value(dict(args)))[0]
        return redacted

    def step(self, step: Step) -> Step:
        return attrs.evolve(step, tool=self.text(step.tool), args=self.args(step.args),
                            observation=self.optional(step.observation), cwd=self.optional(step.cwd))

    def run(self, run: Run) -> Run:
        return attrs.evolve(run, task=self.text(run.task), run_id=self.text(run.run_id),
                            source=self.text(self.paths.file(run.source)), parent=self.optional(run.parent),
                            steps=tuple(map(self.step, run.steps)), notes=self.texts(run.notes))

    def flag(self, flag: Flag) -> Flag:
        path = None if flag.path is None else self.text(self.paths.file(flag.path))
        return attrs.evolve(flag, tool=self.text(flag.tool), detail=self.text(flag.detail), path=path)

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


def redact_report(report: GradeReport, egress: Egress | None = None, paths: PathDisplay | None = None
                  ) -> GradeReport:
    """The report with every string that came from the traces redacted: step tools, arguments (keys and values)
    and observations, flag details, task and run ids, source paths, notes and warning samples.

    Grading has already run on the original data (a forbidden ``git push --force https://user:token@…`` is
    flagged on the real command); this is the one egress step between grading and every report format, which
    all call :func:`ensure_redacted`. Ids are redacted the same way wherever they appear, so runs still group
    by task. ``egress`` None uses :func:`report_egress` (the configured packs). Before the redactors, ``paths``
    (None: :meth:`PathDisplay.here`) shows absolute paths relative to their project or as ``~/…``: the privacy
    pack then redacts only the paths outside both, and a flagged file keeps at least its name.
    """
    if report.redacted:
        return report
    paths = paths if paths is not None else PathDisplay.here(result.run for result in report.runs)
    redactor = _ReportRedactor(egress if egress is not None else report_egress(), paths)
    return attrs.evolve(
        report,
        runs=tuple(map(redactor.result, report.runs)),
        tasks=tuple(map(redactor.task, report.tasks)),
        pass_hat_k=tuple(map(redactor.pass_hat_k, report.pass_hat_k)),
        config_source=redactor.text(paths.file(report.config_source)),
        warning_samples=redactor.texts(report.warning_samples),
        notes=redactor.texts(report.notes),
        redacted=True,
    )


def ensure_redacted(report: GradeReport) -> GradeReport:
    """``report`` as a report format may write it: redacted with the configured packs unless it already is
    (the CLI redacts once up front, so the formats do not repeat it)."""
    return report if report.redacted else redact_report(report)

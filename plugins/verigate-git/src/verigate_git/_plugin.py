"""The PreVerify hook: check the answer's commit, push and file claims against the repository."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from verigate import hookimpl, priority

if TYPE_CHECKING:
    from verigate import Candidate, StageContext, Strengthen, ToolObservation

    from ._claims import ClaimPack, Claims
    from ._repo import RepoView
    from ._state import RequestBaseline

__all__ = ["REPOSITORY_ENV_VARS", "GitClaims"]

#: a pinned repository, ahead of the project the gate's runtime names in the stage context
PIN_ENV_VAR = "VERIGATE_GIT_REPO"
#: the last resort of a runtime that names no project in the context (Claude Code sets it for hook commands)
CLAUDE_PROJECT_ENV_VAR = "CLAUDE_PROJECT_DIR"
#: the environment variables read for the repository, in order (the context's project sits between them)
REPOSITORY_ENV_VARS = (PIN_ENV_VAR, CLAUDE_PROJECT_ENV_VAR)
#: a replacement claim pack (a YAML file in the shipped pack's format)
CLAIMS_ENV_VAR = "VERIGATE_GIT_CLAIMS"
#: tools whose input names a file the agent wrote (Claude Code names)
_WRITING_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"}
#: what ``git commit`` prints first: "[main 1a2b3c4] message" or "[main (root-commit) 1a2b3c4] message"
_COMMIT_LINE = re.compile(r"^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\]", re.MULTILINE)


class GitClaims:
    """A verigate plug-in: ``Strengthen`` with a missing code for every claim the repository contradicts.

    ``repository`` is any folder inside the working tree; without it the first that is set of
    ``VERIGATE_GIT_REPO``, the stage context's ``project_dir`` (verigate's Stop hook sets it to the project it
    resolved) and ``CLAUDE_PROJECT_DIR`` is used, and with none set (or no repository there) the plug-in has
    nothing to check and stays out of the way. A repository given here that does not exist is an error (the gate
    escalates).
    """

    def __init__(self, repository: str | Path | None = None, *, claims: ClaimPack | str | Path | None = None) -> None:
        self._repository = Path(repository) if repository is not None else None
        self._claims = claims

    @functools.cached_property
    def pack(self) -> ClaimPack:
        # imported here, not at load: the claim pack is verigate's rule engine over a YAML pack
        from ._claims import ClaimPack, default_pack

        if isinstance(self._claims, ClaimPack):
            return self._claims
        return default_pack(self._claims or os.environ.get(CLAIMS_ENV_VAR) or None)

    def repository(self, context: StageContext | None = None) -> tuple[RepoView | None, Path | None]:
        """The repository to check and the folder relative names are read from."""
        if self._repository is not None:
            view = discover(self._repository)
            if view is None:
                raise FileNotFoundError(f"verigate-git: {self._repository} is not inside a git repository")
            return view, self._repository
        project = context.project_dir if context is not None else None
        for folder in (os.environ.get(PIN_ENV_VAR), project, os.environ.get(CLAUDE_PROJECT_ENV_VAR)):
            if folder:
                return discover(folder), Path(folder)
        return None, None

    @hookimpl
    @priority(50)  # cheap and deterministic: before slower evaluators
    def verigate_pre_verify(self, candidate: Candidate, context: StageContext | None = None) -> Strengthen | None:
        claims = self.pack.scan(candidate.final_text)
        if not claims.any:
            return None
        view, cwd = self.repository(context)
        if view is None:
            return None
        from verigate import Strengthen

        from ._state import advance

        baseline = advance(view.root, candidate.session_id, candidate.request, candidate.attempt, view.head)
        misses = check_claims(claims, view, baseline, candidate.tool_calls, cwd)
        if not misses:
            return None
        return Strengthen(
            additional_misses=tuple(code for code, _ in misses),
            requirements=tuple(dict.fromkeys(requirement for _, requirement in misses)),
        )


def check_claims(
    claims: Claims,
    view: RepoView,
    baseline: RequestBaseline,
    tool_calls: Iterable[ToolObservation],
    cwd: Path | None,
) -> list[tuple[str, str]]:
    """(missing code, requirement) for every claim the repository contradicts, in a stable order."""
    observations = tuple(tool_calls)
    edited = _edited_paths(view, observations, cwd)
    uncommitted = sorted(edited & view.pending)
    committed = _commit_made(view, baseline, observations, edited)
    created = _in_repository(view, claims.created, cwd)
    changed = _in_repository(view, claims.changed, cwd)
    misses: list[tuple[str, str]] = []
    if claims.commit and (not committed or uncommitted):
        detail = f"; still uncommitted: {', '.join(uncommitted)}" if uncommitted else ""
        misses.append(("claimed_commit_missing", f"the commit the answer claims must exist in the repository{detail}"))
    if claims.push and (view.head is None or view.head not in view.remote_heads().values()):
        misses.append(("claimed_push_missing", "the pushed commit must be what a remote-tracking branch points at"))
    for named, paths in created:
        if not any(view.exists(path) for path in paths):
            misses.append(("claimed_file_missing", f"the file {named} the answer says it created must exist"))
    for named, paths in changed:
        existing = [path for path in paths if view.exists(path)]
        if not existing:
            misses.append(("claimed_file_missing", f"the file {named} the answer says it changed must exist"))
        elif not any(_changed(view, baseline, path) for path in existing):
            misses.append(("claimed_file_unchanged", f"the file {named} the answer says it changed must differ"))
    if (claims.commit or created or changed) and not view.pending and not committed:
        misses.append(("no_changes_made", "the answer claims changes, but the repository shows none"))
    return misses


def discover(start: str | Path) -> RepoView | None:
    """``_repo.discover``, imported on first use: dulwich is loaded only when a repository is read, not when the
    plug-in is (an import failure then is this hook's error, which the gate escalates)."""
    from ._repo import discover as discover_repository

    return discover_repository(start)


def _in_repository(view: RepoView, names: Iterable[str], cwd: Path | None) -> list[tuple[str, tuple[str, ...]]]:
    """(name as written, repository paths it may mean); names outside the repository are not this plug-in's."""
    resolved = ((named, view.resolve(named, cwd)) for named in names)
    return [(named, paths) for named, paths in resolved if paths is not None]


def _edited_paths(view: RepoView, observations: tuple[ToolObservation, ...], cwd: Path | None) -> frozenset[str]:
    """Repository paths the agent wrote with its file tools in this turn (failed calls do not count)."""
    paths: set[str] = set()
    for call in observations:
        key = _WRITING_TOOLS.get(call.name)
        value = call.input.get(key) if key else None
        if isinstance(value, str) and call.ok is not False:
            paths.update(view.resolve(value, cwd) or ())
    return frozenset(paths)


def _commit_made(
    view: RepoView, baseline: RequestBaseline, observations: tuple[ToolObservation, ...], edited: frozenset[str]
) -> bool:
    """Did HEAD move for this request?

    With a baseline: HEAD differs from it. On the session's first attempt there is none, so a commit needs
    evidence from the turn itself: a ``git commit`` output naming a commit in HEAD's history, or a HEAD commit
    that changed a file the agent edited in this turn.
    """
    if view.head is None:
        return False
    if baseline.known:
        return view.head != baseline.head
    printed = [match.group(1) for call in observations for match in _COMMIT_LINE.finditer(call.output)]
    if view.history_contains(printed):
        return True
    parent = view.first_parent(view.head)
    return any(view.blob_in(view.head, path) != view.blob_in(parent, path) for path in edited)


def _changed(view: RepoView, baseline: RequestBaseline, path: str) -> bool:
    """The file differs from the baseline: uncommitted, or changed by a commit since (first attempt: by HEAD)."""
    if path in view.pending:
        return True
    before = baseline.head if baseline.known else view.first_parent(view.head)
    return view.blob_in(view.head, path) != view.blob_in(before, path)

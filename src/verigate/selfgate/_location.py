"""Where the self-gate keeps its state: a per-user folder keyed by the project, outside every writable root.

The hosts' sandboxes let the agent's shell write the project (Claude Code: the working directory and
``/tmp/claude``; Codex ``workspace-write``: the workspace, ``/tmp`` and ``$TMPDIR``), so state kept in
``<project>/.verigate/`` is guarded by shell-word matching only. State kept here is out of the sandbox's reach.
"""

# os and os.path rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping

from .._builtin_sha256 import sha256_hex
from ._paths import PATH_MAX

__all__ = ["CONFIG_NAME", "LEGACY_STORE", "STATE_HOME_ENV", "STORE_NAME", "cache_folder", "config_candidates",
           "inside", "legacy_store", "project_key", "project_state_dir", "protected_paths", "resolved", "state_root",
           "store_paths"]

STATE_HOME_ENV = "VERIGATE_STATE_HOME"
STORE_NAME = "self-gates.jsonl"
#: where the store lived before it moved to the per-user folder (imported once, see ``_store.import_legacy``)
LEGACY_STORE = os.path.join(".verigate", STORE_NAME)
CONFIG_NAME = "verigate.yaml"


def state_root(environ: Mapping[str, str] | None = None) -> str:
    """``${VERIGATE_STATE_HOME:-${XDG_STATE_HOME:-~/.local/state}}/verigate`` (never the temp folder: an empty
    or relative value is ignored, as the XDG specification asks)."""
    env = os.environ if environ is None else environ
    for name in (STATE_HOME_ENV, "XDG_STATE_HOME"):
        value = env.get(name, "")
        if value and os.path.isabs(value):
            return os.path.join(value, "verigate")
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".local", "state", "verigate")


def cache_folder(environ: Mapping[str, str] | None = None, *, name: str = "rule-packs") -> str:
    """Where verigate keeps its per-user caches of its own parsed data: ``<state root>/cache/rule-packs`` (parsed
    rule packs and compiled schemas), ``name`` another folder beside it (``rule-packs/checks``: see
    ``verigate.rules._checked``). Here, beside the state root, so that a hook reading a cache never imports the
    rules package."""
    return os.path.join(state_root(environ), "cache", name)


def project_key(project: str) -> str:
    """16 hex digits of sha256 of the project's real path: the same folder from any spelling of the path."""
    return sha256_hex(os.path.realpath(project).encode("utf-8", "surrogateescape"))[:16]


def project_state_dir(project: str, environ: Mapping[str, str] | None = None) -> str:
    return os.path.join(state_root(environ), "projects", project_key(project))


def store_paths(store: str) -> tuple[str, str, str]:
    """A store file and its companions: the lock file and the state folder (cursors and caches)."""
    return store, store + ".lock", store + ".state"


def legacy_store(project: str) -> str:
    return os.path.join(project, LEGACY_STORE)


def config_candidates(project: str, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The self-gate's configuration files, first found wins (the others are not read for the ``self_gate``
    section): the per-user state folder (no sandbox writes it), ``.codex/verigate.yaml`` (read-only under
    Codex's workspace-write), then the project's ``verigate.yaml``."""
    return (os.path.join(project_state_dir(project, environ), CONFIG_NAME),
            os.path.join(project, ".codex", CONFIG_NAME), os.path.join(project, CONFIG_NAME))


def resolved(path: str) -> str:
    """``os.path.realpath(path)``, failing closed. The non-strict ``realpath`` takes a component it cannot lstat
    (EACCES below a folder without search permission, ENAMETOOLONG past PATH_MAX, ELOOP) for a plain name and goes
    on, while the kernel still follows a link there: such a path resolves elsewhere than it says. So the answer
    must be short enough to be looked up whole, and each of its prefixes an existing non-link, up to one that does
    not exist (a root not made yet: nothing below it exists either). Anything else raises OSError, and the
    boundary check refuses."""
    real = os.path.realpath(path)
    if len(os.fsencode(real)) >= PATH_MAX:  # its terminating NUL included
        raise OSError(errno.ENAMETOOLONG, "a path too long to resolve for certain", real)
    prefix = ""
    for part in real.split(os.sep):  # noqa: PTH206  # os.path on purpose: see the imports
        if not part:
            continue
        prefix += os.sep + part
        try:
            info = os.lstat(prefix)
        except (FileNotFoundError, NotADirectoryError):
            break
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "a link os.path.realpath could not resolve", prefix)
    return real


def inside(path: str, root: str, seen: dict[str, str] | None = None) -> bool:
    """Whether ``path`` is ``root`` or lies beneath it, both resolved (symlinks, ``..``; :func:`resolved`);
    ``seen`` collects each path's resolved form (the boundary verdict's cache depends on them: a link has no
    settings file). A path that resolved otherwise earlier in the same check raises: the check never saw one
    consistent state."""
    real, base = resolved(path), resolved(root)
    if seen is not None:
        for given, answer in ((path, real), (root, base)):
            if seen.setdefault(given, answer) != answer:
                raise OSError(errno.EAGAIN, "a path resolved to two places during one boundary check", given)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def protected_paths(project: str, store: str, state_dir: str, custom_store: bool) -> list[str]:
    """The paths to hand to ``_guard.protected_for`` (its first two are files, the rest folders or files
    protected as a whole). The first store named is where the tripwire takes its Bash names from: the old
    ``.verigate/`` store by default, so ``.verigate`` (which also holds the review database) keeps being matched
    in Bash words; the store in use, the whole per-user state root and ``.codex/verigate.yaml`` follow."""
    legacy = legacy_store(project)
    companions, old = list(store_paths(store)), list(store_paths(legacy))
    first, rest = (companions, old) if custom_store else (old, companions)
    return [*first, *rest, os.path.dirname(os.path.dirname(state_dir)), state_dir,
            os.path.join(project, ".codex", CONFIG_NAME)]

"""verigate-git: a PreVerify evaluator that checks a coding agent's git claims against the repository.

Loading the plug-in imports only :mod:`verigate_git._plugin`: the claim pack (and verigate's rule engine) is loaded
when an answer is first scanned, dulwich when a repository is first read. Every hook and grading process loads
every installed plug-in; most never call this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._plugin import REPOSITORY_ENV_VARS, GitClaims, check_claims

if TYPE_CHECKING:
    from ._claims import CLAIM_KINDS, ClaimPack, Claims, default_pack

__all__ = [
    "CLAIM_KINDS",
    "REPOSITORY_ENV_VARS",
    "ClaimPack",
    "Claims",
    "GitClaims",
    "check_claims",
    "default_pack",
    "plugin",
]

#: the instance the ``verigate`` entry point registers (repository from the stage context or the environment)
plugin = GitClaims()

_FROM_CLAIMS = frozenset({"CLAIM_KINDS", "ClaimPack", "Claims", "default_pack"})


def __getattr__(name: str) -> Any:
    if name in _FROM_CLAIMS:
        from . import _claims

        return getattr(_claims, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

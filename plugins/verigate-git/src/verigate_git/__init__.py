"""verigate-git: a PreVerify evaluator that checks a coding agent's git claims against the repository."""

from __future__ import annotations

from ._claims import CLAIM_KINDS, ClaimPack, Claims, default_pack
from ._plugin import REPOSITORY_ENV_VARS, GitClaims, check_claims

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

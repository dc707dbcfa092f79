"""verigate's built-in redact plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from .._config import RedactionConfig
    from ._base import Redactor


@functools.lru_cache(maxsize=16)
def _redactor_for(config: RedactionConfig) -> Redactor:
    from ._redactor import RulePackRedactor

    return RulePackRedactor.from_config(config)


@hookimpl
def verigate_redactors(config: RedactionConfig) -> Sequence[Redactor] | None:
    """One redactor over the configured packs (shipped ``packs`` unless ``replace_defaults``, plus
    ``extra_packs``); an invalid pack or an empty rule set raises RuleError, so nothing leaves unredacted."""
    return [_redactor_for(config)]

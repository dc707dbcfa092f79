"""verigate's own harness_version: its version and a hash of the judgment corpus it ships."""

from __future__ import annotations

from .._data import iter_files
from ._canonical import canonical_hash, sha256_of_bytes

__all__ = ["CORPUS_KINDS", "corpus_hash", "harness_version"]

#: the shipped folders whose contents decide verdicts
CORPUS_KINDS = ("rules", "prompts", "schemas")


def corpus_hash() -> str:
    """canonical_hash over {kind: {relative path: sha256 of the file}} for rules/, prompts/ and schemas/."""
    return canonical_hash({kind: {path: sha256_of_bytes(data) for path, data in iter_files(kind)}
                           for kind in CORPUS_KINDS})


def harness_version() -> dict[str, str]:
    """{plugin_version, cli_version, corpus_hash} of this verigate, computed from what is installed now."""
    from .._plugins import _core_version

    version = _core_version()
    # the CLI is this package's own entry point, so it carries the package version
    return {"plugin_version": version, "cli_version": version, "corpus_hash": corpus_hash()}

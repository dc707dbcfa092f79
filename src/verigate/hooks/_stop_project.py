"""The project's gate for the Stop hook: its configuration, its store (relative to the project), and the
``StageContext`` the decision-stage plug-ins receive."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ._stop_input import StopInput

if TYPE_CHECKING:
    from .._models import StageContext
    from ..gate import Gate

__all__ = ["open_gate", "project_store_url", "stage_context"]


def stage_context(stop: StopInput) -> StageContext:
    """What a plug-in learns about this Stop: the resolved project, the host, its session and transcript."""
    from .._models import StageContext

    return StageContext(
        project_dir=str(stop.project_dir),
        host=stop.host,
        session_id=stop.session_id,
        transcript_path=str(stop.transcript_path) if stop.transcript_path is not None else None,
    )


def open_gate(project_dir: Path, context: StageContext | None = None) -> Gate:
    """The project's gate: its verigate.yaml (absent: the embedded defaults, with no judge, so every answer
    fails closed into review) and its store, a relative store url being relative to the project."""
    from .._config import load_config
    from ..gate import Gate

    path = project_dir / "verigate.yaml"
    config = load_config(path if path.is_file() else {})  # parsed once: the store url needs it first
    return Gate.from_config(config, store=project_store_url(config.store.url, project_dir), context=context)


def project_store_url(url: str, project_dir: Path) -> str:
    """A relative store path (plain or ``sqlite:///relative``) is relative to the project, not to the cwd."""
    prefix = "sqlite:///" if url.startswith("sqlite:///") else ""
    path = url[len(prefix):]
    if path in ("", ":memory:") or "://" in path or Path(path).is_absolute():
        return url
    return prefix + str(project_dir / path)

"""The public face: a sorted __all__ of names that exist (like httpx's test_exported_members)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import verigate

SUBMODULES = {"hookspecs", "cli", "judge", "store", "gate", "rules", "redact", "transcripts", "trace",
              "selfgate", "evidence", "hooks", "testing", "annotations", "runtimes"}


def test_all_is_sorted_and_complete() -> None:
    assert verigate.__all__ == sorted(verigate.__all__)
    for name in verigate.__all__:
        assert hasattr(verigate, name), name


def test_public_members_are_exported() -> None:
    # dir() includes the names loaded on first use (the gate), vars() only those already loaded
    public = {name for name in dir(verigate) if not name.startswith("_")}
    assert public - SUBMODULES == set(verigate.__all__)


def test_importing_verigate_does_not_load_the_gate() -> None:
    # the CLI imports the package on every hook invocation: the gate (asyncio, cattrs, config) loads on first use
    code = "import sys, verigate; print('verigate.gate' in sys.modules, verigate.Gate.__module__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "verigate"]


def test_unknown_attributes_still_raise() -> None:
    try:
        verigate.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("verigate.NoSuchThing should not exist")


def test_version_is_the_distributions() -> None:
    # one source: pyproject.toml reads the version from verigate/__init__.py
    from importlib import metadata

    assert verigate.__version__ == metadata.version("verigate-agents")
    done = subprocess.run([sys.executable, "-m", "verigate", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"verigate {verigate.__version__}"


PACKAGES = ["verigate", "verigate.evidence", "verigate.gate", "verigate.judge", "verigate.redact", "verigate.rules",
            "verigate.runtimes", "verigate.selfgate", "verigate.store", "verigate.trace", "verigate.transcripts"]


@pytest.mark.parametrize("package", PACKAGES)
def test_exported_members_report_their_public_module(package: str) -> None:
    # like httpx's test_exported_members: a class or function exported under its own name names a public module
    # (the top-level package when it exports the name too), however it was first imported
    code = f"""
import importlib, types
import verigate
module = importlib.import_module({package!r})
wrong = []
for name in module.__all__:
    value = getattr(module, name)
    if isinstance(value, (type, types.FunctionType)) and value.__name__ == name:
        home = value.__module__
        wanted = "verigate" if name in verigate.__all__ else {package!r}
        if home.startswith("verigate") and home != wanted:
            wrong.append(f"{{name}}: {{home}}")
print(wrong)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_model_reports_verigate_however_it_was_imported() -> None:
    code = "from verigate._models import Candidate; from verigate.gate import Gate; print(Candidate.__module__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "verigate"

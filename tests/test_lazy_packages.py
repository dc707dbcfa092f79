"""Packages that load their modules on first use (PEP 562): the same names, the same homes, less start-up work."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

LAZY = ["verigate.gate", "verigate.judge", "verigate.selfgate", "verigate.store", "verigate.trace"]


def _run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.mark.parametrize("package", LAZY)
def test_the_export_table_is_the_public_face(package: str) -> None:
    module = importlib.import_module(package)
    exports = module._EXPORTS
    listed = [name for names in exports.values() for name in names]
    assert sorted(listed) == sorted(module.__all__) and len(listed) == len(set(listed))
    for private, names in exports.items():
        home = importlib.import_module(f"{package}.{private}")
        for name in names:
            assert getattr(module, name) is getattr(home, name), name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="NoSuchThing"):
        module.NoSuchThing  # noqa: B018


@pytest.mark.parametrize("package", LAZY)
def test_importing_a_lazy_package_loads_none_of_its_modules(package: str) -> None:
    code = f"import sys, {package}; print(sorted(m for m in sys.modules if m.startswith('{package}.')) or 'none')"
    assert _run(code) == ["none"]


def test_importing_verigate_loads_its_exceptions_only() -> None:
    # typing (with re and enum) was most of ``import verigate``, which every hook process pays before it decides
    code = ("import sys, verigate; print(sorted(m for m in sys.modules if m.startswith('verigate')), "
            "'typing' in sys.modules, verigate.UnverifiedError.__module__)")
    assert _run(code) == ["['verigate',", "'verigate._errors',", "'verigate._face']", "False", "verigate"]


@pytest.mark.parametrize(("statement", "expression", "home"), [
    ("from verigate.judge._base import JudgeConfig", "JudgeConfig.__module__", "verigate.judge"),
    ("from verigate.judge._agreement import JudgeQuality", "JudgeQuality.__module__", "verigate.judge"),
    ("from verigate.store._base import Store", "Store.__module__", "verigate.store"),
    # _sqlite ends without the call: the next module of the package that loads names its exports too
    ("from verigate.store._open import open_store; from verigate.store._sqlite import SqliteStore",
     "SqliteStore.__module__", "verigate.store"),
    ("import verigate.gate; from verigate.store._base import SessionRecord", "SessionRecord.__module__",
     "verigate.store"),
])
def test_a_name_reports_its_package_however_it_was_first_imported(statement: str, expression: str,
                                                                    home: str) -> None:
    assert _run(f"{statement}; print({expression})") == [home]

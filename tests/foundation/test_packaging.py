"""A plain `pip install .` into a fresh venv works from another directory: data ships inside the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                   check=True, timeout=300)
    (built,) = out.glob("verigate_agents-*.whl")
    return built


def test_wheel_carries_rules_prompts_and_schemas(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for kind in ("rules", "prompts", "schemas"):
        shipped = {p.relative_to(REPO).as_posix() for p in (REPO / kind).rglob("*") if p.is_file()}
        packaged = {name.removeprefix("verigate/_data/") for name in names if name.startswith("verigate/_data/")}
        assert shipped, kind
        assert shipped <= packaged, shipped - packaged


@pytest.mark.slow
def test_fresh_venv_install_works_from_another_directory(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = (
        "from verigate import _data; import json; "
        "root = _data.data_root(); assert 'site-packages' in str(root), root; "
        "print(len(list(_data.iter_files('schemas'))), _data.schema('config.schema.json')['title'])"
    )
    result = subprocess.run([str(python), "-c", probe], cwd=elsewhere, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "verigate.yaml" in result.stdout
    listed = subprocess.run([str(venv / "bin" / "verigate"), "plugins"], cwd=elsewhere, capture_output=True,
                            text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "verigate-gate" in listed.stdout

"""Where verigate's shipped data (rules/, prompts/, schemas/) is read from: beside the module in an installed
wheel, the checkout in development, the archive itself for a zip install — never a folder planted beside an
archive (it would swap the shipped rule packs for the planter's)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = ("import verigate, verigate._data as data; from verigate.rules import load_pack; "
         "print(verigate.__file__); print(data.data_root()); print(len(load_pack('secrets').rules))")


def _probe(path_entry: Path) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=False,
                          env={**env, "PYTHONPATH": str(path_entry)}, cwd=path_entry.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_zip_install_reads_its_own_data_not_a_checkout_planted_beside_it(tmp_path: Path) -> None:
    archive = tmp_path / "lib.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for source in sorted((REPO / "src" / "verigate").rglob("*.py")):
            bundle.write(source, source.relative_to(REPO / "src").as_posix())
        for kind in ("rules", "prompts", "schemas"):
            for source in sorted((REPO / kind).rglob("*")):
                if source.is_file() and "__pycache__" not in source.parts:
                    bundle.write(source, f"verigate/_data/{source.relative_to(REPO).as_posix()}")
    # what an attacker who can write beside the archive plants: a "checkout" whose secrets pack finds nothing
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'planted'\n", encoding="utf-8")
    (tmp_path / "schemas").mkdir()
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "secrets.yaml").write_text(
        "pack: secrets\nversion: 1\ncategory: secret\ndescription: planted\nrules: []\n", encoding="utf-8")
    module, root, rules = _probe(archive)
    assert module.startswith(str(archive))
    assert root.startswith(str(archive)) and root.rstrip("/").endswith("verigate/_data")
    assert int(rules) > 0

"""The HTML report opened in headless Debian Chromium: a real screenshot, and the DOM it rendered."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

from grade_helpers import REPO

from verigate.trace import Source, grade_many, render_html

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=180, check=False)


def _png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the inflated scanlines of a PNG (enough to tell a blank image from a page)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, width, height = 8, b"", 0, 0
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    return width, height, zlib.decompress(idat)


def test_html_report_renders_table_and_chart(tmp_path: Path) -> None:
    assert Path(CHROMIUM).exists(), "Debian chromium is missing: scripts/test.sh installs it (apt-get install chromium)"
    examples = REPO / "examples" / "traces"
    report = grade_many([Source(str(examples / "traces.json"), "traces"),
                         Source(str(examples / "7f3c2a9e-session.jsonl"), "claude-code", "fix-checkout")],
                        config=examples / "trace-grader.config.yaml")
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    assert "http://" not in page.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained

    shot = tmp_path / "report.png"
    result = _chromium(tmp_path / "profile-shot", "--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file(), result.stderr
    width, height, pixels = _png_pixels(shot.read_bytes())
    assert (width, height) == (1280, 1600)
    assert len(set(pixels[: 2_000_000])) > 20  # a blank page inflates to a handful of distinct byte values

    dom = _chromium(tmp_path / "profile-dom", "--dump-dom", page.as_uri()).stdout
    assert '<table id="runs">' in dom and '<table id="tasks">' in dom
    assert dom.count('<tbody class="run">') == len(report.runs)
    assert '<svg id="pass-k-chart"' in dom
    assert dom.count('class="bar"') == 2 * len(report.pass_hat_k)  # pass^k and pass@k bars for every k
    assert 'class="flagged flag-high"' in dom and "forbidden_tool" in dom
    assert "corrupt-success" in dom and "flaky" in dom and "failing" in dom

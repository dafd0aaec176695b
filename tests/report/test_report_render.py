"""The report renders in headless Chromium (slow), and ``replan report`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import rp_build as rb
from matplotlib.image import imread
from typer.testing import CliRunner

from replan.cli import app
from replan.report import find_chromium, screenshot, write_report


def test_report_cli_writes_the_page(tmp_path: Path) -> None:
    out = rb.two_design_store(tmp_path)
    res = CliRunner().invoke(app, ["report", str(out), "--json", "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert obj["report"] == str(out / "report.html")
    # two SVG plots (PEC, first errors); the three C x P heatmaps are tables in the page
    assert [Path(p).name for p in obj["plots"]] == ["report-errors.svg", "report-pec.svg"]
    assert obj["screenshot"] is None
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'class="heatmaps"' in page
    res = CliRunner().invoke(app, ["report", str(tmp_path / "missing")])
    assert res.exit_code == 1 and "not a replan results directory" in res.stderr


@pytest.mark.slow
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    exe = find_chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    out = rb.two_design_store(tmp_path / "run")
    page = write_report(out, n_boot=300)
    shot = screenshot(page, out / "report.png", chromium=exe, size=(1280, 3000))
    print(f"screenshot for review: {shot}")
    img = imread(shot)[..., :3]
    assert img.shape[:2] == (3000, 1280)
    spread = img.max(axis=2) - img.min(axis=2)
    # the page is greyscale apart from the plots: coloured pixels mean the SVGs decoded and drew
    assert np.mean(spread > 0.3) > 0.01
    # and text was laid out: a fair share of dark pixels, but far from a black page
    dark = np.mean(img.mean(axis=2) < 0.4)
    assert 0.005 < dark < 0.5


@pytest.mark.slow
def test_compressed_drill_down_opens_in_headless_chromium(tmp_path: Path) -> None:
    """The page's script unpacks the open task's episodes in a real browser: the DOM Chromium
    ends with holds the step rows that the stored page keeps compressed."""
    import subprocess

    exe = find_chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    out = rb.two_design_store(tmp_path / "run")
    page = write_report(out, n_boot=300)
    assert 'data-verdict="' not in page.read_text(encoding="utf-8")
    dom = subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,3000",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    # the first task (t-np) is open: its six runs and their calls are in the page now
    assert dom.count('class="episode ') == 6, dom[-2000:]
    assert 'data-verdict="missing_param"' in dom
    assert "first error (FED)" in dom

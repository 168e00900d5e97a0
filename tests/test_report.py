"""The arena's HTML report: built from a real (tiny) evolve run, and rendered by headless Chromium."""

from __future__ import annotations

import re
import shutil

import pytest

from agentworld_gym.arena.evolve import Evolution, EvolveConfig
from agentworld_gym.arena.report import build_report, screenshot, svg_lines


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("evolve") / "run"
    Evolution(EvolveConfig(out=str(out), rounds=1, policy="random", arena_themes=("finance",), eval_tasks_per_theme=6,
                           train_tasks=4, difficulties=(1, 2), max_turns=3)).run()
    return out


def test_report_has_every_section(run_dir):
    page = build_report(run_dir).read_text()
    for heading in ("Success per round", "Success per category", "Learning curves", "Round 0 diagnosis",
                    "Round 1 diagnosis", "Trajectory viewer"):
        assert heading in page
    assert page.count("<svg") >= 1 and "Finance &amp; Markets" in page
    n_options = len(re.findall(r"<option value=", page))
    assert n_options == 12  # 6 episodes x 2 rounds, each selectable in the viewer
    assert "does not learn" in page  # the skipped training step is reported, not hidden


def test_report_of_plain_records(run_dir, tmp_path):
    page = build_report(run_dir / "round_0" / "eval.jsonl", tmp_path / "r.html").read_text()
    assert "Diagnosis" in page and len(re.findall(r"<option value=", page)) == 6


def test_svg_scales_points_into_the_box():
    svg = svg_lines({"a": [(0, 0.0), (2, 0.5)]}, title="t", xlabel="x", width=300, height=200)
    xs = [float(x) for x in re.findall(r'cx="([\d.]+)"', svg)]
    ys = [float(y) for y in re.findall(r'cy="([\d.]+)"', svg)]
    assert len(xs) == 2 and all(0 <= x <= 300 for x in xs) and all(0 <= y <= 200 for y in ys) and ys[1] < ys[0]


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless chromium not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(run_dir, tmp_path):
    png = screenshot(build_report(run_dir), tmp_path / "report.png", height=1600)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    import numpy as np
    from matplotlib.image import imread

    pixels = imread(png)
    assert pixels.shape[0] == 1600 and pixels.shape[1] == 1280
    # a rendered page has text and tables: not a blank (single-colour) image
    assert float(np.std(pixels[..., :3])) > 0.05

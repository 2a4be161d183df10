import re
import subprocess

import numpy as np
import pytest

from skassess.cli import main
from skassess.datasets import example_scores_path
from skassess.session import assess_file, render_report

from ..helpers import browser

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def report_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert main(["example", "--directory", str(out)]) == 0
    scores, labels = out / "example_scores.csv", out / "example_labels.csv"
    assert (
        main(
            [
                "label",
                str(scores),
                "--session",
                str(out / "s.sqlite"),
                "--task",
                "least_accurate",
                "--seed",
                "0",
                "--budget",
                "40",
                "--oracle",
                str(labels),
                "--no-progress",
                "--report",
                str(out / "session.html"),
            ]
        )
        == 0
    )
    assert main(["assess", str(scores), "--quiet", "--report", str(out / "plain.html")]) == 0
    return out


def test_report_is_self_contained(report_files):
    text = (report_files / "session.html").read_text(encoding="utf-8")
    for section in (
        "Accuracy per predicted class",
        "Group differences",
        "Calibration",
        "Labeling history",
        "Data and settings",
        "SHA-256",
    ):
        assert section in text
    assert text.count("<svg") == 3  # forest, reliability, history (2 panels in one figure)
    # nothing is fetched at view time: no scripts, links, or remote URLs outside xmlns
    assert "<script" not in text and "<link" not in text
    remote = re.findall(r'(?:src|href)\s*=\s*["\']?(https?:[^"\' >]+)', text)
    assert remote == [] and "url(http" not in text
    assert "Labeling history" not in (report_files / "plain.html").read_text(encoding="utf-8")


def test_report_counts_session_labels(report_files):
    result = assess_file(example_scores_path())
    assert result.source["labeled"] == 100
    html = render_report(result)
    assert ">100<" in html.replace(",", "")


@pytest.mark.skipif(
    browser() is None, reason="no Chromium or Chrome on this machine (Debian: apt install chromium)"
)
def test_report_renders_in_headless_chromium(report_files, tmp_path):
    from matplotlib.image import imread

    shot = tmp_path / "report.png"
    page = (report_files / "session.html").resolve().as_uri()
    proc = subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,2400",
            f"--screenshot={shot}",
            "--enable-logging=stderr",
            "--v=0",
            page,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists(), proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # the page logs no error (nor anything else)
    image = imread(shot)[..., :3]
    assert image.shape[:2] == (2400, 1280)
    # not blank: many distinct colours, dark text on a light page
    colours = np.unique((image.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    assert len(colours) > 50
    assert (image.mean(axis=2) < 0.3).mean() > 0.005

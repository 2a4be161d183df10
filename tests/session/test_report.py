import re
import subprocess

import numpy as np
import pandas as pd
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


@pytest.mark.slow
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
    # forest, reliability and history (2 panels in one figure); the session labeled its
    # groups at unequal rates, so its bins are estimated within each group
    assert text.count("<svg") == 3
    assert "weighted by its group" in text and ">ECE<" in text
    plain = (report_files / "plain.html").read_text(encoding="utf-8")
    assert plain.count("<svg") == 2 and ">ECE<" in plain  # forest and reliability
    # nothing is fetched at view time: no scripts, links, or remote URLs outside xmlns
    assert "<script" not in text and "<link" not in text
    remote = re.findall(r'(?:src|href)\s*=\s*["\']?(https?:[^"\' >]+)', text)
    assert remote == [] and "url(http" not in text
    assert "Labeling history" not in (report_files / "plain.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_report_counts_session_labels(report_files):
    result = assess_file(example_scores_path())
    assert result.source["labeled"] == 100
    html = render_report(result)
    assert ">100<" in html.replace(",", "")


@pytest.mark.slow
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


#: A page that shows the report in a frame of a given width (the report itself has no
#: script) and writes where the report's blocks are into itself, for --dump-dom to print.
_LAYOUT_PROBE = """<!DOCTYPE html><html><body>
<iframe id="r" src="REPORT" width="WIDTH" height="2000" style="border:0"></iframe>
<script>
document.getElementById("r").onload = function () {
  const doc = this.contentDocument, win = this.contentWindow;
  const blocks = [...doc.querySelectorAll("h1, h2, h3, p, figure, .scroll, .card")];
  const rects = blocks.map(b => b.getBoundingClientRect());
  const overlaps = [];
  for (let i = 0; i < blocks.length; i++) for (let j = i + 1; j < blocks.length; j++) {
    if (blocks[i].contains(blocks[j]) || blocks[j].contains(blocks[i])) continue;
    const a = rects[i], b = rects[j];
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 1 && h > 1) overlaps.push([blocks[i].tagName, blocks[j].tagName]);
  }
  const svgs = [...doc.querySelectorAll("figure svg")].map(s => s.getBoundingClientRect().width);
  // a table wider than its box shows its right-hand columns only when scrolled
  const hidden = [...doc.querySelectorAll(".scroll")]
    .filter(s => s.scrollWidth > s.clientWidth + 1)
    .map(s => s.querySelector("th") ? s.querySelector("th").textContent : "");
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify({width: win.innerWidth,
    scroll: doc.documentElement.scrollWidth, overlaps: overlaps, svgs: svgs, hidden: hidden});
  document.body.appendChild(out);
};
</script></body></html>
"""


@pytest.mark.slow
@pytest.mark.skipif(
    browser() is None, reason="no Chromium or Chrome on this machine (Debian: apt install chromium)"
)
@pytest.mark.parametrize("width", [1280, 390])
def test_report_layout_has_no_overlap_or_overflow(report_files, tmp_path, width):
    layout = page_layout(report_files / "session.html", width)
    if width >= 1024:  # a wide page gives the plots room
        assert min(layout["svgs"]) >= 420, layout["svgs"]


def page_layout(report, width):
    """Where the blocks of the HTML page ``report`` are in a window ``width`` wide, checked:
    no wider than the window, no block over another, no table column out of sight."""
    import json

    probe = report.parent / f"probe{width}.html"
    page = _LAYOUT_PROBE.replace("REPORT", report.name).replace("WIDTH", str(width))
    probe.write_text(page, encoding="utf-8")
    proc = subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--allow-file-access-from-files",
            "--window-size=1400,2200",
            "--virtual-time-budget=20000",
            "--dump-dom",
            probe.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="layout">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    layout = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert layout["width"] == width
    assert layout["scroll"] <= width, "the page is wider than the window"
    assert layout["overlaps"] == []
    assert layout["hidden"] == [], "a table's columns are out of sight"
    return layout


@pytest.mark.slow
def test_report_plots_keep_their_legends_off_the_data(report_files):
    """The forest plot's and the reliability diagram's legends sit outside their axes."""
    import matplotlib.pyplot as plt

    from skassess.session import _report

    result = assess_file(example_scores_path())
    captured = []
    real = _report.svg_figure

    def keep(fig):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            for legend in [*fig.legends, ax.get_legend()]:
                if legend is not None:
                    captured.append(
                        legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
                    )
        return real(fig)

    _report.svg_figure = keep
    try:
        render_report(result)
    finally:
        _report.svg_figure = real
        plt.close("all")
    assert captured and not any(captured)


def test_long_steps_show_progress_and_the_report_gives_the_whole_run(
    report_files, tmp_path, capsys, monkeypatch
):
    from skassess.session import _progress

    monkeypatch.setattr(_progress, "DELAY", 0.0)  # every run counts as long here
    out = tmp_path / "r.html"
    assert main(["assess", str(report_files / "example_scores.csv"), "--report", str(out)]) == 0
    err = capsys.readouterr().err
    for step in ("reading the scores file", "the posterior per predicted class", "drawing"):
        assert step in err, err[-1500:]
    text = out.read_text(encoding="utf-8")
    assert "seconds (assessment)" in text and "seconds (whole run, report included)" in text
    assert main(["assess", str(report_files / "example_scores.csv"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""  # --quiet: no progress either


@pytest.mark.slow
def test_report_words_match_the_model(report_files):
    text = (report_files / "session.html").read_text(encoding="utf-8")
    assert "prior mean (from the scores)" not in text
    assert "the calibrated scores before the group" in text
    assert "{'" not in text  # the session's settings are not a raw Python dict
    result = assess_file(example_scores_path(), n_bins=20)
    empty = result.reliability["weight"] <= 0
    assert empty.any()  # 20 bins on this file leave some empty
    html = render_report(result)
    assert html.count('class="none">no rows</td>') == 3 * int(empty.sum())


def test_the_forest_plot_shows_a_flagged_group_s_labels_alone_interval():
    pytest.importorskip("matplotlib")
    from skassess.session._report import _forest

    table = pd.DataFrame(
        {
            "mean": [0.5, 0.8],
            "lower": [0.4, 0.7],
            "upper": [0.6, 0.9],
            "prior_mean": [0.7, 0.8],
            "flagged": [True, False],
            "labels_lower": [0.2, 0.6],
            "labels_upper": [0.55, 0.95],
        },
        index=["a", "b"],
    )
    assert "labels alone" in _forest(table, "Accuracy", "accuracy", "calibrated")
    table["flagged"] = False
    assert "labels alone" not in _forest(table, "Accuracy", "accuracy", "calibrated")


def test_design_groups_must_have_a_row_per_file_row():
    with pytest.raises(ValueError, match="design_groups has 3 rows; the file has more"):
        assess_file(example_scores_path(), design_groups=np.zeros(3, dtype=int))
    rows = len(pd.read_csv(example_scores_path()))
    with pytest.raises(ValueError, match=f"design_groups has {rows + 1} rows; the file has {rows}"):
        assess_file(example_scores_path(), design_groups=np.zeros(rows + 1, dtype=int))

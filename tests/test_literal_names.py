"""Names from a user's file are shown literally: in plots, in HTML and on the terminal."""

import html
import subprocess

import numpy as np
import pandas as pd
import pytest

from skassess.cli import main
from skassess.utils._text import plot_text, terminal_text

from .helpers import browser

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

LONG = "a very long class name " * 12
CLASSES = ["$\\alpha^{$", "$5-$10 band", "<b>&\"q'</b>", "שלום עולם", LONG.strip()]
GROUPS = ["$x$", "<script>alert(1)</script>", "\u202eevil", "\x1b[31mred", "ok & fine"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = tmp_path_factory.mktemp("names")
    rng = np.random.default_rng(0)
    n, k = 400, len(CLASSES)
    scores = rng.dirichlet(np.ones(k) * 0.4, n)
    truth = np.array([rng.choice(k, p=p) for p in scores])
    frame = pd.DataFrame({"id": [f"item-{i}" for i in range(n)]})
    for j, name in enumerate(CLASSES):
        frame[f"score_{name}"] = scores[:, j]
    labels = np.array(CLASSES, dtype=object)[truth]
    frame["label"] = np.where(np.arange(n) < 60, labels, None)
    frame["region"] = np.array(GROUPS, dtype=object)[np.arange(n) % len(GROUPS)]
    frame.to_csv(out / "scores.csv", index=False)
    pd.DataFrame({"id": frame["id"], "label": labels}).to_csv(out / "oracle.csv", index=False)
    return out


def _shown(text):
    """What a matplotlib Text object displays for ``text`` (maths or not)."""
    from matplotlib.text import Text

    shown, is_math = Text(text=text)._preprocess_math(text)
    return shown, is_math


def test_plot_text_is_never_maths():
    for name in CLASSES + GROUPS + ["a \\$ b", "$$", "\\$x$"]:
        shown, is_math = _shown(plot_text(name))
        assert not is_math and shown == terminal_text(name)


def test_displays_draw_user_names_literally():
    import matplotlib.pyplot as plt

    from skassess.metrics import PosteriorDisplay

    fig, ax = plt.subplots()
    PosteriorDisplay(
        CLASSES, np.full(5, 0.5), np.full(5, 0.4), np.full(5, 0.6), xlabel="$ per item"
    ).plot(ax=ax, name="<$model$>")
    fig.canvas.draw()  # a formula would be parsed (and fail) here
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert [_shown(t) for t in ticks] == [(c, False) for c in CLASSES]
    assert _shown(ax.get_xlabel()) == ("$ per item", False)
    assert _shown(ax.get_legend().get_texts()[0].get_text()) == ("<$model$>", False)
    plt.close(fig)


def test_terminal_text_escapes_controls():
    assert terminal_text("\x1b[31mred") == "\\x1b[31mred"
    assert terminal_text("\u202eevil") == "\\u202eevil"
    assert terminal_text("שלום עולם\nnext") == "שלום עולם\nnext"


@pytest.mark.slow
def test_every_report_route_takes_hostile_names(files, capsys):
    f = files
    routes = [
        (
            ["assess", str(f / "scores.csv"), "--group", "region", "--report", str(f / "a.html")],
            f / "a.html",
        ),
        (
            ["report", str(f / "scores.csv"), "--group", "region", "-o", str(f / "b.html")],
            f / "b.html",
        ),
        (
            [
                "label",
                str(f / "scores.csv"),
                "--session",
                str(f / "s.sqlite"),
                "--task",
                "least_accurate",
                "--seed",
                "1",
                "--budget",
                "30",
                "--oracle",
                str(f / "oracle.csv"),
                "--no-progress",
                "--report",
                str(f / "c.html"),
            ],
            f / "c.html",
        ),
        (
            [
                "report",
                str(f / "scores.csv"),
                "--session",
                str(f / "s.sqlite"),
                "-o",
                str(f / "d.html"),
            ],
            f / "d.html",
        ),
        (
            [
                "label",
                str(f / "scores.csv"),
                "--session",
                str(f / "g.sqlite"),
                "--group",
                "region",
                "--seed",
                "1",
                "--budget",
                "20",
                "--oracle",
                str(f / "oracle.csv"),
                "--no-progress",
                "--report",
                str(f / "e.html"),
            ],
            f / "e.html",
        ),
    ]
    for argv, page in routes:
        capsys.readouterr()
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\u202e" not in out  # controls shown as codes
        text = page.read_text(encoding="utf-8")
        for name in CLASSES[:4]:
            assert html.escape(name, quote=False) in text, (page, name)
        assert "<b>&" not in text and "<script>alert" not in text
        if "region" in argv:
            assert html.escape("<script>alert(1)</script>") in text
            assert "\\x1b[31mred" in out or html.escape("\x1b[31mred") in text
    argv = ["export", str(f / "s.sqlite"), "--scores", str(f / "scores.csv")]
    assert main([*argv, "--posterior", str(f / "p.json")]) == 0
    exported = pd.read_csv(f / "s.sqlite.labels.csv")
    assert set(exported["label"]) <= set(CLASSES)


@pytest.mark.skipif(
    browser() is None, reason="no Chromium or Chrome on this machine (Debian: apt install chromium)"
)
def test_reports_render_names_literally_in_chromium(files, capsys):
    for page in ("a.html", "c.html", "e.html"):
        if not (files / page).exists():
            test_every_report_route_takes_hostile_names(files, capsys)
        proc = subprocess.run(
            [
                browser(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--dump-dom",
                (files / page).resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        dom = proc.stdout
        # the DOM holds the names as text (escaped once), no element made from them
        assert "<b>&amp;" not in dom and "<script>alert" not in dom
        for name in CLASSES[:4]:
            assert html.escape(name, quote=False) in dom, (page, name)

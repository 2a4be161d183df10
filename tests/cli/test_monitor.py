import io
import json

import numpy as np
import pandas as pd
import pytest

from skassess.cli import main
from skassess.meta._pretrained import load_pretrained


def _frame(rng, n, shift, day, labeled):
    p = rng.beta(8 - shift, 2 + shift, n)
    y = np.where(rng.random(n) > p, "cat", "dog").astype(object)
    y[labeled:] = ""
    t = pd.Timestamp(day) + pd.to_timedelta(rng.uniform(0, 86399, n), unit="s")
    return pd.DataFrame(
        {
            "id": [f"{day}-{i}" for i in range(n)],
            "score_dog": p,
            "score_cat": 1 - p,
            "label": y,
            "time": t.strftime("%Y-%m-%d %H:%M:%S"),
        }
    )


def _not_json(constant):
    raise ValueError(f"{constant} is not JSON")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("monitor")
    _frame(rng, 1500, 0, "2026-01-01", 1500).to_csv(root / "reference.csv", index=False)
    (root / "stream").mkdir()
    for d, shift in enumerate([0, 0, 3, 3.5]):
        labels = 15 if d == 3 else 0
        frame = _frame(rng, 600, shift, f"2026-01-{d + 2:02d}", labels)
        frame.to_csv(root / "stream" / f"day{d}.csv", index=False)
    return root


def test_monitor_by_day_with_alerts_labels_and_outputs(files, tmp_path, capsys):
    out_csv, out_json, png = tmp_path / "t.csv", tmp_path / "t.json", tmp_path / "t.png"
    args = [
        "monitor", str(files / "reference.csv"), str(files / "stream"),
        "--chunk-column", "time", "--period", "D", "--threshold", "0.78",
        "--alert-probability", "0.8",
        "--level", "0.8", "0.99", "--query", "5",
        "--csv", str(out_csv), "--json", str(out_json), "--plot", str(png),
    ]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "1,500 labeled rows" in text and "2,400 rows in 4 chunks, 15 labeled" in text
    assert "Alerts (P(accuracy < 0.78) >= 0.8): 2026-01-04, 2026-01-05" in text
    table = pd.read_csv(out_csv, index_col="chunk")
    assert list(table.index) == ["2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"]
    assert list(table["n_labeled"]) == [0, 0, 0, 15]
    assert {"lower_80", "upper_99", "predicted_lower_99", "p_below"} <= set(table.columns)
    result = json.loads(out_json.read_text(), parse_constant=_not_json)
    assert len(result["chunks"]) == 4 and len(result["to_label"]) == 5
    assert result["chunks"][0]["drift_features"] is None  # no features: null, not NaN
    assert png.stat().st_size > 10_000
    assert "Rows to label next" in text


@pytest.mark.slow
def test_recalibrated_intervals_scale_the_shipped_ones(files, tmp_path):
    tables = {}
    for um in ("pretrained", "recalibrated"):
        out = tmp_path / f"{um}.csv"
        args = [
            "monitor", str(files / "reference.csv"), str(files / "stream"),
            "--uncertainty-model", um, "--quiet", "--csv", str(out),
        ]  # fmt: skip
        assert main(args) == 0
        tables[um] = pd.read_csv(out, index_col="chunk")
    a, b = tables["recalibrated"], tables["pretrained"]
    np.testing.assert_allclose(a["predicted"], b["predicted"])
    free = a["n_labeled"] == 0  # label-free chunks: the same prediction, a rescaled width
    ratio = (a["predicted"] - a["predicted_lower_80"]) / (b["predicted"] - b["predicted_lower_80"])
    # one factor per drift stratum: chunks of a stratum share it (the strata of a
    # predictor that sees the scores alone, as the command's does)
    _, _, edges, _ = load_pretrained("meta_model", inputs="scores")
    strength = np.fmax(a["drift_scores"], a["drift_features"]).fillna(0.5)
    stratum = np.searchsorted(edges, strength, side="right")[free.to_numpy()]
    assert free.sum() == 3
    for s in np.unique(stratum):
        assert np.ptp(ratio[free][stratum == s]) < 1e-9
    assert ((0.1 <= ratio[free]) & (ratio[free] <= 10)).all()


def test_one_chunk_per_file_or_by_size(files, capsys):
    stream = sorted(str(p) for p in (files / "stream").iterdir())
    assert main(["monitor", str(files / "reference.csv"), *stream, "--quiet",
                 "--json", "-"]) == 0  # fmt: skip
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert [c["chunk"] for c in chunks] == stream and [c["n_rows"] for c in chunks] == [600] * 4
    assert main(["monitor", str(files / "reference.csv"), *stream, "--chunk-size", "1000",
                 "--quiet", "--json", "-"]) == 0  # fmt: skip
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert [c["n_rows"] for c in chunks] == [1000, 1000, 400]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--level", "1.2"], "--level must be in (0, 1); got 1.2"),
        (["--threshold", "-0.1"], "--threshold must be in [0, 1]"),
        (["--alert-probability", "1"], "--alert-probability must be in (0, 1)"),
        (["--period", "D"], "give --chunk-column too"),
        (["--chunk-column", "time", "--chunk-size", "9"], "not both"),
        (["--chunk-column", "time", "--period", "fortnight"], "is not a pandas period"),
        (["--chunk-column", "label"], "column 'label': the chunk key is empty; every row"),
        (["--chunk-size", "0"], "--chunk-size must be a positive integer"),
        (["--budget", "5"], "--budget labels through a session: give --session FILE too"),
        (["--oracle", "x.csv"], "--oracle labels through a session"),
        (["--session", "s.sqlite", "--query", "3"], "--query lists rows to label without a"),
        (["--session", "s.sqlite", "--budget", "-1"], "--budget must be 0 or more"),
    ],
)
def test_bad_options_name_themselves(files, capsys, extra, message):
    args = ["monitor", str(files / "reference.csv"), str(files / "stream"), *extra]
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_bad_files_are_named(files, tmp_path, capsys):
    ref = str(files / "reference.csv")
    bad = pd.read_csv(files / "stream" / "day0.csv")
    bad.loc[7, "time"] = "yesterday"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    assert main(["monitor", ref, str(tmp_path / "bad.csv"), "--chunk-column", "time",
                 "--period", "D"]) == 2  # fmt: skip
    assert "bad.csv: row 8, column 'time': 'yesterday' is not a date or time" in (
        capsys.readouterr().err
    )
    other = bad.rename(columns={"score_cat": "score_bird"})
    other.to_csv(tmp_path / "other.csv", index=False)
    assert main(["monitor", ref, str(tmp_path / "other.csv")]) == 2
    assert "differ from the reference's" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["monitor", ref, str(tmp_path / "empty")]) == 2
    assert "the directory holds no scores file" in capsys.readouterr().err
    few = pd.read_csv(files / "reference.csv").iloc[:10]
    few.to_csv(tmp_path / "few.csv", index=False)
    assert main(["monitor", str(tmp_path / "few.csv"), str(files / "stream")]) == 2
    assert "at least 20 labeled rows" in capsys.readouterr().err


def _session_args(files, session, *extra):
    return [
        "monitor", str(files / "reference.csv"), str(files / "stream"),
        "--chunk-column", "time", "--period", "D", "--threshold", "0.78",
        "--session", str(session), *extra,
    ]  # fmt: skip


def _oracle(files, tmp_path):
    """Every stream row's true label, as the test data drew it (the files hide most)."""
    rng = np.random.default_rng(0)
    _frame(rng, 1500, 0, "2026-01-01", 1500)
    frames = [
        _frame(rng, 600, shift, f"2026-01-{d + 2:02d}", 600)
        for d, shift in enumerate([0, 0, 3, 3.5])
    ]
    path = tmp_path / "oracle.csv"
    pd.concat(frames)[["id", "label"]].to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_labeling_session_from_an_oracle_resumes(files, tmp_path, capsys):
    oracle, session, out = _oracle(files, tmp_path), tmp_path / "s.sqlite", tmp_path / "t.csv"
    assert main(_session_args(files, session, "--budget", "20", "--oracle", str(oracle))) == 0
    text = capsys.readouterr().out
    assert (
        "Session" in text
        and "new; 0 labels so far" in text
        and "[20/20 labeled in this session; 35 in all" in text
    )
    args = _session_args(files, session, "--budget", "30", "--oracle", str(oracle), "--csv")
    assert main([*args, str(out)]) == 0
    assert "resumed; 20 labels so far" in capsys.readouterr().out
    table = pd.read_csv(out, index_col="chunk")
    # the 15 labels day 3's file holds, and the session's 30
    assert table["n_labeled"].sum() == 15 + 30


def test_a_labeling_session_at_the_keyboard(files, tmp_path, capsys, monkeypatch):
    session = tmp_path / "k.sqlite"
    monkeypatch.setattr("sys.stdin", io.StringIO("dog\ns\n#1\nq\n"))
    assert main(_session_args(files, session, "--budget", "10")) == 0
    text = capsys.readouterr().out
    assert "model predicts:" in text and "[2/10 labeled]" in text
    from skassess.session import LabelingSession

    events, info, _ = LabelingSession.read_events(session)
    assert events["kind"].tolist() == ["label", "skip", "label"]
    assert events["label"].dropna().tolist() == [0, 1]
    assert info["classes"] == ["dog", "cat"]


def test_a_session_refuses_another_stream_and_repeated_ids(files, tmp_path, capsys):
    oracle, session = _oracle(files, tmp_path), tmp_path / "s.sqlite"
    assert main(_session_args(files, session, "--budget", "3", "--oracle", str(oracle))) == 0
    capsys.readouterr()
    args = _session_args(files, session, "--budget", "3", "--oracle", str(oracle))
    args[args.index("0.78")] = "0.7"  # another threshold: another assessor
    assert main(args) == 2
    assert "started with another assessor" in capsys.readouterr().err
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("a.csv", "b.csv"):
        (twice / name).write_text((files / "stream" / "day0.csv").read_text())
    args = ["monitor", str(files / "reference.csv"), str(twice), "--session",
            str(tmp_path / "t.sqlite")]  # fmt: skip
    assert main(args) == 2
    assert "the id '2026-01-02-0' is in" in capsys.readouterr().err
    assert not (tmp_path / "t.sqlite").exists()


def test_the_html_report_holds_the_timeline_chunks_and_alerts(files, tmp_path, capsys):
    oracle, report = _oracle(files, tmp_path), tmp_path / "r.html"
    args = _session_args(files, tmp_path / "s.sqlite", "--budget", "10", "--oracle", str(oracle))
    assert main([*args, "--report", str(report), "--quiet"]) == 0
    text = report.read_text(encoding="utf-8")
    assert "<title>Monitoring of stream/ (4 files)</title>" in text  # the stream, not reference
    assert text.count("<svg") == 1 and "<script" not in text
    assert "<h2>Timeline</h2>" in text and "<h2>Chunks</h2>" in text
    assert "Alerts, where P(accuracy &lt; 0.78) &ge; 0.9: 2026-01-0" in text
    assert all(f'data-label="chunk">2026-01-0{d}</th>' in text for d in (2, 3, 4, 5))
    assert '">labeling session</th>' in text and "column time, period D" in text
    assert main(["monitor", str(files / "reference.csv"), str(files / "stream"), "--query",
                 "4", "--report", str(report), "--quiet"]) == 0  # fmt: skip
    text = report.read_text(encoding="utf-8")
    assert "Rows to label next" in text and "Alerts, where" not in text


@pytest.mark.slow
def test_a_binary_rate_per_chunk(files, capsys):
    args = ["monitor", str(files / "reference.csv"), str(files / "stream"), "--metric", "NPV",
            "--threshold", "0.7", "--json", "-", "--quiet"]  # fmt: skip
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["reference"]["metric"] == "npv"
    ref = pd.read_csv(files / "reference.csv")
    negative = ref["score_dog"] >= ref["score_cat"]  # class 0: the first score column
    expected = (ref["label"][negative] == "dog").mean()
    assert result["reference"]["accuracy"] == pytest.approx(expected)
    chunks = result["chunks"]
    assert all(0 < c["n_predicted"] < c["n_rows"] for c in chunks)
    assert main([*args[:-3], "--quiet"]) == 0
    assert "NPV per chunk" not in capsys.readouterr().out
    assert main(args[:-3]) == 0
    text = capsys.readouterr().out
    assert "NPV per chunk" in text and "Alerts (P(NPV < 0.7) >= 0.9)" in text


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_the_html_report_shows_every_column(files, tmp_path, capsys, width):
    from tests.helpers import browser
    from tests.session.test_report import page_layout

    if browser() is None:
        pytest.skip("no Chromium or Chrome on this machine (Debian: apt install chromium)")
    report = tmp_path / "m.html"
    args = [
        "monitor", str(files / "reference.csv"), str(files / "stream"),
        "--chunk-column", "time", "--period", "D", "--threshold", "0.78",
        "--level", "0.8", "0.95", "--quiet", "--report", str(report),
    ]  # fmt: skip
    assert main(args) == 0
    page_layout(report, width)


@pytest.mark.parametrize(
    "chunking",
    [{"chunk_column": "time", "period": "D"}, {"chunk_size": 700}, {}],
    ids=["by day", "by size", "by file"],
)
def test_chunk_by_chunk_reading_gives_the_in_memory_table(files, tmp_path, chunking):
    from skassess.session import monitor_files

    # day 2026-01-03 runs over two files
    stream = tmp_path / "split"
    stream.mkdir()
    frames = [pd.read_csv(p) for p in sorted((files / "stream").iterdir())]
    both = pd.concat(frames[1:3], ignore_index=True)
    frames = [frames[0], both.iloc[:900], both.iloc[900:], frames[3]]
    for i, frame in enumerate(frames):
        frame.to_csv(stream / f"part{i}.csv", index=False)
    args = dict(threshold=0.78, random_state=0, progress=False, **chunking)
    read_by_chunk = monitor_files(str(files / "reference.csv"), [str(stream)], **args)
    in_memory = monitor_files(str(files / "reference.csv"), [str(stream)], query=1, **args)
    assert read_by_chunk.rows is None and len(in_memory.rows) == 2400
    assert read_by_chunk.files == in_memory.files
    pd.testing.assert_frame_equal(
        read_by_chunk.table.reset_index(drop=True), in_memory.table.reset_index(drop=True)
    )
    assert [str(k) for k in read_by_chunk.table.index] == [str(k) for k in in_memory.table.index]

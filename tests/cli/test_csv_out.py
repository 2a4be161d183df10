"""The command's CSV files are safe to open in a spreadsheet (OWASP's CSV injection)."""

import csv

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skassess.cli import main
from skassess.cli._csv_out import neutralize, write_csv

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)"]
FORMULAS += ["\t=1+1", "\r=1+1"]


def _cells(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [cell for row in csv.reader(f) for cell in row]


def _runs(cell):
    return cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_number(cell)


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return cell.strip() == cell and cell.lower() not in ("nan", "inf", "-inf", "+inf")


@given(st.text())
def test_neutralize_leaves_no_cell_that_runs(text):
    out = neutralize(text)
    assert not _runs(out) or _is_number(out)
    assert out in (text, "'" + text)
    if not text.startswith(("=", "+", "-", "@", "\t", "\r")):
        assert out == text


@pytest.mark.parametrize("number", ["-3", "+1.5e-3", "-.5", "-0"])
def test_plain_numbers_stay_numbers(number):
    assert neutralize(number) == number


def test_write_csv_quotes_text_and_keeps_numbers(tmp_path):
    frame = pd.DataFrame({"id": FORMULAS, "x": np.arange(6) - 3.5, "n": np.arange(6) - 2})
    frame.index = pd.Index([f"={i}" for i in range(6)], name="@chunk")
    write_csv(frame, tmp_path / "safe.csv")
    cells = _cells(tmp_path / "safe.csv")
    assert not [c for c in cells if _runs(c)], cells
    back = pd.read_csv(tmp_path / "safe.csv")
    assert back["x"].tolist() == frame["x"].tolist() and back["n"].tolist() == [-2, -1, 0, 1, 2, 3]
    assert back["id"].tolist() == ["'" + f for f in FORMULAS]
    write_csv(frame, tmp_path / "raw.csv", raw=True)
    assert pd.read_csv(tmp_path / "raw.csv")["id"].tolist()[:4] == FORMULAS[:4]


@pytest.fixture
def hostile_pool(tmp_path):
    """A binary scores file whose ids and class names are formulas, and its oracle."""
    rng = np.random.default_rng(0)
    n, classes = 200, ["=1+1", "@SUM(A1)"]
    p = rng.beta(6, 2, n)
    y = (rng.random(n) < p).astype(int)
    ids = [FORMULAS[i % 4] + f"#{i}" for i in range(n)]
    scores = pd.DataFrame({"id": ids, f"score_{classes[0]}": 1 - p, f"score_{classes[1]}": p})
    scores.to_csv(tmp_path / "scores.csv", index=False)
    oracle = pd.DataFrame({"id": ids, "label": [classes[v] for v in y]})
    oracle.to_csv(tmp_path / "oracle.csv", index=False)
    return tmp_path / "scores.csv", tmp_path / "oracle.csv", oracle


def test_export_labels_csv_is_spreadsheet_safe(hostile_pool, tmp_path, capsys):
    scores, oracle, truth = hostile_pool
    session = tmp_path / "s.sqlite"
    argv = ["label", str(scores), "--session", str(session), "--oracle", str(oracle)]
    assert main([*argv, "--budget", "40", "--no-progress"]) == 0
    assert main(["export", str(session), "--labels", str(tmp_path / "safe.csv")]) == 0
    cells = _cells(tmp_path / "safe.csv")
    assert len(cells) == 5 * 41 and not [c for c in cells if _runs(c)]
    safe = pd.read_csv(tmp_path / "safe.csv")
    assert safe["id"].str.startswith("'").all() and safe["label"].str.startswith("'").all()
    # the raw output holds the cells as they are, and they are the oracle's
    argv = ["export", str(session), "--labels", str(tmp_path / "raw.csv"), "--raw-csv"]
    assert main(argv) == 0
    raw = pd.read_csv(tmp_path / "raw.csv", keep_default_na=False)
    assert raw["id"].tolist() == [s[1:] for s in safe["id"]]
    expected = truth.set_index("id").loc[raw["id"], "label"].tolist()
    assert raw["label"].tolist() == expected
    capsys.readouterr()


def test_monitor_csv_is_spreadsheet_safe(tmp_path, capsys):
    rng = np.random.default_rng(1)

    def frame(n, batches):
        p = rng.beta(8, 2, n)
        return pd.DataFrame(
            {
                "id": [f"=r{i}" for i in range(n)],
                "score_a": 1 - p,
                "score_b": p,
                "label": np.where(rng.random(n) < p, "b", "a"),
                "batch": [batches[i % len(batches)] for i in range(n)],
            }
        )

    frame(800, ["x"]).to_csv(tmp_path / "ref.csv", index=False)
    stream = frame(600, ['=HYPERLINK("http://x")', "-2+3", "@A1"])
    stream["label"] = ""
    stream.to_csv(tmp_path / "stream.csv", index=False)
    out = tmp_path / "t.csv"
    argv = ["monitor", str(tmp_path / "ref.csv"), str(tmp_path / "stream.csv")]
    argv += ["--chunk-column", "batch", "--quiet", "--csv", str(out)]
    assert main(argv) == 0
    cells = _cells(out)
    assert not [c for c in cells if _runs(c)], cells
    assert sorted(pd.read_csv(out)["chunk"]) == ["'-2+3", '\'=HYPERLINK("http://x")', "'@A1"]
    assert main([*argv, "--raw-csv"]) == 0
    assert sorted(pd.read_csv(out)["chunk"]) == ["-2+3", '=HYPERLINK("http://x")', "@A1"]
    capsys.readouterr()

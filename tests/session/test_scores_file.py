import gzip

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.datasets import example_scores_path
from skassess.exceptions import ScoresFileError
from skassess.session import ScoresFile, assess_file


def _write(tmp_path, text, name="s.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_example_file_columns_are_auto_detected():
    sf = ScoresFile(example_scores_path())
    assert sf.id_column == "id" and sf.label_column == "label"
    assert sf.classes[:2] == ["T-shirt/top", "Trouser"] and len(sf.score_columns) == 10
    table = sf.read()
    assert table.scores.shape == (2000, 10)
    assert (table.labels >= 0).sum() == 100
    np.testing.assert_allclose(table.scores.sum(axis=1), 1)
    assert sf.max_sum_error < 1e-4


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_separator_found_from_the_header(tmp_path, sep):
    text = sep.join(["id", "p_a", "p_b", "y"]) + "\n" + sep.join(["x1", "0.2", "0.8", "b"]) + "\n"
    table = ScoresFile(_write(tmp_path, text)).read()
    assert table.labels.tolist() == [1] and table.ids.tolist() == ["x1"]


def test_binary_column_groups_display_and_no_id(tmp_path):
    text = "score,y,sex,text\n0.9,1,F,hello\n0.2,,M,bye\n0.7,0,F,x\n"
    sf = ScoresFile(_write(tmp_path, text), group_columns=["sex"], display_columns=["text"])
    table = sf.read()
    assert sf.binary and sf.classes == ["0", "1"] and table.scores.shape == (3,)
    assert table.labels.tolist() == [1, -1, 0] and table.ids.tolist() == ["1", "2", "3"]
    assert table.groups["sex"].tolist() == ["F", "M", "F"]
    assert table.display["text"].tolist() == ["hello", "bye", "x"]
    named = ScoresFile(
        _write(tmp_path, "s,lab\n0.9,yes\n", "n.csv"),
        score_columns=["s"],
        label_column="lab",
        classes=["no", "yes"],
    ).read()
    assert named.labels.tolist() == [1]


BAD = {
    "wrong delimiter": (
        "id;score_a;score_b\n1;0.5;0.5\n",
        {"sep": ","},
        "The header has one column: is the delimiter not ','",
    ),
    "no score columns": ("id,a,b\n1,0.5,0.5\n", {}, "no score columns found"),
    "missing score column": (
        "id,score_a,score_b\n1,0.5,0.5\n",
        {"score_columns": ["score_c"]},
        "score column 'score_c' is not a column",
    ),
    "sum": (
        "id,score_a,score_b\n1,0.5,0.5\n2,0.5,0.3\n",
        {},
        r"row 2 \(line 3\): the 2 class "
        "scores sum to 0.8",
    ),
    "label": (
        "id,score_a,score_b,label\n1,0.5,0.5,a\n2,0.5,0.5,c\n",
        {},
        r"row 2 \(line 3\), column 'label': the label 'c' is not a class",
    ),
    "duplicate id": (
        "id,score_a,score_b\n1,0.5,0.5\n2,0.5,0.5\n1,0.1,0.9\n",
        {},
        r"row 3 \(line 4\), column 'id': the id '1' repeats row 1",
    ),
    "not a number": (
        "id,score_a,score_b\n1,0.5,0.5\n2,abc,0.5\n",
        {},
        r"row 2 \(line 3\), column 'score_a': the score 'abc' is not a number",
    ),
    "empty score": (
        "id,score_a,score_b\n1,,0.5\n",
        {},
        r"row 1 \(line 2\), column 'score_a': the score is empty",
    ),
    "out of range": (
        "id,score_a,score_b\n1,1.5,-0.5\n",
        {},
        r"column 'score_a': the score 1.5 is not in \[0, 1\]",
    ),
    "empty id": (
        "id,score_a,score_b\n,0.5,0.5\n",
        {},
        r"row 1 \(line 2\), column 'id': the id "
        "is empty",
    ),
    "empty group": (
        "id,score_a,score_b,g\n1,0.5,0.5,\n",
        {"group_columns": ["g"]},
        r"column 'g': the group is empty",
    ),
    "header only": ("id,score_a,score_b\n", {}, "a header but no rows"),
    "blank": ("\n\n", {}, "the file is empty"),
    "duplicate header": ("id,score_a,score_a\n1,0.5,0.5\n", {}, "names the column 'score_a' twice"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_name_the_row_and_column(tmp_path, case):
    text, kwargs, message = BAD[case]
    with pytest.raises(ScoresFileError, match=message):
        ScoresFile(_write(tmp_path, text), **kwargs).read()


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(ScoresFileError, match="the file is empty"):
        ScoresFile(_write(tmp_path, ""))
    with pytest.raises(ScoresFileError, match="no such file"):
        ScoresFile(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match="sum_tolerance must be in"):
        ScoresFile(example_scores_path(), sum_tolerance=2)
    with pytest.raises(ValueError, match="classes must name 10 classes"):
        ScoresFile(example_scores_path(), classes=["a", "b"])


def test_duplicate_ids_across_batches(tmp_path):
    n = 50
    frame = pd.DataFrame({"id": [f"i{k}" for k in range(n)], "score": np.linspace(0, 1, n)})
    frame.loc[41, "id"] = "i7"
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(
        ScoresFileError,
        match=r"row 42 \(line 43\), column 'id': the id repeats "
        "row 8",
    ):
        list(ScoresFile(path).iter_chunks(10))


def test_gzip_and_parquet_read_the_same(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.read_csv(example_scores_path(), dtype={"label": str})
    frame.to_parquet(tmp_path / "s.parquet")
    a = ScoresFile(example_scores_path()).read()
    b = ScoresFile(tmp_path / "s.parquet").read()
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.labels, b.labels)
    frame.loc[3, "score_Bag"] = 7.0
    frame.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(ScoresFileError, match=r"row 4, column 'score_Bag': the score 7 is not in"):
        ScoresFile(tmp_path / "bad.parquet").read()


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(chunk=st.integers(1, 60), n_labeled=st.integers(0, 40))
def test_batched_assessment_equals_one_batch(tmp_path_factory, chunk, n_labeled):
    """Any batch size gives the same posterior (the conjugate update)."""
    rng = np.random.default_rng(n_labeled)
    n = 60
    scores = rng.dirichlet(np.ones(3), size=n).round(6)
    labels = np.where(np.arange(n) < n_labeled, rng.integers(0, 3, n).astype(str), "")
    path = tmp_path_factory.mktemp("b") / "s.csv"
    frame = pd.DataFrame(scores, columns=["score_0", "score_1", "score_2"])
    frame["label"] = labels
    frame["g"] = rng.choice(["u", "v"], n)
    frame.to_csv(path, index=False)
    whole = assess_file(path, chunk_rows=n, group_columns=["g"])
    parts = assess_file(path, chunk_rows=chunk, group_columns=["g"])
    pd.testing.assert_frame_equal(whole.by_class, parts.by_class)
    pd.testing.assert_frame_equal(whole.by_group["g"], parts.by_group["g"])
    np.testing.assert_allclose(whole.overall.to_numpy(), parts.overall.to_numpy(), atol=1e-12)
    assert parts.source["labeled"] == n_labeled and parts.source["rows"] == n


def test_gzip_is_read(tmp_path):
    path = tmp_path / "s.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("id;score_a;score_b\n1;0.5;0.5\n")
    assert ScoresFile(path).read().scores.shape == (1, 2)


def test_hierarchical_prior_in_the_assessment(tmp_path):
    """The accuracy and cost estimators take it; the ECE's bins keep the informative one."""
    rng = np.random.default_rng(0)
    n = 200
    scores = rng.dirichlet(np.ones(3), size=n).round(6)
    labels = np.where(np.arange(n) < 40, rng.integers(0, 3, n).astype(str), "")
    path = tmp_path / "s.csv"
    frame = pd.DataFrame(scores, columns=["score_0", "score_1", "score_2"])
    frame["label"] = labels
    frame["g"] = rng.choice(["u", "v", "w"], n)
    frame.to_csv(path, index=False)
    result = assess_file(path, group_columns=["g"], prior="hierarchical", cost_matrix=1 - np.eye(3))
    est = result.estimators
    assert est["by_class"].prior == est["group:g"].prior == est["cost"].prior == "hierarchical"
    assert est["ece"].prior == "informative"
    assert result.settings["prior"] == "hierarchical"
    row = result.overall.iloc[0]
    assert row["lower"] <= row["mean"] <= row["upper"]


def test_labels_written_by_pandas_as_floats_are_classes(tmp_path):
    """A label column with blanks is float in pandas; to_csv writes 7.0: read as class 7."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(10), 30)
    frame = pd.DataFrame(p, columns=[f"score_{k}" for k in range(10)])
    frame["label"] = np.where(np.arange(30) % 3 == 0, p.argmax(axis=1), np.nan)
    assert frame["label"].dtype == np.float64
    path = tmp_path / "pandas.csv"
    frame.to_csv(path, index=False)
    assert "7.0" in path.read_text() or "0.0" in path.read_text()
    table = ScoresFile(path).read()
    expected = np.where(np.arange(30) % 3 == 0, p.argmax(axis=1), -1)
    np.testing.assert_array_equal(table.labels, expected)
    # a fraction is still not a class
    frame.loc[0, "label"] = 2.5
    frame.to_csv(path, index=False)
    with pytest.raises(
        ScoresFileError,
        match=r"row 1 \(line 2\), column 'label': the label "
        r"'2.5' is not a class",
    ):
        ScoresFile(path).read()


@pytest.mark.parametrize(
    "text, match",
    [
        (
            "id,score_a,score_b,label\n1,0.5,0.5,a\n2,0.3,0.7,b,extra\n",
            r"s.csv: row 2 \(line 3\) has 5 cells, more than the header's 4 columns",
        ),
        (
            "id,score_a,score_b,label\n1,0.5,0.5,a\n2,0.3,0.7\n",
            r"s.csv: row 2 \(line 3\) has 3 cells, fewer than the header's 4 columns",
        ),
        (
            "id,score_a,score_b,label\n1,0.5,0.5,a\n\n2,0.3,0.7,b,x\n",
            r"row 2 \(line 4\) has 5 cells",
        ),
        (
            'id,score_a,score_b,label\n1,0.5,0.5,"a,\nb"\n2,0.3,0.7\n',
            r"row 2 \(line 4\) has 3 cells",
        ),
        ("id,score_a,score_b,label\n", r"s.csv: the file has a header but no rows"),
        (
            "id,score_a,score_b,label\n1,0.5,0.5,a\n2,inf,0.7,b\n",
            r"s.csv: row 2 \(line 3\), column 'score_a': the score 'inf' is not finite",
        ),
        (
            "id,score_a,score_b,label\n1,0.5,0.5,a\n2,NaN,0.7,b\n",
            r"s.csv: row 2 \(line 3\), column 'score_a': the score 'NaN' is not a number",
        ),
    ],
)
def test_rows_of_the_wrong_shape_and_non_finite_scores(tmp_path, text, match):
    path = _write(tmp_path, text)
    with pytest.raises(ScoresFileError, match=match) as err:
        ScoresFile(path).read()
    assert "\n" not in str(err.value) and "np.float64" not in str(err.value)


@pytest.mark.parametrize("where", ["header", "row"])
def test_bytes_that_are_not_utf8_name_the_line(tmp_path, where):
    head = b"id,score_a,score_b,label\n"
    if where == "header":
        blob = "id,score_é,score_b,label\n".encode("latin-1") + b"1,0.5,0.5,a\n"
        line = 1
    else:
        blob = head + b"1,0.5,0.5,a\n" * 5000 + "2,0.3,0.7,café\n".encode("latin-1")
        line = 5002
    path = tmp_path / "latin.csv"
    path.write_bytes(blob)
    with pytest.raises(
        ScoresFileError,
        match=rf"latin.csv: line {line} is not UTF-8 text "
        r"\(byte 0xe9",
    ):
        ScoresFile(path).read()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from(["0.5", "0.25", '"a,b"', '"x\ny"', "", " 0.1", '"q""q"', "é"]),
            min_size=0,
            max_size=5,
        ),
        max_size=25,
    ),
    st.booleans(),
    st.integers(1, 64),
)
def test_cells_are_counted_as_the_csv_module_counts_them(tmp_path_factory, rows, newline, block):
    """The fast count of cells per row (numpy outside quotes) equals csv's, at any block size."""
    import csv
    import io

    text = "id,score_a,score_b\n" + "\n".join(",".join(r) for r in rows) + ("\n" if newline else "")
    path = tmp_path_factory.mktemp("cells") / "f.csv"
    path.write_bytes(text.encode())
    sf = ScoresFile(path)
    got = [
        pair
        for lines, widths in sf._record_blocks(block_bytes=block)
        for pair in zip(lines.tolist(), widths.tolist(), strict=True)
    ]
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    next(reader)
    assert got == [(reader.line_num, len(cells)) for cells in reader if cells]

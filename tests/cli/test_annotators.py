"""The command with labels that name their annotators: label, export, assess, report."""

import json

import numpy as np
import pandas as pd
import pytest

from skassess.cli import main
from skassess.datasets import load_fashion_mnist_scores
from skassess.session import LabelingSession


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """A 2,000-row scores file without labels, and two annotators' label files: "ann"
    right on every item, "bob" wrong on every tenth."""
    data = load_fashion_mnist_scores()
    folder = tmp_path_factory.mktemp("annotators")
    n = 2000
    classes = [f"k{c}" for c in range(10)]
    frame = pd.DataFrame(data.scores[:n], columns=[f"score_{c}" for c in classes])
    frame.insert(0, "id", [f"item{i}" for i in range(n)])
    frame.to_csv(folder / "scores.csv", index=False)
    truth = data.target[:n]
    slipped = truth.copy()
    slipped[::10] = (slipped[::10] + 1) % 10
    for name, labels in (("ann", truth), ("bob", slipped)):
        pd.DataFrame({"id": frame["id"], "label": [classes[k] for k in labels]}).to_csv(
            folder / f"{name}.csv", index=False
        )
    return folder, truth, classes


def _label(folder, session, who, budget, *extra):
    return main(
        [
            "label",
            str(folder / "scores.csv"),
            "--session",
            str(session),
            "--oracle",
            str(folder / f"{who}.csv"),
            "--annotator",
            who,
            "--budget",
            str(budget),
            "--seed",
            "1",
            "--no-progress",
            *extra,
        ]
    )


def test_label_with_annotators_repeats_exports_and_reports(pool, tmp_path, capsys):
    folder, truth, classes = pool
    session = tmp_path / "s.sqlite"
    assert _label(folder, session, "ann", 30) == 0
    assert _label(folder, session, "bob", 50, "--repeat-share", "0.2") == 0
    out = capsys.readouterr().out
    assert "[50/50 labeled (10 second labels)]" in out
    events, _, _ = LabelingSession.read_events(session)
    ann = events[events["kind"] == "label"]
    assert ann.groupby("annotator").size().to_dict() == {"ann": 30, "bob": 20}
    # each repeat is of an item "ann" labeled, chosen by the repeat design
    repeats = ann[ann.duplicated("row", keep=False) & (ann["annotator"] == "bob")]
    assert len(repeats) == 10 and set(repeats["row"]) <= set(ann.loc[ann.annotator == "ann", "row"])
    # export: the annotator of every label, repeats included
    assert main(["export", str(session), "--labels", str(tmp_path / "l.csv")]) == 0
    labels = pd.read_csv(tmp_path / "l.csv")
    assert list(labels.columns[:3]) == ["id", "label", "annotator"] and len(labels) == 50
    assert labels["label"].isin(classes).all()
    posterior = tmp_path / "p.json"
    scores = str(folder / "scores.csv")
    assert main(["export", str(session), "--scores", scores, "--posterior", str(posterior)]) == 0
    exported = json.loads(posterior.read_text())
    assert [a["annotator"] for a in exported["annotators"]] == ["ann", "bob"]
    assert exported["agreement"][-1]["annotator"] == "all"
    # the report models the slips and shows the annotators
    report = tmp_path / "r.html"
    assert (
        main(["report", str(folder / "scores.csv"), "--session", str(session), "-o", str(report)])
        == 0
    )
    assert "<h2>Annotators</h2>" in report.read_text()


def _oracle_args(folder, session):
    """``skassess label`` of 5 labels from "ann"'s file, without --annotator."""
    scores, oracle = str(folder / "scores.csv"), str(folder / "ann.csv")
    return ["label", scores, "--session", str(session), "--oracle", oracle] + [
        "--budget",
        "5",
        "--no-progress",
    ]


def test_a_session_without_annotators_exports_as_before(pool, tmp_path, capsys):
    folder, _, _ = pool
    session = tmp_path / "s.sqlite"
    args = _oracle_args(folder, session)
    assert main(args) == 0
    assert main(["export", str(session), "--labels", str(tmp_path / "l.csv")]) == 0
    assert list(pd.read_csv(tmp_path / "l.csv").columns) == ["id", "label", "time", "step", "row"]
    assert main([*args[:-3], "--budget", "6", "--annotator", "ann", "--no-progress"]) == 2
    assert "told without annotators" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--repeat-share", "0.2"], "--repeat-share needs --annotator"),
        (["--annotator", "a", "--repeat-share", "1"], "--repeat-share must be in [0, 1)"),
        (["--annotator", "a", "--anytime"], "--anytime takes every label as the truth"),
        (["--annotator", "a", "--metrics", "accuracy"], "--metrics takes every label"),
        (["--annotator", " "], "--annotator must be a name"),
    ],
)
def test_label_annotator_errors(pool, tmp_path, capsys, extra, message):
    folder, _, _ = pool
    session = tmp_path / "s.sqlite"
    assert main([*_oracle_args(folder, session), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not session.exists()


def _annotations(folder, truth, classes, rows, name="ann", slip_every=0, first_slip=0):
    labels = truth[rows].copy()
    if slip_every:
        slips = slice(first_slip, None, slip_every)
        labels[slips] = (labels[slips] + 1) % 10
    return pd.DataFrame(
        {"id": [f"item{r}" for r in rows], "annotator": name, "label": [classes[k] for k in labels]}
    )


def test_assess_with_annotations(pool, tmp_path, capsys):
    folder, truth, classes = pool
    rows = np.arange(0, 2000, 5)
    table = pd.concat(
        [
            _annotations(folder, truth, classes, rows, "ann", slip_every=20),
            _annotations(folder, truth, classes, rows[:100], "bob", slip_every=10, first_slip=5),
        ]
    )
    path = tmp_path / "annotations.csv"
    table.to_csv(path, index=False)
    out_json = tmp_path / "out.json"
    assert (
        main(
            [
                "assess",
                str(folder / "scores.csv"),
                "--annotations",
                str(path),
                "--json",
                str(out_json),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "400 labeled" in text and "Annotators" in text and "kappa" in text
    result = json.loads(out_json.read_text())
    assert [a["annotator"] for a in result["annotators"]] == ["ann", "bob"]
    assert result["annotators"][1]["n_repeated"] == 100
    accuracy = next(r for r in result["overall"] if r["metric"] == "accuracy")
    data = load_fashion_mnist_scores()
    true = float(np.mean(data.scores[:2000].argmax(1) == truth))
    assert accuracy["lower"] < true < accuracy["upper"]


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.assign(id=t["id"].where(t.index != 3, "nope")),
            "row 4 (line 5): the id 'nope' is not in the scores file",
        ),
        (
            lambda t: t.assign(annotator=t["annotator"].where(t.index != 2, " ")),
            "row 3 (line 4), column 'annotator': the annotator is empty",
        ),
        (
            lambda t: t.assign(label=t["label"].where(t.index != 1, "k99")),
            "row 2 (line 3), column 'label'",
        ),
        (
            lambda t: pd.concat([t, t.iloc[[0]]], ignore_index=True),
            "row 6 (line 7), column 'annotator': 'ann' labels item 'item0' a second time",
        ),
        (lambda t: t.drop(columns="annotator"), "needs an id column (id), an annotator column"),
    ],
)
def test_assess_annotations_errors_name_the_cell(pool, tmp_path, capsys, edit, message):
    folder, truth, classes = pool
    path = tmp_path / "annotations.csv"
    edit(_annotations(folder, truth, classes, np.arange(5))).to_csv(path, index=False)
    assert main(["assess", str(folder / "scores.csv"), "--annotations", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"--annotations {path}" in err and message in err


def test_assess_annotations_refuse_a_labeled_scores_file(pool, tmp_path, capsys):
    folder, truth, classes = pool
    frame = pd.read_csv(folder / "scores.csv")
    frame["label"] = ""
    frame.loc[7, "label"] = classes[truth[7]]
    frame.to_csv(tmp_path / "labeled.csv", index=False)
    path = tmp_path / "annotations.csv"
    _annotations(folder, truth, classes, np.arange(5)).to_csv(path, index=False)
    assert main(["assess", str(tmp_path / "labeled.csv"), "--annotations", str(path)]) == 2
    assert "labels row 8 itself, without an annotator" in capsys.readouterr().err
    assert main(["assess", str(folder / "scores.csv"), "--annotator-prior", "0.9", "0.99"]) == 2
    assert "--annotator-prior needs --annotations" in capsys.readouterr().err

import io
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import skassess
from skassess.cli import main
from skassess.exceptions import SkassessWarning
from skassess.session import LabelingSession


def test_demo_prints_posterior_and_writes_png(tmp_path, capsys):
    out = tmp_path / "rel.png"
    assert main(["demo", "--output", str(out), "--n-labels", "150"]) == 0
    text = capsys.readouterr().out
    assert "Accuracy per group" in text and "95% interval" in text and "ECE" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "prior, line",
    [
        (None, "Calibrated prior"),
        ("hierarchical", "Hierarchical prior"),
        ("informative", "Informative prior"),
        ("uniform", "Uniform prior"),
    ],
)
def test_demo_prior(tmp_path, capsys, prior, line):
    args = ["demo", "--output", str(tmp_path / "p.png"), "--n-labels", "60"]
    args += [] if prior is None else ["--prior", prior]
    if prior == "uniform":  # 60 labels over ten classes: the prior moves the overall
        with pytest.warns(SkassessWarning, match="uniform prior moves"):
            assert main(args) == 0
    else:
        assert main(args) == 0
    assert line in capsys.readouterr().out


def test_demo_adult(tmp_path, capsys):
    assert main(["demo", "--dataset", "adult", "--output", str(tmp_path / "a.png")]) == 0
    assert "White - non-White" in capsys.readouterr().out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"skassess {skassess.__version__}"
    # answered without importing the estimators (nor numpy's stack behind them)
    probe = (
        "import sys; from skassess.cli import main; main(['--version']); "
        "print(sorted(m for m in ('skassess.metrics', 'skassess.samplers', 'pandas', "
        "'scipy', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [f"skassess {skassess.__version__}", "[]"]
    with pytest.raises(SystemExit) as exit_:  # with more arguments, argparse answers
        main(["--version", "demo"])
    assert exit_.value.code == 0


def test_demo_bad_n_labels(tmp_path):
    with pytest.raises(SystemExit, match="--n-labels must be in"):
        main(["demo", "--n-labels", "-3", "--output", str(tmp_path / "x.png")])


@pytest.mark.slow
def test_python_dash_m(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "skassess", "demo", "--output", str(tmp_path / "m.png")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Wrote the reliability diagram" in proc.stdout


# ------------------------------------------------------------ assess, label, export


@pytest.fixture
def example(tmp_path, capsys):
    assert main(["example", "--directory", str(tmp_path)]) == 0
    capsys.readouterr()
    return tmp_path / "example_scores.csv", tmp_path / "example_labels.csv"


def test_assess_prints_tables_and_writes_json(example, tmp_path, capsys):
    scores, labels = example
    out = tmp_path / "a.json"
    assert main(["assess", str(scores), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2,000 rows, 100 labeled, 10 classes" in text
    assert "Accuracy per predicted class" in text and "Shirt" in text and "p_rope" in text
    result = json.loads(out.read_text())
    assert result["source"]["rows"] == 2000 and len(result["by_class"]) == 10
    acc = next(r for r in result["overall"] if r["metric"] == "accuracy")
    # the default (hierarchical) prior's interval holds the accuracy on all 2,000 rows
    table = pd.read_csv(scores).set_index("id")
    truth = pd.read_csv(labels).set_index("id")["label"].reindex(table.index)
    predicted = table.filter(like="score_").idxmax(axis=1).str.removeprefix("score_")
    true_acc = float((predicted == truth).mean())
    assert acc["lower"] < true_acc < acc["upper"] and acc["upper"] - acc["lower"] < 0.15
    assert result["settings"]["prior"] == "calibrated"
    # decisions in words: the group's accuracy minus the best group's
    decisions = {r["decision"] for r in result["differences"]["predicted class"]}
    assert decisions <= {"worse", "equivalent", "better", "undecided"} and "worse" in decisions
    for r in result["differences"]["predicted class"]:
        if r["decision"] == "worse":
            assert r["p_left"] >= 0.95 and r["mean"] < 0


def test_assess_groups_and_cost(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 400
    p = rng.uniform(size=n)
    frame = pd.DataFrame(
        {
            "score": p.round(4),
            "y": np.where(rng.uniform(size=n) < p, "1", "0"),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    frame.loc[200:, "y"] = ""
    path = tmp_path / "b.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "cost.csv").write_text("0,1\n5,0\n")
    assert (
        main(
            [
                "assess",
                str(path),
                "--group",
                "sex",
                "--cost-matrix",
                str(tmp_path / "cost.csv"),
                "--json",
                "-",
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["skassess_version"] == skassess.__version__
    assert [r["sex"] for r in result["by_group"]["sex"]] == ["F", "M"]
    assert {r["metric"] for r in result["overall"]} == {"accuracy", "ECE", "expected cost"}
    assert len(result["differences"]["sex"]) == 1
    (tmp_path / "cost3.csv").write_text("0,1,1\n1,0,1\n1,1,0\n")
    assert main(["assess", str(path), "--cost-matrix", str(tmp_path / "cost3.csv")]) == 2
    assert "--cost-matrix must be 2 x 2" in capsys.readouterr().err


def test_assess_meta_on_a_binary_file(tmp_path, capsys):
    """--meta: the unlabeled rows' accuracy; here they drifted to harder items."""
    rng = np.random.default_rng(1)
    n = 2000
    p = np.concatenate([rng.beta(8, 1, n // 2), rng.beta(2, 2, n // 2)])  # then harder
    y = (rng.uniform(size=n) < p).astype(int)
    frame = pd.DataFrame({"score": p.round(5), "y": y.astype(str)})
    frame.loc[n // 4 :, "y"] = ""  # labeled: the first quarter only
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    assert (
        main(
            ["assess", str(path), "--meta", "confidence", "atc", "--json", str(tmp_path / "d.json")]
        )
        == 0
    )
    assert (
        "Accuracy of the 1,500 unlabeled rows predicted from 500 labeled rows"
        in capsys.readouterr().out
    )
    u = {r["method"]: r for r in json.loads((tmp_path / "d.json").read_text())["unlabeled"]}
    truth = np.mean((p >= 0.5) == y)
    unlabeled_truth = np.mean(((p >= 0.5) == y)[n // 4 :])
    assert unlabeled_truth < truth - 0.02
    assert u["confidence"]["lower"] <= unlabeled_truth <= u["confidence"]["upper"]
    # calibrated scores: the calibrated confidence is near the truth under this drift (its
    # map is learned on confident rows only; 0.81 against 0.77 here). ATC, whose threshold
    # is learned on the confident labeled rows, is far off (0.52): it is only printed.
    assert abs(u["confidence"]["accuracy"] - unlabeled_truth) < 0.05
    assert u["atc"]["lower"] is None and 0 <= u["atc"]["accuracy"] <= 1  # NaN is null


@pytest.mark.parametrize(
    "text,message",
    [
        ("id;score_a;score_b\n1;0.5;0.5\n", "no score columns found"),
        ("id,score_a,score_b,label\n1,0.5,0.5,a\n2,0.5,0.5,zz\n", "row 2 (line 3), column 'label'"),
        ("id,score_a,score_b\n1,0.5,0.4\n", "row 1 (line 2): the 2 class scores sum to 0.9"),
        ("id,score_a,score_b\n1,0.5,0.5\n1,0.5,0.5\n", "the id '1' repeats row 1"),
        ("", "the file is empty"),
    ],
)
def test_bad_files_exit_nonzero_and_write_no_session(tmp_path, capsys, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    session = tmp_path / "s.sqlite"
    args = ["--sep", ","] if text.startswith("id;") else []
    assert main(["assess", str(path), *args]) == 2
    assert message in capsys.readouterr().err
    assert main(["label", str(path), "--session", str(session), *args]) == 2
    assert message in capsys.readouterr().err
    assert not session.exists()


def test_plan_from_the_labels_in_the_file(example, tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert main(["plan", str(example[0]), "--width", "0.04", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "from the 100 labels in the file" in text and "Labels for a width of 0.04" in text
    assert "The plan follows the map fitted to 100 labels; width_lower to width_upper" in text
    assert "width_lower" in text and "width_upper" in text and "(likely " in text
    plan = json.loads(out.read_text())
    assert plan["source"] == "labels" and plan["labeled"] == 100
    widths = [r["width"] for r in plan["table"]]
    assert widths == sorted(widths, reverse=True)
    assert all(r["width_lower"] <= r["width"] <= r["width_upper"] for r in plan["table"])
    assert 100 < plan["n_needed"] <= 2000
    low, high = plan["n_needed_range"]
    assert low <= plan["n_needed"] <= high
    assert plan["dispersion"] > 0


def test_plan_refuses_a_bad_width(example, capsys):
    assert main(["plan", str(example[0]), "--width", "2"]) == 2
    assert "--width must be in (0, 1); got 2.0" in capsys.readouterr().err


@pytest.mark.slow
def test_label_with_oracle_resumes_and_exports(example, tmp_path, capsys):
    scores, labels = example
    session = tmp_path / "s.sqlite"
    base = [
        "label",
        str(scores),
        "--session",
        str(session),
        "--oracle",
        str(labels),
        "--no-progress",
    ]
    assert main([*base, "--task", "least_accurate", "--seed", "4", "--budget", "30"]) == 0
    out = capsys.readouterr().out
    assert "new; 0 labels so far; task least_accurate" in out
    # the table's labels include the file's 100: the last line says both
    assert "[30/30 labeled in this session; 130 in all, with the 100 the scores file labels]" in out
    table = out.split("Posterior per group")[1]
    header = table.splitlines()[1].split()  # class names may hold spaces: count from the right
    column = header.index("n_labeled") - len(header)
    counts = [int(line.split()[column]) for line in table.splitlines()[3:13]]
    assert sum(counts) == 130
    assert main([*base, "--budget", "50"]) == 0  # resumes with the stored settings
    assert "resumed; 30 labels so far" in capsys.readouterr().out
    # the same 50 rows as one uninterrupted run
    assert (
        main(
            [
                *base[:3],
                str(tmp_path / "one.sqlite"),
                *base[4:],
                "--task",
                "least_accurate",
                "--seed",
                "4",
                "--budget",
                "50",
            ]
        )
        == 0
    )
    a, _, _ = LabelingSession.read_events(session)
    b, _, _ = LabelingSession.read_events(tmp_path / "one.sqlite")
    assert a["row"].tolist() == b["row"].tolist() and len(a) == 50
    # a changed setting or file is refused, and nothing is written
    assert main([*base, "--task", "estimate"]) == 2
    assert "started with task='least_accurate'" in capsys.readouterr().err
    changed = tmp_path / "example_scores.csv"
    changed.write_text(changed.read_text().replace("img-00001,", "img-00001x,"))
    assert main(base) == 2
    assert "changed since the session started" in capsys.readouterr().err
    assert len(LabelingSession.read_events(session)[0]) == 50
    capsys.readouterr()
    # export reads only the files named; the one named is checked against the session
    assert main(["export", str(session), "--posterior", "-"]) == 2
    assert "the posterior needs the scores file" in capsys.readouterr().err
    assert main(["export", str(session), "--scores", str(scores), "--posterior", "-"]) == 2
    assert "is not the file the session labeled" in capsys.readouterr().err
    assert main(["example", "--directory", str(tmp_path)]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "export",
                str(session),
                "--scores",
                str(scores),
                "--labels",
                str(tmp_path / "l.csv"),
                "--posterior",
                str(tmp_path / "p.json"),
            ]
        )
        == 0
    )
    exported = pd.read_csv(tmp_path / "l.csv")
    truth = pd.read_csv(labels).set_index("id")["label"]
    assert len(exported) == 50
    assert (exported["label"].to_numpy() == truth[exported["id"]].to_numpy()).all()
    post = json.loads((tmp_path / "p.json").read_text())
    assert post["n_labeled_in_session"] == 50 and len(post["posterior"]) == 10
    assert post["answer"]["text"].startswith("least accurate: ")
    # the overall block of assess --json, with the same schema
    (overall,) = post["overall"]
    assert set(overall) == {"metric", "mean", "lower", "upper"}
    assert overall["metric"] == "accuracy" and overall["lower"] < overall["mean"]
    assert overall["mean"] < overall["upper"]


@pytest.mark.slow
def test_label_stop_probability_uses_lucb_and_anytime_levels(example, tmp_path, capsys):
    scores, labels = example
    base = [
        "label",
        str(scores),
        "--oracle",
        str(labels),
        "--no-progress",
        "--seed",
        "1",
        "--budget",
        "10",
        "--stop-probability",
        "0.9",
    ]
    assert main([*base, "--session", str(tmp_path / "a.sqlite"), "--task", "least_accurate"]) == 0
    out = capsys.readouterr().out
    # ten labels confirm nothing yet, and the line says so
    assert "task least_accurate, strategy lucb" in out and "not yet certified" in out
    # a chosen strategy is kept; without --stop-probability the default stays thompson
    assert (
        main(
            [
                *base,
                "--session",
                str(tmp_path / "b.sqlite"),
                "--task",
                "least_accurate",
                "--strategy",
                "top_two",
            ]
        )
        == 0
    )
    assert "strategy top_two" in capsys.readouterr().out
    assert (
        main([*base[:-2], "--session", str(tmp_path / "c.sqlite"), "--task", "least_accurate"]) == 0
    )
    assert "strategy thompson" in capsys.readouterr().out
    # a task without anytime levels stops on the posterior alone, and says so
    with pytest.warns(SkassessWarning, match="posterior probability alone"):
        assert (
            main([*base, "--session", str(tmp_path / "d.sqlite"), "--task", "least_calibrated"])
            == 0
        )


def test_label_with_the_variance_design(example, tmp_path, capsys):
    scores, labels = example
    assert (
        main(
            [
                "label",
                str(scores),
                "--oracle",
                str(labels),
                "--no-progress",
                "--seed",
                "2",
                "--budget",
                "15",
                "--strategy",
                "variance",
                "--session",
                str(tmp_path / "v.sqlite"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "task estimate, strategy variance" in out and "overall" in out


@pytest.mark.slow
def test_label_metrics_with_active_testing(example, tmp_path, capsys):
    scores, labels = example
    session = str(tmp_path / "m.sqlite")
    base = ["label", str(scores), "--session", session, "--oracle", str(labels), "--no-progress"]
    assert main([*base, "--metrics", "accuracy", "macro_f1", "--budget", "1"]) == 0
    out = capsys.readouterr().out
    assert "task metrics, strategy variance" in out and "Estimates (difference" in out
    assert main([*base, "--budget", "2"]) == 0  # resumes with the stored metrics
    out = capsys.readouterr().out
    assert "resumed; 1 labels so far" in out and "macro_f1" in out
    events, info, _ = LabelingSession.read_events(session)
    assert len(events) == 2 and info["settings"]["metrics"] == ["accuracy", "macro_f1"]
    # (that a resumed tester session draws what an uninterrupted one does is tested in
    # tests/session/test_labeling.py, on a pool without surrogate refits)
    assert main(["report", str(scores), "--session", session, "-o", str(tmp_path / "r.html")]) == 0
    for extra, flag in (
        (["--strategy", "random"], "--strategy"),
        (["--stop-probability", "0.9"], "--stop-probability"),
        (["--task", "least_accurate"], "--task"),
    ):
        assert (
            main(
                [*base[:3], str(tmp_path / "x.sqlite"), *base[4:], "--metrics", "accuracy", *extra]
            )
            == 2
        )
        assert f"ActiveTester, which takes no {flag}" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()


def _binary_pool(tmp_path, n=600, seed=0):
    """A binary scores file with a group column, and an oracle file of its labels."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    frame = pd.DataFrame(
        {"id": np.arange(n), "score": p.round(4), "sex": rng.choice(["F", "M"], n)}
    )
    frame.to_csv(tmp_path / "b.csv", index=False)
    pd.DataFrame({"id": np.arange(n), "label": y}).to_csv(tmp_path / "o.csv", index=False)
    return tmp_path / "b.csv", tmp_path / "o.csv", frame, y


@pytest.mark.slow
def test_label_a_binary_rate_per_group(tmp_path, capsys):
    """--metric tpr: the estimate task's posterior is the groups' TPR, the one a
    BayesianAccuracy(metric="tpr") fitted on the session's labels gives; the metric is
    stored and a resumed session keeps it."""
    from skassess import BayesianAccuracy

    scores, oracle, frame, y = _binary_pool(tmp_path)
    session = str(tmp_path / "r.sqlite")
    base = ["label", str(scores), "--group", "sex", "--session", session, "--oracle", str(oracle)]
    base += ["--no-progress", "--seed", "3"]
    assert main([*base, "--metric", "TPR", "--budget", "60"]) == 0
    out = capsys.readouterr().out
    assert "Posterior per group (TPR)" in out and "overall TPR " in out
    events, info, _ = LabelingSession.read_events(session)
    assert info["settings"]["metric"] == "tpr" and len(events) == 60
    assert main([*base, "--budget", "80"]) == 0  # resumes with the stored metric
    out = capsys.readouterr().out
    assert "resumed; 60 labels so far" in out and "Posterior per group (TPR)" in out
    printed = float(re.search(r"overall TPR (\d\.\d+)", out).group(1))
    events, _, _ = LabelingSession.read_events(session)
    rows, labels = events["row"].to_numpy(), events["label"].to_numpy()
    assert len(rows) == 80
    np.testing.assert_array_equal(labels, y[rows])  # every label is the oracle's
    labeled = np.full(len(y), -1)
    labeled[rows] = labels
    est = BayesianAccuracy(metric="tpr", grouping="external", random_state=3)
    est.fit(np.column_stack([1 - frame["score"], frame["score"]]), labeled, group_by=frame["sex"])
    # the overall rate is a mean over posterior draws: equal to Monte Carlo error
    # (about 0.001 here; the pool's accuracy estimate is 0.03 away, its TNR 0.06)
    assert printed == pytest.approx(est.overall_mean(), abs=0.005)
    # another metric on resuming is refused, naming both
    assert main([*base, "--metric", "ppv"]) == 2
    assert "started with metric='tpr'; --metric gives 'ppv'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--strategy", "variance"], "--strategy variance draws items with unequal"),
        (["--task", "least_accurate"], "--metric fpr takes --task estimate"),
        (["--metrics", "accuracy"], "--metrics estimates metrics over all items"),
        (["--anytime"], "--anytime gives an interval of accuracy only"),
    ],
)
def test_label_a_binary_rate_refuses(tmp_path, capsys, extra, message):
    scores, oracle, _, _ = _binary_pool(tmp_path, n=100)
    session = tmp_path / "x.sqlite"
    args = ["label", str(scores), "--group", "sex", "--session", str(session)]
    assert main([*args, "--oracle", str(oracle), "--metric", "fpr", *extra]) == 2
    assert message in capsys.readouterr().err
    assert not session.exists()


def test_label_a_binary_rate_needs_binary_scores(example, tmp_path, capsys):
    scores, labels = example
    session = tmp_path / "x.sqlite"
    args = ["label", str(scores), "--session", str(session), "--oracle", str(labels)]
    assert main([*args, "--metric", "ppv"]) == 2
    assert "--metric ppv is a binary rate (class 1 positive); the scores file has" in (
        capsys.readouterr().err
    )
    assert not session.exists()


def test_plan_a_binary_rate(tmp_path, capsys):
    path, _, _, _ = _binary_pool(tmp_path, n=1500)
    out = tmp_path / "plan.json"
    args = ["plan", str(path), "--metric", "tpr", "--n-labels", "100", "400", "--simulations"]
    assert main([*args, "4", "--width", "0.15", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "interval of the TPR (simulated), from the scores, taken as calibrated" in text
    assert "Label a random pilot of about 50 rows and plan again." in text
    plan = json.loads(out.read_text())
    assert plan["metric"] == "tpr" and plan["source"] == "scores"
    assert plan["residual_sd"] is None and [r["n_labels"] for r in plan["table"]] == [100, 400]
    # A rate's plan has no band: null in the JSON, left out of the printed table.
    assert all(r["width_lower"] is None for r in plan["table"]) and "width_lower" not in text
    assert plan["n_needed_range"] is None
    w = [r["width"] for r in plan["table"]]
    assert w[0] > w[1] > 0 and 100 <= plan["n_needed"] <= 1500
    # The same seed, the same plan.
    assert main([*args, "4", "--json", "-"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [r["width"] for r in again["table"]] == w


def test_plan_a_binary_rate_refuses(example, tmp_path, capsys):
    assert main(["plan", str(example[0]), "--metric", "ppv"]) == 2
    err = capsys.readouterr().err
    assert "--metric ppv is a binary rate (class 1 positive);" in err
    assert "has 10 classes. Plan the accuracy (the default) instead." in err
    path, _, _, _ = _binary_pool(tmp_path)
    assert main(["plan", str(path), "--metric", "ppv", "--simulations", "1"]) == 2
    assert "--simulations must be at least 2; got 1" in capsys.readouterr().err
    frame = pd.read_csv(path)
    frame["label"] = [1, 0] * 20 + [None] * (len(frame) - 40)
    frame.to_csv(path, index=False)
    assert main(["plan", str(path), "--metric", "ppv", "--n-labels", "30", "100"]) == 2
    assert "--n-labels of a rate must be at least the 40 labels in" in capsys.readouterr().err


def test_label_confidence_bins(example, tmp_path, capsys):
    """--confidence-bins 5: the estimate task's groups are equal-count bins of the top-1
    confidence; the table names each bin's range, the last closed at 1; a resumed
    session keeps the bins."""
    scores, labels = example
    session = str(tmp_path / "b.sqlite")
    base = ["label", str(scores), "--session", session, "--oracle", str(labels), "--no-progress"]
    assert main([*base, "--confidence-bins", "5", "--budget", "30", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "top-1 confidence" in out and "overall 0." in out
    ranges = re.findall(r"^\[(\d\.\d+), (\d\.\d+)([)\]])", out, flags=re.MULTILINE)
    assert len(ranges) == 5
    assert float(ranges[0][0]) == 0 and float(ranges[-1][1]) == 1 and ranges[-1][2] == "]"
    assert all(a[1] == b[0] for a, b in zip(ranges[:-1], ranges[1:], strict=True))
    _, info, _ = LabelingSession.read_events(session)
    assert info["settings"]["confidence_bins"] == 5
    assert main([*base, "--budget", "40"]) == 0
    assert "resumed; 30 labels so far" in capsys.readouterr().out
    assert main([*base, "--confidence-bins", "4"]) == 2
    assert "started with confidence_bins=5; --confidence-bins gives 4" in capsys.readouterr().err


@pytest.mark.slow
def test_label_a_binary_rate_over_confidence_bins(tmp_path, capsys):
    """--confidence-bins with --metric ppv: the groups are bins and the overall PPV is
    the one a BayesianAccuracy(metric="ppv", grouping="score_bins") fitted on the
    session's labels gives."""
    from skassess import BayesianAccuracy

    scores, oracle, frame, y = _binary_pool(tmp_path)
    session = str(tmp_path / "rb.sqlite")
    base = ["label", str(scores), "--session", session, "--oracle", str(oracle)]
    base += ["--no-progress", "--seed", "4", "--metric", "ppv", "--confidence-bins", "5"]
    assert main([*base, "--budget", "60"]) == 0
    out = capsys.readouterr().out
    assert "top-1 confidence" in out and "Posterior per group (PPV)" in out
    assert len(re.findall(r"^\[(\d\.\d+), (\d\.\d+)[)\]]", out, flags=re.MULTILINE)) == 5
    printed = float(re.search(r"overall PPV (\d\.\d+)", out).group(1))
    events, info, _ = LabelingSession.read_events(session)
    assert info["settings"]["metric"] == "ppv" and info["settings"]["confidence_bins"] == 5
    labeled = np.full(len(y), -1)
    labeled[events["row"].to_numpy()] = events["label"].to_numpy()
    est = BayesianAccuracy(
        metric="ppv", grouping="score_bins", binning="quantile", n_bins=5, random_state=4
    )
    est.fit(np.column_stack([1 - frame["score"], frame["score"]]), labeled)
    assert printed == pytest.approx(est.overall_mean(), abs=0.005)  # Monte Carlo error


@pytest.mark.slow
def test_report_and_export_of_a_confidence_bins_session(tmp_path, capsys):
    """The groups of a --confidence-bins session are bins, not classes: the report's
    history keeps the bin numbers (with ten bins of a binary file, naming them by class
    raised an IndexError) and the export names each bin by its range."""
    scores, oracle, _, _ = _binary_pool(tmp_path, n=300)
    session = str(tmp_path / "bb.sqlite")
    args = ["label", str(scores), "--session", session, "--oracle", str(oracle)]
    assert main([*args, "--no-progress", "--confidence-bins", "10", "--budget", "30"]) == 0
    html = tmp_path / "bb.html"
    assert main(["report", str(scores), "--session", session, "-o", str(html)]) == 0
    assert html.stat().st_size > 0
    assert main(["export", session, "--scores", str(scores), "--posterior", "-"]) == 0
    out = capsys.readouterr().out
    posterior = json.loads(out[out.index("{") :])["posterior"]
    assert len(posterior) == 10 and posterior[-1]["top-1 confidence"].endswith("1.000]")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--confidence-bins", "1"], "--confidence-bins must be at least 2; got 1"),
        (["--confidence-bins", "5", "--task", "least_accurate"], "takes no --task least_accurate"),
        (["--confidence-bins", "5", "--metrics", "accuracy"], "takes no --metrics"),
        (["--confidence-bins", "5", "--group", "id"], "it takes no --group"),
    ],
)
def test_label_confidence_bins_refuses(example, tmp_path, capsys, extra, message):
    scores, labels = example
    session = tmp_path / "x.sqlite"
    args = ["label", str(scores), "--session", str(session), "--oracle", str(labels)]
    assert main([*args, *extra]) == 2
    assert message in capsys.readouterr().err
    assert not session.exists()


@pytest.mark.slow
def test_label_anytime_interval(example, tmp_path, capsys):
    """--anytime draws uniformly and prints a confidence sequence of all items' accuracy,
    with the file's own labels entering as they are."""
    scores, labels = example
    frame, truth = pd.read_csv(scores), pd.read_csv(labels).set_index("id")["label"]
    cols = [c for c in frame.columns if c.startswith("score_")]
    pred = np.array([c[len("score_") :] for c in cols])[frame[cols].to_numpy().argmax(axis=1)]
    accuracy = np.mean(pred == truth[frame["id"]].to_numpy())
    session = tmp_path / "any.sqlite"
    base = [
        "label",
        str(scores),
        "--session",
        str(session),
        "--oracle",
        str(labels),
        "--no-progress",
        "--seed",
        "4",
        "--anytime",
    ]
    assert main([*base, "--budget", "60"]) == 0
    out = capsys.readouterr().out
    assert "strategy random" in out
    lo, hi = map(float, re.search(r"all 2,000 items: \[([\d.]+), ([\d.]+)\]", out).groups())
    assert lo <= accuracy <= hi and hi - lo < 0.6
    assert main([*base, "--budget", "100"]) == 0  # resumed: the sequence only narrows
    lo2, hi2 = map(
        float, re.search(r"items: \[([\d.]+), ([\d.]+)\]", capsys.readouterr().out).groups()
    )
    assert lo <= lo2 <= accuracy <= hi2 <= hi
    assert (
        main(
            [
                "label",
                str(scores),
                "--session",
                str(tmp_path / "t.sqlite"),
                "--anytime",
                "--strategy",
                "thompson",
                "--budget",
                "1",
            ]
        )
        == 2
    )
    assert "--anytime needs items drawn uniformly at random" in capsys.readouterr().err


def test_label_interactive_keys(example, tmp_path, capsys, monkeypatch):
    scores, _ = example
    session = tmp_path / "i.sqlite"
    keys = "3\nu\ns\nShirt\nnonsense\n?\nq\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(keys))
    assert (
        main(
            [
                "label",
                str(scores),
                "--session",
                str(session),
                "--task",
                "least_accurate",
                "--seed",
                "0",
                "--display",
                "label",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "model predicts:" in out and "Undone: the label of item" in out
    assert "The label 'nonsense' is not a class" in out and "s = skip" in out
    events, _, _ = LabelingSession.read_events(session)
    assert events["kind"].tolist() == ["skip", "label"]
    assert events["label"].tolist()[1] == 6  # Shirt
    # end of input ends the session cleanly too
    monkeypatch.setattr("sys.stdin", io.StringIO("0\n"))
    assert main(["label", str(scores), "--session", str(session)]) == 0
    assert len(LabelingSession.read_events(session)[0]) == 3


def test_label_bad_oracle(example, tmp_path, capsys):
    scores, _ = example
    oracle = tmp_path / "o.csv"
    oracle.write_text("id,label\nimg-00001,Pullover\nimg-00002,Cat\n")
    assert (
        main(
            ["label", str(scores), "--session", str(tmp_path / "s.sqlite"), "--oracle", str(oracle)]
        )
        == 2
    )
    assert (
        "row 2 (line 3), column 'label': the label 'Cat' is not a class" in capsys.readouterr().err
    )


ORACLE_SCRIPT = """
import json, sys
import pandas as pd
truth = pd.read_csv(sys.argv[1]).set_index("id")["label"]
n = 0
for line in sys.stdin:
    item = json.loads(line)
    assert set(item) == {"id", "row", "predicted", "scores", "display"}, item
    n += 1
    if n == int(sys.argv[2]):
        print("quit", flush=True)
    elif n % 5 == 0:
        print("skip" if n % 10 else "", flush=True)
    else:
        print(truth[item["id"]], flush=True)
"""


@pytest.mark.slow
def test_label_with_oracle_command(example, tmp_path, capsys):
    """--oracle-command gives the same labels as the CSV oracle, skips, quits, resumes."""
    scores, labels = example
    script = tmp_path / "oracle.py"
    script.write_text(ORACLE_SCRIPT)
    session = tmp_path / "c.sqlite"

    def command(quit_at):
        return f"{sys.executable} {script} {labels} {quit_at}"

    base = [
        "label",
        str(scores),
        "--session",
        str(session),
        "--seed",
        "2",
        "--no-progress",
        "--task",
        "least_accurate",
    ]
    assert main([*base, "--oracle-command", command(23), "--budget", "40"]) == 0
    assert "answered quit" in capsys.readouterr().out
    events, _, _ = LabelingSession.read_events(session)
    # items 1..22 answered: every 5th is a skip, the 23rd was "quit"
    assert events["kind"].tolist().count("skip") == 4 and len(events) == 22
    truth = pd.read_csv(labels).set_index("id")["label"]
    classes = pd.read_csv(scores, nrows=0).columns[1:11].str.removeprefix("score_").tolist()
    got = events.dropna(subset=["label"])
    assert [classes[int(k)] for k in got["label"]] == truth[got["item_id"]].tolist()
    # resuming with another oracle goes on from the same next item, up to the budget
    assert main([*base, "--oracle-command", command(0), "--budget", "40"]) == 0
    assert "resumed; 18 labels so far" in capsys.readouterr().out
    events, _, _ = LabelingSession.read_events(session)
    assert (events["kind"] == "label").sum() == 40


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "import sys; sys.stdin.readline(); print('Cat', flush=True)",
            "the label 'Cat' is not a class",
        ),
        ("import sys; sys.stdin.readline()", "no answer for item"),
        ("raise SystemExit(3)", "exited with code 3"),
    ],
)
def test_label_oracle_command_errors(example, tmp_path, capsys, body, message):
    scores, _ = example
    script = tmp_path / "bad.py"
    script.write_text(body)
    session = tmp_path / "e.sqlite"
    assert (
        main(
            [
                "label",
                str(scores),
                "--session",
                str(session),
                "--no-progress",
                "--oracle-command",
                f"{sys.executable} {script}",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert message in err and "the labels given so far are saved" in err.lower()
    assert len(LabelingSession.read_events(session)[0]) == 0


def test_label_oracle_command_not_found(example, tmp_path, capsys):
    scores, _ = example
    assert (
        main(
            [
                "label",
                str(scores),
                "--session",
                str(tmp_path / "n.sqlite"),
                "--oracle-command",
                "no-such-program-xyz --flag",
            ]
        )
        == 2
    )
    assert "--oracle-command: cannot start 'no-such-program-xyz'" in capsys.readouterr().err
    assert not (tmp_path / "n.sqlite").exists()
    assert (
        main(
            [
                "label",
                str(scores),
                "--session",
                str(tmp_path / "n.sqlite"),
                "--oracle-command",
                "  ",
            ]
        )
        == 2
    )
    assert "--oracle-command: the command is empty" in capsys.readouterr().err


@pytest.mark.slow
def test_readme_commands_run(tmp_path, monkeypatch, capsys):
    """Every `skassess ...` line of the README's shell blocks runs as written."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    lines = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    commands = [shlex.split(line)[1:] for line in lines if line.startswith("skassess ")]
    assert [c[0] for c in commands] == [
        "example",
        "assess",
        "assess",
        "plan",
        "label",
        "label",
        "export",
    ]
    monkeypatch.chdir(tmp_path)
    for command in commands:
        monkeypatch.setattr("sys.stdin", io.StringIO(""))  # the interactive run quits at EOF
        assert main(command) == 0, (command, capsys.readouterr().err)
    assert (tmp_path / "report.html").exists() and (tmp_path / "s.sqlite.labels.csv").exists()


@pytest.fixture
def two_models(tmp_path):
    """Two models' scores files on the same 300 items (rows in different orders), an oracle."""
    rng = np.random.default_rng(0)
    n, classes = 300, ["cat", "dog", "eel"]
    y = rng.integers(0, 3, n)
    ids = [f"i{i}" for i in range(n)]
    paths = []
    for name, acc, seed in (("vendor", 0.85, 1), ("ours", 0.7, 2)):
        r = np.random.default_rng(seed)
        s = r.dirichlet(np.ones(3), n)
        pred = np.where(r.random(n) < acc, y, (y + 1) % 3)
        s[np.arange(n), pred] += 1.5
        s /= s.sum(axis=1, keepdims=True)
        frame = pd.DataFrame({"id": ids, **{f"score_{c}": s[:, k] for k, c in enumerate(classes)}})
        if name == "vendor":  # 10 labels known already, in one of the files
            frame["label"] = [classes[v] if i < 10 else "" for i, v in enumerate(y)]
        path = tmp_path / f"{name}.csv"
        frame.sample(frac=1.0, random_state=seed).to_csv(path, index=False)
        paths.append(path)
    oracle = tmp_path / "truth.csv"
    pd.DataFrame({"id": ids, "label": [classes[v] for v in y]}).to_csv(oracle, index=False)
    return paths, oracle


def test_label_compare_models_resumes_and_exports(two_models, tmp_path, capsys):
    (vendor, ours), oracle = two_models
    session = tmp_path / "m.sqlite"
    base = ["label", str(vendor), str(ours), "--session", str(session), "--oracle", str(oracle)]
    base += ["--seed", "0", "--no-progress"]
    assert main([*base, "--task", "compare-models", "--budget", "25"]) == 0
    out = capsys.readouterr().out
    assert "task compare_models, strategy top_two" in out and "10 labeled in the file" in out
    assert "Posterior per model" in out and re.search(r"^vendor\s", out, re.M)
    # resuming (the stored task) goes on to the same state as one run to the budget
    assert main([*base, "--budget", "40"]) == 0
    resumed = capsys.readouterr().out
    assert "resumed; 25 labels so far" in resumed
    straight = tmp_path / "straight.sqlite"
    args = [*base[:4], str(straight), *base[5:], "--task", "compare_models", "--budget", "40"]
    assert main(args) == 0
    assert (
        capsys.readouterr().out.split("Posterior per model")[1].split("Saved")[0]
        == (resumed.split("Posterior per model")[1].split("Saved")[0])
    )
    events, info, _ = LabelingSession.read_events(session)
    assert LabelingSession.read_events(straight)[0]["item_id"].tolist() == (
        events["item_id"].tolist()
    )
    assert info["models"] == ["vendor", "ours"] and len(info["sha256"]) == 2
    assert (events["kind"] == "label").sum() == 40  # the budget counts the session's labels
    post = tmp_path / "post.json"
    argv = ["export", str(session), "--posterior", str(post)]
    assert main([*argv, "--scores", str(vendor), str(ours)]) == 0
    exported = json.loads(post.read_text())
    assert [r["model"] for r in exported["posterior"]] == ["vendor", "ours"]
    assert [r["model"] for r in exported["overall"]] == ["vendor", "ours"]
    assert exported["answer"]["text"].startswith("best: ")
    # the report assesses one model: refused with the way out
    capsys.readouterr()
    assert main(["report", str(vendor), "--session", str(session), "-o", "r.html"]) == 2
    assert "comparison of models" in capsys.readouterr().err


def test_label_compare_models_with_an_oracle_command(two_models, tmp_path, capsys):
    (vendor, ours), oracle = two_models
    script = tmp_path / "oracle.py"
    script.write_text(
        "import json, sys\n"
        "import pandas as pd\n"
        f"truth = pd.read_csv({str(oracle)!r}).set_index('id')['label']\n"
        "for line in sys.stdin:\n"
        "    item = json.loads(line)\n"
        "    assert set(item['predicted']) == {'vendor', 'ours'}, item\n"
        "    assert set(item['scores']['ours']) == {'cat', 'dog', 'eel'}, item\n"
        "    print(truth[item['id']], flush=True)\n"
    )
    session = tmp_path / "c.sqlite"
    command = f"{sys.executable} {script}"
    args = ["label", str(vendor), str(ours), "--session", str(session), "--task"]
    args += ["compare_models", "--oracle-command", command, "--budget", "15", "--no-progress"]
    assert main(args) == 0
    events, _, _ = LabelingSession.read_events(session)
    assert (events["kind"] == "label").sum() == 15


@pytest.mark.parametrize(
    "change, extra, message",
    [
        ("one_file", ["--task", "compare_models"], "give one scores file per model"),
        ("none", [], "several files are the models of --task compare_models"),
        ("none", ["--task", "compare_models", "--strategy", "thompson"], "got --strategy thompson"),
        ("none", ["--task", "compare_models", "--compare", "a", "b"], "takes no --compare"),
        ("none", ["--task", "compare_models", "--group", "id"], "takes no --group"),
        ("none", ["--task", "compare_models", "--report", "r.html"], "assesses one model"),
        ("missing_id", ["--task", "compare_models"], "lacks the id 'i5'"),
        ("classes", ["--task", "compare_models"], "must score the same classes"),
        ("clash", ["--task", "compare_models"], "item 'i3': "),
    ],
)
def test_label_compare_models_errors(two_models, tmp_path, capsys, change, extra, message):
    (vendor, ours), oracle = two_models
    frame = pd.read_csv(ours, keep_default_na=False)
    if change == "missing_id":
        frame = frame[frame["id"] != "i5"]
    elif change == "classes":
        frame = frame.rename(columns={"score_eel": "score_fox"})
    elif change == "clash":
        vendor_label = pd.read_csv(vendor).set_index("id")["label"]["i3"]
        frame["label"] = ""
        frame.loc[frame["id"] == "i3", "label"] = "dog" if vendor_label != "dog" else "cat"
    frame.to_csv(ours, index=False)
    files = [str(vendor)] if change == "one_file" else [str(vendor), str(ours)]
    session = tmp_path / "bad.sqlite"
    args = ["label", *files, "--session", str(session), "--oracle", str(oracle), *extra]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not session.exists()


def test_label_model_strategy_refused_for_other_tasks(example, tmp_path, capsys):
    scores, labels = example
    args = ["label", str(scores), "--session", str(tmp_path / "s.sqlite"), "--oracle", str(labels)]
    assert main([*args, "--strategy", "disagreement"]) == 2
    assert "is a strategy of --task compare_models" in capsys.readouterr().err


def test_an_item_of_a_model_comparison_shows_each_models_prediction(two_models):
    from skassess.cli._keyboard import _describe
    from skassess.cli._models import ModelsFile

    paths, _ = two_models
    table = ModelsFile(paths, {}).read()
    assert table.scores.shape == (300, 2, 3)
    text = _describe(0, table, table.classes)
    assert re.search(r"vendor predicts: (cat|dog|eel) \(0\.\d{3}\)", text)
    assert re.search(r"ours predicts: (cat|dog|eel) \(0\.\d{3}\)", text)


def test_ctrl_c_saves_and_says_how_to_resume(example, tmp_path):
    """SIGINT to the terminal's process group: skassess says what it saved; the oracle
    program (in its own session) gets no KeyboardInterrupt."""
    import os
    import signal
    import time

    scores, _ = example
    slow = tmp_path / "slow.py"
    marker = tmp_path / "three"
    slow.write_text(
        "import json, pathlib, sys, time\n"
        "for n, line in enumerate(sys.stdin, start=1):\n"
        "    print(json.loads(line)['predicted'], flush=True)\n"
        f"    if n == 3: pathlib.Path({str(marker)!r}).touch()\n"
        "    time.sleep(0.05)\n"
    )
    session = tmp_path / "c.sqlite"
    argv = [sys.executable, "-m", "skassess", "label", str(scores), "--session", str(session)]
    argv += ["--no-progress", "--seed", "0", "--oracle-command", f"{sys.executable} {slow}"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as from a shell: a test runner's worker may ignore SIGINT, which its children inherit
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # the third item was asked, so two answers are committed: interrupt as a terminal does
    deadline = time.monotonic() + 300
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    saved = re.search(r"Interrupted: saved (\d+) labels in .*; run the same command to resume", err)
    assert saved, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    events, _, _ = LabelingSession.read_events(session)
    assert (events["kind"] == "label").sum() == int(saved.group(1)) >= 2

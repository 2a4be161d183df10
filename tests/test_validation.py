"""Every bad input the documentation promises to reject, with its message."""

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from skassess import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.metrics import compare_groups, top_m_groups

S = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.25, 0.25]])
Y = np.array([0, 1, -1, 2])


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[0.5, 0.5], [np.nan, 1.0]]), r"X contains NaN or inf: row 1"),
        (np.array([[0.5, 0.5], [np.inf, 0.0]]), r"X contains NaN or inf: row 1"),
        (np.array([[0.5, 0.5], [1.2, -0.2]]), r"Negative values in data passed to X.*row 1"),
        (np.array([[0.5, 0.5], [0.7, 0.2], [0.1, 0.1]]), r"sum to 1 per row.*row 1 sums to 0.9"),
        (np.array([0.2, 1.5]), r"P\(class 1\) and must lie in \[0, 1\]; row 1 is 1.5"),
        (np.ones((2, 2, 2)) / 4, "Found array with dim 3"),
    ],
)
def test_bad_scores(X, match):
    with pytest.raises(ValueError, match=match):
        BayesianAccuracy().fit(X)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_row_sums_within_tolerance_are_renormalized(dtype):
    """One rule in the API and the command: within ROW_SUM_TOL of 1, rows are divided."""
    from skassess.session import ScoresFile
    from skassess.utils import check_scores
    from skassess.utils._validation import ROW_SUM_TOL

    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(1000), 50).astype(dtype)  # a low-precision softmax
    before = p.copy()
    sums = p.astype(np.float64).sum(axis=1)
    assert np.abs(sums - 1).max() < ROW_SUM_TOL
    out = check_scores(p)
    np.testing.assert_allclose(out.sum(axis=1), 1, atol=1e-12)
    np.testing.assert_array_equal(p, before)  # the caller's array is not changed
    BayesianAccuracy().fit(p)
    assert ScoresFile.__init__.__kwdefaults__["sum_tolerance"] == ROW_SUM_TOL
    exact = np.array([[0.25, 0.75]])
    assert check_scores(exact) is exact  # exact rows: no copy
    check_scores(np.array([[0.5, 0.5 + 0.0099]]))
    with pytest.raises(ValueError, match=r"tolerance 0.01\); row 0 sums to 1.0101"):
        BayesianAccuracy().fit(np.array([[0.5, 0.5 + 0.0101]]))


def test_scores_width_must_match_classes():
    est = BayesianAccuracy().fit(S, Y)
    with pytest.raises(ValueError, match="X has 2 score columns, but the estimator was fitted"):
        est.predict(np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="classes must list one label per score column"):
        BayesianAccuracy(classes=["a", "b"]).fit(S, Y)
    with pytest.raises(ValueError, match="classes must not repeat"):
        BayesianAccuracy(classes=["a", "b", "a"]).fit(S, Y)


@pytest.mark.parametrize(
    "y, match",
    [
        (np.array([0, 1, 3, -1]), r"class indices 0..2 or the unlabeled marker -1; row 2 is 3"),
        (np.array([0, 1, -2, -1]), r"row 2 is"),
        (np.array([0.0, 1.5, 2.0, -1.0]), r"row 1 is 1.5"),
        (np.array([0.0, 0.5, 2.0, np.nan]), r"y must hold class indices 0..2 or the unlabeled"),
        (np.array(["a", "b", "c", "a"]), r"pass classes=\[...\]"),
        (np.array([0, 1, 2]), r"y has 3 entries, but X has 4 rows"),
        (np.array([[0], [1], [2], [0]]), r"y must be 1-D"),
    ],
)
def test_bad_labels(y, match):
    with pytest.raises(ValueError, match=match):
        BayesianAccuracy().fit(S, y)


@pytest.mark.parametrize(
    "labels, classes, match",
    [
        (
            [0, 7],
            None,
            r"^labels must hold class indices 0..2; labels\[1\] \(pool row 40\) is 7\.$",
        ),
        (
            [np.nan, 0],
            None,
            r"^labels must hold class indices 0..2; labels\[0\] \(pool row 17\) is",
        ),
        (["cat", "fox"], ["cat", "dog", "eel"], r"'fox' at labels\[1\] \(pool row 40\), which is"),
    ],
)
def test_labels_for_chosen_rows_name_the_entry_and_its_pool_row(labels, classes, match):
    from skassess.utils import check_labels

    with pytest.raises(ValueError, match=match) as info:
        check_labels(
            np.array(labels, dtype=object if classes else None),
            2,
            3,
            classes,
            missing_label=None,
            name="labels",
            rows=[17, 40],
        )
    assert "missing_label" not in str(info.value)  # no marker: every entry is a label


def test_label_not_in_classes():
    with pytest.raises(ValueError, match=r"label 'fox' at row 1, which is not in classes"):
        BayesianAccuracy(classes=["cat", "dog", "eel"]).fit(S, ["cat", "fox", -1, "eel"])
    # a missing value is an unlabeled row, beside the marker; refused only where none may be
    est = BayesianAccuracy(classes=["cat", "dog", "eel"]).fit(S, ["cat", np.nan, -1, "eel"])
    assert est.n_labeled_.sum() == 2
    with pytest.raises(ValueError, match="label nan at row 1"):
        BayesianAccuracy(classes=["cat", "dog", "eel"], missing_label=None).fit(
            S, ["cat", np.nan, "dog", "eel"]
        )
    with pytest.raises(ValueError, match="y contains NaN at row 1, but missing_label=None"):
        BayesianAccuracy(missing_label=None).fit(S, np.array([0.0, np.nan, 2.0, 1.0]))
    with pytest.raises(ValueError, match="the marker is -1, not the string '-1'"):
        BayesianAccuracy(classes=["cat", "dog", "eel"]).fit(S, np.array(["cat", "dog", "-1", "x"]))
    est = BayesianAccuracy(classes=["cat", "dog", "eel"]).fit(S, ["cat", "dog", -1, "eel"])
    assert est.n_labeled_.sum() == 3


def test_bad_groups():
    est = BayesianAccuracy(grouping="external")
    with pytest.raises(ValueError, match="group_by is required with grouping='external'"):
        est.fit(S, Y)
    with pytest.raises(ValueError, match="group_by has 3 entries, but X has 4 rows"):
        est.fit(S, Y, group_by=["a", "b", "a"])
    with pytest.raises(ValueError, match="group_by has a missing value at row 2"):
        est.fit(S, Y, group_by=pd.Series(["a", "b", None, "a"]))
    with pytest.raises(ValueError, match="group_by was passed, but the grouping is 'predicted"):
        BayesianAccuracy().fit(S, Y, group_by=["a", "b", "a", "b"])
    fitted = est.fit(S, Y, group_by=["a", "b", "a", "b"])
    with pytest.raises(ValueError, match="group_by holds 'z' at row 1, a group not seen in fit"):
        fitted.predict(S, group_by=["a", "z", "a", "b"])


@pytest.mark.parametrize(
    "est, match",
    [
        (BayesianAccuracy(grouping="score_bins", n_bins=0), "'n_bins' parameter"),
        (BayesianCalibrationError(n_bins=0), "'n_bins' parameter"),
        (BayesianAccuracy(prior_strength=0.0), "'prior_strength' parameter"),
        (BayesianAccuracy(prior_strength=-1), "'prior_strength' parameter"),
        (BayesianConfusionMatrix(prior_strength=0), "'prior_strength' parameter"),
        (BayesianAccuracy(prior="flat"), "'prior' parameter"),
        (BayesianAccuracy(metric="f1"), "'metric' parameter"),
        (BayesianAccuracy(grouping="age"), "'grouping' parameter"),
        (
            BayesianMisclassificationCost(cost_matrix=[[0, 1], [1, 0]]),
            r"cost_matrix must have shape \(n_classes, n_classes\) = \(3, 3\); got shape \(2, 2\)",
        ),
        (
            BayesianMisclassificationCost(cost_matrix=[[0, 1, 1], [1, 0, -1], [1, 1, 0]]),
            "cost_matrix must be finite and non-negative",
        ),
        (BayesianAccuracy(prior=[1.0, 2.0, 3.0]), r"prior as an array must have shape \(2,\)"),
        (BayesianAccuracy(prior=[1.0, 0.0]), "prior pseudo-counts must be finite and > 0"),
        (BayesianConfusionMatrix(prior=[1.0, 2.0]), r"shape \(n_classes,\) or"),
    ],
)
def test_bad_parameters(est, match):
    with pytest.raises(ValueError, match=match):
        est.fit(S, Y)


def test_bad_sample_weight():
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        BayesianAccuracy().fit(S, Y, sample_weight=[1, -1, 1, 1])


def test_all_unlabeled_allowed_and_predict_before_fit():
    est = BayesianAccuracy(prior="informative").fit(S, np.full(4, -1))
    np.testing.assert_allclose(est.posterior_.mean(), est.prior_.mean())
    with pytest.raises(ValueError, match="score needs at least one labeled row"):
        est.score(S, np.full(4, -1))
    for cls in (
        BayesianAccuracy,
        BayesianCalibrationError,
        BayesianConfusionMatrix,
        BayesianMisclassificationCost,
    ):
        with pytest.raises(NotFittedError):
            cls().predict(S)
        with pytest.raises(NotFittedError):
            cls().summary()
        with pytest.raises(NotFittedError):
            cls().overall_samples()


def test_bad_level_and_draws():
    est = BayesianAccuracy().fit(S, Y)
    with pytest.raises(
        ValueError, match=r"The 'level' parameter of BayesianAccuracy.summary must be a float"
    ):
        est.summary(level=95)
    with pytest.raises(ValueError, match="The 'n_draws' parameter of .*overall_samples must be"):
        est.overall_samples(0)
    with pytest.raises(ValueError, match="The 'level' parameter of .*overall_interval must be"):
        est.overall_interval(level=np.nan)


def test_bad_comparisons():
    est = BayesianAccuracy().fit(S, Y)
    with pytest.raises(ValueError, match=r"group_b=7 is not a group; groups are \[0, 1, 2\]"):
        compare_groups(est, 0, 7)
    with pytest.raises(ValueError, match="group_a and group_b must differ"):
        compare_groups(est, 1, 1)
    with pytest.raises(ValueError, match="The 'rope' parameter of compare_groups must be"):
        compare_groups(est, 0, 1, rope=-0.1)
    with pytest.raises(ValueError, match=r"m must be at most the number of groups \(3\); got 4"):
        top_m_groups(est, 4)
    with pytest.raises(ValueError, match="The 'm' parameter of top_m_groups must be"):
        top_m_groups(est, 0)
    with pytest.raises(TypeError, match="The 'source' parameter of compare_groups must be"):
        compare_groups(np.zeros((3, 3)), 0, 1)
    with pytest.raises(TypeError, match="The 'group_a' parameter of compare_groups must be"):
        compare_groups(est, [0], 1)

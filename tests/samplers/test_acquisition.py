"""Item acquisitions against brute force: BALD, and ALT-MAS's metric-aware mutual information
computed from the metrics' own definitions (scikit-learn's scorers)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from skassess.samplers._acquisition import (
    bald,
    binary_information,
    metric_utility,
    parse_metrics,
)


def _proba(seed, M=4, n=6, C=3):
    return np.random.default_rng(seed).dirichlet(np.full(C, 0.7), size=(M, n))


def _entropy(p):
    p = p[p > 0]
    return -(p * np.log(p)).sum()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_bald_is_entropy_of_mean_minus_mean_entropy(seed):
    proba = _proba(seed)
    expected = [
        _entropy(proba[:, i].mean(0)) - np.mean([_entropy(p) for p in proba[:, i]])
        for i in range(proba.shape[1])
    ]
    np.testing.assert_allclose(bald(proba), expected, atol=1e-12)


def _metric(name, c, y_true, y_pred, C):
    labels = list(range(C))
    if name == "accuracy":
        return accuracy_score(y_true, y_pred)
    if name == "macro_f1":
        return f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)
    scorer = {"precision": precision_score, "recall": recall_score, "f1": f1_score}[name]
    return scorer(y_true, y_pred, labels=[c], average=None, zero_division=0)[0]


def _brute_force_mi(proba, i, name, c, others_true, others_pred, a):
    """Eq. (8)-(11) of the paper: group y_hat by the metric's value, MI over the groups."""
    C = proba.shape[2]
    values = [
        round(_metric(name, c, np.r_[others_true, h], np.r_[others_pred, a], C), 12)
        for h in range(C)
    ]
    groups = [np.flatnonzero(np.array(values) == v) for v in sorted(set(values))]

    def group_entropy(p):
        return _entropy(np.array([p[g].sum() for g in groups]))

    members = proba[:, i]
    return group_entropy(members.mean(0)) - np.mean([group_entropy(p) for p in members])


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_metric_utility_matches_the_metrics_definitions(seed):
    rng = np.random.default_rng(seed)
    C = 3
    proba = _proba(seed, C=C)
    y_pred = rng.integers(0, C, proba.shape[1])
    # The other items: every class present in both the truth and the predictions, with
    # unequal counts, so that no two labels of the item give a metric the same value by
    # coincidence.
    others_true = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 1, 0])
    others_pred = np.array([0, 1, 0, 1, 2, 2, 0, 2, 1, 2, 1, 1])
    for spec in (
        ["accuracy"],
        ["precision"],
        ["recall"],
        ["f1"],
        ["macro_f1"],
        ["accuracy", "precision", "recall"],
        [("recall", 2), "macro_f1"],
    ):
        metrics = parse_metrics(spec, range(C))
        expected = [
            sum(
                _brute_force_mi(proba, i, name, c, others_true, others_pred, y_pred[i])
                for name, c in metrics
            )
            for i in range(len(y_pred))
        ]
        np.testing.assert_allclose(
            metric_utility(proba, y_pred, metrics), expected, atol=1e-10, err_msg=str(spec)
        )


def test_binary_information_is_zero_when_members_agree():
    proba = np.tile(_proba(0)[:1], (5, 1, 1))
    np.testing.assert_allclose(binary_information(proba), 0.0, atol=1e-15)
    np.testing.assert_allclose(bald(proba), 0.0, atol=1e-15)


def test_parse_metrics_expands_per_class_names():
    assert parse_metrics("precision", ["a", "b"]) == [("precision", 0), ("precision", 1)]
    assert parse_metrics([("recall", "b"), "accuracy"], ["a", "b"]) == [
        ("recall", 1),
        ("accuracy", None),
    ]


@pytest.mark.parametrize(
    "metrics, match",
    [
        (["auc"], "metrics must hold names"),
        ([("precision", "z")], "which is not one of the classes"),
        ([("accuracy", "a")], "a metric pair must be"),
        ([], "metrics is empty"),
    ],
)
def test_parse_metrics_errors(metrics, match):
    with pytest.raises(ValueError, match=match):
        parse_metrics(metrics, ["a", "b"])

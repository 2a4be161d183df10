"""Group metrics and the comparison of models from labels whose annotators slip."""

import numpy as np
import pandas as pd
import pytest

from skassess.calibration import BayesianGroupMetrics
from skassess.metrics import BayesianModelComparison


def _slipped(labels, rate, n_classes, rng):
    out = labels.copy()
    slip = rng.random(len(out)) < rate
    out[slip] = (out[slip] + rng.integers(1, n_classes, slip.sum())) % n_classes
    return out


@pytest.fixture(scope="module")
def binary_pool():
    """2,000 rows of calibrated binary scores in two groups, 400 labeled by "a" (8 %
    slips), 120 of them again by "b" (5 %)."""
    rng = np.random.default_rng(0)
    n = 2000
    s = rng.beta(2, 2, n)
    y = (rng.random(n) < s).astype(int)
    group = np.where(rng.random(n) < 0.4, "F", "M")
    labels = pd.DataFrame({"a": -1, "b": -1}, index=range(n))
    rows = rng.choice(n, 400, replace=False)
    labels.loc[rows, "a"] = _slipped(y[rows], 0.08, 2, rng)
    labels.loc[rows[:120], "b"] = _slipped(y[rows[:120]], 0.05, 2, rng)
    return s, y, group, labels, rows


def test_group_metrics_under_label_noise(binary_pool):
    s, _, group, labels, rows = binary_pool
    est = BayesianGroupMetrics(n_draws=400, n_imputations=8, random_state=0)
    est.fit(s, labels, group_by=group)
    assert est.annotators_.imputed_labels_.shape == (8, 400)
    summary = est.summary()
    assert summary["n_labeled"].groupby("group").first().sum() == 400
    assert all(d.shape == (400, 2) for d in est.draws_.values())
    assert list(est.annotator_summary()["n_repeated"]) == [120, 120]
    assert est.annotator_agreement().loc[("all", ""), "n_common"] == 120
    assert not est.differences()[["mean", "lower", "upper"]].isna().any().any()
    # the plain fit names no annotator
    plain = BayesianGroupMetrics(n_draws=400, random_state=0)
    plain.fit(s, labels["a"].to_numpy(), group_by=group)
    with pytest.raises(ValueError, match="No annotator was named"):
        plain.annotator_summary()


def test_group_metrics_with_a_gold_annotator_is_the_plain_fit(binary_pool):
    s, y, group, _, rows = binary_pool
    gold = np.full(len(y), -1)
    gold[rows] = y[rows]
    plain = BayesianGroupMetrics(n_draws=2000, random_state=0).fit(s, gold, group_by=group)
    noisy = BayesianGroupMetrics(
        n_draws=2000, n_imputations=4, annotator_prior=1.0, random_state=0
    ).fit(s, gold, group_by=group, annotator=np.where(gold >= 0, "expert", None))
    a, b = plain.summary(), noisy.summary()
    np.testing.assert_allclose(a["mean"], b["mean"], atol=0.01)
    np.testing.assert_allclose(a["upper"] - a["lower"], b["upper"] - b["lower"], rtol=0.15)


def test_group_metrics_refuse_annotators_without_label_noise(binary_pool):
    s, _, group, labels, _ = binary_pool
    with pytest.raises(ValueError, match="label_noise='none' treats every label"):
        BayesianGroupMetrics(label_noise="none").fit(s, labels, group_by=group)


@pytest.fixture(scope="module")
def model_pool():
    """Two models of accuracy 0.9 and 0.85 on 3,000 items of 3 classes; 400 labeled by
    "a" (8 % slips), 120 of them again by "b" (5 %)."""
    rng = np.random.default_rng(1)
    n = 3000
    y = rng.integers(0, 3, n)

    def model(accuracy):
        pred = np.where(rng.random(n) < accuracy, y, (y + rng.integers(1, 3, n)) % 3)
        conf = rng.uniform(0.5, 0.95, n)
        S = np.tile(((1 - conf) / 2)[:, None], (1, 3))
        S[np.arange(n), pred] = conf
        return S

    X = np.stack([model(0.9), model(0.85)], axis=1)
    labels = pd.DataFrame({"a": -1, "b": -1}, index=range(n))
    rows = rng.choice(n, 400, replace=False)
    labels.loc[rows, "a"] = _slipped(y[rows], 0.08, 3, rng)
    labels.loc[rows[:120], "b"] = _slipped(y[rows[:120]], 0.05, 3, rng)
    return X, y, labels, rows


def test_model_comparison_under_label_noise(model_pool):
    X, y, labels, _ = model_pool
    est = BayesianModelComparison(n_imputations=6, random_state=0).fit(X, labels)
    assert len(est.imputations_) == 5 and est.label_noise == "auto"
    assert est.annotator_summary().index.tolist() == ["a", "b"]
    truth = (X.argmax(axis=2) == y[:, None]).mean(axis=0)
    plain = BayesianModelComparison(random_state=0).fit(X, labels["a"].to_numpy())
    # the slips pull the labels-as-truth estimate down; the mixture's mean is nearer
    assert np.all(np.abs(est.mean_accuracy() - truth) < np.abs(plain.mean_accuracy() - truth))
    draws = est.groupwise_samples(1000)
    assert draws.shape == (1000, 2)
    assert est.summary()["p_best"].sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="needs every label at once"):
        est.partial_fit(X[:10])
    with pytest.raises(ValueError, match="No annotator was named"):
        plain.annotator_summary()
    # a refit without annotators is the plain fit again
    again = est.fit(X, labels["a"].to_numpy())
    assert not hasattr(again, "imputations_")
    np.testing.assert_array_equal(again.summary().to_numpy(), plain.summary().to_numpy())


def test_model_comparison_keeps_its_parameters_under_label_noise(model_pool):
    X, _, labels, _ = model_pool
    classes = ["x", "y", "z"]
    named = labels.replace({0: "x", 1: "y", 2: "z", -1: "?"})
    est = BayesianModelComparison(classes=classes, missing_label="?", n_imputations=3)
    est.fit(X, named)
    assert est.classes == classes and est.missing_label == "?" and est.label_noise == "auto"


def _two_annotators(y, n_classes, rng, labeled=400, repeats=120, eps=0.1):
    """Labels of "a" (slips eps/2) and "b" (3 eps/2), ``repeats`` items labeled by both."""
    labels = pd.DataFrame({"a": -1, "b": -1}, index=range(len(y)))
    rows = rng.choice(len(y), labeled, replace=False)
    first = rng.integers(0, 2, labeled)
    for name, slip, who in (("a", eps / 2, 0), ("b", 1.5 * eps, 1)):
        mine = np.concatenate([rows[first == who], rows[:repeats][first[:repeats] != who]])
        labels.loc[mine, name] = _slipped(y[mine], slip, n_classes, rng)
    return labels


@pytest.mark.slow
def test_coverage_of_group_metrics_under_label_noise():
    """20 seeded pools x 3 metrics x 2 groups: the 95 % intervals hold the pool's metric
    in at least 89 % of the 120 cases (3 binomial SEs below 0.95)."""
    inside = []
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        n = 3000
        s = rng.beta(2, 2, n)
        y = (rng.random(n) < s).astype(int)
        group = np.where(rng.random(n) < 0.4, "F", "M")
        est = BayesianGroupMetrics(n_imputations=10, n_draws=1000, random_state=seed)
        est.fit(s, _two_annotators(y, 2, rng), group_by=group)
        table = est.summary()
        pred = s > 0.5
        for g in ("F", "M"):
            m = group == g
            truth = {
                "accuracy": np.mean(pred[m] == y[m]),
                "tpr": np.mean(pred[m][y[m] == 1]),
                "fpr": np.mean(pred[m][y[m] == 0]),
            }
            for metric, value in truth.items():
                row = table.loc[(metric, g)]
                inside.append(row["lower"] <= value <= row["upper"])
    assert np.mean(inside) >= 0.89


@pytest.mark.slow
@pytest.mark.parametrize(
    ("slip_evidence", "eps", "repeats"),
    [("bounds", 0.05, 120), ("all", 0.1, 120), ("bounds", 0.05, 0)],
)
def test_coverage_of_models_and_their_difference_under_label_noise(slip_evidence, eps, repeats):
    """60 seeded pairs of models of 3 classes (accuracy 0.9 and 0.85): the 95 % intervals
    of each model's accuracy hold the pool's in at least 89 % of the 120 cases, and those
    of their difference in at least 85 % of the 60 pairs (3 binomial SEs below 0.95).

    The default reads the slip rates from the 120 repeated items, here of annotators
    slipping 2.5 % and 7.5 %, and with no repeats draws them at the ends of the range the
    single labels allow; every label, of annotators slipping 5 % and 15 % (the latter at
    the 2.5 % quantile of the default prior, which pulls the slip rate read from the
    repeats alone further down: the benchmark page gives that case).
    """
    each, difference = [], []
    for seed in range(60):
        rng = np.random.default_rng(200 + seed)
        n = 3000
        y = rng.integers(0, 3, n)
        scores = []
        for accuracy in (0.9, 0.85):
            pred = np.where(rng.random(n) < accuracy, y, (y + rng.integers(1, 3, n)) % 3)
            conf = rng.uniform(0.5, 0.95, n)
            S = np.tile(((1 - conf) / 2)[:, None], (1, 3))
            S[np.arange(n), pred] = conf
            scores.append(S)
        X = np.stack(scores, axis=1)
        est = BayesianModelComparison(
            n_imputations=10, slip_evidence=slip_evidence, random_state=seed
        )
        est.fit(X, _two_annotators(y, 3, rng, repeats=repeats, eps=eps))
        truth = (X.argmax(axis=2) == y[:, None]).mean(axis=0)
        table = est.summary()
        each += list((table["lower"] <= truth) & (truth <= table["upper"]))
        pair = est.pairwise().iloc[0]
        difference.append(pair["lower"] <= truth[0] - truth[1] <= pair["upper"])
    assert np.mean(each) >= 0.89
    assert np.mean(difference) >= 0.85

"""Behaviour of the metric estimators: conjugate updates, priors, known answers."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skassess import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)


def make_data(n=300, k=3, seed=0, label_frac=0.5):
    rng = np.random.default_rng(seed)
    scores = rng.dirichlet(np.full(k, 0.7), size=n)
    y_true = np.array([rng.choice(k, p=p) for p in scores])
    y = np.where(rng.uniform(size=n) < label_frac, y_true, -1)
    groups = rng.choice(["a", "b", "c", "d"], size=n)
    return scores, y, y_true, groups


# The calibrated ones with a seed: with random_state=None their Monte-Carlo
# summaries differ between two fits.
ESTIMATORS = [
    BayesianAccuracy(random_state=0),
    BayesianAccuracy(prior="uniform"),
    BayesianAccuracy(prior="informative", prior_strength=5.0),
    BayesianAccuracy(grouping="score_bins", n_bins=4, random_state=0),
    BayesianAccuracy(grouping="class_bin", n_bins=3, prior="informative"),
    BayesianAccuracy(grouping="external", prior="informative"),
    BayesianAccuracy(grouping="external", prior="hierarchical"),
    BayesianCalibrationError(n_bins=5),
    BayesianCalibrationError(n_bins=3, classwise=True, prior="informative"),
    BayesianConfusionMatrix(random_state=0),
    BayesianConfusionMatrix(prior="informative", prior_strength=3.0, random_state=0),
    BayesianMisclassificationCost(cost_matrix=[[0, 1, 2], [3, 0, 1], [1, 1, 0]], random_state=0),
]


def _fit_kwargs(est, groups):
    return {"group_by": groups} if getattr(est, "grouping", None) == "external" else {}


def _state(est):
    frame = est.summary()
    return frame.sort_index()


@pytest.mark.slow
@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e))
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_partial_fit_any_chunking_and_order_equals_fit(est, data):
    scores, y, _, groups = make_data(n=120, seed=data.draw(st.integers(0, 5)))
    order = np.array(data.draw(st.permutations(range(len(y)))))
    cuts = sorted(data.draw(st.lists(st.integers(1, len(y) - 1), max_size=4, unique=True)))
    batch = clone(est).fit(scores, y, **_fit_kwargs(est, groups))
    chunked = clone(est)
    for part in np.split(order, cuts):
        chunked.partial_fit(scores[part], y[part], **_fit_kwargs(est, groups[part]))
    pd.testing.assert_frame_equal(_state(batch), _state(chunked), check_exact=False, rtol=1e-9)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e))
def test_no_labels_posterior_is_prior(est):
    scores, _, _, groups = make_data()
    fitted = clone(est).fit(scores, None, **_fit_kwargs(est, groups))
    table = fitted.summary()
    np.testing.assert_allclose(table["mean"], table["prior_mean"])
    assert (table["n_labeled"] == 0).all()


def test_group_without_labels_keeps_prior_and_shows_zero():
    scores, y, _, groups = make_data()
    y = np.where(groups == "d", -1, y)
    est = BayesianAccuracy(grouping="external", prior="informative").fit(scores, y, group_by=groups)
    row = est.summary().loc["d"]
    assert row["n_labeled"] == 0
    assert row["mean"] == pytest.approx(row["prior_mean"])
    assert row["weight"] == pytest.approx(np.mean(groups == "d"))


def test_accuracy_known_answer():
    scores, y, _, _ = make_data(n=500, k=3, seed=1)
    est = BayesianAccuracy(prior="uniform", prior_strength=2.0).fit(scores, y)
    pred = scores.argmax(axis=1)
    for k in range(3):
        rows = (pred == k) & (y >= 0)
        r, n = np.sum(pred[rows] == y[rows]), rows.sum()
        row = est.summary().loc[k]
        assert row["n_labeled"] == n
        assert row["mean"] == pytest.approx((1 + r) / (2 + n))
        assert row["weight"] == pytest.approx(np.mean(pred == k))
    assert est.overall_mean() == pytest.approx(
        float(est.summary()["weight"] @ est.summary()["mean"])
    )
    assert est.overall_samples(5000).mean() == pytest.approx(est.overall_mean(), abs=0.005)


def test_informative_prior_is_mean_top1_score_of_group():
    scores, y, _, _ = make_data(n=400, seed=2)
    est = BayesianAccuracy(prior="informative", prior_strength=4.0).fit(scores, y)
    pred, conf = scores.argmax(axis=1), scores.max(axis=1)
    for k in range(3):
        s = conf[pred == k].mean()
        np.testing.assert_allclose(est.prior_.alpha[k], 4.0 * s)
        np.testing.assert_allclose(est.prior_.beta[k], 4.0 * (1 - s))


def test_explicit_array_prior():
    scores, y, _, _ = make_data()
    est = BayesianAccuracy(prior=[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).fit(scores, None)
    np.testing.assert_allclose(est.posterior_.mean(), [1 / 3, 3 / 7, 5 / 11])
    cm = BayesianConfusionMatrix(prior=[1.0, 2.0, 3.0]).fit(scores, None)
    np.testing.assert_allclose(cm.posterior_.mean(), np.tile([1 / 6, 2 / 6, 3 / 6], (3, 1)))


def test_many_labels_posterior_tends_to_mle():
    scores, _, y_true, _ = make_data(n=20000, seed=3, label_frac=1.0)
    est = BayesianAccuracy(prior="informative", prior_strength=2.0).fit(scores, y_true)
    assert est.overall_mean() == pytest.approx(np.mean(scores.argmax(1) == y_true), abs=1e-3)
    lower, upper = est.overall_interval()
    assert upper - lower < 0.02


@pytest.mark.parametrize(
    "metric, cond, outcome",
    [
        ("tpr", lambda y, p: y == 1, lambda y, p: p == 1),
        ("fnr", lambda y, p: y == 1, lambda y, p: p == 0),
        ("tnr", lambda y, p: y == 0, lambda y, p: p == 0),
        ("fpr", lambda y, p: y == 0, lambda y, p: p == 1),
        ("precision", lambda y, p: p == 1, lambda y, p: y == 1),
    ],
)
def test_binary_rates_known_answer_and_overall(metric, cond, outcome):
    rng = np.random.default_rng(4)
    p1 = rng.uniform(size=20000)
    y = (rng.uniform(size=20000) < p1**1.5).astype(int)
    groups = rng.choice(["u", "v"], size=20000, p=[0.3, 0.7])
    est = BayesianAccuracy(metric=metric, grouping="external", prior="uniform", random_state=0).fit(
        p1, y, group_by=groups
    )
    pred = (p1 > 0.5).astype(int)
    for g in ("u", "v"):
        m = (groups == g) & cond(y, pred)
        r, n = np.sum(outcome(y, pred)[m]), m.sum()
        assert est.summary().loc[g, "n_labeled"] == n
        assert est.summary().loc[g, "mean"] == pytest.approx((1 + r) / (2 + n))
    m = cond(y, pred)
    empirical = np.mean(outcome(y, pred)[m])
    assert est.overall_mean() == pytest.approx(empirical, abs=0.01)


def test_binary_metric_needs_two_classes():
    scores, y, _, _ = make_data(k=3)
    with pytest.raises(ValueError, match="metric='tpr' needs binary scores"):
        BayesianAccuracy(metric="tpr").fit(scores, y)


def test_string_classes_and_predict_score():
    scores, y, _, _ = make_data(n=200)
    names = np.array(["cat", "dog", "eel"])
    y_named = names[np.maximum(y, 0)].astype(object)
    y_named[y < 0] = -1
    a = BayesianAccuracy(classes=names, random_state=0).fit(scores, y_named)
    b = BayesianAccuracy(random_state=0).fit(scores, y)
    np.testing.assert_allclose(a.posterior_.alpha, b.posterior_.alpha)
    assert list(a.groups_) == ["cat", "dog", "eel"]
    np.testing.assert_allclose(a.predict(scores), b.posterior_.mean()[scores.argmax(1)])
    # score = mean log predictive of the labeled outcomes: under the calibrated prior
    # each row's own (the map at its score), under the others its group's.
    pred = scores.argmax(1)
    lab = y >= 0
    hit = (pred[lab] == y[lab]).astype(int)
    rows = b.predict_proba(scores[lab])[np.arange(lab.sum()), hit]
    expected = np.mean(np.log(rows))
    assert b.score(scores, y) == pytest.approx(expected)
    assert a.score(scores, y_named) == pytest.approx(expected)
    u = BayesianAccuracy(prior="uniform").fit(scores, y)
    theta = u.posterior_.mean()[pred[lab]]
    assert u.score(scores, y) == pytest.approx(
        np.mean(np.where(hit, np.log(theta), np.log(1 - theta)))
    )


def test_sample_weight_counts_as_repetition():
    scores, y, _, groups = make_data(n=100)
    w = np.random.default_rng(0).integers(0, 4, size=100)
    rep = np.repeat(np.arange(100), w)
    for est in ESTIMATORS:
        kw_w, kw_r = _fit_kwargs(est, groups), _fit_kwargs(est, groups[rep])
        weighted = clone(est).fit(scores, y, sample_weight=w, **kw_w)
        repeated = clone(est).fit(scores[rep], y[rep], **kw_r)
        pd.testing.assert_frame_equal(_state(weighted), _state(repeated), check_exact=False)


def test_equal_mass_bins_hold_equal_shares():
    rng = np.random.default_rng(0)
    p = rng.beta(5, 1, size=10000)
    est = BayesianCalibrationError(n_bins=5, binning="quantile").fit(p, None)
    np.testing.assert_allclose(est.group_weights_, 0.2, atol=0.001)


def test_calibration_error_concentrates_on_true_ece():
    rng = np.random.default_rng(5)
    conf = rng.uniform(0.5, 1.0, size=50000)
    hit = rng.uniform(size=50000) < conf**2  # over-confident model
    scores = np.c_[conf, 1 - conf]
    y = np.where(hit, 0, 1)
    est = BayesianCalibrationError(n_bins=10, random_state=0).fit(scores, y)
    bins = np.minimum((conf * 10).astype(int), 9)
    true_ece = sum(
        np.mean(bins == b) * abs(hit[bins == b].mean() - conf[bins == b].mean())
        for b in np.unique(bins)
    )
    lower, upper = est.overall_interval(0.99)
    assert lower <= true_ece <= upper
    assert est.overall_mean() == pytest.approx(true_ece, abs=0.005)
    table = est.summary()
    assert list(table.columns[:3]) == ["bin_lower", "bin_upper", "confidence"]


def test_classwise_ece():
    scores, y, _, _ = make_data(n=3000, seed=6, label_frac=1.0)
    est = BayesianCalibrationError(n_bins=4, classwise=True, random_state=0).fit(scores, y)
    per_class = est.classwise_ece_samples(2000)
    assert per_class.shape == (2000, 3)
    # The overall (class x bin) ECE is the p_k-weighted sum of the per-class ECEs.
    p_k = est.n_rows_.reshape(3, 4).sum(axis=1) / est.n_rows_.sum()
    np.testing.assert_allclose(per_class.to_numpy() @ p_k, est.overall_samples(2000), rtol=1e-10)
    with pytest.raises(ValueError, match="classwise=True"):
        BayesianCalibrationError().fit(scores, y).classwise_ece_samples()


def test_confusion_matrix_normalizations():
    scores, y, _, _ = make_data(n=1000, seed=7)
    est = BayesianConfusionMatrix(random_state=0).fit(scores, y)
    joint = est.confusion_matrix("all").to_numpy()
    assert joint.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(joint.sum(axis=0), est.group_weights_)
    by_pred = est.confusion_matrix("pred").to_numpy()
    np.testing.assert_allclose(by_pred.sum(axis=0), 1.0)
    np.testing.assert_allclose(est.confusion_matrix(None).to_numpy(), joint * 1000)
    by_true = est.confusion_matrix_samples(500, "true")
    np.testing.assert_allclose(by_true.sum(axis=2), 1.0)
    assert est.overall_mean() == pytest.approx(np.trace(joint))
    np.testing.assert_allclose(est.predict_proba(scores).sum(axis=1), 1.0)
    match = "The 'normalize' parameter of BayesianConfusionMatrix.confusion_matrix must be"
    with pytest.raises(ValueError, match=match):
        est.confusion_matrix("rows")


def test_zero_one_cost_is_error_rate():
    scores, y, _, _ = make_data(n=1000, seed=8)
    cost = BayesianMisclassificationCost(random_state=0).fit(scores, y)
    cm = BayesianConfusionMatrix(random_state=0).fit(scores, y)
    assert cost.overall_mean() == pytest.approx(1 - cm.overall_mean())
    np.testing.assert_allclose(cost.summary()["mean"], 1 - np.diag(cm.posterior_.mean()))


def test_equal_width_bins_match_searchsorted_at_edges():
    from skassess.metrics._grouping import ScoreBinGrouping

    edges = np.linspace(0, 1, 11)
    c = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, 1)])
    c = np.clip(c, 0, 1)
    scores = np.c_[c, 1 - c]
    conf = scores.max(axis=1)
    grouping = ScoreBinGrouping(10, "uniform").fit(conf)
    expected = np.searchsorted(edges[1:-1], conf, side="right")
    np.testing.assert_array_equal(grouping.bins(conf), expected)


def test_equal_mass_ties_warn():
    from skassess.exceptions import SkassessWarning

    p = np.r_[np.full(900, 0.99), np.linspace(0.5, 0.9, 100)]
    with pytest.warns(SkassessWarning, match="tied confidences"):
        est = BayesianCalibrationError(n_bins=10, binning="quantile").fit(p, None)
    assert len(est.bin_edges_) < 11

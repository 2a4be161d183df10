"""The ECE posterior: its hierarchical model, the pool's ECE, and its coverage."""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, logit

from skassess.metrics import BayesianCalibrationError, expected_calibration_error
from skassess.metrics._calibration_error import _hyper_posterior


def pool(kind, n_rows=4000, seed=0):
    """Binary scores whose correctness is calibrated or overconfident (known truth)."""
    rng = np.random.default_rng(seed)
    conf = np.clip(0.5 + 0.5 * rng.beta(4.0, 1.0, n_rows), 0.5, 1 - 1e-6)
    truth = conf if kind == "calibrated" else expit(0.6 * logit(conf) - 0.3)
    pred = rng.integers(2, size=n_rows)
    scores = np.column_stack([1 - conf, conf])
    scores[pred == 0] = scores[pred == 0][:, ::-1]
    right = rng.random(n_rows) < truth
    return scores, np.where(right, pred, 1 - pred)


def coverage(kind, budget, runs, **params):
    X, y = pool(kind)
    base = BayesianCalibrationError(**params).fit(X, np.full(len(y), -1))
    truth = expected_calibration_error(y, X)
    hits = []
    for run in range(runs):
        rows = np.random.default_rng(run).choice(len(y), size=budget, replace=False)
        est = copy.deepcopy(base).add_labels(X[rows], y[rows])
        lower, upper = est.overall_interval(0.95, n_draws=2000, random_state=run)
        hits.append(lower <= truth <= upper)
    return np.mean(hits)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["calibrated", "overconfident"])
@pytest.mark.parametrize("budget", [50, 400])
def test_ece_interval_covers_on_calibrated_and_miscalibrated_scores(kind, budget):
    # 100 seeded runs: a true coverage of 95 % gives >= 89 % in 97 % of
    # batches of 100 (binomial), and the bound 0.88 leaves one more miss.
    assert coverage(kind, budget, runs=100) >= 0.88


def test_independent_bins_miss_a_calibrated_model():
    # The model of Ji et al.: every bin's noise adds to |theta_b - s_b|, so the
    # interval of a calibrated model's ECE sits above the truth.
    assert coverage("calibrated", 50, runs=30, ece_model="independent") < 0.2


def test_fully_labeled_pool_gives_the_plug_in_ece():
    X, y = pool("overconfident", n_rows=600)
    est = BayesianCalibrationError(random_state=0).fit(X, y)
    draws = est.overall_samples(500)
    np.testing.assert_allclose(draws, expected_calibration_error(y, X), rtol=1e-12)
    # The model's ECE (of theta_b) is still uncertain: it is not the pool's.
    expected = BayesianCalibrationError(unlabeled="expected", random_state=0).fit(X, y)
    assert np.ptp(expected.overall_samples(500)) > 0


@pytest.mark.parametrize(
    ("kind", "low", "high"), [("calibrated", 0.8, 1.0), ("overconfident", 0.0, 0.01)]
)
def test_posterior_probability_of_a_calibrated_model(kind, low, high):
    X, y = pool(kind, n_rows=5000, seed=1)
    est = BayesianCalibrationError(unlabeled="expected", random_state=0).fit(X, y)
    conf = np.nan_to_num(est.confidence_)
    weights, a, b, _ = _hyper_posterior(conf, est.n_success_, est.n_labeled_, 0.5)
    assert low <= weights[(a == 1) & (b == 0)].sum() <= high
    # The per-bin gap of predict is its exact posterior mean, near the draws'.
    gaps = est.groupwise_samples(20000).mean(axis=0)
    np.testing.assert_allclose(est._group_metric_mean(), gaps, atol=2e-3)


def test_hierarchical_ece_of_a_calibrated_model_is_near_its_truth():
    X, y = pool("calibrated", seed=2)
    y = y.copy()
    y[200:] = -1
    means = [
        BayesianCalibrationError(ece_model=model, unlabeled="expected", random_state=0)
        .fit(X, y)
        .overall_mean()
        for model in ("hierarchical", "independent")
    ]
    # The truth (theta_b = s_b) is an ECE of 0.
    assert means[0] < 0.02 < 0.04 < means[1]


@settings(max_examples=40, deadline=None)
@given(
    n_labeled=st.integers(0, 60),
    seed=st.integers(0, 2**16),
    p_calibrated=st.floats(0.01, 0.99),
    kind=st.sampled_from(["calibrated", "overconfident"]),
)
def test_ece_draws_are_valid_and_the_group_mean_matches(n_labeled, seed, p_calibrated, kind):
    X, y = pool(kind, n_rows=300, seed=seed)
    y = y.copy()
    y[n_labeled:] = -1
    est = BayesianCalibrationError(
        p_calibrated=p_calibrated, classes=[0, 1], random_state=seed
    ).fit(X, y)
    draws = est.overall_samples(300)
    assert np.all(np.isfinite(draws)) and np.all((draws >= 0) & (draws <= 1))
    gap = est.predict(X[:5])
    assert np.all(np.isfinite(gap)) and np.all((gap >= 0) & (gap <= 1))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"p_calibrated": 0.0}, "p_calibrated"),
        ({"p_calibrated": 1.0}, "p_calibrated"),
        ({"ece_model": "beta"}, "ece_model"),
        ({"unlabeled": "drawn"}, "unlabeled"),
    ],
)
def test_bad_ece_parameters_are_refused(params, match):
    X, y = pool("calibrated", n_rows=50)
    with pytest.raises(ValueError, match=match):
        BayesianCalibrationError(**params).fit(X, y)


def two_group_pool(seed, n_rows=20_000, gap=0.2):
    """Two predicted classes; class 1 is over-confident by ``gap``, class 0 calibrated."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, n_rows)
    pred = (rng.random(n_rows) < 0.5).astype(int)
    right = rng.random(n_rows) < np.where(pred == 1, conf - gap, conf)
    scores = np.column_stack(
        [np.where(pred == 0, conf, 1 - conf), np.where(pred == 0, 1 - conf, conf)]
    )
    return scores, pred, np.where(right, pred, 1 - pred)


def unequal_labels(y, pred, seed, n0=300, n1=30):
    """Labels random within each class, at unequal rates (a group design)."""
    rng = np.random.default_rng([seed, 1])
    out = np.full(len(y), -1)
    for k, n in ((0, n0), (1, n1)):
        rows = rng.choice(np.flatnonzero(pred == k), n, replace=False)
        out[rows] = y[rows]
    return out


def test_one_external_group_is_the_plain_binning():
    X, y = pool("overconfident", n_rows=800)
    y = y.copy()
    y[200:] = -1
    plain = BayesianCalibrationError(random_state=0).fit(X, y)
    one = BayesianCalibrationError(grouping="external", random_state=0).fit(
        X, y, group_by=np.zeros(len(y))
    )
    np.testing.assert_allclose(one.overall_samples(300), plain.overall_samples(300))
    a, b = one.summary(), plain.summary()
    for column in b.columns:
        np.testing.assert_allclose(a[column], b[column], err_msg=column)
    np.testing.assert_allclose(a["effective_labels"], b["n_labeled"])


def test_an_equal_design_gives_the_plain_bins():
    # every group labeled at the same rate: weights 1, effective labels = labels
    X, y = pool("overconfident", n_rows=1000)
    group = np.repeat([0, 1], 500)
    y = y.copy()
    y[np.r_[100:500, 600:1000]] = -1
    plain = BayesianCalibrationError(random_state=0).fit(X, y)
    equal = BayesianCalibrationError(grouping="external", random_state=0).fit(X, y, group_by=group)
    np.testing.assert_allclose(equal.overall_samples(300), plain.overall_samples(300))
    np.testing.assert_allclose(equal.summary()["upper"], plain.summary()["upper"])


@settings(deadline=None, max_examples=30)
@given(
    counts=st.lists(st.integers(1, 40), min_size=2, max_size=4),
    rates=st.lists(st.floats(0.05, 1.0), min_size=4, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_design_bins_weight_each_label_by_its_groups_inverse_rate(counts, rates, seed):
    from skassess.metrics._design_bins import DesignBins

    rng = np.random.default_rng(seed)
    G, n_bins = len(counts), 3
    rows = rng.integers(0, 50, (G, n_bins)).astype(float)
    rows[:, 0] += counts  # every group has rows
    labeled = np.floor(rows * np.array(rates[:G])[:, None])
    success = np.floor(labeled * rng.random((G, n_bins)))
    bins = DesignBins.of_cells(rows, rows * 0.7, labeled, success, n_bins)
    # by hand, one labeled row at a time
    w = np.where(labeled.sum(1) > 0, rows.sum(1) / np.maximum(labeled.sum(1), 1), 0)
    for b in range(n_bins):
        weights = np.concatenate([np.full(int(labeled[g, b]), w[g]) for g in range(G)])
        outcomes = np.concatenate(
            [
                np.r_[np.ones(int(success[g, b])), np.zeros(int(labeled[g, b] - success[g, b]))]
                for g in range(G)
            ]
        )
        if weights.sum() == 0:
            assert bins.effective_labeled[b] == 0
            continue
        n_eff = weights.sum() ** 2 / (weights**2).sum()
        assert np.isclose(bins.effective_labeled[b], n_eff)
        assert np.isclose(bins.effective_success[b], n_eff * (weights @ outcomes) / weights.sum())
        assert bins.effective_labeled[b] <= labeled[:, b].sum() + 1e-9


def test_external_bins_take_new_groups_in_partial_fit_and_merge():
    X, pred, y = two_group_pool(0, n_rows=3000)
    y = unequal_labels(y, pred, 0, n0=200, n1=50)
    group = np.where(pred == 0, "a", "b")
    whole = BayesianCalibrationError(grouping="external", random_state=0).fit(X, y, group_by=group)
    first = pred == 0  # the first batch has group "a" only
    parts = BayesianCalibrationError(grouping="external", random_state=0)
    parts.partial_fit(X[first], y[first], group_by=group[first])
    parts.partial_fit(X[~first], y[~first], group_by=group[~first])
    assert list(parts.groups_) == list(whole.groups_)
    np.testing.assert_allclose(parts.n_labeled_, whole.n_labeled_)
    np.testing.assert_allclose(parts.overall_samples(200), whole.overall_samples(200))
    other = BayesianCalibrationError(grouping="external", random_state=0)
    merged = other.fit(X[~first], y[~first], group_by=group[~first]).merge(
        BayesianCalibrationError(grouping="external").fit(X[first], y[first], group_by=group[first])
    )
    np.testing.assert_allclose(merged.n_rows_, whole.n_rows_)


def test_external_bins_need_group_by_and_not_classwise():
    X, y = pool("calibrated", n_rows=50)
    with pytest.raises(ValueError, match="group_by is required with grouping='external'"):
        BayesianCalibrationError(grouping="external").fit(X, y)
    with pytest.raises(ValueError, match="classwise=True bins within each predicted class"):
        BayesianCalibrationError(grouping="external", classwise=True).fit(
            X, y, group_by=np.zeros(50)
        )
    with pytest.raises(ValueError, match="grouping"):
        BayesianCalibrationError(grouping="group").fit(X, y)


@pytest.mark.slow
def test_external_bins_cover_the_ece_under_a_group_design():
    # Class 1 (half the pool, 0.2 over-confident) gets 30 labels, class 0 300: the
    # plain bins are mostly class 0's and see a nearly calibrated model; the bins
    # within each class, weighted by rows, do not. 30 seeded runs: a true coverage
    # of 95 % gives >= 25 hits in 99 % of batches (binomial).
    hits = {"score_bins": 0, "external": 0}
    for seed in range(30):
        X, pred, y = two_group_pool(seed)
        labels = unequal_labels(y, pred, seed)
        truth = expected_calibration_error(y, X)
        for grouping in hits:
            group = pred if grouping == "external" else None
            est = BayesianCalibrationError(grouping=grouping, random_state=seed)
            lower, upper = est.fit(X, labels, group_by=group).overall_interval(0.95)
            hits[grouping] += lower <= truth <= upper
    assert hits["external"] >= 25
    assert hits["score_bins"] <= 10


def test_external_bins_summary_checks_its_level():
    X, y = pool("calibrated", n_rows=50)
    est = BayesianCalibrationError(grouping="external").fit(X, y, group_by=np.zeros(50))
    with pytest.raises(ValueError, match="'level' parameter of BayesianCalibrationError.summary"):
        est.summary(level=2)

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

"""The departure check of each group against the shared map, and the worst group."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.metrics import worst_group


def _pool(shifts, rows=200, seed=0):
    """Scores and labels of ``len(shifts)`` predicted classes, each shifted off the map."""
    rng = np.random.default_rng(seed)
    K = len(shifts)
    pred = np.repeat(np.arange(K), rows)
    conf = rng.uniform(0.55, 0.98, len(pred))
    right = rng.random(len(pred)) < expit(logit(conf) + np.asarray(shifts)[pred])
    X = np.zeros((len(pred), K))
    X[np.arange(len(pred)), pred] = conf
    X[np.arange(len(pred)), (pred + 1) % K] = 1 - conf
    y = np.where(right, pred, (pred + 1) % K)
    truth = np.bincount(pred, right, K) / rows
    return X, y, truth


def _labeled(y, n, seed):
    rows = np.random.default_rng(seed).choice(len(y), n, replace=False)
    out = np.full(len(y), -1)
    out[rows] = y[rows]
    return out


def test_a_group_far_below_the_map_is_flagged_and_its_interval_holds():
    shifts = np.r_[-3.0, np.random.default_rng(1).normal(0, 0.3, 11)]
    X, y, truth = _pool(shifts)
    flagged = covered = 0
    for seed in range(10):
        table = BayesianAccuracy(random_state=seed).fit(X, _labeled(y, 480, seed)).summary()
        flagged += bool(table["flagged"].iloc[0])
        covered += bool(table["lower"].iloc[0] <= truth[0] <= table["upper"].iloc[0])
        if table["flagged"].iloc[0]:  # the union of the model's and the labels' intervals
            assert table["lower"].iloc[0] <= table["labels_lower"].iloc[0]
            assert table["upper"].iloc[0] >= table["labels_upper"].iloc[0]
    assert flagged >= 8  # 40 labels three log-odds below the map: flagged in most runs
    assert covered >= 9


def test_flags_are_rare_where_the_map_holds():
    """Under the model the p-values are about uniform: few false flags (tolerance 2x)."""
    X, y, _ = _pool(np.random.default_rng(2).normal(0, 0.3, 12))
    flags = [
        BayesianAccuracy(random_state=s).fit(X, _labeled(y, 240, s)).summary()["flagged"].mean()
        for s in range(10)
    ]
    assert np.mean(flags) <= 0.10


def test_without_the_check_the_interval_is_the_model_s():
    X, y, _ = _pool(np.r_[-3.0, np.zeros(5)])
    labels = _labeled(y, 240, 0)
    on = BayesianAccuracy(random_state=0).fit(X, labels)
    off = BayesianAccuracy(random_state=0, departure_threshold=None).fit(X, labels)
    assert "departure_p" not in off.summary()
    assert not hasattr(off, "departure_")
    lower, upper = off.groupwise_interval()
    model = on._hierarchy.interval(0.95)
    np.testing.assert_allclose(lower, model[0])
    np.testing.assert_allclose(upper, model[1])
    np.testing.assert_array_equal(on.summary()["mean"], off.summary()["mean"])
    p = on.departure_
    assert isinstance(p, pd.Series) and list(p.index) == list(on.groups_)
    assert ((p >= 0) & (p <= 1)).all()


def test_a_group_without_labels_has_no_departure():
    X, y, _ = _pool(np.zeros(4))
    labels = np.where(X.argmax(axis=1) == 3, -1, _labeled(y, 300, 0))
    table = BayesianAccuracy(random_state=0).fit(X, labels).summary()
    assert table["departure_p"].iloc[3] == 1.0 and not table["flagged"].iloc[3]


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, "0.05"])
def test_departure_threshold_is_checked(bad):
    X, y, _ = _pool(np.zeros(3))
    with pytest.raises(ValueError, match="departure_threshold"):
        BayesianAccuracy(departure_threshold=bad).fit(X, _labeled(y, 60, 0))


def test_worst_group_minimum_is_below_every_group():
    X, y, truth = _pool(np.r_[-1.5, 0.0, 0.5, 1.0])
    est = BayesianAccuracy(random_state=0).fit(X, _labeled(y, 200, 0))
    worst = worst_group(est, random_state=0)
    assert worst.loc["ranked last", "group"] == est.groups_[0]
    means = est.groupwise_samples(4000, random_state=0).mean(axis=0)
    assert worst.loc["minimum over groups", "mean"] <= means.min() + 1e-12
    assert worst.loc["minimum over groups", "lower"] <= worst.loc["ranked last", "lower"]
    assert 0 < worst.loc["ranked last", "p_worst"] <= 1
    best = worst_group(est, highest=True, random_state=0)
    assert best.loc["maximum over groups", "mean"] >= means.max() - 1e-12


def test_worst_group_checks_its_input():
    with pytest.raises(ValueError, match="level"):
        worst_group(pd.DataFrame({"a": [0.1, 0.2]}), level=1.5)


def test_the_search_for_the_least_accurate_group_samples_a_flagged_group_from_its_labels():
    from skassess.samplers import ActiveAssessor
    from skassess.samplers._setup import initial_state

    shifts = np.r_[-3.0, np.random.default_rng(1).normal(0, 0.3, 11)]
    X, y, _ = _pool(shifts)
    labels = _labeled(y, 480, 0)
    search = ActiveAssessor(task="least_accurate", random_state=0).fit(X, labels)
    flagged = search.estimator_.summary()["flagged"].to_numpy()
    assert flagged[0]
    state = initial_state(search.estimator_, search._setup, 1)
    post = search.estimator_.posterior_
    # the flagged group: its labels alone; the others: the model's posterior
    assert state.prior_alpha[0, 0] == state.prior_beta[0, 0] == 1.0
    assert np.array_equal(state.successes[0], post.successes)
    np.testing.assert_array_equal(state.prior_alpha[0, ~flagged], post.prior_alpha[~flagged])
    # the estimate task does not read the check
    estimate = ActiveAssessor(task="estimate", random_state=0).fit(X, labels)
    state = initial_state(estimate.estimator_, estimate._setup, 1)
    np.testing.assert_array_equal(state.prior_alpha[0], estimate.estimator_.posterior_.prior_alpha)


def test_worst_group_reads_a_flagged_group_from_its_labels_alone():
    shifts = np.r_[-3.0, np.random.default_rng(1).normal(0, 0.3, 11)]
    X, y, truth = _pool(shifts)
    est = BayesianAccuracy(random_state=0).fit(X, _labeled(y, 480, 0))
    table = est.summary()
    assert table["flagged"].iloc[0]
    worst = worst_group(est, random_state=0)
    last = worst.loc["ranked last"]
    assert last["group"] == est.groups_[0]
    # its draws are its labels alone's: their interval, not the model's
    # (Monte Carlo quantiles of 4,000 draws against the exact ones: within 0.02)
    assert last["lower"] == pytest.approx(table["labels_lower"].iloc[0], abs=0.02)
    assert last["upper"] == pytest.approx(table["labels_upper"].iloc[0], abs=0.02)
    assert worst.loc["minimum over groups", "lower"] <= truth.min()
    # the same seed, the same answer
    pd.testing.assert_frame_equal(worst, worst_group(est, random_state=0))


def test_comparisons_read_a_flagged_group_from_its_labels_alone():
    from skassess.metrics import compare_groups

    shifts = np.r_[-3.0, np.random.default_rng(1).normal(0, 0.3, 11)]
    X, y, _ = _pool(shifts)
    est = BayesianAccuracy(random_state=0).fit(X, _labeled(y, 480, 0))
    assert est.summary()["flagged"].iloc[0]
    g0, g1 = est.groups_[0], est.groups_[1]
    delta = compare_groups(est, g0, g1, random_state=0)
    model = est.groupwise_samples(4000, random_state=0)
    lo, hi = np.quantile(model[:, 0] - model[:, 1], [0.025, 0.975])
    lower, upper = delta.interval()
    assert upper - lower > hi - lo  # the labels alone are wider than the shrunk model
    # with the check off, the model's own draws
    off = BayesianAccuracy(departure_threshold=None, random_state=0).fit(X, _labeled(y, 480, 0))
    np.testing.assert_allclose(
        compare_groups(off, g0, g1, random_state=0).samples, model[:, 0] - model[:, 1]
    )


@pytest.mark.parametrize(
    "left, a, b",
    [(0, 1.0, 1.0), (5, 1.0, 1.0), (50, 3.0, 2.0), (2000, 10.0, 2.0), (3000, 30.0, 5.0)],
)
def test_unlabeled_quantiles_are_the_beta_binomial_s(left, a, b):
    from scipy.stats import betabinom

    from skassess.metrics._departure import EXACT_LEFT, unlabeled_quantiles

    low, high = unlabeled_quantiles(np.array([left]), np.array([a]), np.array([b]), 0.025)
    exact = betabinom.ppf([0.025, 0.975], left, a, b) if left else np.zeros(2)
    if left <= EXACT_LEFT:
        assert (low[0], high[0]) == tuple(exact)
    else:  # the moment-matched Beta, rounded outward: within two rows of the exact ones
        assert exact[0] - 2 <= low[0] <= exact[0] and exact[1] <= high[0] <= exact[1] + 2

"""CalibratedPrior: the finite pool, leave-group-out maps, group deviations, coverage."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.samplers import ActiveAssessor, CalibratedPrior, simulate
from skassess.samplers._calibrated_prior import (
    EMPTY,
    MAX_STRENGTH,
    MIN_STRENGTH,
    _prior_of_posterior,
)


def _pool(n_classes=10, rows=150, shift=0.8, slope=0.6, seed=0):
    """Scores of an overconfident model whose calibration differs by predicted class."""
    rng = np.random.default_rng(seed)
    pred = np.repeat(np.arange(n_classes), rows)
    conf = np.clip(rng.beta(6.0, 1.2, len(pred)), 1.5 / n_classes, 1 - 1e-6)
    delta = rng.normal(0.0, shift, n_classes)
    right = rng.random(len(pred)) < expit(slope * logit(conf) - 0.3 + delta[pred])
    X = np.repeat(((1 - conf) / (n_classes - 1))[:, None], n_classes, axis=1)
    X[np.arange(len(pred)), pred] = conf
    return X, np.where(right, pred, (pred + 1) % n_classes)


def _prior(X, y, labeled, **params):
    codes = np.where(labeled, y, -1)
    est = BayesianAccuracy(prior="informative").fit(X, codes)
    cp = CalibratedPrior(**params).fit(X, codes)
    prior = cp.prior_for(est, X, codes)
    return est, prior


def test_a_fully_labeled_group_has_its_observed_accuracy():
    X, y = _pool()
    rng = np.random.default_rng(1)
    labeled = rng.random(len(y)) < 0.1
    labeled[X.argmax(1) == 3] = True  # every row of group 3
    est, prior = _prior(X, y, labeled)
    assert prior[3].sum() < 1e-6
    fitted = BayesianAccuracy(prior=prior).fit(X, np.where(labeled, y, -1))
    pred = X.argmax(1)
    observed = np.mean(y[pred == 3] == 3)
    assert fitted.posterior_.mean()[3] == pytest.approx(observed, abs=1e-6)
    # the other groups keep a prior
    assert (np.delete(prior.sum(axis=1), 3) > 1.0).all()


def test_the_prior_shrinks_as_the_group_is_labeled():
    X, y = _pool()
    pred = X.argmax(1)
    rows = np.flatnonzero(pred == 0)
    strengths = []
    for share in (0.0, 0.5, 0.9):
        labeled = np.zeros(len(y), dtype=bool)
        labeled[rows[: int(share * len(rows))]] = True
        labeled[pred != 0] = np.random.default_rng(2).random((pred != 0).sum()) < 0.2
        strengths.append(_prior(X, y, labeled, prior_strength=50.0)[1][0].sum())
    # fixed strength k: k (N - n) / (k + N)
    N = len(rows)
    expected = [50.0 * (N - int(s * N)) / (50.0 + N) for s in (0.0, 0.5, 0.9)]
    assert strengths == pytest.approx(expected, rel=1e-9)


def test_a_group_prior_does_not_use_its_own_labels():
    X, y = _pool(seed=3)
    pred = X.argmax(1)
    labeled = np.random.default_rng(4).random(len(y)) < 0.3
    # a fixed strength: the prior mean is then the map's alone (with "auto", the
    # group's labels also weigh, with all others, on the population's tau)
    _, prior = _prior(X, y, labeled, prior_strength=50.0)
    flipped = y.copy()
    g0 = labeled & (pred == 0)
    flipped[g0] = np.where(y[g0] == 0, 1, 0)  # group 0's labeled outcomes reversed
    _, prior_flipped = _prior(X, flipped, labeled, prior_strength=50.0)
    mean = prior[:, 0] / prior.sum(1)
    mean_flipped = prior_flipped[:, 0] / prior_flipped.sum(1)
    # group 0 (one Newton step off the map without it) barely moves ...
    assert abs(mean[0] - mean_flipped[0]) < 0.01
    # ... while the map shared by the others does move
    assert np.abs(mean[1:] - mean_flipped[1:]).max() > 3 * abs(mean[0] - mean_flipped[0])


def test_groups_that_disagree_with_the_map_get_a_weaker_prior():
    X_same, y_same = _pool(shift=0.0, seed=5)
    X_diff, y_diff = _pool(shift=1.5, seed=5)
    labeled = np.random.default_rng(6).random(len(y_same)) < 0.3
    same = _prior(X_same, y_same, labeled)[1].sum(1)
    diff = _prior(X_diff, y_diff, labeled)[1].sum(1)
    assert np.median(same) > 5 * np.median(diff)


def test_a_heavily_labeled_group_does_not_set_the_others_prior():
    # Three labels per group, then every row of the least accurate group (as
    # an adaptive strategy would label it). With the rows pooled, the map
    # follows that group and the others' prior means fall by 0.14-0.17 on
    # this pool; with groups as random effects they move by about 0.015.
    X, y = _pool(seed=3)
    pred = X.argmax(1)
    worst = int(np.argmin(np.bincount(pred, weights=pred == y) / np.bincount(pred)))
    rng = np.random.default_rng(0)
    few = np.zeros(len(y), dtype=bool)
    for g in range(10):
        few[rng.choice(np.flatnonzero(pred == g), 3, replace=False)] = True
    many = few | (pred == worst)
    means = [
        prior[:, 0] / prior.sum(axis=1)
        for prior in (_prior(X, y, labeled)[1] for labeled in (few, many))
    ]
    shift = np.abs(np.delete(means[1] - means[0], worst))
    assert np.median(shift) < 0.04, shift


def test_simulate_and_prior_for_give_the_same_prior():
    X, y = _pool(seed=7)
    labeled_rows = np.random.default_rng(8).choice(len(y), 60, replace=False)
    labeled = np.zeros(len(y), dtype=bool)
    labeled[labeled_rows] = True
    _, prior = _prior(X, y, labeled)
    cp = CalibratedPrior(n_nodes=4096)
    est = BayesianAccuracy(prior="informative").fit(X)
    from skassess.samplers._prior_update import PooledPriorUpdate
    from skassess.samplers._setup import Setup, initial_state

    setup = Setup(est, "estimate")
    state = initial_state(est, setup, 1)
    pred = X.argmax(1)
    state = state.record(
        (np.zeros(60, dtype=np.intp), pred[labeled_rows]), (pred == y)[labeled_rows].astype(float)
    )
    update = PooledPriorUpdate(cp, X, pred, pred, X.shape[1])
    update.center_ = CalibratedPrior().fit(X, np.where(labeled, y, -1)).center_
    out = update.update(state, labeled_rows[None], (pred == y).astype(float))
    assert out.alpha[0] == pytest.approx(prior[:, 0] + state.successes[0], rel=0.02)
    assert out.beta[0] == pytest.approx(
        prior[:, 1] + state.trials[0] - state.successes[0], rel=0.02
    )


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "thompson"])
def test_calibrated_prior_intervals_cover(strategy):
    # Seeded coverage: 200 runs x 10 groups at 20 / 50 / 100 labels on a pool
    # whose calibration differs by group; 95 % intervals. Tolerance: the share
    # within [0.90, 0.99] (standard error over runs about 0.01); this pool is
    # at 0.915-0.958, short of the 0.93 goal at 50 and 100 labels (see
    # docs/benchmarks.md); the test guards against the 0.86-0.88 of a
    # delta-method prior variance and the 0.58 of the old empirical-Bayes strength.
    X, y = _pool(seed=11)
    res = simulate(
        X,
        y,
        estimator=BayesianAccuracy(prior="informative"),
        strategy=strategy,
        budget=100,
        n_runs=200,
        log_every=10,
        prior_update=CalibratedPrior(),
        evaluate="coverage",
        random_state=0,
    )
    at = [np.flatnonzero(res.n_labels == b)[0] for b in (20, 50, 100)]
    assert ((res.mean[at] >= 0.90) & (res.mean[at] <= 0.99)).all(), res.mean[at]


def test_active_assessor_reaches_the_observed_accuracy_when_a_group_is_exhausted():
    X, y = _pool(n_classes=4, rows=30, seed=12)
    assessor = ActiveAssessor(
        prior_update=CalibratedPrior(), strategy="random", random_state=0
    ).fit(X)
    assessor.run(y, budget=len(y), progress=False)
    pred = X.argmax(1)
    observed = np.bincount(pred, weights=pred == y) / np.bincount(pred)
    assert assessor.estimator_.posterior_.mean() == pytest.approx(observed, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(
    mean=st.floats(0.001, 0.999),
    sd=st.floats(1e-4, 0.4),
    trials=st.integers(0, 500),
    share=st.floats(0, 1),
)
def test_prior_of_posterior_gives_the_mixture_mean_and_at_most_its_variance(
    mean, sd, trials, share
):
    # The group's posterior is a mixture over tau, moment-matched: the
    # pseudo-counts must reproduce its mean exactly, and its variance unless
    # the labels alone already make the posterior narrower (or the total
    # strength is capped).
    successes = float(round(share * trials))
    var = min(sd**2, 0.99 * mean * (1 - mean))
    alpha, beta = _prior_of_posterior(
        np.array(mean), np.array(var), np.array(successes), np.array(float(trials))
    )
    assert alpha >= EMPTY and beta >= EMPTY
    a, b = alpha + successes, beta + trials - successes
    assert a / (a + b) == pytest.approx(mean, rel=1e-9, abs=1e-12)
    post_var = a * b / ((a + b) ** 2 * (a + b + 1))
    strength = mean * (1 - mean) / var - 1
    if strength < MAX_STRENGTH:  # (at most MAX_STRENGTH pseudo-counts in all)
        assert post_var <= var * (1 + 1e-9)
    fits = (
        MIN_STRENGTH < strength < MAX_STRENGTH
        and strength * mean > successes + EMPTY
        and strength * (1 - mean) > trials - successes + EMPTY
    )
    if fits:
        assert post_var == pytest.approx(var, rel=1e-6)


def test_prior_of_posterior_reads_a_variance_rounded_below_zero_as_zero():
    # A mixture of identical components has variance E[x^2] - E[x]^2, which
    # can round to -1e-18: that is the narrowest Beta, not the widest.
    alpha, beta = _prior_of_posterior(
        np.array([0.8, 0.8]), np.array([-1e-18, 0.0]), np.array([4.0, 4.0]), np.array([5.0, 5.0])
    )
    assert alpha[0] == alpha[1] and beta[0] == beta[1]
    assert alpha[0] + beta[0] + 5.0 == pytest.approx(MAX_STRENGTH)


def test_strength_is_a_deprecated_alias_of_prior_strength():
    X, y = _pool(seed=3)
    labeled = np.zeros(len(y), dtype=bool)
    labeled[::25] = True
    _, new = _prior(X, y, labeled, prior_strength=50.0)
    with pytest.warns(FutureWarning, match=r"CalibratedPrior\(strength=\.\.\.\)"):
        _, old = _prior(X, y, labeled, strength=50.0)
    np.testing.assert_allclose(old, new)

"""ActiveAssessor on a binary rate (TPR, PPV, ...): the estimate task, its groups' rewards."""

import numpy as np
import pytest
from scipy.special import expit, logit

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.metrics._rate_table import rate_terms
from skassess.samplers import VarianceSampling


def _pool(n, seed):
    """Binary scores in two groups; the black box is right with probability
    expit(logit(conf) - 0.4)."""
    rng = np.random.default_rng(seed)
    conf = np.clip(rng.beta(4.0, 1.2, n), 0.51, 0.999)
    right = rng.random(n) < expit(logit(conf) - 0.4)
    pred = rng.integers(0, 2, n)
    scores = np.column_stack([1 - conf, conf])
    scores[pred == 0] = scores[pred == 0][:, ::-1]
    return scores, np.where(right, pred, 1 - pred), rng.choice(["a", "b"], n)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["thompson", "random"])
@pytest.mark.parametrize("metric", ["tpr", "precision"])
def test_the_estimate_task_takes_a_binary_rate(metric, strategy):
    """Labels chosen by group (random within it) enter unweighted."""
    scores, y, g = _pool(800, 14)
    estimator = BayesianAccuracy(metric=metric, grouping="external")
    a = ActiveAssessor(estimator, strategy=strategy, random_state=0).fit(scores, group_by=g)
    a.run(y, budget=40, batch_size=5, progress=False)
    assert a.n_labeled_ == 40
    est = a.estimator_
    np.testing.assert_allclose(est._design_square, est._design_labeled)
    lo, hi = est.overall_interval(0.95)
    assert 0 <= lo < est.overall_mean() < hi <= 1


@pytest.mark.parametrize("prior", ["calibrated", "hierarchical"])
def test_a_groups_reward_weight_is_its_share_of_the_condition_times_the_chance_to_count(prior):
    """The estimate task weighs group g by p_g P(condition | g), its share in the pool's
    rate, times P(condition | g) where a label counts only if the condition holds on its
    row: for PPV (the share of g predicted positive; 0 for a group predicted negative
    throughout), and for TPR under a prior of counts. Under the calibrated prior every
    label of a TPR informs a map, so its weight is the share alone."""
    from skassess.samplers._setup import Setup

    scores, y, g = _pool(900, 15)
    g = g.astype(object)
    negative = scores.argmax(axis=1) == 0
    g[negative & (np.arange(900) % 3 == 0)] = "c"  # group c: predicted negative only
    labels = np.where(np.arange(900) < 90, y, -1)
    for metric in ("ppv", "tpr"):
        est = BayesianAccuracy(metric=metric, grouping="external", prior=prior)
        est.fit(scores, labels, group_by=g)
        weights = Setup(est, "estimate").task.weights
        p = est.group_weights_
        if metric == "ppv":
            share = np.array([np.mean(~negative[g == k]) for k in est.groups_])
            assert share[list(est.groups_).index("c")] == 0
            expected = p * share**2
        else:
            share = est.condition_posterior_.mean()
            expected = p * share ** (1 if prior == "calibrated" else 2)
        np.testing.assert_allclose(weights, expected)
        assert (weights[share > 0] > 0).all()


def test_an_unequal_design_is_refused_for_a_binary_rate():
    scores, y, g = _pool(300, 16)
    estimator = BayesianAccuracy(metric="tpr", grouping="external")
    with pytest.raises(ValueError, match=r"VarianceSampling\(\) draws an unequal design.*'tpr'"):
        ActiveAssessor(estimator, strategy=VarianceSampling()).fit(scores, group_by=g)
    with pytest.raises(ValueError, match=r"VarianceSampling\(\) draws an unequal design"):
        ActiveAssessor(estimator, strategy="variance").fit(scores, group_by=g)


def test_other_tasks_refuse_a_binary_rate():
    scores, y, g = _pool(300, 17)
    estimator = BayesianAccuracy(metric="tpr", grouping="external")
    with pytest.raises(ValueError, match=r"task='least_accurate' needs .*task='estimate' only"):
        ActiveAssessor(estimator, task="least_accurate").fit(scores, group_by=g)


@pytest.mark.slow
def test_the_calibrated_posterior_of_a_rate_covers_under_thompson_sampling():
    """Seeded coverage of the pool's PPV and TPR: 8 runs each of 40 labels chosen by
    Thompson sampling (tolerance: at least 6 of 8 per rate; at a true 0.95 fewer happen
    with probability 0.006). Widths against random labeling: docs/benchmarks.md."""
    scores, y, g = _pool(1000, 18)
    for metric in ("ppv", "tpr"):
        c, o = rate_terms(metric, scores.argmax(axis=1), y)
        truth = (c * o).sum() / c.sum()
        covered = 0
        for seed in range(8):
            estimator = BayesianAccuracy(metric=metric, grouping="external")
            a = ActiveAssessor(estimator, random_state=seed).fit(scores, group_by=g)
            a.run(y, budget=40, batch_size=5, progress=False)
            lo, hi = a.estimator_.overall_interval(0.95)
            covered += lo <= truth <= hi
        assert covered >= 6, (metric, covered)


def test_the_rewards_weights_follow_the_labels():
    """TPR's weights carry P(y = 1 | g), which the labels move: each tell refreshes
    them (before any label the condition's posterior is its prior, 0.5)."""
    from skassess.samplers._setup import _rate_arm_weights

    scores, y, g = _pool(800, 19)
    estimator = BayesianAccuracy(metric="tpr", grouping="external")
    a = ActiveAssessor(estimator, random_state=0).fit(scores, group_by=g)
    before = a._setup.task.weights.copy()
    np.testing.assert_allclose(before, a.estimator_.group_weights_ * 0.5)
    a.run(y, budget=30, batch_size=5, progress=False)
    after = a._setup.task.weights
    np.testing.assert_allclose(after, _rate_arm_weights(a.estimator_))
    assert not np.allclose(after, before)


def test_simulate_refuses_a_binary_rate():
    """simulate's conjugate runs record whether the black box was right: not a rate."""
    from skassess.samplers import simulate

    scores, y, g = _pool(300, 20)
    estimator = BayesianAccuracy(metric="tpr", grouping="external", prior="informative")
    with pytest.raises(ValueError, match=r"simulate replays accuracy; .*metric='tpr'"):
        simulate(scores, y, estimator=estimator, group_by=g, budget=10, n_runs=2)

"""The calibrated prior of the confusion matrix and the misclassification cost."""

import numpy as np
import pytest
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.metrics import BayesianConfusionMatrix, BayesianMisclassificationCost


def pool(n, K, *, shift=0.0, seed=0):
    """Scores and targets: right with probability sigmoid(logit(top-1) + shift)."""
    rng = np.random.default_rng(seed)
    scores = rng.dirichlet(np.full(K, 0.3), n)
    pred = scores.argmax(axis=1)
    right = rng.random(n) < expit(logit(np.clip(scores.max(axis=1), 1e-6, 1 - 1e-6)) + shift)
    # a wrong row's class follows the other scores
    other = scores.copy()
    other[np.arange(n), pred] = 0.0
    other /= other.sum(axis=1, keepdims=True)
    wrong = (other.cumsum(axis=1) > rng.random(n)[:, None]).argmax(axis=1)
    return scores, np.where(right, pred, wrong)


def masked(t, rows):
    y = np.full(len(t), -1)
    y[rows] = t[rows]
    return y


def test_the_diagonal_is_the_calibrated_accuracy_per_predicted_class():
    S, t = pool(3000, 4, shift=-0.8, seed=1)
    y = masked(t, np.arange(0, 3000, 30))
    cm = BayesianConfusionMatrix(prior="calibrated", random_state=0).fit(S, y)
    acc = BayesianAccuracy(prior="calibrated", random_state=0).fit(S, y)
    s = cm.summary()
    diag = s[s.index.get_level_values(0) == s.index.get_level_values(1)]
    a = acc.summary()
    np.testing.assert_allclose(diag["lower"], a["lower"])
    np.testing.assert_allclose(diag["upper"], a["upper"])
    np.testing.assert_allclose(diag["mean"], a["mean"], atol=1e-3)


def test_everything_labeled_gives_the_cost_exactly():
    S, t = pool(400, 3, seed=2)
    cost = np.array([[0, 1, 4], [2, 0, 1], [8, 3, 0]], dtype=float)
    est = BayesianMisclassificationCost(cost_matrix=cost, prior="calibrated", random_state=0).fit(
        S, t
    )
    truth = cost[t, S.argmax(axis=1)].mean()
    lo, hi = est.overall_interval()
    # the accuracy is the pool's; the errors' classes are known where labeled
    assert lo == pytest.approx(truth) and hi == pytest.approx(truth)


def test_batches_are_fitted_once_and_agree_with_one_fit():
    S, t = pool(2000, 3, seed=3)
    y = masked(t, np.arange(0, 2000, 10))
    cost = np.ones((3, 3)) - np.eye(3)
    one = BayesianMisclassificationCost(cost_matrix=cost, prior="calibrated", random_state=0).fit(
        S, y
    )
    many = BayesianMisclassificationCost(cost_matrix=cost, prior="calibrated", random_state=0)
    for part in np.array_split(np.arange(2000), 5):
        many.partial_fit(S[part], y[part])
        assert many._calibrated_stale  # nothing fitted until read
    assert many.overall_interval() == pytest.approx(one.overall_interval())


@pytest.mark.slow
def test_cost_intervals_cover_and_are_narrower_than_the_hierarchical_priors():
    """Seeded coverage: 40 runs of 100 random labels on an over-confident 6-class pool.

    With a true coverage of 0.95 the misses are Binomial(40, 0.05): P(more
    than 6) < 0.01, so 0.85 of runs must hold the pool's mean cost.
    """
    S, t = pool(5000, 6, shift=-1.0, seed=4)
    rng = np.random.default_rng(5)
    cost = rng.uniform(0, 10, (6, 6))
    np.fill_diagonal(cost, 0.0)
    truth = cost[t, S.argmax(axis=1)].mean()
    hits, widths = 0, {"calibrated": [], "hierarchical": []}
    for r in range(40):
        y = masked(t, rng.choice(5000, 100, replace=False))
        for prior in widths:
            est = BayesianMisclassificationCost(cost_matrix=cost, prior=prior, random_state=r).fit(
                S, y
            )
            lo, hi = est.overall_interval(n_draws=2000)
            widths[prior].append(hi - lo)
            hits += prior == "calibrated" and lo <= truth <= hi
    assert hits / 40 >= 0.85
    assert np.mean(widths["calibrated"]) < np.mean(widths["hierarchical"])


def test_design_weights_enter_the_accuracy_maps_of_the_cost():
    """Equal weights change nothing; unequal ones move the unlabeled rows'
    accuracies (so the cost) and leave a fully labeled predicted class's cost
    and the confusion counts as they are."""
    S, t = pool(2500, 3, shift=-0.6, seed=7)
    pred = S.argmax(axis=1)
    rng = np.random.default_rng(8)
    rows = np.r_[np.flatnonzero(pred == 0), rng.choice(np.flatnonzero(pred != 0), 90, False)]
    cost = np.array([[0.0, 1.0, 4.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])

    def fitted(**design):
        est = BayesianMisclassificationCost(cost_matrix=cost, random_state=0).fit(S)
        return est.add_labels(S[rows], t[rows], **design)

    plain = fitted()
    equal = fitted(design_weight=np.full(len(rows), 2.5))
    np.testing.assert_allclose(equal.overall_interval(), plain.overall_interval())
    weighted = fitted(design_weight=rng.uniform(0.3, 3.0, len(rows)))
    assert not np.allclose(weighted.overall_interval(), plain.overall_interval())
    np.testing.assert_array_equal(weighted.counts_, plain.counts_)
    # the cost of the fully labeled predicted class 0 is its observed one
    mean = weighted.summary()["mean"]
    assert mean.iloc[0] == pytest.approx(plain.summary()["mean"].iloc[0], abs=1e-9)


def split_pool(n, seed):
    """Three classes; a wrong row is of the next class where the top-1 score is
    below 0.7 and of the class after it above, so an error's class goes with
    the score a design draws by."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.4, 0.99, n)
    pred = rng.integers(0, 3, n)
    wrong = rng.random(n) > conf
    t = np.where(wrong, (pred + np.where(conf < 0.7, 1, 2)) % 3, pred)
    S = np.zeros((n, 3))
    S[np.arange(n), pred] = conf
    S[np.arange(n), (pred + 1) % 3] = S[np.arange(n), (pred + 2) % 3] = (1 - conf) / 2
    return S, t


@pytest.mark.slow
def test_the_split_of_the_errors_is_design_weighted():
    """Drawn by uncertainty, the labeled errors over-represent the classes of the
    uncertain rows' errors; weighted, each predicted class's split of its errors
    and the cost come back to the pool's. The accuracy (each class's failures)
    is the weighted accuracy maps' alone."""
    S, t = split_pool(6000, seed=0)
    pred = S.argmax(axis=1)
    cost = np.array([[0.0, 1.0, 10.0], [10.0, 0.0, 1.0], [1.0, 10.0, 0.0]])
    truth = cost[t, pred].mean()
    u = 1.0 - S.max(axis=1)
    q = 0.2 / len(u) + 0.8 * u / u.sum()
    off = ~np.eye(3, dtype=bool)
    true_split = np.array([np.bincount(t[(pred == k) & (t != k)], minlength=3) for k in range(3)])
    true_split = np.where(off, true_split, 0) / true_split.sum(axis=1, keepdims=True)
    errors = {True: [], False: []}
    for seed in range(30):
        rows = np.random.default_rng(seed + 1).choice(len(t), 300, replace=False, p=q)
        for weighted in (True, False):
            design = {"design_weight": 1.0 / (len(t) * q[rows])} if weighted else {}
            est = BayesianMisclassificationCost(cost_matrix=cost, random_state=0).fit(S)
            est.add_labels(S[rows], t[rows], **design)
            alpha = est.posterior_.error_alpha
            split = alpha / alpha.sum(axis=1, keepdims=True)
            errors[weighted].append((est.overall_mean() - truth, split - true_split))
            if weighted and seed == 0:
                # the accuracy is the weighted calibrated one; the errors' Dirichlet
                # holds Kish's effective number of them, fewer than were labeled
                acc = BayesianAccuracy(random_state=0).fit(S)
                acc.add_labels(S[rows], t[rows], **design)
                np.testing.assert_allclose(
                    np.diagonal(est.posterior_.mean()), acc.summary()["mean"], rtol=1e-9
                )
                labeled = np.where(off, est.counts_, 0.0).sum(axis=1)
                assert np.all(est._design_error_split().sum(axis=1) < labeled)
    bias = {w: np.mean([b for b, _ in errors[w]]) for w in errors}
    split_bias = {w: np.abs(np.mean([e for _, e in errors[w]], axis=0)).max() for w in errors}
    # measured: unweighted 0.32 and 0.109, weighted 0.012 and 0.026 (the prior's pull)
    assert bias[False] > 0.2 and split_bias[False] > 0.07  # unweighted, for the record
    assert abs(bias[True]) < 0.06 and split_bias[True] < 0.05


def test_an_estimator_pickled_before_the_weighted_split_starts_it_from_its_labels():
    S, t = split_pool(1500, seed=2)
    rows, more = np.arange(0, 1500, 20), np.arange(7, 1500, 20)
    fresh = BayesianMisclassificationCost(random_state=0).fit(S)
    fresh.add_labels(S[rows], t[rows])
    old = BayesianMisclassificationCost(random_state=0).fit(S)
    old.add_labels(S[rows], t[rows])
    del old._design_confusion, old._design_confusion_square  # as a 0.1 pickle
    d = np.random.default_rng(3).uniform(0.5, 2.0, len(more))
    for est in (fresh, old):
        est.add_labels(S[more], t[more], design_weight=d)
    np.testing.assert_allclose(old.posterior_.error_alpha, fresh.posterior_.error_alpha)
    np.testing.assert_allclose(old.overall_interval(), fresh.overall_interval())


def test_other_priors_of_the_cost_refuse_design_weights():
    S, t = pool(300, 3, seed=9)
    est = BayesianConfusionMatrix(prior="hierarchical").fit(S)
    before = est.counts_.copy()
    with pytest.raises(ValueError, match="prior='hierarchical' got it"):
        est.add_labels(S[:20], t[:20], design_weight=np.ones(20))
    np.testing.assert_array_equal(est.counts_, before)

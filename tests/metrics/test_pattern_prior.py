import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.metrics import BayesianModelComparison
from skassess.metrics._pattern_prior import PatternPrior


def _one_coin_pool(n=3000, accs=(0.82,) * 5, K=10, seed=0):
    """One-hot scores of independent models, each wrong toward any other class alike."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    S = []
    for acc in accs:
        pred = np.where(rng.random(n) < acc, y, (y + rng.integers(1, K, n)) % K)
        S.append(np.eye(K)[pred] * 0.8 + 0.2 / K)
    return np.stack(S, axis=1), y


def _labels(y, n, seed):
    rng = np.random.default_rng(seed)
    codes = np.full(len(y), -1)
    rows = rng.choice(len(y), n, replace=False)
    codes[rows] = y[rows]
    return codes


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 4),
    st.integers(0, 2**31 - 1),
    st.floats(-2.0, 4.0),
    st.floats(-4.0, 4.0),
)
def test_gradient_is_the_log_posteriors(M, seed, level, w):
    rng = np.random.default_rng(seed)
    preds = rng.integers(0, 3, (40, M))
    patterns = _patterns(preds)[0]
    r = patterns.max(axis=1) + 1
    support = np.arange(M + 1)[None, :] < r[:, None]
    support[:, M] = r < 3
    counts = np.where(support, rng.integers(0, 4, (len(patterns), M + 1)), 0).astype(float)
    none_class = rng.integers(0, 2, len(patterns))
    prior = PatternPrior(patterns, support, 3, counts, np.random.default_rng(0), none_class)
    u = np.r_[rng.normal(level, 1.0, M), rng.normal(size=prior.C), level, w]
    h = 1e-5
    numeric = [
        (prior.log_posterior(u + e) - prior.log_posterior(u - e)) / (2 * h)
        for e in np.eye(u.size) * h
    ]
    np.testing.assert_allclose(prior._gradient(u), numeric, rtol=1e-4, atol=1e-4)


def _patterns(preds):
    """The distinct agreement patterns of rows of predicted classes."""
    blocks = np.zeros_like(preds)
    for i, row in enumerate(preds):
        _, first = np.unique(row, return_index=True)
        order = np.argsort(first)
        code = {row[first[k]]: j for j, k in enumerate(order)}
        blocks[i] = [code[c] for c in row]
    return np.unique(blocks, axis=0, return_inverse=True)


def test_the_vote_follows_the_models_accuracy():
    S, y = _one_coin_pool(6000, accs=(0.9, 0.8, 0.7, 0.6, 0.5))
    comp = BayesianModelComparison(prior_split="learned", random_state=0)
    comp.fit(S, _labels(y, 3000, 0))
    weights = comp._pattern_prior.mode_[:5]
    assert np.all(np.diff(weights) < 0), weights
    # a lone dissenter against four: the four are right
    four = np.flatnonzero((comp.patterns_ == 0).sum(axis=1) == 4)
    prior = comp.prior_[four] / comp.prior_[four].sum(axis=1, keepdims=True)
    assert np.all(prior[:, 0] > 0.9), prior


def test_with_no_labels_the_models_are_alike():
    S, y = _one_coin_pool(400, accs=(0.8, 0.7), K=4)
    comp = BayesianModelComparison(prior_split="learned", random_state=0).fit(S)
    split = comp.patterns_.max(axis=1) == 1
    prior = comp.prior_[split][0]
    np.testing.assert_allclose(prior[0], prior[1], rtol=0.15)


def test_labels_added_by_pattern_update_the_learned_prior():
    S, y = _one_coin_pool(600, accs=(0.9, 0.6, 0.6), K=4)
    comp = BayesianModelComparison(prior_split="learned", random_state=0).fit(S)
    before = comp.prior_.copy()
    rows = np.arange(300)
    blocks = comp.patterns_[comp.pattern_[rows]]
    right = S[rows].argmax(axis=2) == y[rows, None]
    cats = np.where(right.any(axis=1), blocks[np.arange(300), right.argmax(axis=1)], 3)
    comp.add_pattern_labels(comp.pattern_[rows], cats)
    assert not np.allclose(before, comp.prior_)
    again = BayesianModelComparison(prior_split="learned", random_state=0).fit(
        S, np.r_[y[:300], np.full(300, -1)]
    )
    np.testing.assert_allclose(comp.mean_accuracy(), again.mean_accuracy(), atol=2e-3)


def test_every_item_labeled_gives_the_exact_accuracies():
    S, y = _one_coin_pool(500)
    comp = BayesianModelComparison(prior_split="learned", random_state=0).fit(S, y)
    truth = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
    np.testing.assert_allclose(comp.mean_accuracy(), truth)
    table = comp.summary()
    np.testing.assert_allclose(table["lower"], truth)
    np.testing.assert_allclose(table["upper"], truth)


@pytest.mark.slow
def test_each_models_accuracy_covers_with_many_models():
    """Five independent models of ten classes, 200 random labels, 40 seeded runs.

    The share of the 200 intervals (95 %) of each model's accuracy on the pool
    that hold it: at least 0.90 with the learned prior (the even split gives
    0.00 here: it takes a lone dissenter as likely right as the four others).
    """
    S, y = _one_coin_pool(5000)
    truth = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
    hits = []
    for seed in range(40):
        comp = BayesianModelComparison(prior_split="learned", n_draws=1000, random_state=seed)
        table = comp.fit(S, _labels(y, 200, seed)).summary()
        hits.append((table["lower"] <= truth) & (truth <= table["upper"]))
    assert np.mean(hits) >= 0.90, np.mean(hits)


def test_auto_splits_evenly_up_to_three_models_and_learns_from_four():
    S, y = _one_coin_pool(400, accs=(0.8,) * 4, K=4)
    labels = _labels(y, 100, 0)
    for M, rule in ((2, "even"), (3, "even"), (4, "learned")):
        auto = BayesianModelComparison(random_state=0).fit(S[:, :M], labels)
        same = BayesianModelComparison(prior_split=rule, random_state=0).fit(S[:, :M], labels)
        np.testing.assert_array_equal(auto.prior_, same.prior_)
        np.testing.assert_array_equal(auto.summary().to_numpy(), same.summary().to_numpy())

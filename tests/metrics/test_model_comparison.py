import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import GridSearchCV

from skassess.metrics import BayesianModelComparison, compare_groups, rank_groups
from skassess.metrics._agreement_patterns import agreement_patterns, check_model_scores
from skassess.metrics._rate_table import rate_terms


def _pool(n=3000, accs=(0.9, 0.85, 0.8), K=3, seed=0):
    """Scores of len(accs) models on n items of K classes; model m right w.p. accs[m]."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    S = np.empty((n, len(accs), K))
    for m, acc in enumerate(accs):
        right = rng.uniform(size=n) < acc
        pred = np.where(right, y, (y + rng.integers(1, K, n)) % K)
        conf = rng.uniform(0.5, 1.0, n)
        S[:, m] = (1 - conf[:, None]) / (K - 1)
        S[np.arange(n), m, pred] = conf
    return S, y


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=4, max_size=4), min_size=1, max_size=20))
def test_agreement_patterns_are_canonical(rows):
    P = np.array(rows)
    B = agreement_patterns(P)
    assert (B[:, 0] == 0).all()
    for p, b in zip(P, B, strict=True):
        same_pred = p[:, None] == p[None, :]
        same_block = b[:, None] == b[None, :]
        assert (same_pred == same_block).all()
        # blocks numbered by first appearance
        firsts = [b[i] for i in range(len(b)) if b[i] not in b[:i]]
        assert firsts == list(range(b.max() + 1))


def test_every_item_labeled_gives_the_exact_accuracies():
    S, y = _pool()
    comp = BayesianModelComparison(random_state=0).fit(S, y)
    truth = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
    summary = comp.summary()
    np.testing.assert_allclose(summary["mean"], truth)
    np.testing.assert_allclose(summary["lower"], truth)
    np.testing.assert_allclose(summary["upper"], truth)
    assert summary["p_best"].iloc[int(np.argmax(truth))] == 1.0


def test_uniform_prior_mean_by_hand():
    # two binary models, 4 items: agree-right (labeled), disagree (labeled: model 0 right),
    # disagree (unlabeled), agree (unlabeled)
    X = np.array([[0.1, 0.2], [0.9, 0.2], [0.1, 0.7], [0.3, 0.4]])
    y = np.array([0, 1, -1, -1])
    comp = BayesianModelComparison("uniform", tie_prior=0).fit(X, y)
    # agree pattern: categories (both right, none) ~ Dir(1 + 1, 1); disagree: (block 0
    # right, block 1 right) ~ Dir(1 + 1, 1) -- with two classes one of them is right
    agree, disagree = 2 / 3, (2 / 3, 1 / 3)
    expected = np.array([(2 + agree + disagree[0]) / 4, (1 + agree + disagree[1]) / 4])
    np.testing.assert_allclose(comp.mean_accuracy(), expected)
    np.testing.assert_allclose(comp.groupwise_samples(200000, 0).mean(axis=0), expected, atol=3e-3)


def test_tie_component_by_hand():
    # the example above with the sceptical component: the disagree pattern's one label
    # (block 0 right) has the same chance, 1/2, under a tie and under Dir(1, 1), so the
    # posterior tie probability stays 1/2; the block shares are the even split's and
    # the Dirichlet's (2/3, 1/3) half and half, 7/12 and 5/12 ("none" is impossible)
    X = np.array([[0.1, 0.2], [0.9, 0.2], [0.1, 0.7], [0.3, 0.4]])
    y = np.array([0, 1, -1, -1])
    comp = BayesianModelComparison("uniform", tie_prior=0.5).fit(X, y)
    disagree = int(np.flatnonzero(comp.patterns_.max(axis=1) == 1)[0])
    np.testing.assert_allclose(comp.tie_probabilities()[disagree], 0.5)
    np.testing.assert_allclose(
        comp.outcome_probabilities()[disagree, [0, 1, 2]], [7 / 12, 5 / 12, 0]
    )
    agree, d = 2 / 3, (7 / 12, 5 / 12)
    expected = np.array([(2 + agree + d[0]) / 4, (1 + agree + d[1]) / 4])
    np.testing.assert_allclose(comp.mean_accuracy(), expected)
    np.testing.assert_allclose(comp.groupwise_samples(200000, 0).mean(axis=0), expected, atol=3e-3)
    # a second label for block 0: Bayes factor tie / Dir(1, 1) = (1/4) / (1/3)
    y2 = np.array([0, 1, 0, -1])
    comp2 = BayesianModelComparison("uniform", tie_prior=0.5).fit(X, y2)
    np.testing.assert_allclose(comp2.tie_probabilities()[disagree], (1 / 4) / (1 / 4 + 1 / 3))


def _prior_predictive_pit(tie_prior, n_runs, n_labels, seed=5):
    """Posterior CDF of Δ accuracy at the truth, truths drawn from the prior (tie w.p. 1/2).

    Two models, 3 classes (the third never true, so labels of one class are
    unambiguous): 300 items where both predict class 0, 100 where they disagree.
    """
    n_agree, n_dis = 300, 100
    pred = np.zeros((n_agree + n_dis, 2), dtype=int)
    pred[n_agree:, 1] = 1
    X = np.stack(
        [np.where(pred == 1, 0.2, 0.7), np.where(pred == 1, 0.7, 0.2), np.full(pred.shape, 0.1)],
        axis=2,
    )
    rng = np.random.default_rng(seed)
    pits, ties, tie_post = [], [], []
    for run in range(n_runs):
        # agree: both right w.p. ~ Beta(1, 1); disagree: model 0 right w.p. 1/2 (a tie)
        # with probability 1/2, else ~ Beta(1, 1); never both wrong there
        p_both = rng.beta(1, 1)
        ties.append(rng.uniform() < 0.5)
        share_a = 0.5 if ties[-1] else rng.beta(1, 1)
        y = np.empty(n_agree + n_dis, dtype=int)
        y[:n_agree] = np.where(rng.uniform(size=n_agree) < p_both, 0, 1)
        y[n_agree:] = np.where(rng.uniform(size=n_dis) < share_a, 0, 1)
        truth = (pred == y[:, None]).mean(axis=0)
        labels = np.full(len(y), -1)
        rows = rng.choice(len(y), n_labels, replace=False)
        labels[rows] = y[rows]
        comp = BayesianModelComparison(
            "uniform", tie_prior=tie_prior, n_draws=2000, random_state=run
        ).fit(X, labels)
        comp.prior_[comp.patterns_.max(axis=1) == 1, 2] = 1e-12  # "none" impossible there
        tie_post.append(comp.tie_probabilities()[comp.patterns_.max(axis=1) == 1][0])
        draws = comp.groupwise_samples()
        d, t = draws[:, 0] - draws[:, 1], truth[0] - truth[1]
        pits.append(np.mean(d < t - 1e-12) + rng.uniform() * np.mean(np.abs(d - t) <= 1e-12))
    return np.array(pits), np.array(ties), np.array(tie_post)


@pytest.mark.slow
def test_posterior_is_calibrated_when_the_truth_comes_from_the_prior():
    """The mixture posterior of Δ accuracy is exact: with truths from the prior, the
    posterior CDF at the truth (randomized for ties) is uniform.

    1000 seeded runs, 100 random labels. Central 50 % / 95 % intervals must hold the
    truth 0.455..0.545 / 0.93..0.97 of the time (about 3 standard errors). And the
    posterior tie probability is calibrated: in each fifth of its range, the share of
    runs whose truth is a tie is within 3 standard errors of the mean probability.
    """
    pit, ties, tie_post = _prior_predictive_pit(0.5, 1000, 100)
    inside50 = np.mean(np.abs(pit - 0.5) <= 0.25)
    inside95 = np.mean(np.abs(pit - 0.5) <= 0.475)
    assert 0.455 <= inside50 <= 0.545 and 0.93 <= inside95 <= 0.97, (inside50, inside95)
    bins = np.minimum((tie_post * 5).astype(int), 4)
    for b in np.unique(bins):
        p, hit = tie_post[bins == b], ties[bins == b]
        se = np.sqrt(max(p.mean() * (1 - p.mean()), 0.01) / len(p))
        assert abs(hit.mean() - p.mean()) <= 3 * se + 1e-9, (b, hit.mean(), p.mean(), len(p))


def test_partial_fit_equals_fit():
    S, y = _pool(600)
    labels = np.where(np.arange(600) % 4 == 0, y, -1)
    whole = BayesianModelComparison(random_state=1).fit(S, labels)
    parts = BayesianModelComparison(random_state=1)
    for a in range(0, 600, 150):
        parts.partial_fit(S[a : a + 150], labels[a : a + 150])
    order = np.lexsort(whole.patterns_.T[::-1])
    order2 = np.lexsort(parts.patterns_.T[::-1])
    np.testing.assert_array_equal(whole.patterns_[order], parts.patterns_[order2])
    np.testing.assert_allclose(whole.counts_[order], parts.counts_[order2])
    np.testing.assert_allclose(whole.prior_[order], parts.prior_[order2])
    np.testing.assert_allclose(whole.mean_accuracy(), parts.mean_accuracy())


def _delta_coverage(X, y, delta, *, runs, n_labels, seed, **params):
    """Share of seeded runs (random labels each) whose 95 % interval of the first pair's
    difference holds ``delta``; without the tie component."""
    rng = np.random.default_rng(seed)
    hits = 0
    for run in range(runs):
        labels = np.full(len(y), -1)
        rows = rng.choice(len(y), n_labels, replace=False)
        labels[rows] = y[rows]
        comp = BayesianModelComparison(tie_prior=0, n_draws=1000, random_state=run, **params).fit(
            X, labels
        )
        lo, hi = comp.pairwise().loc[0, ["lower", "upper"]]
        hits += lo <= delta <= hi
    return hits / runs


@pytest.mark.slow
def test_difference_intervals_cover():
    """95 % intervals of a pool's accuracy difference, random labels, 400 seeded runs.

    Without the tie component (whose mass at Δ = 0 widens intervals of a
    fixed, non-tied pair on purpose).

    The pool is fixed (truth = every label); each run labels 150 random items.
    Tolerance: 0.915..0.985 (about 3 standard errors of 400 runs).
    """
    S, y = _pool(2000, accs=(0.8, 0.78), K=2, seed=3)
    truth = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
    delta = truth[0] - truth[1]
    share = _delta_coverage(S, y, delta, runs=400, n_labels=150, seed=0)
    assert 0.915 <= share <= 0.985, share


def test_comparison_functions_and_pairwise():
    S, y = _pool()
    labels = np.where(np.arange(len(y)) < 500, y, -1)
    comp = BayesianModelComparison(model_names=["a", "b", "c"], random_state=0).fit(S, labels)
    table = comp.pairwise()
    assert list(zip(table["model_a"], table["model_b"], strict=True)) == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
    ]
    assert np.allclose(table[["p_left", "p_rope", "p_right"]].sum(axis=1), 1)
    assert compare_groups(comp, "a", "c").decision == "right"
    assert rank_groups(comp).index[0] in ("a", "b", "c")
    p = comp.best_probabilities()
    assert p.index.tolist() == ["a", "b", "c"] and np.isclose(p.sum(), 1)


def test_grid_search_over_the_prior_strength():
    S, y = _pool(900)
    labels = np.where(np.arange(900) % 3 == 0, y, -1)
    search = GridSearchCV(
        BayesianModelComparison(random_state=0), {"prior_strength": [0.5, 5.0, 50.0]}, cv=3
    ).fit(S, labels)
    assert search.best_params_["prior_strength"] in (0.5, 5.0, 50.0)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_list_input_and_binary_columns():
    S, y = _pool(300, K=2)
    a = BayesianModelComparison(random_state=0).fit([S[:, 0], S[:, 1], S[:, 2]], y)
    b = BayesianModelComparison(random_state=0).fit(S[:, :, 1], y)
    np.testing.assert_allclose(a.mean_accuracy(), b.mean_accuracy())
    assert check_model_scores(S[:, :, 1]).shape == (300, 3, 2)


@pytest.mark.parametrize(
    "X, message",
    [
        (np.full((5, 1, 2), 0.5), "at least two models; got 1"),
        (np.zeros((5,)), "X must be \\(n_samples, n_models, n_classes\\)"),
        ([np.full((5, 2), 0.5), np.full((4, 2), 0.5)], "differ in shape"),
        ([[0.1, 0.2], [0.3]], "differ in shape"),
        ([[0.2, [0.1]], [0.3, 0.4]], "X\\[0\\]: setting an array element with a sequence"),
        (np.full((0, 2, 2), 0.5), "X: Found array with 0 sample"),
        (np.full((4, 2, 2), -0.5), "Negative values in data passed to X"),
        (np.full((4, 0), 0.5), "0 feature"),
        (np.full((3, 2, 2), 0.7), "sum"),
    ],
)
def test_bad_scores(X, message):
    with pytest.raises(ValueError, match=message):
        BayesianModelComparison().fit(X)


def test_other_errors():
    S, y = _pool(100)
    with pytest.raises(ValueError, match="model_names has 2 names for 3 models"):
        BayesianModelComparison(model_names=["a", "b"]).fit(S)
    comp = BayesianModelComparison().fit(S, np.full(100, -1))
    with pytest.raises(ValueError, match="score needs at least one labeled row"):
        comp.score(S, np.full(100, -1))
    with pytest.raises(ValueError, match="X has 2 models, but the estimator was fitted with 3"):
        comp.partial_fit(S[:, :2])
    with pytest.raises(ValueError, match="prior_strength"):
        BayesianModelComparison(prior_strength=0).fit(S)
    assert isinstance(comp.summary(), pd.DataFrame)
    with pytest.raises(ValueError, match="predictions must be 2-D"):
        agreement_patterns(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="The 'n_models' parameter of check_model_scores"):
        check_model_scores(S, n_models=1)


def test_prior_split():
    # an overconfident model 0 and a hesitant model 1 that disagree on every item
    X = np.tile([[0.99, 0.4], [0.02, 0.55]], (50, 1))
    even = BayesianModelComparison(prior_strength=10).fit(X)
    scores = BayesianModelComparison(prior_strength=10, prior_split="scores").fit(X)
    disagree = even.patterns_.max(axis=1) == 1
    # "scores": block 0 (the confident model) gets the larger prior share; "even": equal
    a = scores.prior_[disagree][0]
    b = even.prior_[disagree][0]
    assert a[0] > a[1]
    np.testing.assert_allclose(b[0], b[1])
    np.testing.assert_allclose(b.sum(), 10.0)
    np.testing.assert_allclose(b[2], a[2])  # the "none" share is the scores' in both


def _binary_trio(n=3000, accs=(0.9, 0.8, 0.85), seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pred = np.stack([np.where(rng.uniform(size=n) < a, y, 1 - y) for a in accs], axis=1)
    return np.where(pred == 1, 0.8, 0.2), y, pred


@pytest.mark.parametrize("metric", ["tpr", "fnr", "tnr", "fpr", "ppv", "npv", "precision"])
def test_rates_with_every_item_labeled_are_exact(metric):
    X, y, pred = _binary_trio()
    comp = BayesianModelComparison(metric=metric, random_state=0).fit(X, y)
    truth = []
    for m in range(3):
        cond, out = rate_terms(metric, pred[:, m], y)
        truth.append((cond * out).sum() / cond.sum())
    summary = comp.summary()
    np.testing.assert_allclose(summary["mean"], truth)
    np.testing.assert_allclose(summary["lower"], truth)
    np.testing.assert_allclose(summary["upper"], truth)
    # the patterns record the class of block 0: all-agree items split by their class
    assert len(comp.patterns_) == 2 * len(np.unique(comp.patterns_, axis=0))


@pytest.mark.slow
def test_rate_difference_intervals_cover():
    """95 % intervals of the pool's TPR difference of two binary models, 300 seeded runs
    of 200 random labels each (without the tie component, as for accuracy above).
    Tolerance 0.91..0.99 (about 3 standard errors of 300 runs)."""
    X, y, pred = _binary_trio(2000, accs=(0.85, 0.8), seed=4)
    X, pred = X[:, :2], pred[:, :2]
    pos = y == 1
    delta = np.mean(pred[pos, 0] == 1) - np.mean(pred[pos, 1] == 1)
    share = _delta_coverage(X, y, delta, runs=300, n_labels=200, seed=1, metric="tpr")
    assert 0.91 <= share <= 0.99, share


def test_rates_need_binary_models_and_none_is_impossible_where_blocks_cover_the_classes():
    S, y = _pool(200)  # 3 classes
    with pytest.raises(ValueError, match="metric='tpr' needs binary models"):
        BayesianModelComparison(metric="tpr").fit(S, y)
    X, y, _ = _binary_trio(200)
    comp = BayesianModelComparison().fit(X)
    two_blocks = comp.patterns_.max(axis=1) == 1
    assert (comp.prior_[two_blocks, 3] == 0).all() and (comp.prior_[~two_blocks, 3] > 0).all()
    three = BayesianModelComparison().fit(S)  # 3 classes: two blocks leave one
    assert (three.prior_[three.patterns_.max(axis=1) == 1, 3] > 0).all()


def _near_tie_pair(n=3000, seed=0):
    """Two binary models that disagree on 15 % of items; there A is right 60 % of the time."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pa = np.where(rng.uniform(size=n) < 0.8, y, 1 - y)
    disagree = rng.uniform(size=n) < 0.15
    pa = np.where(disagree, np.where(rng.uniform(size=n) < 0.6, y, 1 - y), pa)
    pb = np.where(disagree, 1 - pa, pa)

    def scores(p):
        return np.column_stack([0.8 - 0.6 * p, 0.2 + 0.6 * p])

    return np.stack([scores(pa), scores(pb)], axis=1), y


def test_intervals_are_the_continuous_components_and_cover_a_near_tie():
    """40 seeded runs of 400 labels on a 2-point difference (measured: 38 of 40).

    The tie component is a point mass at 0: intervals drawn from the mixture held
    33 of 40 here. Tolerance: at least 34 of 40 (a 95 % interval falls below that
    with probability about 0.05), and more than the mixture's.
    """
    S, y = _near_tie_pair()
    right = S.argmax(axis=2) == y[:, None]
    truth = right[:, 0].mean() - right[:, 1].mean()
    hits = mixture = 0
    for run in range(40):
        rows = np.random.default_rng(run).choice(len(y), 400, replace=False)
        y_obs = np.full(len(y), -1)
        y_obs[rows] = y[rows]
        est = BayesianModelComparison(random_state=run).fit(S, y_obs)
        row = est.pairwise(0.95).iloc[0]
        hits += row["lower"] <= truth <= row["upper"]
        lo, hi = compare_groups(est, "model 0", "model 1", rope=0.01).interval(0.95)
        mixture += lo <= truth <= hi
    assert hits >= 34
    assert hits > mixture


def test_p_best_keeps_the_tie_component_and_the_summary_does_not():
    S, y = _near_tie_pair(seed=1)
    y_obs = np.where(np.arange(len(y)) < 200, y, -1)
    est = BayesianModelComparison(random_state=0).fit(S, y_obs)
    table = est.summary()
    np.testing.assert_allclose(table["p_best"], est.best_probabilities())
    sceptic = BayesianModelComparison(tie_prior=0.0, random_state=0).fit(S, y_obs)
    # the means and intervals equal the estimator's without the tie component
    np.testing.assert_allclose(
        table[["mean", "lower", "upper"]], sceptic.summary()[["mean", "lower", "upper"]]
    )
    pair = est.pairwise().iloc[0]
    np.testing.assert_allclose(
        pair[["mean", "lower", "upper"]].astype(float),
        sceptic.pairwise().iloc[0][["mean", "lower", "upper"]].astype(float),
    )


def test_label_is_a_deprecated_name_of_add_pattern_labels():
    X, _ = _pool(n=300)
    new = BayesianModelComparison(random_state=0).fit(X)
    old = BayesianModelComparison(random_state=0).fit(X)
    pattern, category = np.array([0, 0, 1]), np.array([0, 1, 0])
    new.add_pattern_labels(pattern, category)
    with pytest.warns(FutureWarning, match=r"BayesianModelComparison\.label is deprecated"):
        old.label(pattern, category)
    np.testing.assert_array_equal(old.counts_, new.counts_)
    with pytest.raises(ValueError, match="add_pattern_labels: more labels than unlabeled"):
        new.add_pattern_labels(np.zeros(10_000, dtype=int), np.zeros(10_000, dtype=int))

"""prior="hierarchical": the grid posterior, its coverage, and the estimator around it."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaln, logsumexp

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.exceptions import SkassessWarning
from skassess.metrics import (
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
    BetaPosterior,
)
from skassess.metrics._hierarchical import KAPPA_MAX, KAPPA_MIN, HierarchicalBeta
from skassess.samplers import simulate


def brute_force(successes, trials, n_mu=3000, n_kappa=600):
    """Moments and log evidence on a dense regular grid of (mu, log kappa)."""
    mu = (np.arange(n_mu) + 0.5) / n_mu
    edges = np.linspace(np.log(KAPPA_MIN), np.log(KAPPA_MAX), n_kappa + 1)
    log_kappa = (edges[:-1] + edges[1:]) / 2
    M, K = np.meshgrid(mu, np.exp(log_kappa), indexing="ij")
    A, B = M * K, (1 - M) * K
    log_prior = np.broadcast_to(-0.5 * log_kappa - logsumexp(-0.5 * log_kappa), A.shape)
    ll = sum(
        betaln(A + s, B + t - s) - betaln(A, B) for s, t in zip(successes, trials, strict=True)
    )
    log_w = ll + log_prior - np.log(n_mu)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    a, b = A[..., None] + successes, B[..., None] + trials - successes
    mean = (w[..., None] * a / (a + b)).sum((0, 1))
    second = (w[..., None] * a * (a + 1) / ((a + b) * (a + b + 1))).sum((0, 1))
    return mean, second - mean**2, float(logsumexp(log_w))


@pytest.mark.slow
@pytest.mark.parametrize("n", [0, 2, 30, 1000])
def test_adaptive_grid_matches_a_dense_grid(n):
    # The adaptive grid (a coarse pass, then 81 nodes of logit mu per kappa
    # where the mass is) against 1.8 million regular nodes: means within 1e-3,
    # standard deviations within 2 %, the log evidence within 0.02.
    rng = np.random.default_rng(n)
    trials = np.full(6, float(n))
    successes = rng.binomial(n, rng.beta(18, 3, 6)).astype(float)
    post = HierarchicalBeta(successes, trials)
    mean, var = post.moments()
    ref_mean, ref_var, ref_evidence = brute_force(successes, trials)
    assert mean == pytest.approx(ref_mean, abs=2e-4)
    assert np.sqrt(var) == pytest.approx(np.sqrt(ref_var), rel=2e-3)
    assert post.log_evidence == pytest.approx(ref_evidence, abs=0.01)
    assert post.weights.sum() == pytest.approx(1.0)


def draw_from_hyperprior(rng, n_groups):
    mu = rng.uniform()
    spread = rng.uniform(KAPPA_MAX**-0.5, KAPPA_MIN**-0.5)  # uniform on 1 / sqrt(kappa)
    kappa = spread**-2.0
    return rng.beta(mu * kappa, (1 - mu) * kappa, n_groups)


@pytest.mark.slow
def test_coverage_when_the_rates_are_drawn_from_the_prior():
    # 400 seeded data sets of 8 groups with 0-30 labels each, the rates drawn
    # from the hyperprior: the Bayesian intervals then cover at their level,
    # up to the grid (per group: the mixture's own quantiles) and the Monte
    # Carlo of the joint draws (the groups' mean). 3200 group intervals
    # (correlated within a data set) and 400 overall ones: binomial standard
    # errors about 0.5 and 1.1 points, so 93-97 % and 92-98 % are ~3 SE.
    rng = np.random.default_rng(0)
    group_hits, overall_hits = [], []
    for _ in range(400):
        theta = draw_from_hyperprior(rng, 8)
        trials = rng.integers(0, 31, 8).astype(float)
        successes = rng.binomial(trials.astype(int), theta).astype(float)
        post = HierarchicalBeta(successes, trials)
        lower, upper = post.interval(0.95)
        group_hits.extend((lower <= theta) & (theta <= upper))
        draws = post.rvs(2000, rng).mean(axis=1)
        lo, hi = np.quantile(draws, [0.025, 0.975])
        overall_hits.append(lo <= theta.mean() <= hi)
    assert 0.93 <= np.mean(group_hits) <= 0.97, np.mean(group_hits)
    assert 0.92 <= np.mean(overall_hits) <= 0.98, np.mean(overall_hits)


counts = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(pairs=counts, seed=st.integers(0, 2**16))
def test_permuting_groups_permutes_their_posteriors(pairs, seed):
    s = np.array([min(a, b) for a, b in pairs], dtype=float)
    t = np.array([max(a, b) for a, b in pairs], dtype=float)
    perm = np.random.default_rng(seed).permutation(len(s))
    mean, var = HierarchicalBeta(s, t).moments()
    mean_p, var_p = HierarchicalBeta(s[perm], t[perm]).moments()
    np.testing.assert_allclose(mean_p, mean[perm], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(var_p, var[perm], rtol=1e-9, atol=1e-12)
    assert np.all((mean > 0) & (mean < 1) & (var > 0))


@settings(max_examples=30, deadline=None)
@given(pairs=counts)
def test_one_more_success_raises_a_groups_mean(pairs):
    s = np.array([min(a, b) for a, b in pairs], dtype=float)
    t = np.array([max(a, b) for a, b in pairs], dtype=float) + 1.0
    mean, _ = HierarchicalBeta(s, t).moments()
    more = s.copy()
    more[0] += 1.0
    assert HierarchicalBeta(more, t).moments()[0][0] > mean[0]


def test_the_beta_state_has_the_mixtures_mean_and_variance():
    s, t = np.array([3.0, 9.0, 0.0, 20.0]), np.array([5.0, 10.0, 0.0, 20.0])
    post = HierarchicalBeta(s, t)
    mean, var = post.moments()
    beta = post.posterior()
    np.testing.assert_allclose(beta.mean(), mean, rtol=1e-12)
    # the variance too, unless the labels alone allow no Beta that wide (the
    # group with 20 of 20: its pseudo-failures would be negative): narrower then
    fits = (beta.prior_alpha > 1e-6) & (beta.prior_beta > 1e-6)
    assert fits.sum() >= 2
    np.testing.assert_allclose(beta.var()[fits], var[fits], rtol=1e-9)
    assert np.all(beta.var() <= var * (1 + 1e-9))
    np.testing.assert_array_equal(beta.successes, s)
    np.testing.assert_array_equal(beta.trials, t)
    # the interval is the mixture's own: its quantiles match those of draws
    draws = post.rvs(200_000, np.random.default_rng(0))
    lower, upper = post.interval(0.95)
    np.testing.assert_allclose(lower, np.quantile(draws, 0.025, axis=0), atol=3e-3)
    np.testing.assert_allclose(upper, np.quantile(draws, 0.975, axis=0), atol=3e-3)


def test_many_groups_alike_shrink_a_sparse_group_to_them():
    # 20 groups at 90 % with 50 labels each and one with a single label: that
    # one's posterior sits near 0.9, far narrower than its own Beta(1.5, 1.5).
    s = np.r_[np.full(20, 45.0), 0.0]
    t = np.r_[np.full(20, 50.0), 1.0]
    mean, var = HierarchicalBeta(s, t).moments()
    assert mean[-1] == pytest.approx(0.9, abs=0.03)
    assert np.sqrt(var[-1]) < 0.06


def make_pool(n_groups=30, n=6000, seed=0):
    """Binary scores with ``n_groups`` external groups whose accuracy varies around 0.9."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, n)
    acc = rng.beta(45, 5, n_groups)
    p = rng.uniform(0.0, 1.0, n)
    scores = np.column_stack([1 - p, p])
    pred = (p > 0.5).astype(int)
    right = rng.uniform(size=n) < acc[group]
    y = np.where(right, pred, 1 - pred)
    return scores, y, group


@pytest.mark.slow
def test_overall_interval_covers_where_the_uniform_prior_fails():
    # 30 groups, 60 random labels (two per group on average), 100 seeded runs.
    # The uniform prior pulls every group toward 1/2: its overall interval
    # misses the pool's accuracy almost always. The hierarchical one must
    # cover at least 88 % (a true 95 % gives >= 88 % with probability 0.998).
    scores, y, group = make_pool()
    truth = np.mean(y == (scores[:, 1] > 0.5))
    hits = {"hierarchical": [], "uniform": []}
    warned = []
    for run in range(100):
        rows = np.random.default_rng(run).choice(len(y), 60, replace=False)
        masked = np.full(len(y), -1)
        masked[rows] = y[rows]
        for prior, out in hits.items():
            est = BayesianAccuracy(grouping="external", prior=prior, random_state=run)
            est.fit(scores, masked, group_by=group)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lower, upper = est.overall_interval(n_draws=2000)
            out.append(lower <= truth <= upper)
            if prior == "uniform":
                warned.append(any(issubclass(w.category, SkassessWarning) for w in caught))
            else:
                assert not caught
    assert np.mean(hits["hierarchical"]) >= 0.88, np.mean(hits["hierarchical"])
    assert np.mean(hits["uniform"]) < 0.5, np.mean(hits["uniform"])
    # the uniform prior's interval says so: it warns in every run it misses
    missed = ~np.array(hits["uniform"])
    assert np.array(warned)[missed].all()


def test_uniform_overall_interval_warns_only_when_the_prior_moves_it():
    # Fashion-MNIST's ten classes: 50 labels leave the uniform prior's pull at
    # about 3 posterior sd (coverage 5-8 % measured); 5,000 labels at 0.4 sd.
    from skassess.datasets import load_fashion_mnist_scores

    data = load_fashion_mnist_scores()
    order = np.random.default_rng(0).permutation(len(data.target))
    cost = np.random.default_rng(0).uniform(0, 10, (10, 10))
    np.fill_diagonal(cost, 0.0)
    makers = {
        "accuracy": lambda prior: BayesianAccuracy(prior=prior, random_state=0),
        "accuracy ": lambda prior: BayesianConfusionMatrix(prior=prior, random_state=0),
        "expected cost": lambda prior: BayesianMisclassificationCost(
            cost_matrix=cost, prior=prior, random_state=0
        ),
    }
    for n, should_warn in ((50, True), (5000, False)):
        y = np.full(len(data.target), -1)
        y[order[:n]] = data.target[order[:n]]
        for name, make in makers.items():
            est = make("uniform").fit(data.scores, y)
            pull, sd = est._overall_prior_pull()
            assert (abs(pull) > 0.5 * sd) == should_warn, (name, n, pull, sd)
            if should_warn:
                with pytest.warns(SkassessWarning, match=f"overall {name.strip()} by"):
                    est.overall_interval()
            else:
                est.overall_interval()  # SkassessWarning is an error in the tests
            for prior in ("informative", "hierarchical"):
                make(prior).fit(data.scores, y).overall_interval()
    # no label: the posterior is the prior, nothing to compare with
    for make in makers.values():
        make("uniform").fit(data.scores).overall_interval()


def test_overall_draws_move_the_groups_together():
    scores, y, group = make_pool(n_groups=10, n=2000)
    masked = np.where(np.arange(len(y)) < 30, y, -1)
    est = BayesianAccuracy(grouping="external", prior="hierarchical", random_state=0)
    draws = est.fit(scores, masked, group_by=group).groupwise_samples(4000)
    corr = np.corrcoef(draws.T)[np.triu_indices(10, 1)]
    assert corr.mean() > 0.1
    # and the mean of the draws is the Beta state's (exact) mean
    np.testing.assert_allclose(draws.mean(axis=0), est.posterior_.mean(), atol=0.01)
    assert est.overall_mean() == pytest.approx(est.group_weights_ @ est.posterior_.mean())


def test_partial_fit_and_the_marginal_likelihood():
    scores, y, group = make_pool(n_groups=5, n=600)
    masked = np.where(np.arange(len(y)) % 7 == 0, y, -1)
    whole = BayesianAccuracy(grouping="external", prior="hierarchical").fit(
        scores, masked, group_by=group
    )
    parts = BayesianAccuracy(grouping="external", prior="hierarchical")
    for rows in np.array_split(np.arange(len(y)), 3):
        parts.partial_fit(scores[rows], masked[rows], group_by=group[rows])
    np.testing.assert_allclose(parts.posterior_.mean(), whole.posterior_.mean())
    s, t = whole.n_success_, whole.n_labeled_
    assert whole.log_marginal_likelihood() == pytest.approx(brute_force(s, t)[2], abs=0.02)


def test_active_assessor_refits_the_hierarchy_after_each_label():
    scores, y, group = make_pool(n_groups=4, n=400)
    assessor = ActiveAssessor(
        BayesianAccuracy(grouping="external", prior="hierarchical"), random_state=0
    ).fit(scores, group_by=group)
    rows = assessor.query(5)
    assessor.tell(rows, y[rows])
    masked = np.full(len(y), -1)
    masked[rows] = y[rows]
    fresh = BayesianAccuracy(grouping="external", prior="hierarchical").fit(
        scores, masked, group_by=group
    )
    np.testing.assert_allclose(assessor.estimator_.posterior_.mean(), fresh.posterior_.mean())


def test_simulate_refuses_the_hierarchical_prior():
    scores, y, group = make_pool(n_groups=4, n=400)
    with pytest.raises(ValueError, match="prior='hierarchical' is not supported"):
        simulate(scores, y, estimator=BayesianAccuracy(prior="hierarchical"), budget=5, n_runs=2)


def test_from_moments_keeps_a_zero_variance_finite():
    post = BetaPosterior.from_moments([0.8], [0.0], [4.0], [1.0])
    assert np.isfinite(post.alpha).all() and post.alpha + post.beta == pytest.approx(1e12)


def test_confusion_matrix_and_cost_share_the_accuracy_hierarchy():
    from skassess import BayesianConfusionMatrix
    from skassess.metrics import BayesianMisclassificationCost

    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.full(4, 0.5), 800)
    y = np.array([rng.choice(4, p=p) for p in scores])
    masked = np.where(rng.uniform(size=800) < 0.05, y, -1)
    acc = BayesianAccuracy(prior="hierarchical").fit(scores, masked)
    cm = BayesianConfusionMatrix(prior="hierarchical", random_state=0).fit(scores, masked)
    np.testing.assert_allclose(np.diagonal(cm.posterior_.mean()), acc.posterior_.mean())
    table = cm.summary()
    diag = [(k, k) for k in range(4)]
    np.testing.assert_allclose(table.loc[diag, "lower"], acc.summary()["lower"])
    draws = cm.confusion_matrix_samples(500)
    np.testing.assert_allclose(draws.sum(axis=(1, 2)), 1.0)
    # the 0-1 cost is the error rate, drawn from the same hierarchy
    cost = BayesianMisclassificationCost(prior="hierarchical", random_state=0).fit(scores, masked)
    assert cost.overall_mean() == pytest.approx(1.0 - acc.overall_mean())
    np.testing.assert_allclose(
        cost.groupwise_samples(20000).mean(axis=0), 1.0 - acc.posterior_.mean(), atol=0.01
    )


@pytest.mark.slow
def test_cost_interval_covers_on_the_bundled_scores():
    # Fashion-MNIST scores, a cost matrix uniform on [0, 10] off the diagonal,
    # 50 random labels, 100 seeded runs: the uniform prior's interval of the
    # expected cost per row misses the pool's (its 10 class accuracies pulled
    # toward 1/2); the hierarchical one covers >= 88 % (true 95 %: >= 88 % with
    # probability 0.998).
    from skassess.datasets import load_fashion_mnist_scores
    from skassess.metrics import BayesianMisclassificationCost

    data = load_fashion_mnist_scores()
    X, y = data.scores, data.target
    rng = np.random.default_rng(0)
    C = rng.uniform(0, 10, (10, 10))
    np.fill_diagonal(C, 0.0)
    truth = C[y, X.argmax(axis=1)].mean()
    hits = {"hierarchical": [], "uniform": []}
    for run in range(100):
        rows = np.random.default_rng([1, run]).choice(len(y), 50, replace=False)
        masked = np.full(len(y), -1)
        masked[rows] = y[rows]
        for prior, out in hits.items():
            est = BayesianMisclassificationCost(cost_matrix=C, prior=prior, random_state=run)
            est.fit(X, masked)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lower, upper = est.overall_interval(n_draws=2000)
            out.append(lower <= truth <= upper)
            # the uniform prior's interval warns whenever it misses; the other never
            assert bool(caught) or prior == "hierarchical" or out[-1]
            assert not caught or prior == "uniform"
    assert np.mean(hits["hierarchical"]) >= 0.88, np.mean(hits["hierarchical"])
    assert np.mean(hits["uniform"]) < 0.5, np.mean(hits["uniform"])

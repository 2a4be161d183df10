import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from skassess.metrics import BetaPosterior, DirichletPosterior

pos = st.floats(0.05, 20.0, allow_nan=False)
counts = st.integers(0, 50)


# ----------------------------------------------------------------- known answers
def test_beta_closed_form_against_scipy():
    post = BetaPosterior([2.0, 0.5], [3.0, 0.5]).update([7, 0], [10, 4])
    a, b = np.array([9.0, 0.5]), np.array([6.0, 4.5])
    np.testing.assert_allclose(post.mean(), stats.beta.mean(a, b))
    np.testing.assert_allclose(post.var(), stats.beta.var(a, b))
    lower, upper = post.interval(0.9)
    np.testing.assert_allclose(lower, stats.beta.ppf(0.05, a, b))
    np.testing.assert_allclose(upper, stats.beta.ppf(0.95, a, b))
    np.testing.assert_allclose(
        post.log_predictive([1, 0], [0, 1]), np.log([a[0] / (a[0] + b[0]), b[1] / (a[1] + b[1])])
    )
    # Sequence probability under the beta-binomial: B(a, b) / B(a0, b0).
    from scipy.special import betaln

    np.testing.assert_allclose(
        post.log_marginal_likelihood(),
        betaln(a, b) - betaln([2.0, 0.5], [3.0, 0.5]),
    )


def test_dirichlet_closed_form_against_scipy():
    post = DirichletPosterior([[1.0, 2.0, 3.0]]).update([[4, 0, 1]])
    alpha = np.array([5.0, 2.0, 4.0])
    np.testing.assert_allclose(post.mean()[0], stats.dirichlet.mean(alpha))
    np.testing.assert_allclose(post.var()[0], stats.dirichlet.var(alpha))
    lower, upper = post.interval(0.95)
    np.testing.assert_allclose(lower[0], stats.beta.ppf(0.025, alpha, alpha.sum() - alpha))
    np.testing.assert_allclose(upper[0], stats.beta.ppf(0.975, alpha, alpha.sum() - alpha))
    np.testing.assert_allclose(post.log_predictive([2], [0]), np.log(4.0 / 11.0))


def test_rvs_shapes_moments_and_seeding():
    beta = BetaPosterior([3.0, 1.0], [1.0, 3.0])
    draws = beta.rvs(20000, random_state=0)
    assert draws.shape == (20000, 2)
    np.testing.assert_allclose(draws.mean(axis=0), beta.mean(), atol=0.01)
    np.testing.assert_array_equal(draws, beta.rvs(20000, random_state=0))
    dirichlet = DirichletPosterior([[1.0, 2.0, 3.0], [0.2, 0.2, 0.2]])
    d = dirichlet.rvs(20000, random_state=1)
    assert d.shape == (20000, 2, 3)
    np.testing.assert_allclose(d.sum(axis=2), 1.0)
    np.testing.assert_allclose(d.mean(axis=0), dirichlet.mean(), atol=0.01)
    np.testing.assert_allclose(d.var(axis=0), dirichlet.var(), rtol=0.1)


def test_dirichlet_rvs_tiny_pseudo_counts_stay_on_simplex():
    # The near-zero "frequentist" prior of the AAAI-21 code: 0.5e-6 pseudo-counts.
    d = DirichletPosterior(np.full((3, 4), 0.5e-6)).rvs(100, random_state=0)
    assert np.isfinite(d).all()
    np.testing.assert_allclose(d.sum(axis=2), 1.0)


# ------------------------------------------------------------------- properties
@st.composite
def beta_batches(draw):
    g = draw(st.integers(1, 4))
    a0 = draw(st.lists(pos, min_size=g, max_size=g))
    b0 = draw(st.lists(pos, min_size=g, max_size=g))
    n_batches = draw(st.integers(1, 4))
    batches = []
    for _ in range(n_batches):
        trials = np.array(draw(st.lists(counts, min_size=g, max_size=g)), dtype=float)
        succ = np.array([draw(st.integers(0, int(t))) for t in trials], dtype=float)
        batches.append((succ, trials))
    return np.array(a0), np.array(b0), batches


@given(beta_batches(), st.randoms())
@settings(max_examples=60, deadline=None)
def test_beta_update_order_and_chunking_invariant(data, rnd):
    a0, b0, batches = data
    prior = BetaPosterior(a0, b0)
    sequential = prior
    for s, t in batches:
        sequential = sequential.update(s, t)
    shuffled = list(batches)
    rnd.shuffle(shuffled)
    total_s = sum(s for s, _ in batches)
    total_t = sum(t for _, t in batches)
    at_once = prior.update(total_s, total_t)
    other_order = prior
    for s, t in shuffled:
        other_order = other_order.update(s, t)
    for post in (sequential, other_order):
        np.testing.assert_allclose(post.alpha, at_once.alpha)
        np.testing.assert_allclose(post.beta, at_once.beta)


@given(beta_batches())
@settings(max_examples=60, deadline=None)
def test_beta_merge_associative_commutative_equals_union(data):
    a0, b0, batches = data
    prior = BetaPosterior(a0, b0)
    parts = [prior.update(s, t) for s, t in batches] + [prior]
    while len(parts) < 3:
        parts.append(prior)
    p, q, r = parts[:3]
    left = p.merge(q).merge(r)
    right = p.merge(q.merge(r))
    swapped = r.merge(p).merge(q)
    union = prior.update(
        p.successes + q.successes + r.successes,
        p.successes + p.failures + q.successes + q.failures + r.successes + r.failures,
    )
    for post in (right, swapped, union):
        np.testing.assert_allclose(post.alpha, left.alpha)
        np.testing.assert_allclose(post.beta, left.beta)


@given(beta_batches())
@settings(max_examples=60, deadline=None)
def test_beta_zero_labels_is_prior_and_mean_between_prior_and_data(data):
    a0, b0, batches = data
    prior = BetaPosterior(a0, b0)
    empty = prior.update(np.zeros_like(a0), np.zeros_like(a0))
    np.testing.assert_array_equal(empty.alpha, a0)
    np.testing.assert_array_equal(empty.beta, b0)
    s, t = batches[0]
    post = prior.update(s, t)
    prior_mean = prior.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(t > 0, s / np.maximum(t, 1), prior_mean)
    low, high = np.minimum(prior_mean, rate), np.maximum(prior_mean, rate)
    assert np.all(post.mean() >= low - 1e-12)
    assert np.all(post.mean() <= high + 1e-12)


@given(
    st.integers(1, 3).flatmap(
        lambda g: st.integers(2, 5).flatmap(
            lambda k: st.tuples(
                st.lists(st.lists(pos, min_size=k, max_size=k), min_size=g, max_size=g),
                st.lists(st.lists(counts, min_size=k, max_size=k), min_size=g, max_size=g),
                st.lists(st.lists(counts, min_size=k, max_size=k), min_size=g, max_size=g),
            )
        )
    )
)
@settings(max_examples=60, deadline=None)
def test_dirichlet_properties(data):
    alpha, c1, c2 = (np.array(x, dtype=float) for x in data)
    prior = DirichletPosterior(alpha)
    post = prior.update(c1).update(c2)
    np.testing.assert_allclose(post.alpha, prior.update(c1 + c2).alpha)
    p1, p2 = prior.update(c1), prior.update(c2)
    np.testing.assert_allclose(p1.merge(p2).alpha, p2.merge(p1).alpha)
    np.testing.assert_allclose(p1.merge(p2).alpha, post.alpha)
    np.testing.assert_allclose(post.mean().sum(axis=1), 1.0)
    np.testing.assert_array_equal(prior.update(np.zeros_like(c1)).alpha, alpha)


# --------------------------------------------------------------------- coverage
def test_beta_interval_coverage():
    """theta ~ prior, data ~ Binomial(n, theta): 95 % intervals cover theta 93-97 % of the time.

    4000 trials: the binomial standard error of the coverage is 0.34 points, so
    the 93-97 % band is about +-6 standard errors around 95 %.
    """
    rng = np.random.default_rng(12345)
    n_trials = 4000
    a0 = rng.uniform(0.5, 5.0, n_trials)
    b0 = rng.uniform(0.5, 5.0, n_trials)
    theta = rng.beta(a0, b0)
    n = rng.integers(0, 60, n_trials)
    successes = rng.binomial(n, theta)
    lower, upper = BetaPosterior(a0, b0).update(successes, n).interval(0.95)
    coverage = np.mean((lower <= theta) & (theta <= upper))
    assert 0.93 <= coverage <= 0.97, coverage


def test_dirichlet_interval_coverage():
    rng = np.random.default_rng(54321)
    n_trials, k = 2000, 4
    alpha = rng.uniform(0.3, 3.0, (n_trials, k))
    theta = np.array([rng.dirichlet(a) for a in alpha])
    counts = np.array([rng.multinomial(rng.integers(0, 40), t) for t in theta])
    lower, upper = DirichletPosterior(alpha).update(counts).interval(0.95)
    coverage = np.mean((lower <= theta) & (theta <= upper))
    assert 0.93 <= coverage <= 0.97, coverage


# -------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: BetaPosterior([0.0], [1.0]), "prior_alpha must be finite and > 0"),
        (lambda: BetaPosterior([1.0], [np.nan]), "prior_beta must be finite and > 0"),
        (lambda: BetaPosterior([1.0], [1.0]).update([3], [2]), "successes must not exceed"),
        (lambda: BetaPosterior([1.0], [1.0]).update([-1], [2]), "successes must be finite"),
        (
            lambda: BetaPosterior([1.0, 1.0], [1.0, 1.0]).update([1, 1, 1], [2, 2, 2]),
            "successes must have shape",
        ),
        (
            lambda: BetaPosterior([1.0], [1.0]).interval(1.5),
            "The 'level' parameter of BetaPosterior.interval must be a float in the range",
        ),
        (
            lambda: BetaPosterior([1.0], [1.0]).merge(BetaPosterior([2.0], [1.0])),
            "different priors",
        ),
        (
            lambda: DirichletPosterior([1.0, 1.0]),
            r"prior_alpha must have shape \(\.\.\., n_groups, n_categories\)",
        ),
        (lambda: DirichletPosterior([[1.0, 1.0]]).update([[1, -1]]), "counts must be finite"),
        (
            lambda: DirichletPosterior([[1.0, 1.0]]).merge(DirichletPosterior([[1.0, 2.0]])),
            "different priors",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_merge_type_error():
    with pytest.raises(TypeError, match="can only merge a BetaPosterior"):
        BetaPosterior([1.0], [1.0]).merge(DirichletPosterior([[1.0, 1.0]]))


# ------------------------------------------------------- exact, memory-light draws
def test_dirichlet_draws_with_zero_pseudo_counts_are_the_dirichlet_of_the_rest():
    """A zero pseudo-count is a category with no mass: the other categories keep
    their Dirichlet law (moments within 3 standard errors of 40,000 draws)."""
    from skassess.metrics._conjugate import dirichlet_draws

    alpha = np.array(
        [[0.0, 2.0, 0.0, 3.0, 0.0], [4.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.7]]
    )
    d = dirichlet_draws(np.broadcast_to(alpha, (40000,) + alpha.shape), np.random.RandomState(0))
    assert np.all(d[:, alpha == 0] == 0)
    np.testing.assert_allclose(d.sum(axis=2), 1.0)
    rest = d[:, 0, [1, 3]]
    mean, var = stats.dirichlet.mean([2.0, 3.0]), stats.dirichlet.var([2.0, 3.0])
    se = np.sqrt(var / len(rest))
    assert np.all(np.abs(rest.mean(axis=0) - mean) < 3 * se)
    np.testing.assert_array_equal(d[:, 1, 0], 1.0)
    np.testing.assert_array_equal(d[:, 2, 4], 1.0)


def test_confusion_accuracy_draws_are_the_beta_marginals_of_the_cells():
    """The per-class accuracy draws (Beta marginals, O(K) per draw) have the law of
    the diagonal of full Dirichlet draws: two-sample KS p-values above 0.001. (The
    conjugate priors; the calibrated prior's draws are the pool's.)"""
    from skassess.metrics import BayesianConfusionMatrix, BayesianMisclassificationCost

    rng = np.random.default_rng(3)
    K = 4
    X = rng.dirichlet(np.ones(K), 300)
    y = np.where(rng.random(300) < 0.2, rng.integers(0, K, 300), -1)
    est = BayesianConfusionMatrix(prior="uniform", random_state=0).fit(X, y)
    fast = est.groupwise_samples(20000, random_state=1)
    full = np.diagonal(est.posterior_.rvs(20000, random_state=2), axis1=1, axis2=2)
    for k in range(K):
        assert stats.ks_2samp(fast[:, k], full[:, k]).pvalue > 1e-3
    # The cost, aggregated by the distinct values of each cost column, has the law
    # of the cost of full draws.
    cost = rng.choice([0.0, 1.0, 5.0], size=(K, K))
    est = BayesianMisclassificationCost(cost_matrix=cost, prior="uniform", random_state=0).fit(X, y)
    fast = est.groupwise_samples(20000, random_state=1)
    full = np.einsum("skj,jk->sk", est.posterior_.rvs(20000, random_state=2), cost)
    for k in range(K):
        assert stats.ks_2samp(fast[:, k], full[:, k]).pvalue > 1e-3
    assert est._cost_levels()[0].shape[1] <= 3


def test_overall_draws_in_chunks_equal_one_draw(monkeypatch):
    """overall_samples draws a chunk at a time; the chunking changes nothing (the
    conjugate draws; the calibrated model's stream depends on the chunk's size)."""
    from skassess.metrics import BayesianConfusionMatrix, _base

    rng = np.random.default_rng(4)
    X = rng.dirichlet(np.ones(5), 200)
    y = np.where(rng.random(200) < 0.3, rng.integers(0, 5, 200), -1)
    est = BayesianConfusionMatrix(prior="uniform", random_state=0).fit(X, y)
    whole = est.overall_samples(1000)
    monkeypatch.setattr(_base, "DRAW_CHUNK", 7)  # one draw of 5 classes per chunk
    np.testing.assert_allclose(est.overall_samples(1000), whole, rtol=1e-12)


def test_dirichlet_draws_at_the_gamma_threshold_stay_on_the_simplex():
    """Rows of 100 categories summing to 0.1 take the normalized-Gamma path; rows summing
    to less, stick-breaking. Both stay finite, on the simplex, with the right mean."""
    for total in (0.1, 0.099):
        alpha = np.full((3, 100), total / 100)
        alpha[:, 0] *= 50
        draws = DirichletPosterior(alpha).rvs(20000, random_state=0)
        assert np.all(np.isfinite(draws)) and np.all(draws >= 0)
        np.testing.assert_allclose(draws.sum(axis=-1), 1.0, rtol=1e-12)
        share = alpha[0, 0] / alpha[0].sum()
        assert abs(draws[:, :, 0].mean() - share) < 0.02


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.5, 500),
    st.floats(0.5, 500),
    st.integers(0, 60),
    st.integers(0, 60),
    st.floats(0.0, 1.0),
)
def test_robust_mixture_lies_between_its_parts(a0, b0, successes, failures, weight):
    from skassess.metrics._conjugate import robust_mixture_posterior

    post, w = robust_mixture_posterior(a0, b0, successes, failures, prior_weight=weight)
    informative = BetaPosterior(a0, b0, successes, failures).mean()[0]
    flat = (1 + successes) / (2 + successes + failures)
    assert 0.0 <= w[0] <= 1.0
    lo, hi = min(informative, flat), max(informative, flat)
    assert lo - 1e-9 <= post.mean()[0] <= hi + 1e-9
    assert post.successes[0] == successes and post.failures[0] == failures
    if weight in (0.0, 1.0):  # one part only: its conjugate posterior exactly
        assert w[0] == weight
        a, b = (a0, b0) if weight == 1.0 else (1.0, 1.0)
        assert post.prior_alpha[0] == pytest.approx(a, rel=1e-6)
        assert post.prior_beta[0] == pytest.approx(b, rel=1e-6)


def test_robust_mixture_rejects_a_weight_outside_0_1():
    from skassess.metrics._conjugate import robust_mixture_posterior

    with pytest.raises(ValueError, match="prior_weight. parameter of robust_mixture_posterior"):
        robust_mixture_posterior(2.0, 2.0, 1, 1, prior_weight=1.2)


@pytest.mark.parametrize("n", [10, 50])
def test_robust_mixture_interval_covers_under_its_prior(n):
    # Rates drawn from the mixture prior itself (0.9 Beta(80, 20) + 0.1 Beta(1, 1)): the
    # 95 % interval of the moment-matched posterior must cover about 95 % of them.
    # 4000 draws: binomial SE 0.0034; tolerance 0.015 (4.4 SE) leaves room for the
    # moment matching of a two-part posterior.
    from skassess.metrics._conjugate import robust_mixture_posterior

    rng = np.random.default_rng(7)
    size = 4000
    informative = rng.random(size) < 0.9
    theta = np.where(informative, rng.beta(80, 20, size), rng.random(size))
    k = rng.binomial(n, theta).astype(float)
    post, _ = robust_mixture_posterior(np.full(size, 80.0), 20.0, k, n - k, prior_weight=0.9)
    lower, upper = post.interval(0.95)
    coverage = np.mean((lower <= theta) & (theta <= upper))
    assert abs(coverage - 0.95) < 0.015

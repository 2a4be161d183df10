"""NestedDirichletPosterior: the plain Dirichlet as a special case, conjugacy by importance
sampling, moments and intervals against draws, coverage when the truth is drawn from the prior."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from skassess.metrics import BayesianConfusionMatrix, DirichletPosterior
from skassess.metrics._nested_dirichlet import NestedDirichletPosterior

pos = st.floats(0.2, 20.0)


@settings(max_examples=30, deadline=None)
@given(st.lists(pos, min_size=9, max_size=9), st.lists(st.integers(0, 6), min_size=9, max_size=9))
def test_from_dirichlet_is_the_same_distribution(alpha, counts):
    alpha, counts = np.reshape(alpha, (3, 3)), np.reshape(counts, (3, 3))
    plain = DirichletPosterior(alpha).update(counts)
    nested = NestedDirichletPosterior.from_dirichlet(alpha).update(counts)
    np.testing.assert_allclose(nested.mean(), plain.mean(), rtol=1e-10)
    np.testing.assert_allclose(nested.var(), plain.var(), rtol=1e-9)
    for a, b in zip(nested.interval(0.9), plain.interval(0.9), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9)
    np.testing.assert_allclose(nested.diagonal().mean(), np.diagonal(plain.mean()), rtol=1e-10)


@pytest.mark.parametrize("K", [2, 4])
def test_moments_and_interval_match_draws(K):
    rng = np.random.default_rng(0)
    alpha = rng.uniform(0.05, 3.0, size=(K, K))
    failures = rng.uniform(0.01, 2.0, size=K)
    post = NestedDirichletPosterior(alpha, failures).update(rng.integers(0, 4, size=(K, K)))
    draws = post.rvs(100_000, random_state=1)
    np.testing.assert_allclose(draws.sum(axis=-1), 1.0, rtol=1e-12)
    se = np.sqrt(post.var() / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - post.mean()) < 5 * se + 1e-12)
    np.testing.assert_allclose(draws.var(axis=0), post.var(), rtol=0.05)
    # Each tail of the interval holds 2.5 % of independent draws (3 SE: 0.0015).
    lower, upper = post.interval(0.95, n_draws=20_000, random_state=2)
    assert np.all(np.abs((draws < lower).mean(axis=0) - 0.025) < 0.004)
    assert np.all(np.abs((draws > upper).mean(axis=0) - 0.025) < 0.004)


def test_update_is_bayes_rule():
    """The posterior mean after counts equals the prior draws weighted by the likelihood."""
    prior = NestedDirichletPosterior(
        [[2.0, 0.5, 1.5], [0.3, 1.0, 0.3], [1.0, 2.0, 4.0]], [0.7, 3.0, 0.2]
    )
    counts = np.array([[3, 1, 0], [0, 2, 2], [1, 0, 1]])
    theta = prior.rvs(400_000, random_state=3)
    log_w = special.xlogy(counts, theta).sum(axis=(1, 2))
    w = np.exp(log_w - log_w.max())
    weighted = np.einsum("s,skj->kj", w, theta) / w.sum()
    np.testing.assert_allclose(weighted, prior.update(counts).mean(), atol=0.006)


def test_record_and_merge_add_counts():
    prior = NestedDirichletPosterior(np.ones((2, 3, 3)), np.ones((2, 3)))
    post = prior.record((np.array([0, 0, 1]), np.array([2, 2, 0])), np.array([1, 2, 0]))
    expected = np.zeros((2, 3, 3))
    expected[0, 2, 1] = expected[0, 2, 2] = expected[1, 0, 0] = 1
    np.testing.assert_array_equal(post.counts, expected)
    np.testing.assert_array_equal(post.failures, [[1, 1, 2], [1, 1, 1]])
    merged = post.merge(prior.update(expected))
    np.testing.assert_array_equal(merged.counts, 2 * expected)


def test_total_var_is_the_sum_of_cell_variances():
    post = NestedDirichletPosterior(
        [[1.0, 0.1, 2.0], [0.4, 5.0, 0.4], [3.0, 3.0, 0.5]], [0.3, 0.9, 2.0]
    )
    np.testing.assert_allclose(post.total_var(), post.var().sum(axis=-1), rtol=1e-12)


def test_cell_intervals_cover_when_the_truth_is_drawn_from_the_prior():
    """Seeded: 600 matrices from the prior, 15 labels per predicted class, 95 % intervals.
    Exact Bayesian calibration gives 95 % per cell; tolerance +- 2.5 points (about
    3 binomial SE of 600 draws) over the 9 cells pooled."""
    rng = np.random.default_rng(4)
    prior = NestedDirichletPosterior(
        [[4.0, 0.5, 0.5], [1.0, 2.0, 1.0], [0.3, 0.3, 9.0]], [0.5, 2.0, 1.0]
    )
    covered = []
    for i, theta in enumerate(prior.rvs(600, random_state=5)):
        counts = np.stack([rng.multinomial(15, row) for row in theta])
        lower, upper = prior.update(counts).interval(0.95, n_draws=2000, random_state=i)
        covered.append((lower <= theta) & (theta <= upper))
    assert abs(np.mean(covered) - 0.95) < 0.025


def test_informative_error_prior_is_weak_and_half_uniform():
    """K - 1 pseudo-counts over the errors, half as the scores spread them, half evenly;
    the accuracy keeps BayesianAccuracy's Beta(N0 s, N0 (1 - s))."""
    scores = np.tile([0.9, 0.08, 0.02], (200, 1))
    prior = BayesianConfusionMatrix(prior="informative").fit(scores, None).prior_
    np.testing.assert_allclose(prior.alpha[0, 1:], 2 * (0.5 * np.array([0.8, 0.2]) + 0.25))
    np.testing.assert_allclose([prior.alpha[0, 0], prior.failures[0]], [1.8, 0.2])


def test_an_error_class_never_seen_keeps_a_wide_interval():
    """Four errors, all of class 1: the share of class 2 among the errors stays uncertain
    (a plain Dirichlet with the same accuracy prior gives the cell 0.04 pseudo-counts, and
    an upper bound 4.6 times smaller: 0.021 against 0.097)."""
    scores = np.tile([0.9, 0.08, 0.02], (200, 1))
    y = np.full(200, -1)
    y[:20] = [0] * 16 + [1] * 4
    table = BayesianConfusionMatrix(prior="informative").fit(scores, y).summary().loc[0]
    assert table.loc[2, "upper"] > 0.05
    plain = DirichletPosterior([[1.8, 0.16, 0.04]]).update([[16, 4, 0]])
    assert plain.interval(0.95)[1][0, 2] < table.loc[2, "upper"] / 3


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: NestedDirichletPosterior([1.0, 1.0], [1.0]), "prior_alpha must have shape"),
        (lambda: NestedDirichletPosterior([[1.0]], [1.0]), "prior_alpha must have shape"),
        (lambda: NestedDirichletPosterior(np.ones((2, 2)), [1.0]), "prior_failures must have"),
        (
            lambda: NestedDirichletPosterior(np.ones((2, 2)), [1.0, 0.0]),
            "prior_failures must be finite and > 0",
        ),
        (
            lambda: NestedDirichletPosterior(-np.ones((2, 2)), [1.0, 1.0]),
            "prior_alpha must be finite and > 0",
        ),
        (
            lambda: NestedDirichletPosterior(np.ones((2, 2)), [1.0, 1.0]).update([[1, -1], [0, 0]]),
            "counts must be finite",
        ),
        (
            lambda: NestedDirichletPosterior(np.ones((2, 2)), [1.0, 1.0]).merge(
                NestedDirichletPosterior(np.ones((2, 2)), [1.0, 2.0])
            ),
            "different priors",
        ),
    ],
)
def test_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_merge_needs_the_same_kind():
    with pytest.raises(TypeError, match="NestedDirichletPosterior"):
        NestedDirichletPosterior(np.ones((2, 2)), [1.0, 1.0]).merge(
            DirichletPosterior(np.ones((2, 2)))
        )

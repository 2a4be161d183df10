"""Rewards against brute force, and the comparison probabilities against Monte Carlo."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.metrics import BetaPosterior, DirichletPosterior, rope_probabilities
from skassess.metrics._nested_dirichlet import NestedDirichletPosterior
from skassess.samplers._rewards import CompareTwo, EstimateConfusion, EstimateRates

pos = st.floats(0.1, 50.0)


def _beta_var(a, b):
    return a * b / ((a + b) ** 2 * (a + b + 1))


@settings(max_examples=50, deadline=None)
@given(pos, pos, st.floats(0.0, 1.0), st.floats(0.01, 1.0))
def test_estimate_reward_is_the_expected_variance_drop(a, b, theta, weight):
    state = BetaPosterior([[a]], [[b]])
    reward = EstimateRates(np.array([weight])).reward(state, np.array([[theta]]))[0, 0]
    expected = weight * (
        _beta_var(a, b) - theta * _beta_var(a + 1, b) - (1 - theta) * _beta_var(a, b + 1)
    )
    assert np.isclose(reward, expected, rtol=1e-9, atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.lists(pos, min_size=3, max_size=3), st.floats(0.01, 1.0))
def test_confusion_reward_is_the_expected_summed_variance_drop(alpha, weight):
    """A plain Dirichlet row: the drop against the Dirichlet's closed-form variances."""
    alpha = np.array(alpha)
    theta = alpha / alpha.sum()

    def total_var(a):
        a0 = a.sum()
        return (a * (a0 - a) / (a0**2 * (a0 + 1))).sum()

    expected = weight * (
        total_var(alpha) - sum(theta[j] * total_var(alpha + np.eye(3)[j]) for j in range(3))
    )
    # Row 0 of a 3 x 3 matrix (the other rows do not matter).
    state = NestedDirichletPosterior.from_dirichlet(np.stack([alpha, alpha, alpha])[None])
    weights = np.array([weight, 1.0, 1.0])
    draw = np.tile(theta, (1, 3, 1))
    reward = EstimateConfusion(weights).reward(state, draw)[0, 0]
    assert np.isclose(reward, expected, rtol=1e-9, atol=1e-15)
    plain = EstimateConfusion(weights).reward(DirichletPosterior(state.alpha), draw)[0, 0]
    assert np.isclose(plain, expected, rtol=1e-9, atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(pos, min_size=9, max_size=9),
    st.lists(pos, min_size=3, max_size=3),
    st.lists(st.integers(0, 5), min_size=9, max_size=9),
)
def test_nested_confusion_reward_against_brute_force(alpha, failures, counts):
    """The nested posterior: the drop equals the summed ``var()`` before and after."""
    state = NestedDirichletPosterior(
        np.reshape(alpha, (1, 3, 3)), np.reshape(failures, (1, 3)), np.reshape(counts, (1, 3, 3))
    )
    theta = state.mean()
    eye = np.eye(3)
    expected = [
        state.var()[0, k].sum()
        - sum(
            theta[0, k, j] * state.update((eye[k][:, None] * eye[j])[None]).var()[0, k].sum()
            for j in range(3)
        )
        for k in range(3)
    ]
    reward = EstimateConfusion(np.ones(3)).reward(state, theta)[0]
    assert np.allclose(reward, expected, rtol=1e-9, atol=1e-15)


def test_compare_reward_is_a_probability_for_the_pair_only():
    state = BetaPosterior(np.tile([30.0, 20.0, 5.0], (4, 1)), np.tile([10.0, 20.0, 5.0], (4, 1)))
    reward = CompareTwo(3, 0, 1, 0.05).reward(state, np.full((4, 3), 0.6))
    assert np.all(np.isneginf(reward[:, 2]))
    assert np.all((reward[:, :2] > 0) & (reward[:, :2] <= 1))


def test_rope_quadrature_and_draws_match_monte_carlo():
    rng = np.random.default_rng(0)
    cases = [
        ((30, 10), (20, 20), 0.05),
        ((900, 30), (850, 60), 0.02),
        ((2, 3), (200, 100), 0.1),
        ((5000, 150), (5100, 140), 0.05),
    ]
    for pa, pb, rope in cases:
        probs = rope_probabilities((BetaPosterior(*pa), BetaPosterior(*pb)), rope)[0]
        delta = rng.beta(*pa, size=400_000) - rng.beta(*pb, size=400_000)
        mc = [(delta < -rope).mean(), (np.abs(delta) <= rope).mean(), (delta > rope).mean()]
        # Monte Carlo standard error <= 0.0008; the quadrature is far finer.
        np.testing.assert_allclose(probs, mc, atol=0.004)
        # Draws go through the same function and the same boundary convention.
        np.testing.assert_allclose(rope_probabilities(delta, rope), mc)
        assert np.isclose(probs.sum(), 1.0)
        # The normal approximation of the look-ahead reward is close for many labels.
        if sum(pa) > 100 and sum(pb) > 100:
            normal = rope_probabilities(
                (BetaPosterior(*pa), BetaPosterior(*pb)), rope, method="normal"
            )[0]
            np.testing.assert_allclose(normal, mc, atol=0.02)

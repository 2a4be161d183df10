import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm, t

from skassess.meta._error_levels import (
    check_levels,
    error_quantiles,
    probability_below,
)
from skassess.meta._quantile_model import LEVELS

ALL = np.array([0.01, 0.2, 0.5, 0.62, 0.8, 0.95, 0.97, 0.99, 0.997, 0.9999])


def half_normal(sd):
    return sd * norm.ppf((1 + np.asarray(LEVELS)) / 2)


quantile_rows = st.lists(st.floats(0.0, 0.2), min_size=len(LEVELS), max_size=len(LEVELS)).map(
    lambda v: np.cumsum(v) + 1e-4
)


@settings(max_examples=60, deadline=None)
@given(quantile_rows)
def test_half_widths_grow_with_the_level_and_match_the_model_inside(q):
    u = error_quantiles(q, ALL)
    assert np.all(np.diff(u) >= -1e-12) and np.all(u > 0)
    np.testing.assert_allclose(error_quantiles(q, list(LEVELS)), q)


@settings(max_examples=60, deadline=None)
@given(quantile_rows, st.floats(0.0, 1.0))
def test_probability_below_is_a_cdf_in_the_threshold(q, m):
    thresholds = np.linspace(0, 1, 21)
    p = np.array([probability_below(m, q[None], th)[0] for th in thresholds])
    assert np.all((p >= 0) & (p <= 1)) and np.all(np.diff(p) >= -1e-12)
    assert probability_below(m, q[None], m)[0] == pytest.approx(0.5)


@pytest.mark.parametrize("sd", [0.01, 0.05])
def test_a_normal_error_is_recovered_at_every_level(sd):
    q = half_normal(sd)
    expected = sd * norm.ppf((1 + ALL) / 2)
    np.testing.assert_allclose(error_quantiles(q, ALL), expected, rtol=0.02)
    # P(true < m - 1.645 sd) = 0.05 for a normal error
    assert probability_below(0.8, q[None], 0.8 - 1.645 * sd)[0] == pytest.approx(0.05, abs=0.003)
    assert probability_below(0.8, q[None], 0.8 + 1.645 * sd)[0] == pytest.approx(0.95, abs=0.003)


def test_a_heavier_tail_is_extended_heavier_but_not_without_limit():
    q = t.ppf((1 + np.asarray(LEVELS)) / 2, df=3) * 0.02
    normal = error_quantiles(half_normal(q[LEVELS.index(0.95)] / 1.96), 0.99)
    heavy = error_quantiles(q, 0.99)
    assert heavy > normal
    # a t error is recovered exactly beyond 0.95
    assert heavy == pytest.approx(0.02 * t.ppf(0.995, df=3), rel=0.01)
    flat = np.full(len(LEVELS), 0.03)  # a plateau is read as a normal tail, never lighter
    assert error_quantiles(flat, 0.99) == pytest.approx(0.03 * norm.ppf(0.995) / norm.ppf(0.975))
    steep = np.geomspace(1e-4, 1.0, len(LEVELS))  # heavier than a Cauchy: a Cauchy's tail
    ratio = error_quantiles(steep, 0.999) / steep[-1]
    assert ratio == pytest.approx(t.ppf(0.9995, df=1) / t.ppf(0.975, df=1), rel=1e-3)


def test_many_batches_at_once():
    Q = np.vstack([half_normal(0.01), half_normal(0.03)])
    u = error_quantiles(Q, [0.5, 0.99])
    assert u.shape == (2, 2)
    np.testing.assert_allclose(u[1], 3 * u[0])
    p = probability_below([0.8, 0.8], Q, 0.78)
    assert p[0] < p[1] < 0.5


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, [], [0.5, 1.5], "0.9", ["0.9"], True, [[0.9]]])
def test_levels_are_checked(bad):
    with pytest.raises(ValueError, match="level must be a number in \\(0, 1\\)"):
        check_levels(bad)
    if isinstance(bad, float):
        with pytest.raises(ValueError, match="level must be in \\(0, 1\\)"):
            error_quantiles(half_normal(0.01), bad)

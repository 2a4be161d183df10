"""Beta calibration maps: the stated special cases, as properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit, logit

from skassess.calibration import HierarchicalBetaCalibrator, beta_calibration
from skassess.calibration._maps import EPS, fit_llo, log_odds

scores = st.floats(EPS, 1 - EPS)
positive = st.floats(0.05, 5.0)
shift = st.floats(-5.0, 5.0)


@given(scores)
def test_identity(s):
    assert beta_calibration(s, 1.0, 1.0, 0.0) == pytest.approx(s, rel=1e-9, abs=1e-12)


@given(scores, positive, shift)
def test_llo_is_beta_with_a_equal_b(s, a, c):
    assert beta_calibration(s, a, a, c) == pytest.approx(expit(c + a * logit(s)), rel=1e-9)


@given(scores, st.floats(0.1, 10.0))
def test_temperature_is_beta_with_a_equal_b_and_no_shift(s, T):
    assert beta_calibration(s, 1 / T, 1 / T, 0.0) == pytest.approx(expit(logit(s) / T), rel=1e-9)


@given(st.lists(scores, min_size=2, max_size=20), positive, positive, shift)
def test_monotone_in_the_score(s, a, b, c):
    s = np.sort(s)
    p = beta_calibration(s, a, b, c)
    assert np.all(np.diff(p) >= -1e-12)


def test_scores_are_clipped_to_eps():
    assert beta_calibration(0.0, 2.0, 0.5, 0.1) == beta_calibration(EPS, 2.0, 0.5, 0.1)
    assert beta_calibration(1.0, 2.0, 0.5, 0.1, eps=0.01) == beta_calibration(
        0.99, 2.0, 0.5, 0.1, eps=0.01
    )


@pytest.mark.parametrize("bad", ["platt", None, 3])
def test_unknown_map(bad):
    with pytest.raises(ValueError, match="The 'map' parameter of HierarchicalBetaCalibrator"):
        HierarchicalBetaCalibrator(map=bad).fit([0.2, 0.8], [0, 1])


@pytest.mark.parametrize("bad", [0, 0.5, -1e-3, "x"])
def test_bad_eps(bad):
    with pytest.raises(ValueError, match="The 'eps' parameter of HierarchicalBetaCalibrator"):
        HierarchicalBetaCalibrator(eps=bad).fit([0.2, 0.8], [0, 1])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(a=[1.0, -0.5]), "a must be >= 0 everywhere"),
        (dict(b=np.array([np.nan])), "b must be >= 0 everywhere"),
        (dict(a=-1.0), "The 'a' parameter of beta_calibration must be"),
        (dict(eps=0.5), "The 'eps' parameter of beta_calibration must be"),
    ],
)
def test_beta_calibration_refuses_negative_shapes_and_bad_eps(kwargs, match):
    with pytest.raises(ValueError, match=match):
        beta_calibration([0.2, 0.7], **kwargs)


@pytest.mark.parametrize(
    "x, z, kwargs, match",
    [
        (np.zeros(5), np.zeros(5), {}, r"x must be 2-D \(n_runs, n\)"),
        (np.zeros((1, 5)), np.zeros((1, 4)), {}, "z must have the shape of x"),
        (
            np.zeros((1, 5)),
            np.zeros((1, 5)),
            dict(sample_weight=np.ones(3)),
            "sample_weight must have the shape of x",
        ),
        (np.full((1, 5), np.nan), np.zeros((1, 5)), {}, "must be finite"),
        (
            np.zeros((1, 5)),
            np.zeros((1, 5)),
            dict(slope_scale=0.0),
            "The 'slope_scale' parameter of fit_llo must be",
        ),
    ],
)
def test_fit_llo_refuses_bad_input(x, z, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_llo(x, z, **{"intercept_scale": 1.0, "slope_scale": 1.0, **kwargs})


def test_log_odds_refuses_bad_eps():
    with pytest.raises(ValueError, match="The 'eps' parameter of log_odds must be"):
        log_odds([0.5], eps=-1.0)


def _llo_map_by_scipy(x, z, weight, intercept_mean, slope_scale, intercept_scale):
    from scipy.optimize import minimize

    prior, scale = np.array([1.0, intercept_mean]), np.array([slope_scale, intercept_scale])

    def negative_log_posterior(theta):  # and its gradient
        eta = theta[0] * x + theta[1]
        r = weight * (z - expit(eta))
        value = (
            -(weight * (z * eta - np.logaddexp(0.0, eta))).sum()
            + 0.5 * (((theta - prior) / scale) ** 2).sum()
        )
        return value, -np.array([(r * x).sum(), r.sum()]) + (theta - prior) / scale**2

    return minimize(
        negative_log_posterior,
        prior,
        jac=True,
        method="BFGS",
        options=dict(gtol=1e-10, maxiter=10000),
    ).x


# Centred log-odds and outcomes on which plain Newton steps from the identity
# map run off to (slope, intercept) = (-1.4, -3.2) (and, on the 991 rows they
# were cut from, to (9.6, -119)): a step must never lower the log posterior.
_RUNAWAY_X = [
    2.24,
    2.95,
    1.66,
    1.38,
    0.66,
    1.0,
    0.74,
    3.2,
    1.94,
    1.12,
    2.18,
    1.16,
    2.99,
    -1.48,
    -0.02,
    1.44,
    2.41,
    1.45,
    1.54,
    0.96,
    3.29,
    4.09,
    2.08,
    1.33,
    -0.09,
    1.91,
    3.37,
    3.07,
    2.85,
]
_RUNAWAY_Z = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0]


def test_fit_llo_finds_the_map_where_newton_runs_away():
    x, z = np.array(_RUNAWAY_X), np.array(_RUNAWAY_Z, dtype=float)
    slope, intercept = fit_llo(
        x[None], z[None], intercept_scale=0.5, slope_scale=0.25, intercept_mean=1.8386
    )
    expected = _llo_map_by_scipy(x, z, 1.0, 1.8386, 0.25, 0.5)
    np.testing.assert_allclose([slope[0], intercept[0]], expected, atol=1e-4)


@given(
    st.lists(
        st.tuples(st.floats(-12.0, 12.0), st.booleans(), st.floats(0.1, 3.0)),
        min_size=1,
        max_size=25,
    ),
    st.floats(-3.0, 3.0),
    st.floats(0.1, 5.0),
    st.floats(0.1, 5.0),
)
def test_fit_llo_is_the_maximum_of_the_log_posterior(rows, mean, slope_scale, intercept_scale):
    x, z, w = (np.array(v, dtype=float) for v in zip(*rows, strict=True))
    slope, intercept = fit_llo(
        x[None],
        z[None],
        intercept_scale=intercept_scale,
        slope_scale=slope_scale,
        intercept_mean=mean,
        sample_weight=w[None],
        n_iter=100,
    )
    expected = _llo_map_by_scipy(x, z, w, mean, slope_scale, intercept_scale)
    np.testing.assert_allclose([slope[0], intercept[0]], expected, atol=1e-3)

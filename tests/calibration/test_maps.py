"""Beta calibration maps: the stated special cases, as properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit, logit

from skassess.calibration import EPS, HierarchicalBetaCalibrator, beta_calibration

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
        0.99, 2.0, 0.5, 0.1, eps=0.01)


@pytest.mark.parametrize("bad", ["platt", None, 3])
def test_unknown_map(bad):
    with pytest.raises(ValueError, match="The 'map' parameter of HierarchicalBetaCalibrator"):
        HierarchicalBetaCalibrator(map=bad).fit([0.2, 0.8], [0, 1])


@pytest.mark.parametrize("bad", [0, 0.5, -1e-3, "x"])
def test_bad_eps(bad):
    with pytest.raises(ValueError, match="The 'eps' parameter of HierarchicalBetaCalibrator"):
        HierarchicalBetaCalibrator(eps=bad).fit([0.2, 0.8], [0, 1])

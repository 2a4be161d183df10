"""Tail probabilities of a sum of binomial counts, against the exact distribution."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from skassess.metrics._count_tails import EXACT_MINORITY, count_tails

RNG = np.random.default_rng(0)


def _exact_pmf(p, n):
    """The distribution of ``sum_c Binomial(n_c, p_c)`` by convolution."""
    pmf = np.ones(1)
    for pc, nc in zip(p, n, strict=True):
        pmf = np.convolve(pmf, binom.pmf(np.arange(nc + 1), nc, pc))
    return pmf


def _exact_tails(p, n, s):
    pmf = _exact_pmf(p, n)
    return pmf[:s].sum(), pmf[s + 1 :].sum()


half = st.one_of(st.sampled_from([0.0, 0.5]), st.floats(1e-12, 0.5))
cells = st.lists(st.tuples(half, st.integers(1, 12)), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(cells=cells, fraction=st.floats(0.0, 1.0), low=st.booleans())
def test_few_labels_of_one_outcome_give_the_exact_tails(cells, fraction, low):
    # the minority outcome at most as likely as the other in every cell
    p = np.array([c[0] for c in cells])
    n = np.array([c[1] for c in cells])
    total = int(n.sum())
    minority = min(int(fraction * EXACT_MINORITY), EXACT_MINORITY - 1, (total - 1) // 2)
    s = minority if low else total - minority
    if not low:
        p = 1.0 - p
    below, above = count_tails(p[None, :], n, np.zeros(n.size, int), np.array([float(s)]), rng=RNG)
    want_below, want_above = _exact_tails(p, n, s)
    assert below[0, 0] == pytest.approx(want_below, abs=1e-12)
    assert above[0, 0] == pytest.approx(want_above, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_where_the_minority_is_likelier_its_count_is_drawn_and_the_mean_is_exact(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.0, 1.0, 4)
    p[0] = rng.uniform(0.0, 0.2)  # a cell where failures are likelier
    n = rng.integers(1, 5, 4)
    s = int(n.sum()) - 3  # three failures: the failures' tail is exact
    sets = 20_000
    below, above = count_tails(
        np.tile(p, (sets, 1)), n, np.zeros(4, int), np.array([float(s)]), rng=rng
    )
    want_below, want_above = _exact_tails(p, n, s)
    # Monte-Carlo mean of 20,000 sets: within 5 standard errors (at most 0.018)
    assert below.mean() == pytest.approx(want_below, abs=5 * below.std() / np.sqrt(sets) + 1e-6)
    assert above.mean() == pytest.approx(want_above, abs=5 * above.std() / np.sqrt(sets) + 1e-6)


@settings(max_examples=100, deadline=None)
@given(
    p=st.lists(st.floats(0.02, 0.98), min_size=2, max_size=6),
    per_cell=st.integers(8, 40),
    fraction=st.floats(0.0, 1.0),
)
def test_the_normal_approximation_is_close_where_both_outcomes_are_many(p, per_cell, fraction):
    p = np.array(p)
    n = np.full(p.size, per_cell)
    total = int(n.sum())
    s = EXACT_MINORITY + int(fraction * (total - 2 * EXACT_MINORITY))
    assume((n * p * (1 - p)).sum() >= 2)
    below, above = count_tails(p[None, :], n, np.zeros(n.size, int), np.array([float(s)]), rng=RNG)
    want_below, want_above = _exact_tails(p, n, s)
    # the skewness-corrected normal: within 0.02 of the exact tails where the
    # count's variance is at least 2 (its worst, found by a targeted search,
    # 0.014); where it is about 1 (few labels of cells far apart) its error
    # reaches about 0.04, see the module
    assert below[0, 0] == pytest.approx(want_below, abs=0.02)
    assert above[0, 0] == pytest.approx(want_above, abs=0.02)


def test_groups_are_separate_and_sets_are_rows():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.5, 0.9, (3, 5))  # failures the less likely: exact where few
    n = np.array([3, 4, 20, 25, 2])
    group = np.array([0, 0, 1, 1, 2])
    observed = np.array([5.0, 30.0, 1.0])
    below, above = count_tails(p, n, group, observed, rng=RNG)
    assert below.shape == above.shape == (3, 3)
    for row in range(3):
        for k, cols in enumerate(([0, 1], [2, 3], [4])):
            lo, hi = _exact_tails(p[row, cols], n[cols], int(observed[k]))
            assert below[row, k] == pytest.approx(lo, abs=0.015)
            assert above[row, k] == pytest.approx(hi, abs=0.015)


def test_certain_cells_give_a_step():
    n = np.array([5, 5])
    below, above = count_tails(
        np.array([[1.0, 1.0], [0.0, 0.0]]), n, np.zeros(2, int), np.array([10.0]), rng=RNG
    )
    assert below[:, 0] == pytest.approx([0.0, 1.0])
    assert above[:, 0] == pytest.approx([0.0, 0.0])
    below, above = count_tails(
        np.array([[1.0, 1.0]]), n, np.zeros(2, int), np.array([3.0]), whole=False, rng=RNG
    )
    assert (below[0, 0], above[0, 0]) == pytest.approx((0.0, 1.0))

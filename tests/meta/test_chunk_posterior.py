"""A chunk's posterior: the label-free prediction as its prior, labels by Bayes' rule."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.meta import PerformanceMonitor
from skassess.meta._chunk_posterior import GRID_CELLS, ChunkPosterior
from skassess.meta._error_levels import error_quantiles, probability_below
from skassess.meta._quantile_model import LEVELS


def quantiles(scale, tail=1.0):
    """Quantiles of |e| at LEVELS: a half-normal of ``scale``, the 0.95 one x ``tail``."""
    from scipy.stats import norm

    q = scale * norm.ppf((1 + np.asarray(LEVELS)) / 2)
    q[-1] *= tail
    return np.maximum.accumulate(q)


prediction = st.floats(0.02, 0.98)
scale = st.floats(0.005, 0.2)
rows = st.sampled_from([1, 7, 50, 500, 5000, 20_000])


@settings(deadline=None, max_examples=60)
@given(m=prediction, s=scale, n=rows)
def test_no_label_is_the_label_free_prediction(m, s, n):
    # the prior on cells of [0, 1]: the label-free values to within a cell
    q = quantiles(s)
    post = ChunkPosterior(m, q, n)
    cell = 1.0 / GRID_CELLS
    for level in (0.5, 0.8, 0.95, 0.99):
        h = float(error_quantiles(q, level))
        lower, upper = post.interval(level)
        assert lower == pytest.approx(max(0.0, m - h), abs=cell)
        assert upper == pytest.approx(min(1.0, m + h), abs=cell)
    for t in (0.3, m, 0.9):
        assert post.cdf(t) == pytest.approx(float(probability_below(m, q, t)[0]), abs=1e-4)


@settings(deadline=None, max_examples=80)
@given(
    m=prediction,
    s=scale,
    n=rows,
    t=st.floats(0.05, 0.95),
    right=st.integers(0, 30),
    wrong=st.integers(0, 30),
)
def test_a_correct_label_never_raises_p_below_and_a_wrong_one_never_lowers_it(
    m, s, n, t, right, wrong
):
    if right + wrong + 1 > n:
        return
    q = quantiles(s)
    base = ChunkPosterior(m, q, n, right, wrong)
    more_right = ChunkPosterior(m, q, n, right + 1, wrong)
    more_wrong = ChunkPosterior(m, q, n, right, wrong + 1)
    assert more_right.cdf(t) <= base.cdf(t) + 1e-9
    assert more_wrong.cdf(t) >= base.cdf(t) - 1e-9
    assert more_right.mean() >= base.mean() - 1e-9 >= more_wrong.mean() - 2e-9


@pytest.mark.parametrize("n_rows", [500, 20_000])
def test_labels_narrow_the_interval_on_average(n_rows):
    # labels drawn from the prior predictive: the expected posterior variance is below the
    # prior's (the law of total variance); so is the expected width of its interval here
    rng = np.random.default_rng(0)
    m, q = 0.8, quantiles(0.05)
    prior = ChunkPosterior(m, q, n_rows)
    prior_width = np.subtract(*prior.interval(0.8)[::-1])
    widths = []
    for _ in range(300):
        # the chunk's accuracy from the prior, then 10 labels of its rows
        accuracy = prior.quantile(rng.random())
        right = rng.binomial(10, accuracy)
        post = ChunkPosterior(m, q, n_rows, right, 10 - right)
        widths.append(np.subtract(*post.interval(0.8)[::-1]))
    assert np.mean(widths) < prior_width


def test_every_row_labeled_is_the_observed_accuracy():
    post = ChunkPosterior(0.7, quantiles(0.05), 40, 31, 9)
    assert post.mean() == pytest.approx(31 / 40)
    lower, upper = post.interval(0.95)
    assert 30.5 / 40 <= lower <= upper <= 31.5 / 40


def test_impossible_counts_are_refused():
    with pytest.raises(ValueError, match="A chunk of 5 rows cannot hold 4 correct and 2 wrong"):
        ChunkPosterior(0.7, quantiles(0.05), 5, 4, 2)


def test_one_correct_label_does_not_lower_the_estimate():
    # The case: 2,000 reference rows of beta(8, 2) scores, a 500-row chunk, its most
    # confident row labeled as predicted. The estimate must not drop, nor p_below rise.
    rng = np.random.default_rng(0)
    p = rng.beta(8, 2, 2500)
    S = np.column_stack([p, 1 - p])
    y = (rng.random(2500) > p).astype(int)
    monitor = PerformanceMonitor(threshold=0.75, random_state=0, progress=False)
    monitor.fit(S[:2000], y[:2000])
    chunk = S[2000:]
    free = monitor.predict(chunk)
    labels = np.full(500, -1)
    top = int(np.argmax(chunk.max(axis=1)))
    labels[top] = int(chunk[top].argmax())
    one = monitor.predict(chunk, labels)
    assert one["mean"].iloc[0] >= free["mean"].iloc[0]
    assert one["p_below"].iloc[0] <= free["p_below"].iloc[0]
    assert one["lower_80"].iloc[0] >= free["lower_80"].iloc[0]

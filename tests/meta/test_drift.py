import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.meta.drift import LINEAR_SKEW_RATIOS, LinearSkewSplit, NearestNeighborsSplit


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(40, 600),
    r=st.sampled_from(LINEAR_SKEW_RATIOS),
    p=st.floats(0.1, 0.5),
    seed=st.integers(0, 10**6),
)
def test_linear_skew_shares_and_disjoint(n, r, p, seed):
    X = np.random.default_rng(seed).permutation(n).astype(float)[:, None]
    ((ref, batch),) = LinearSkewSplit(ratios=[r], batch_fraction=p, random_state=seed).split(X)
    assert np.intersect1d(ref, batch).size == 0
    assert ref.size > 0 and batch.size > 0
    in_a = X[:, 0] <= np.median(X[:, 0])
    # reference holds a share r of bucket A and the batch a share 1 - r (up to rounding)
    tol = 2.0 / min(ref.size, batch.size) + 1e-9
    assert abs(in_a[ref].mean() - r) <= tol
    assert abs(in_a[batch].mean() - (1 - r)) <= tol
    # the batch is a share p of the rows drawn
    assert abs(batch.size / (ref.size + batch.size) - p) <= 2.0 / (ref.size + batch.size) + 1e-9


def test_linear_skew_uses_up_a_bucket_and_is_seeded():
    X = np.arange(1000.0)[:, None]
    cv = LinearSkewSplit(ratios=[0.0, 0.5, 1.0], n_repeats=2, random_state=3)
    a = list(cv.split(X))
    b = list(cv.split(X))
    assert cv.get_n_splits() == 6 == len(a)
    for (r1, b1), (r2, b2) in zip(a, b, strict=True):
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(b1, b2)
    ref, batch = a[2]  # R = 0.5: every row is drawn
    assert ref.size + batch.size == 1000
    ref, batch = a[0]  # R = 0: reference all from B, batch all from A: no overlap
    assert X[ref, 0].min() > X[batch, 0].max()


def test_linear_skew_by_name_list_and_categorical():
    df = pd.DataFrame({"x": np.arange(200.0), "c": ["u"] * 120 + ["v"] * 80})
    cv = LinearSkewSplit(["x", "c"], ratios=[0.2], random_state=0)
    (r1, b1), (r2, b2) = cv.split(df)
    assert (df.x[r1] <= 99.5).mean() == pytest.approx(0.2, abs=0.02)
    assert (df.c[r2] == "u").mean() == pytest.approx(0.2, abs=0.02)


@pytest.mark.parametrize(
    "X, feature, match",
    [
        (np.ones((50, 2)), 0, "constant"),
        (np.zeros((50, 2)), 5, "not a column"),
        (np.zeros((50, 2)), "x", "not a DataFrame"),
        (pd.DataFrame({"a": np.arange(9.0)}), "b", "not a column"),
    ],
)
def test_linear_skew_bad_feature(X, feature, match):
    with pytest.raises(ValueError, match=match):
        next(LinearSkewSplit(feature).split(X))


def test_linear_skew_bad_params():
    with pytest.raises(ValueError, match="ratios"):
        next(LinearSkewSplit(ratios=[1.5]).split(np.arange(10.0)[:, None]))
    with pytest.raises(ValueError, match="batch_fraction"):
        next(LinearSkewSplit(batch_fraction=1.0).split(np.arange(10.0)[:, None]))
    assert "LinearSkewSplit(feature=0" in repr(LinearSkewSplit())


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(20, 400),
    seed=st.integers(0, 10**6),
    near=st.sampled_from([0.0, 1.0]),
    pset=st.sampled_from([0.0, 1.0]),
)
def test_nearest_neighbors_removes_a_neighbourhood(n, seed, near, pset):
    X = np.random.default_rng(seed).normal(size=(n, 2))
    cv = NearestNeighborsSplit(1, p_near=near, p_set=pset, p_down=0.6, random_state=seed)
    ((ref, batch),) = cv.split(X)
    assert np.intersect1d(ref, batch).size == 0
    n_batch = round(0.25 * n)
    assert batch.size == n_batch - round(0.6 * n_batch)
    assert ref.size == (n - n_batch) - round(0.6 * (n - n_batch))


def test_nearest_neighbors_shifts_the_biased_set():
    # the biased set loses the rows near (or far from) an anchor: its mean moves
    X = np.random.default_rng(0).normal(size=(4000, 2))
    shifts = []
    for ref, batch in NearestNeighborsSplit(20, p_set=1.0, random_state=1).split(X):
        shifts.append(np.linalg.norm(X[ref].mean(0) - X[batch].mean(0)))
    assert np.median(shifts) > 0.2  # an unbiased split moves the mean by ~0.05


def test_nearest_neighbors_bad_input():
    with pytest.raises(ValueError, match="numeric columns"):
        next(NearestNeighborsSplit().split(pd.DataFrame({"a": list("abcdef")})))
    with pytest.raises(ValueError, match="p_down"):
        next(NearestNeighborsSplit(p_down=(0.7, 0.5)).split(np.zeros((10, 2))))
    with pytest.raises(ValueError, match="at least 4 rows"):
        next(NearestNeighborsSplit().split(np.zeros((2, 2))))
    assert NearestNeighborsSplit(7).get_n_splits() == 7

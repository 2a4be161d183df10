import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.metrics import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)

ESTIMATORS = {
    "accuracy calibrated": lambda: BayesianAccuracy(random_state=0),
    "accuracy informative": lambda: BayesianAccuracy(prior="informative", random_state=0),
    "accuracy hierarchical": lambda: BayesianAccuracy(prior="hierarchical", random_state=0),
    "accuracy by group": lambda: BayesianAccuracy(grouping="external", random_state=0),
    "tpr by group": lambda: BayesianAccuracy(
        metric="tpr", grouping="external", prior="informative", random_state=0
    ),
    "ece quantile bins": lambda: BayesianCalibrationError(
        prior="informative", binning="quantile", random_state=0
    ),
    "confusion": lambda: BayesianConfusionMatrix(random_state=0),
    "cost": lambda: BayesianMisclassificationCost(cost_matrix=1 - np.eye(2), random_state=0),
}


def _rows(seed, n, groups=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    X = np.column_stack([1 - p, p])
    y = (rng.random(n) < p).astype(int)
    y[rng.random(n) < 0.7] = -1
    g = rng.choice(np.asarray(groups, dtype=object), n)
    return X, y, g


def _fit(est, X, y, g, partial=False):
    kw = {"group_by": g} if getattr(est, "grouping", None) == "external" else {}
    return (est.partial_fit if partial else est.fit)(X, y, **kw)


def _assert_same(a, b):
    assert list(a.groups_) == list(b.groups_)
    assert a.n_samples_seen_ == b.n_samples_seen_
    for name in a._stat_arrays():
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("kind", list(ESTIMATORS))
def test_merged_parts_are_the_fit_on_all_rows(kind):
    X1, y1, g1 = _rows(0, 300, groups=("a", "b"))
    X2, y2, g2 = _rows(1, 200, groups=("b", "c", "d"))
    whole = _fit(ESTIMATORS[kind](), np.r_[X1, X2], np.r_[y1, y2], np.r_[g1, g2])
    first = _fit(ESTIMATORS[kind](), X1, y1, g1)
    second = _fit(first.empty_like(), X2, y2, g2, partial=True)
    # the sequential partial_fit is the reference: quantile bins come from the first part
    sequential = _fit(_fit(ESTIMATORS[kind](), X1, y1, g1), X2, y2, g2, partial=True)
    merged = first.merge(second)
    _assert_same(merged, sequential)
    if kind != "ece quantile bins":
        _assert_same(merged, whole)
    s1, s2 = merged.summary(), sequential.summary()
    np.testing.assert_allclose(
        s1.select_dtypes("number").to_numpy(), s2.select_dtypes("number").to_numpy(), rtol=1e-9
    )


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10_000))
def test_any_partition_merges_to_the_same_counts(n_parts, seed):
    X, y, g = _rows(seed, 240)
    whole = BayesianAccuracy(grouping="external", classes=[0, 1]).fit(X, y, group_by=g)
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, 240), n_parts - 1, False))
    parts = np.split(np.arange(240), cuts)
    template = BayesianAccuracy(grouping="external", classes=[0, 1]).fit(
        X[parts[0]], y[parts[0]], group_by=g[parts[0]]
    )
    fits = [template] + [
        template.empty_like().partial_fit(X[p], y[p], group_by=g[p]) for p in parts[1:]
    ]
    # merged in any order (here: last to first, pairwise)
    while len(fits) > 1:
        fits = [
            fits[i].merge(fits[i + 1]) if i + 1 < len(fits) else fits[i]
            for i in range(0, len(fits), 2)
        ][::-1]
    _assert_same(fits[0], whole)


def test_empty_like_keeps_the_frame_and_drops_the_rows():
    X, y, g = _rows(0, 100)
    est = BayesianCalibrationError(binning="quantile", prior="informative").fit(X, y)
    empty = est.empty_like()
    assert empty.n_samples_seen_ == 0
    np.testing.assert_array_equal(empty.grouping_.edges, est.grouping_.edges)
    assert all(not np.any(getattr(empty, n)) for n in empty._stat_arrays())
    assert est.n_samples_seen_ == 100  # the original is untouched


def test_merge_refuses_another_estimator_or_parameters():
    X, y, g = _rows(0, 100)
    a = BayesianAccuracy(prior="informative").fit(X, y)
    with pytest.raises(
        TypeError, match="merge needs another BayesianAccuracy; got BayesianConfusionMatrix"
    ):
        a.merge(BayesianConfusionMatrix().fit(X, y))
    with pytest.raises(ValueError, match="prior='informative' here and 'uniform'"):
        a.merge(BayesianAccuracy(prior="uniform").fit(X, y))
    with pytest.raises(ValueError, match="same classes"):
        a.merge(BayesianAccuracy(prior="informative").fit(np.c_[X, np.zeros(len(X))], y))
    b = BayesianCalibrationError(binning="quantile", prior="informative")
    with pytest.raises(ValueError, match="quantile bin edges"):
        b.fit(X[:50], y[:50]).merge(
            BayesianCalibrationError(binning="quantile", prior="informative").fit(X[50:], y[50:])
        )
    # the draws' seed may differ: only the sums are merged
    a.merge(BayesianAccuracy(prior="informative", random_state=3).fit(X, y))
    assert a.n_samples_seen_ == 200

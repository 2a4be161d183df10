"""BayesianModelComparison: merge, and fits on Dask collections."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.metrics import BayesianModelComparison

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _pool(seed=0, n=3000, models=3, classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    S = rng.dirichlet(np.ones(classes), size=(n, models))
    S[np.arange(n), 0, y] += 1.0  # model 0 is the best
    S /= S.sum(axis=2, keepdims=True)
    return S, np.where(rng.random(n) < 0.1, y, -1)


def _same(a, b, patterns=True):
    np.testing.assert_array_equal(a.patterns_, b.patterns_)
    for name in ("counts_", "prior_", "n_unlabeled_", "n_correct_labeled_"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12)
    assert a.n_samples_ == b.n_samples_
    if patterns:
        np.testing.assert_array_equal(a.pattern_, b.pattern_)
    np.testing.assert_allclose(a.summary().to_numpy(), b.summary().to_numpy(), rtol=1e-9)


@settings(max_examples=20, deadline=None)
@given(cuts=st.lists(st.integers(1, 1999), min_size=1, max_size=4, unique=True))
def test_merged_parts_are_the_fit_on_all_items(cuts):
    S, y = _pool(n=2000)
    bounds = [0, *sorted(cuts), 2000]
    parts = [
        BayesianModelComparison(random_state=0).fit(S[a:b], y[a:b])
        for a, b in zip(bounds[:-1], bounds[1:], strict=False)
    ]
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    _same(merged, BayesianModelComparison(random_state=0).fit(S, y))


def test_binary_rate_comparison_merges():
    S, y = _pool(seed=3, classes=2)
    kw = {"metric": "tpr", "random_state": 0}
    merged = BayesianModelComparison(**kw).fit(S[:1000], y[:1000])
    merged.merge(BayesianModelComparison(**kw).fit(S[1000:], y[1000:]))
    _same(merged, BayesianModelComparison(**kw).fit(S, y))


def test_merge_refuses_other_parameters_and_models():
    S, y = _pool(n=600)
    a = BayesianModelComparison().fit(S[:300], y[:300])
    with pytest.raises(ValueError, match="prior_strength=2.0 here and 5.0"):
        a.merge(BayesianModelComparison(prior_strength=5.0).fit(S[300:], y[300:]))
    with pytest.raises(ValueError, match="same n_models_; 3 here and 2"):
        a.merge(BayesianModelComparison().fit(S[300:, :2], y[300:]))
    with pytest.raises(TypeError, match="merge needs another BayesianModelComparison"):
        a.merge(object())


def test_a_dask_fit_and_partial_fit_are_the_fit_on_all_items():
    S, y = _pool()
    whole = BayesianModelComparison(random_state=0).fit(S, y)
    with dask.config.set(scheduler="sync"):
        est = BayesianModelComparison(random_state=0).fit(
            da.from_array(S, chunks=(700, 1, 3)), da.from_array(y, chunks=700)
        )
        assert est.pattern_ is None  # the items stay in their partitions
        _same(est, whole, patterns=False)
        est = BayesianModelComparison(random_state=0).fit(S[:1000], y[:1000])
        est.partial_fit(da.from_array(S[1000:], chunks=(700, 3, 3)), da.from_array(y[1000:], 700))
    _same(est, whole, patterns=False)


def test_a_bad_partition_is_named():
    S, y = _pool(n=1000)
    y[900] = 9
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="partition 3: "):
        BayesianModelComparison().fit(da.from_array(S, chunks=(250, 3, 3)), da.from_array(y, 250))
    with pytest.raises(TypeError, match="y must be a Dask collection"):
        BayesianModelComparison().fit(da.from_array(S, chunks=(250, 3, 3)), y)


def test_on_a_cluster_of_worker_processes(dask_client):
    S, y = _pool(seed=4)
    est = BayesianModelComparison(random_state=0).fit(
        da.from_array(S, chunks=(800, 3, 3)), da.from_array(y, chunks=800)
    )
    _same(est, BayesianModelComparison(random_state=0).fit(S, y), patterns=False)

import numpy as np
import pandas as pd
import pytest

from skassess.metrics import BayesianAccuracy, BayesianCalibrationError, BayesianConfusionMatrix

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")


def _pool(seed=0, n=3000, K=3):
    rng = np.random.default_rng(seed)
    X = rng.dirichlet(np.ones(K) * 0.7, n)
    y = np.array([rng.choice(K, p=p) for p in X])
    y[rng.random(n) < 0.8] = -1
    g = rng.choice(np.array(["north", "south", "east"], dtype=object), n)
    return X, y, g


def _assert_same(a, b):
    assert list(a.groups_) == list(b.groups_)
    assert a.n_samples_seen_ == b.n_samples_seen_
    for name in a._stat_arrays():
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(
        a.summary().select_dtypes("number").to_numpy(),
        b.summary().select_dtypes("number").to_numpy(),
        rtol=1e-9,
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: BayesianAccuracy(random_state=0),
        lambda: BayesianAccuracy(grouping="external", prior="informative", random_state=0),
        lambda: BayesianConfusionMatrix(random_state=0),
    ],
)
def test_a_dask_array_fit_is_the_fit_on_all_rows(make):
    X, y, g = _pool()
    est = make()
    kw = {"group_by": g} if getattr(est, "grouping", None) == "external" else {}
    whole = make().fit(X, y, **kw)
    dkw = {k: da.from_array(v, chunks=500) for k, v in kw.items()}
    with dask.config.set(scheduler="sync"):
        fitted = est.fit(da.from_array(X, chunks=(500, 2)), da.from_array(y, chunks=500), **dkw)
    assert fitted is est
    _assert_same(est, whole)


def test_a_dask_dataframe_fit_and_partial_fit():
    X, y, g = _pool()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y, region=g)
    ddf = dd.from_pandas(frame, npartitions=7)
    est = BayesianAccuracy(grouping="external", random_state=0)
    with dask.config.set(scheduler="threads"):
        est.fit(ddf[["a", "b", "c"]], ddf["label"], group_by=ddf["region"])
        _assert_same(
            est, BayesianAccuracy(grouping="external", random_state=0).fit(X, y, group_by=g)
        )
        # a second stream of rows: partial_fit on a fitted estimator adds them
        est.partial_fit(ddf[["a", "b", "c"]], ddf["label"], group_by=ddf["region"])
    twice = BayesianAccuracy(grouping="external", random_state=0).fit(
        np.r_[X, X], np.r_[y, y], group_by=np.r_[g, g]
    )
    _assert_same(est, twice)


def test_quantile_bins_over_partitions_are_refused_and_shared_after_a_fit():
    """Edges from one partition would make the fit differ from the in-memory one: fit
    is refused; after a fit in memory, partial_fit shares its edges over partitions."""
    X, y, _ = _pool()
    est = BayesianCalibrationError(binning="quantile", prior="informative", random_state=0)
    parts = da.from_array(X[1000:], chunks=(1000, 3)), da.from_array(y[1000:], chunks=1000)
    with dask.config.set(scheduler="sync"):
        for call in (est.fit, est.partial_fit):
            with pytest.raises(ValueError, match="binning='quantile' takes its bin edges"):
                call(*parts)
        est.fit(X[:1000], y[:1000]).partial_fit(*parts)
    seq = BayesianCalibrationError(binning="quantile", prior="informative", random_state=0)
    for s in range(0, 3000, 1000):
        seq.partial_fit(X[s : s + 1000], y[s : s + 1000])
    _assert_same(est, seq)


def test_a_bad_partition_is_named():
    X, y, _ = _pool()
    X = X.copy()
    X[2100, 0] = np.nan
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="^partition 4: "):
        BayesianAccuracy().fit(da.from_array(X, chunks=(500, 3)), da.from_array(y, chunks=500))


def test_misaligned_or_in_memory_labels_are_refused():
    X, y, _ = _pool()
    dX = da.from_array(X, chunks=(500, 3))
    with pytest.raises(TypeError, match="y must be a Dask collection partitioned as X"):
        BayesianAccuracy().fit(dX, y)
    with pytest.raises(ValueError, match="y has 3 partitions and X 6"):
        BayesianAccuracy().fit(dX, da.from_array(y, chunks=1000))
    est = BayesianAccuracy()
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="partition 0: y has"):
        est.fit(dX, da.from_array(y, chunks=(400, 500, 500, 500, 500, 600)))
    assert not hasattr(est, "n_classes_")  # a failed fit leaves the estimator unfitted


def _die_once(part, marker):
    """The partition holding row 2100 kills its worker the first time it is computed."""
    import os

    if 2100 in part.index and not os.path.exists(marker):
        with open(marker, "w"):
            pass
        os._exit(1)
    return part


@pytest.mark.slow
def test_a_cluster_of_worker_processes_gives_the_same_fit(dask_client):
    X, y, g = _pool()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y, region=g)
    ddf = dd.from_pandas(frame, npartitions=6)
    est = BayesianAccuracy(grouping="external", random_state=0)
    est.fit(ddf[["a", "b", "c"]], ddf["label"], group_by=ddf["region"])
    _assert_same(est, BayesianAccuracy(grouping="external", random_state=0).fit(X, y, group_by=g))


def test_a_worker_killed_mid_fit_is_retried_to_the_same_fit(dask_client, tmp_path):
    X, y, g = _pool(seed=1)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y, region=g)
    marker = str(tmp_path / "killed")
    ddf = dd.from_pandas(frame, npartitions=6).map_partitions(_die_once, marker)
    est = BayesianAccuracy(grouping="external", random_state=0)
    est.fit(ddf[["a", "b", "c"]], ddf["label"], group_by=ddf["region"])
    assert (tmp_path / "killed").exists()  # a worker did die
    _assert_same(est, BayesianAccuracy(grouping="external", random_state=0).fit(X, y, group_by=g))

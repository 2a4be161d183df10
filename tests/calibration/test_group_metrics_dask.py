"""BayesianGroupMetrics on Dask collections: per-partition totals, merged exactly."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.calibration import BayesianGroupMetrics
from skassess.calibration._group_partitions import KeyRows
from skassess.calibration._group_totals import GroupTotals, calibrated_models

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

METRICS = ("accuracy", "tpr", "ppv", "selection_rate")


def _pool(seed=0, n=4000):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"], dtype=object), n, p=[0.5, 0.3, 0.2])
    s = rng.beta(2, 2, n)
    truth = (rng.random(n) < np.where(g == "c", 0.5, s)).astype(int)
    y = np.where(rng.random(n) < 0.06, truth, -1)
    return pd.DataFrame({"s": s, "y": y, "g": g})


def _same(a, b):
    assert list(a.groups_) == list(b.groups_)
    pd.testing.assert_series_equal(a.n_rows_, b.n_rows_)
    pd.testing.assert_series_equal(a.n_labeled_, b.n_labeled_)
    for name in a.point_:
        np.testing.assert_allclose(a.point_[name], b.point_[name], rtol=1e-12)
    assert a.draws_.keys() == b.draws_.keys()
    for name in a.draws_:
        np.testing.assert_allclose(a.draws_[name], b.draws_[name], rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["calibrated", "beta_binomial", "frequentist"])
@pytest.mark.parametrize("p_pooled", ["auto", 1.0])
def test_a_dask_fit_is_the_in_memory_fit(method, p_pooled):
    frame = _pool()
    ddf = dd.from_pandas(frame, npartitions=5)
    kw = {"metrics": METRICS, "p_pooled": p_pooled, "n_draws": 200, "random_state": 0}
    whole = BayesianGroupMetrics(method, **kw).fit(frame.s, frame.y, group_by=frame.g)
    with dask.config.set(scheduler="sync"):
        parts = BayesianGroupMetrics(method, **kw).fit(ddf.s, ddf.y, group_by=ddf.g)
    _same(parts, whole)
    if method == "calibrated" and p_pooled == "auto":
        pd.testing.assert_frame_equal(parts.label_check_, whole.label_check_, rtol=1e-9)


def test_totals_merge_in_any_split():
    frame = _pool(seed=1, n=1500)
    metrics = {m: m for m in METRICS}
    args = {"threshold": 0.5, "models": calibrated_models(metrics)}

    def totals(rows):
        return GroupTotals.of_rows(
            metrics, rows.s.to_numpy(), rows.y.to_numpy(), rows.g.to_numpy(), **args
        )

    frame.loc[600:899, "y"] = -1  # a part without labels
    whole = totals(frame)
    first = frame.iloc[:600]
    first = first[first.g != "c"]  # a part without group "c": groups matched by label
    rest = frame.drop(first.index).drop(frame.index[600:900])
    merged = totals(rest).merge(totals(first)).merge(totals(frame.iloc[600:900]))
    index = pd.Index(["a", "b", "c"], dtype=object)
    a, b = whole.in_order(index), merged.in_order(index)
    np.testing.assert_allclose(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1])
    for name in METRICS:
        np.testing.assert_allclose(a[2][name], b[2][name])
        np.testing.assert_allclose(whole.slopes[name], merged.slopes[name])
    assert sorted(merged.labeled[0]) == sorted(whole.labeled[0])


def test_a_partition_with_bad_labels_is_named():
    frame = _pool()
    frame.loc[3500, "y"] = 7
    ddf = dd.from_pandas(frame, npartitions=4)
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="partition 3: "):
        BayesianGroupMetrics(n_draws=50).fit(ddf.s, ddf.y, group_by=ddf.g)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::skassess.exceptions.SkassessWarning")
@pytest.mark.parametrize("p_pooled", ["auto", 1.0])
def test_bayesian_calibration_expected_on_dask_is_the_in_memory_fit(p_pooled):
    frame = _pool(seed=3)
    frame.loc[frame.index[:700], "g"] = "a"  # group "b" and "c" first met in later partitions
    da = pytest.importorskip("dask.array")
    chunks = ((700, 0, 1800, 1500),)  # uneven partitions, one of them empty

    def parted(column):
        return da.from_array(frame[column].to_numpy(), chunks=chunks)

    kw = {"metrics": METRICS, "p_pooled": p_pooled, "n_draws": 200, "random_state": 0}
    kw.update(method="bayesian_calibration", unlabeled="expected")
    whole = BayesianGroupMetrics(**kw).fit(frame.s, frame.y, group_by=frame.g)
    with dask.config.set(scheduler="sync"):
        parts = BayesianGroupMetrics(**kw).fit(parted("s"), parted("y"), group_by=parted("g"))
    _same(parts, whole)
    pd.testing.assert_frame_equal(parts.label_check_, whole.label_check_, rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.lists(st.integers(0, 300), max_size=4))
def test_key_rows_merged_over_any_cut_are_the_whole_files(seed, cuts):
    rng = np.random.default_rng(seed)
    n = 300
    s = rng.random(n)
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 2, n), -1)
    g = rng.choice(np.array(["a", "b", "c", "d"], dtype=object), n)
    bounds = np.unique(np.array([0, *cuts, n], dtype=int))
    parts = [
        KeyRows.of_rows(s[a:b], y[a:b], g[a:b], i)
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))
    ]
    rng.shuffle(parts)  # merged in any order: the keys put the rows back in the file's
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    first = ~pd.Series(g, dtype=object).duplicated().to_numpy()
    keep = (y >= 0) | first
    for got, want in zip(merged.rows(), (s[keep], y[keep], g[keep]), strict=True):
        np.testing.assert_array_equal(got, want)
    assert merged.counts == pd.Series(g).value_counts().to_dict()


def test_bayesian_calibration_sampled_is_refused_on_dask():
    ddf = dd.from_pandas(_pool(n=500), npartitions=2)
    with pytest.raises(ValueError, match="use unlabeled='expected'"):
        BayesianGroupMetrics("bayesian_calibration").fit(ddf.s, ddf.y, group_by=ddf.g)


def test_labels_in_memory_with_dask_scores_are_refused():
    frame = _pool(n=500)
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="group_by is required"):
        BayesianGroupMetrics().fit(ddf.s, ddf.y)
    with pytest.raises(TypeError, match="y must be a Dask collection partitioned as X"):
        BayesianGroupMetrics().fit(ddf.s, frame.y, group_by=ddf.g)


@pytest.mark.slow
def test_on_a_cluster_of_worker_processes(dask_client):
    frame = _pool(seed=2)
    ddf = dd.from_pandas(frame, npartitions=4)
    kw = {"metrics": ("accuracy", "tpr"), "n_draws": 200, "random_state": 0}
    whole = BayesianGroupMetrics(**kw).fit(frame.s, frame.y, group_by=frame.g)
    _same(BayesianGroupMetrics(**kw).fit(ddf.s, ddf.y, group_by=ddf.g), whole)
    kw.update(method="bayesian_calibration", unlabeled="expected", p_pooled=1.0)
    whole = BayesianGroupMetrics(**kw).fit(frame.s, frame.y, group_by=frame.g)
    _same(BayesianGroupMetrics(**kw).fit(ddf.s, ddf.y, group_by=ddf.g), whole)


@pytest.mark.filterwarnings("ignore::skassess.exceptions.SkassessWarning")
@pytest.mark.parametrize(
    "method",
    ["calibrated", "beta_binomial", "frequentist", pytest.param("bc", marks=pytest.mark.slow)],
)
def test_the_label_check_reads_the_whole_collection_not_a_partition(method):
    """1 % labeled: a partition whose few labels are all 1 is fitted as in memory; labels
    that are only -1 and 1 over the whole collection are refused as in memory."""
    frame = _pool(seed=3, n=3000)
    frame["y"] = np.where(np.arange(3000) % 100 == 0, frame.y.where(frame.y >= 0, 1), -1)
    first = np.arange(3000) < 600  # the first partition's labels: all 1
    frame.loc[first & (frame.y == 0), "y"] = 1
    assert set(frame.y[first]) == {-1, 1} and set(frame.y) == {-1, 0, 1}
    name = "bayesian_calibration" if method == "bc" else method
    kw = {"metrics": ("accuracy",), "n_draws": 100, "random_state": 0}
    if method == "bc":
        kw.update(unlabeled="expected")
    ddf = dd.from_pandas(frame, npartitions=5)
    assert set(ddf.partitions[0].y.compute()) == {-1, 1}
    with dask.config.set(scheduler="sync"):
        parts = BayesianGroupMetrics(name, **kw).fit(ddf.s, ddf.y, group_by=ddf.g)
    labeled = (frame.y >= 0).groupby(frame.g).sum()
    np.testing.assert_array_equal(parts.n_labeled_.to_numpy(), labeled.to_numpy())
    signed = frame.assign(y=frame.y.replace(0, 1))
    with pytest.raises(ValueError, match="y holds only the values -1 and 1") as memory:
        BayesianGroupMetrics(name, **kw).fit(signed.s, signed.y, group_by=signed.g)
    ddf = dd.from_pandas(signed, npartitions=5)
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match="y holds only the values -1 and 1") as parted:
            BayesianGroupMetrics(name, **kw).fit(ddf.s, ddf.y, group_by=ddf.g)
    assert str(parted.value) == str(memory.value)

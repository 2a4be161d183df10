"""The interval model's batch features over Dask partitions: the in-memory batch's."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor
from skassess.meta._batch_summary import (
    DRIFT_ROWS,
    BatchSummary,
    ReferenceFrame,
    drift_positions,
)
from skassess.meta._um_features import UM_FEATURES, summary_features

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")


def _rows(rng, n, n_members=3):
    """Random row features of four score columns and two proxies, features, predictor rows."""
    top = rng.uniform(0.3, 1.0, n)
    Z = np.column_stack(
        [top, top * rng.uniform(0, 1, n), rng.uniform(0, 2, n), rng.uniform(0, 1, n)]
        + [rng.uniform(0, 1, n) for _ in range(4)]
    )
    members = rng.uniform(0, 1, (n_members, n))
    return (
        {"Z": Z, "F": rng.normal(size=(n, 3)), "pred": rng.integers(0, 4, n)},
        {"p": members.mean(axis=0), "u": members.std(axis=0), "raw": top, "members": members},
    )


def _features(summary, ref, frame, seed):
    peers = {m: summary.mean(f"peer_{m}") for m in ("confidence", "atc", "doc", "meta_model")}
    return summary_features(ref, summary, 0.8, frame=frame, seed=seed, peers=peers)


def _assert_same(a, b):
    assert list(a) == list(b)
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-12, abs=1e-12, nan_ok=True), k


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.integers(5, 400),
    st.lists(st.integers(0, 400), min_size=1, max_size=5),
)
def test_summaries_merged_over_any_cut_give_the_whole_batchs_features(seed, n, cuts):
    rng = np.random.default_rng(seed)
    ref, ref_rows = _rows(rng, 300)
    ref["correct"] = rng.random(300) < 0.8
    batch, rows = _rows(rng, n)
    peers = {m: rng.uniform(0, 1, n) for m in ("confidence", "atc", "doc", "meta_model")}
    frame = ReferenceFrame(ref, rng.dirichlet(np.ones(3)), seed)
    taken = drift_positions(300, n, seed)[1]
    whole = BatchSummary.of_rows(batch, rows, frame=frame, peers=peers, taken=taken)
    bounds = np.unique(np.r_[0, np.minimum(cuts, n), n])
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        cut = slice(lo, hi)
        parts.append(
            BatchSummary.of_rows(
                {k: v[cut] for k, v in batch.items()},
                {k: v[:, cut] if k == "members" else v[cut] for k, v in rows.items()},
                frame=frame,
                peers={k: v[cut] for k, v in peers.items()},
                taken=taken,
                start=int(lo),
            )
        )
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    assert merged.n == n
    np.testing.assert_array_equal(merged.drift_rows()[1], batch["Z"][taken])
    _assert_same(_features(whole, ref, frame, seed), _features(merged, ref, frame, seed))


def test_the_drift_positions_depend_on_the_counts_alone():
    kept, taken = drift_positions(5000, 10**7, 3)
    assert kept.size == taken.size == DRIFT_ROWS
    assert np.unique(taken).size == DRIFT_ROWS and taken.max() < 10**7
    np.testing.assert_array_equal(drift_positions(5000, 10**7, 3)[1], taken)
    np.testing.assert_array_equal(drift_positions(100, 700, 3)[1], np.arange(700))


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(6000, n_features=6, n_informative=4, n_classes=3, random_state=0)
    clf = LogisticRegression(max_iter=500).fit(X[:1000], y[:1000])
    out = {}
    for method in ("meta_model", "confidence"):
        out[method] = PerformanceIntervalRegressor(
            PerformancePredictor(clf, method=method),
            uncertainty_model="pretrained",
            random_state=0,
        ).fit(X[1000:2500], y[1000:2500])
    # a predictor of the scores alone (no estimator, no features)
    S = clf.predict_proba(X)
    out["scores"] = PerformanceIntervalRegressor(
        PerformancePredictor(classes=clf.classes_), uncertainty_model="pretrained", random_state=0
    ).fit(None, y[1000:2500], scores=S[1000:2500])
    shifted = X[2500:][X[2500:, 0] > -0.5]
    return out, X[2500:], y[2500:], S[2500:], shifted


@pytest.mark.slow
@pytest.mark.parametrize("method", ["meta_model", "confidence"])
@pytest.mark.parametrize("layout", ["array", "uneven", "frame"])
def test_predict_batch_on_partitions_is_the_in_memory_one(fitted, method, layout):
    models, X, _, _, shifted = fitted
    pir = models[method]
    with dask.config.set(scheduler="sync"):
        for batch in (X, shifted):  # more and fewer rows than the drift classifiers read
            if layout == "array":
                parts = da.from_array(batch, chunks=(700, -1))
            elif layout == "uneven":  # an empty partition among them
                cuts = (0, 0, batch.shape[0] // 3, batch.shape[0])
                parts = da.concatenate(
                    [da.from_array(batch[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
                )
            else:
                parts = dd.from_pandas(pd.DataFrame(batch), npartitions=5)
            here, there = pir.predict_batch(batch), pir.predict_batch(parts)
            _assert_same(here.features, there.features)
            assert there.accuracy == pytest.approx(here.accuracy, rel=1e-12)
            np.testing.assert_allclose(there.error_quantiles, here.error_quantiles, rtol=1e-12)
            np.testing.assert_array_equal(there.y_pred.compute(), here.y_pred)
            np.testing.assert_allclose(there.correctness.compute(), here.correctness, rtol=1e-12)


@pytest.mark.slow
def test_predict_score_and_prior_on_partitions(fitted):
    models, X, y, S, _ = fitted
    pir = models["meta_model"]
    parts, labels = da.from_array(X, chunks=(900, -1)), da.from_array(y, chunks=900)
    with dask.config.set(scheduler="sync"):
        pd.testing.assert_frame_equal(
            pir.predict(parts, level=[0.8, 0.95]), pir.predict(X, level=[0.8, 0.95]), rtol=1e-12
        )
        np.testing.assert_allclose(pir.beta_prior(parts), pir.beta_prior(X), rtol=1e-10)
        assert pir.score(parts, labels) == pytest.approx(pir.score(X, y), rel=1e-10)
        pp = pir.predictor_
        assert pp.true_accuracy(parts, labels) == pytest.approx(pp.true_accuracy(X, y))
        assert pp.score(parts, labels) == pytest.approx(pp.score(X, y), rel=1e-10)
        assert pp.true_accuracy(X, y) == pytest.approx(np.mean(pp.estimator.predict(X) == y))


def test_scores_alone_on_partitions(fitted):
    models, _, y, S, _ = fitted
    pir = models["scores"]
    with dask.config.set(scheduler="sync"):
        here = pir.predict_batch(None, scores=S)
        there = pir.predict_batch(None, scores=da.from_array(S, chunks=(1000, -1)))
        _assert_same(here.features, there.features)
        parts = da.from_array(S, chunks=(1000, -1))
        assert pir.score(None, da.from_array(y, chunks=1000), scores=parts) == pytest.approx(
            pir.score(None, y, scores=S), rel=1e-10
        )
    assert set(here.features) == set(UM_FEATURES)


def test_a_bad_partition_is_named(fitted):
    models, _, _, S, _ = fitted
    bad = S.copy()
    bad[2500, 0] = np.nan
    parts = da.from_array(bad, chunks=(1000, -1))
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match="partition 2: "):
            models["scores"].predict(None, scores=parts)
        with pytest.raises(ValueError, match="partition 2: "):
            models["scores"].predict_batch(None, scores=parts)


def test_an_empty_batch_and_bayesian_accuracy_are_refused(fitted):
    models, X, y, _, _ = fitted
    pir = models["meta_model"]
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match="holds no rows"):
            pir.predict(da.from_array(X[:0], chunks=(10, -1)))
        with pytest.raises(TypeError, match="bayesian_accuracy takes a batch in memory"):
            pir.bayesian_accuracy(da.from_array(X, chunks=(900, -1)), y)


@pytest.mark.slow
def test_predict_on_a_cluster(fitted, dask_client):
    models, X, _, _, _ = fitted
    pir = models["meta_model"]
    here = pir.predict_batch(X)
    there = pir.predict_batch(da.from_array(X, chunks=(1000, -1)))
    _assert_same(here.features, there.features)

"""ActiveAssessor on a pool in Dask partitions: the walks of partitioned rows."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess import ActiveAssessor, BayesianAccuracy, BayesianConfusionMatrix
from skassess.samplers import CalibratedPrior, VarianceSampling
from skassess.samplers._partitioned_pool import ROWS_PER_GROUP, row_keys
from skassess.session import LabelingSession

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


def _pool(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.dirichlet(np.ones(3), n)
    y = np.array([rng.choice(3, p=p) for p in X])
    return X, y


def _history(assessor):
    return assessor.history_[["index", "label", "group"]].to_numpy().tolist()


@settings(max_examples=30, deadline=None)
@given(start=st.integers(0, 10**12), n=st.integers(0, 40), seed=st.integers(0, 2**63))
def test_row_keys_are_one_sequence_however_cut(start, n, seed):
    # row i's key is the i-th draw of one generator, from wherever a partition starts
    whole = row_keys(seed, start - start % 8, n + 8)
    np.testing.assert_array_equal(row_keys(seed, start, n), whole[start % 8 : start % 8 + n])


@pytest.mark.slow
@pytest.mark.parametrize(
    "params",
    [
        {"task": "least_accurate"},
        {"task": "estimate", "estimator": BayesianConfusionMatrix()},
        {"task": "least_calibrated"},
        {"task": "most_costly", "strategy": "top_two"},
        {"task": "least_accurate", "strategy": "lucb"},
    ],
)
def test_the_partitions_do_not_change_the_queries(params):
    X, y = _pool()
    labeled = np.where(np.random.default_rng(1).random(len(y)) < 0.05, y, -1)
    runs = []
    for chunks in (len(y), 400, 97):
        assessor = ActiveAssessor(random_state=0, **params).fit(
            da.from_array(X, chunks=chunks), da.from_array(labeled, chunks=chunks)
        )
        assessor.run(y, budget=40, progress=False)
        runs.append(assessor)
    frame = ActiveAssessor(random_state=0, **params).fit(
        dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=4),
        dd.from_pandas(pd.Series(labeled), npartitions=4),
    )
    runs.append(frame.run(y, budget=40, progress=False))
    for other in runs[1:]:
        assert _history(other) == _history(runs[0])
        assert other.answer() == pytest.approx(runs[0].answer())
    # rows labeled at fit are never asked for
    assert (labeled[runs[0].history_["index"].to_numpy()] < 0).all()
    assert runs[0].n_labeled_ == (labeled >= 0).sum() + 40


@pytest.mark.slow
@pytest.mark.parametrize("task", ["estimate", "least_accurate", "compare"])
def test_exchangeable_rows_give_the_in_memory_run(task):
    # Every row of a predicted class has the same scores and label: the rows a walk
    # picks do not matter, so the run is the in-memory one (same draws, same arms).
    rng = np.random.default_rng(1)
    arm = rng.integers(0, 3, 900)
    X = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.3, 0.6]])[arm]
    y = np.array([0, 2, 2])[arm]
    params = {"task": task, "random_state": 3}
    if task == "compare":
        params["compare"] = (0, 2)
    memory = ActiveAssessor(**params).fit(X).run(y, budget=60, progress=False)
    dask_run = ActiveAssessor(**params).fit(da.from_array(X, chunks=128))
    dask_run.run(y, budget=60, progress=False)
    np.testing.assert_array_equal(dask_run.history_["group"], memory.history_["group"])
    np.testing.assert_allclose(
        dask_run.summary().to_numpy(dtype=float), memory.summary().to_numpy(dtype=float)
    )
    assert dask_run.answer() == pytest.approx(memory.answer())


def test_a_long_walk_is_fetched_again_and_labels_are_kept():
    X, y = _pool(n=3000)
    assessor = ActiveAssessor(random_state=0, strategy="random").fit(da.from_array(X, chunks=500))
    rows = assessor.query(3 * ROWS_PER_GROUP + 10)  # past every group's first prefix
    assert len(set(rows.tolist())) == len(rows)
    assessor.tell(rows, y[rows])
    np.testing.assert_array_equal(assessor.labels_[rows], y[rows])
    assert assessor.n_labeled_ == len(rows)
    assert assessor.n_available_ == 3000 - len(rows)
    # the posterior is the estimator's fit on those labels
    expected = BayesianAccuracy(random_state=0).fit(
        X, np.where(np.isin(np.arange(3000), rows), y, -1)
    )
    np.testing.assert_array_equal(
        assessor.estimator_.summary()["n_labeled"], expected.summary()["n_labeled"]
    )


def test_labels_at_fit_skip_and_undo():
    X, y = _pool()
    labeled = np.full(len(y), -1)
    labeled[:10] = y[:10]
    assessor = ActiveAssessor(random_state=0).fit(
        da.from_array(X, chunks=300), da.from_array(labeled, chunks=300)
    )
    assert assessor.labels_[3] == y[3] and assessor.labels_[500] == -1
    assessor.tell([3], [y[3]])  # the same label again: nothing new
    assert assessor.n_labeled_ == 10
    with pytest.raises(ValueError, match="row 3"):
        assessor.tell([3], [(y[3] + 1) % 3])
    first = assessor.query()
    assessor.skip(first)
    np.testing.assert_array_equal(assessor.skipped_, first)
    assert assessor.query()[0] != first[0]
    second = assessor.query()
    assessor.tell(second, y[second])
    assessor.undo()
    assert assessor.n_labeled_ == 10
    np.testing.assert_array_equal(assessor.query(), second)


def test_refused_on_a_partitioned_pool():
    X, _ = _pool(n=300)
    pool = da.from_array(X, chunks=100)
    with pytest.raises(ValueError, match="VarianceSampling.*chooses groups|scores every pool"):
        ActiveAssessor(strategy=VarianceSampling()).fit(pool)
    with pytest.raises(ValueError, match="prior_update"):
        ActiveAssessor(prior_update=CalibratedPrior()).fit(pool)
    assessor = ActiveAssessor(random_state=0).fit(pool)
    with pytest.raises(ValueError, match="return_utilities"):
        assessor.query(return_utilities=True)


def test_a_session_on_partitions_resumes(tmp_path):
    X, y = _pool()
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=5)
    path = tmp_path / "session.sqlite"
    assessor = ActiveAssessor(task="least_accurate", random_state=0)
    with LabelingSession(path, frame, assessor=assessor) as session:
        for _ in range(5):
            row = session.query()
            session.tell(row, int(y[row]))
        following = session.query()
        assert session.item_id(following) == str(following)
    with LabelingSession(path, frame) as session:
        assert session.n_labeled == 5
        assert session.query() == following
        session.run(y.tolist().__getitem__, 5, progress=False)
        assert session.n_labeled == 10
    again = dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=3)
    with pytest.raises(Exception, match="in the same partitions"):
        LabelingSession(path, again)
    with pytest.raises(ValueError, match="ids=None"):
        LabelingSession(tmp_path / "other.sqlite", frame, assessor=assessor, ids=np.arange(1500))


def test_on_a_cluster_the_queries_are_the_same(dask_client):
    X, y = _pool()
    runs = []
    for scheduler in ("sync", dask_client):
        import dask

        with dask.config.set(scheduler=scheduler):
            assessor = ActiveAssessor(task="least_accurate", random_state=0)
            assessor.fit(da.from_array(X, chunks=300)).run(y, budget=20, progress=False)
        runs.append(_history(assessor))
    assert runs[0] == runs[1]

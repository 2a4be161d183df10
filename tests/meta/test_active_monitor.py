import numpy as np
import pandas as pd
import pytest

from skassess.exceptions import SessionError
from skassess.meta import ActiveMonitor, PerformanceMonitor
from skassess.session import LabelingSession

from ..helpers import beta_scores


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    S_ref = beta_scores(rng, 2000, 0)
    y_ref = (rng.random(2000) > S_ref[:, 0]).astype(int)
    S = np.vstack([beta_scores(rng, 600, 0), beta_scores(rng, 600, 3)])
    y = (rng.random(1200) > S[:, 0]).astype(int)
    days = np.repeat(["2026-01-01", "2026-01-02", "2026-01-03"], 400)
    return S_ref, y_ref, S, y, days


def _monitor(**kwargs):
    return PerformanceMonitor(threshold=0.7, level=(0.8, 0.95), progress=False, **kwargs)


def _fit(data, random_state=0, y=None, **kwargs):
    S_ref, y_ref, S, _, days = data
    return ActiveMonitor(_monitor(**kwargs), random_state=random_state).fit(
        S, y, reference=S_ref, reference_labels=y_ref, chunk_by=days
    )


def test_the_summary_is_the_monitors_table(data):
    S_ref, y_ref, S, y, days = data
    sampler = _fit(data).run(y, budget=30, progress=False)
    monitor = _monitor(random_state=0).fit(S_ref, y_ref)
    pd.testing.assert_frame_equal(
        sampler.summary(), monitor.predict(S, sampler.labels_, chunk_by=days)
    )
    assert sampler.summary()["n_labeled"].sum() == 30 == sampler.n_labeled_
    assert list(sampler.chunks_) == ["2026-01-01", "2026-01-02", "2026-01-03"]


def test_queries_follow_the_monitors_rule(data):
    S_ref, y_ref, S, y, days = data
    sampler = _fit(data)
    picked = sampler.query(40)
    monitor = _monitor(random_state=0).fit(S_ref, y_ref)
    expected = monitor.query(S, n=40, chunk_by=days)
    # the same chunks get the same numbers of labels (the rows inside are the sampler's draws)
    assert np.array_equal(
        np.bincount(sampler.chunk_of_[picked], minlength=3),
        np.bincount(np.searchsorted([400, 800], expected, side="right"), minlength=3),
    )
    assert np.unique(picked).size == 40


def test_labels_go_where_the_alert_is_uncertain(data):
    _, _, _, y, _ = data
    sampler = _fit(data)
    surest = int(np.argmax(np.abs(sampler.summary()["p_below"].to_numpy() - 0.5)))
    labeled = sampler.run(y, budget=60, progress=False).summary()["n_labeled"].to_numpy()
    assert int(np.argmin(labeled)) == surest and labeled.min() < 60 / 3


def test_late_labels_update_their_chunk(data):
    _, _, _, y, _ = data
    sampler = _fit(data)
    before = sampler.summary()
    sampler.tell(np.arange(20), y[:20])  # the first day's rows, told whenever
    after = sampler.summary()
    assert after["n_labeled"].tolist() == [20, 0, 0]
    pd.testing.assert_series_equal(before["mean"].iloc[1:], after["mean"].iloc[1:])
    assert sampler.history_["chunk"].unique().tolist() == ["2026-01-01"]


def test_known_labels_skips_and_exhaustion(data):
    _, _, _, y, _ = data
    known = np.full(1200, -1)
    known[:5] = y[:5]
    sampler = _fit(data, y=known)
    assert sampler.n_labeled_ == 5 and sampler.summary()["n_labeled"].tolist() == [5, 0, 0]
    sampler.skip(np.arange(5, 400))
    picked = sampler.query(100)
    assert (picked >= 400).all()
    with pytest.raises(ValueError, match="exhausted"):
        sampler.query(801)


@pytest.mark.slow
def test_a_seeded_sampler_repeats_itself_and_undo_goes_back(data):
    _, _, _, y, _ = data
    a = _fit(data, random_state=3)
    b = _fit(data, random_state=3)
    first = a.query(5)
    assert np.array_equal(first, b.query(5))
    a.tell(first, y[first])
    second = a.query(5)
    a.undo()
    assert a.n_labeled_ == 0 and np.array_equal(a.query(5), first)
    a.tell(first, y[first])
    assert np.array_equal(a.query(5), second)


def test_bad_labels_change_nothing(data):
    sampler = _fit(data)
    with pytest.raises(ValueError, match="labels"):
        sampler.tell([0, 1], [0, 7])
    assert sampler.n_labeled_ == 0
    sampler.tell([0], [1])
    with pytest.raises(ValueError, match="cannot change"):
        sampler.tell([0], [0])
    with pytest.raises(ValueError, match="one label per pool item"):
        sampler.run(np.zeros(3), budget=2, progress=False)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        sampler.query(0)


def test_answer_names_the_lowest_chunk(data):
    answer = _fit(data).answer()
    assert answer["text"].startswith("3 chunks; lowest 2026-01-0")
    assert answer["probability"] is None and 0 < answer["max_width"] < 1


def test_a_crash_safe_session_resumes_with_the_same_reference(data, tmp_path):
    S_ref, y_ref, S, y, days = data
    path = tmp_path / "monitor.sqlite"
    fit_params = {"reference": S_ref, "reference_labels": y_ref, "chunk_by": days}
    assessor = ActiveMonitor(_monitor(), random_state=0)
    with LabelingSession(path, S, assessor=assessor, fit_params=fit_params) as session:
        for _ in range(4):
            row = session.query()
            session.tell(row, int(y[row]))
        pending = session.query()  # shown, then the process dies
        table = session.summary()
    with LabelingSession(path, S, fit_params=fit_params) as session:
        assert session.resumed and session.n_labeled == 4 and session.query() == pending
        assert isinstance(session.assessor_, ActiveMonitor)
        assert session.summary()["n_labeled"].sum() == 4
        pd.testing.assert_frame_equal(session.summary(), table)
    other = dict(fit_params, reference_labels=1 - y_ref)
    with pytest.raises(SessionError, match="fit_params"):
        LabelingSession(path, S, fit_params=other)
    with pytest.raises(ValueError, match="fit_params must be a dict"):
        LabelingSession(tmp_path / "x.sqlite", S, assessor=assessor, fit_params=[1])
    assert not (tmp_path / "x.sqlite").exists()


def test_a_rate_asks_only_for_the_rows_of_its_prediction(data):
    S_ref, y_ref, S, y, days = data
    monitor = PerformanceMonitor(metric="npv", level=0.9, progress=False)
    sampler = ActiveMonitor(monitor, random_state=0).fit(
        S, reference=S_ref, reference_labels=y_ref, chunk_by=days
    )
    negative = S.argmax(axis=1) == 0
    assert sampler.n_available_ == int(negative.sum())
    sampler.run(y, budget=40, progress=False)
    assert negative[sampler.history_["index"]].all()
    table = sampler.summary()
    assert table["n_labeled"].sum() == 40 and "n_predicted" in table


@pytest.mark.slow
def test_a_black_box_with_named_classes():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    from skassess.meta import PerformancePredictor

    X, y = make_classification(2400, 5, random_state=0)
    names = np.array(["no", "yes"], dtype=object)[y]
    model = LogisticRegression().fit(X[:800], names[:800])
    monitor = PerformanceMonitor(PerformancePredictor(model), chunk_size=400, progress=False)
    sampler = ActiveMonitor(monitor, random_state=0).fit(
        X[1600:], reference=X[800:1600], reference_labels=names[800:1600]
    )
    sampler.run(names[1600:], budget=12, progress=False)
    assert sampler.summary()["n_labeled"].sum() == 12
    assert set(sampler.history_["label"]) <= {"no", "yes"}
    with pytest.raises(ValueError, match="labels"):
        sampler.tell([0], ["maybe"])

"""The protocol every ask/tell sampler shares (ActiveSampler) and its StopRule."""

import numpy as np
import pandas as pd
import pytest

from skassess import ActiveAssessor
from skassess.metrics import BayesianAccuracy
from skassess.samplers import ActiveModelSelector, ActiveSampler, ActiveTester, StopRule


def _pool(n=600, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.dirichlet(np.ones(K) * 0.7, size=n)
    y = np.array([rng.choice(K, p=p) for p in X])
    return X, y


def _pair(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    preds = [np.where(rng.uniform(size=n) < a, y, 1 - y) for a in (0.9, 0.8)]
    return np.stack([np.where(p == 1, 0.8, 0.2) for p in preds], axis=1), y


def _samplers():
    X, y = _pool()
    Xp, yp = _pair()
    return [
        (ActiveAssessor(random_state=0), X, y),
        (ActiveTester(random_state=0), X, y),
        (ActiveModelSelector(random_state=0), Xp, yp),
    ]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_every_sampler_speaks_the_protocol(index):
    sampler, X, y = _samplers()[index]
    assert isinstance(sampler, ActiveSampler)
    sampler.fit(X)
    assert sampler.n_available_ == len(y) and sampler.n_labeled_ == 0
    rows = sampler.query(4)
    sampler.tell(rows, y[rows], time=1.7e9)
    assert sampler.n_labeled_ == 4 and sampler.n_available_ == len(y) - 4
    history = sampler.history_
    assert list(history.columns[:3]) == ["step", "index", "label"]
    assert history["index"].tolist() == rows.tolist()
    assert (history["time"] == 1.7e9).all()
    sampler.run(y, budget=20, stop=StopRule(width=1.0), progress=False)  # holds at once
    assert sampler.n_labeled_ == 4
    sampler.run(y, budget=6, progress=False)
    assert sampler.n_labeled_ == 10
    answer = sampler.answer()
    assert {"text", "probability", "certified", "max_width"} <= set(answer)
    assert isinstance(answer["text"], str) and 0 < answer["max_width"] <= 1
    with pytest.raises(ValueError, match="time must be None, a POSIX time"):
        sampler.tell(rows[:2], y[rows[:2]], time=[1.0])
    with pytest.raises(ValueError, match="The 'stop' parameter"):
        sampler.run(y, budget=2, stop=0.9)


def test_a_width_rule_stops_an_active_tester():
    X, y = _pool(n=2000)
    t = ActiveTester(metrics=("accuracy",), min_labels=10_000, random_state=0).fit(X)
    t.run(y, budget=2000, stop=StopRule(width=0.12), progress=False)
    assert t.answer()["max_width"] <= 0.12 and t.n_labeled_ < 2000


def test_replay_equals_the_labels_told_one_by_one():
    X, y = _pool()
    a = ActiveAssessor(BayesianAccuracy(prior="uniform"), random_state=3).fit(X)
    for _ in range(30):
        row = a.query(1)
        a.tell(row, y[row])
    a.skip(a.query(1))
    b = ActiveAssessor(BayesianAccuracy(prior="uniform"), random_state=3).fit(X)
    b.replay(a.history_, skipped=a.skipped_, cursor=a.cursor_)
    pd.testing.assert_frame_equal(b.history_, a.history_)
    pd.testing.assert_frame_equal(b.summary(), a.summary())
    assert b.skipped_.tolist() == a.skipped_.tolist()
    assert b.cursor_ == a.cursor_
    assert b.query(5).tolist() == a.query(5).tolist()  # the same query sequence


def test_replay_errors():
    X, y = _pool()
    a = ActiveAssessor(random_state=0).fit(X)
    with pytest.raises(ValueError, match="history must have the columns 'index' and 'label'"):
        a.replay(pd.DataFrame({"row": [0], "label": [1]}))
    with pytest.raises(ValueError, match="cursor must be a dict with 'rng' and 'n_steps'"):
        a.replay(pd.DataFrame({"index": [0], "label": [1]}), cursor={"n_steps": 1})
    with pytest.raises(ValueError, match="indices must lie in the pool"):
        a.replay(pd.DataFrame({"index": [600], "label": [1]}))
    assert a.n_labeled_ == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"probability": 0}, "probability must be a number in"),
        ({"width": 1.5}, "width must be a number in"),
        ({"rope": True}, "rope must be a number in"),
        ({"probability": "0.9"}, "probability must be a number in"),
    ],
)
def test_stop_rule_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StopRule(**kwargs)


def test_stop_rule_parts():
    assert not StopRule().active and StopRule()({"probability": 1.0, "max_width": 0}) is None
    rule = StopRule(probability=0.9, width=0.05, rope=0.95)
    assert repr(rule) == "StopRule(probability=0.9, width=0.05, rope=0.95)"
    assert rule({"probability": 0.5, "max_width": 0.2, "rope_probability": 0.96}) == "rope"
    assert rule({"probability": 0.5, "max_width": 0.04}) == "width"
    assert rule(None) is None


@pytest.mark.parametrize("index", [1, 2])
def test_replay_of_a_tester_and_a_selector(index):
    sampler, X, y = _samplers()[index]
    a = sampler.fit(X)
    for n in (3, 1, 4):
        rows = a.query(n)
        a.tell(rows, y[rows])
    b = type(sampler)(**sampler.get_params()).fit(X)
    b.replay(a.history_, cursor=a.cursor_)
    pd.testing.assert_frame_equal(b.history_, a.history_)
    pd.testing.assert_frame_equal(b.summary(), a.summary())
    assert b.query(2).tolist() == a.query(2).tolist()


def test_a_tester_replays_only_what_its_queries_drew():
    X, y = _pool()
    a = ActiveTester(random_state=0).fit(X)
    rows = a.query(3)
    a.tell(rows, y[rows])
    forged = a.history_.assign(index=(a.history_["index"] + 1) % len(y))
    with pytest.raises(ValueError, match="replay needs the history of a sampler"):
        ActiveTester(random_state=0).fit(X).replay(forged)


def test_skipping():
    Xp, yp = _pair()
    sel = ActiveModelSelector(random_state=0).fit(Xp)
    first = sel.query(1)
    sel.skip(first)
    assert sel.skipped_.tolist() == first.tolist()
    assert sel.n_available_ == len(yp) - 1
    sel.run(yp, budget=sel.n_available_, progress=False)  # every item but the skipped one
    assert sel.labels_[first[0]] == -1 and sel.n_labeled_ == len(yp) - 1
    with pytest.raises(ValueError, match="The pool is exhausted"):
        sel.query(1)
    sel.tell(first, yp[first])  # a skipped row may still be labeled
    assert sel.skipped_.tolist() == [] and sel.n_labeled_ == len(yp)
    with pytest.raises(
        ValueError,
        match=r"indices holds row \d+, which is labeled; only unlabeled rows can be skipped",
    ):
        sel.skip(first)
    X, y = _pool()
    t = ActiveTester(random_state=0).fit(X)
    with pytest.raises(ValueError, match="ActiveTester cannot skip rows"):
        t.skip([0])
    assert t.skipped_.tolist() == []


@pytest.mark.parametrize("strategy", ["variance", "random", "alt_mas"])
def test_a_tester_returns_its_utilities(strategy):
    X, y = _pool(n=200)
    t = ActiveTester(strategy=strategy, random_state=0, min_labels=5).fit(X)
    rows, u = t.query(3, return_utilities=True)
    assert u.shape == (3, 200) and np.isfinite(u).all()
    if strategy != "alt_mas":
        np.testing.assert_allclose(u.sum(axis=1), 1.0)  # the draw probabilities
    t.tell(rows, y[rows])
    rows2, u2 = t.query(2, return_utilities=True)
    assert np.isnan(u2[:, rows]).all() and np.isfinite(np.delete(u2, rows, axis=1)).all()
    assert not set(rows2) & set(rows)


@pytest.mark.parametrize("strategy", ["top_two", "disagreement", "random"])
def test_a_selector_returns_its_utilities(strategy):
    X, y = _pair(n=300)
    sel = ActiveModelSelector(strategy=strategy, random_state=0).fit(X)
    rows, u = sel.query(2, return_utilities=True)
    assert u.shape == (2, 300) and np.isfinite(u).all()
    assert (u[np.arange(2), rows] > 0).all()  # a chosen item's pattern scored above zero
    again, u_again = sel.query(2, return_utilities=True)  # the same until told
    assert again.tolist() == rows.tolist()
    np.testing.assert_array_equal(u_again, u)
    sel.tell(rows, y[rows])
    _, u2 = sel.query(1, return_utilities=True)
    assert np.isnan(u2[0, rows]).all()


@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("random_state", [0, None])
def test_undo_takes_back_the_last_tell(index, random_state):
    sampler, X, y = _samplers()[index]
    sampler.set_params(random_state=random_state).fit(X)
    batch = 3 if index == 1 else 1
    for _ in range(3):
        rows = sampler.query(batch)
        sampler.tell(rows, y[rows])
    before_history, before_answer = sampler.history_, sampler.answer()
    proposed = sampler.query(batch)
    sampler.tell(proposed, y[proposed])
    undone = sampler.undo()
    assert undone["index"].tolist() == proposed.tolist()
    pd.testing.assert_frame_equal(sampler.history_, before_history)
    assert sampler.n_labeled_ == len(before_history)
    # ActiveAssessor and ActiveTester unseeded too: the fit's seed (drawn once) also
    # seeds their estimator's draws; the model selector's answer draws anew unseeded
    if random_state is not None or index != 2:
        assert sampler.answer()["text"] == before_answer["text"]
    np.testing.assert_array_equal(sampler.query(batch), proposed)  # asks for them again
    # undo until nothing is left, then None
    while len(sampler.history_):
        sampler.undo()
    assert sampler.undo() is None and sampler.n_labeled_ == 0


def test_undo_keeps_skips_and_a_tell_without_query():
    X, y = _pool()
    sampler = ActiveAssessor(random_state=0).fit(X)
    sampler.skip([5, 6])
    sampler.tell([10], [y[10]])  # no query before it
    sampler.undo()
    assert sampler.n_labeled_ == 0 and sampler.skipped_.tolist() == [5, 6]

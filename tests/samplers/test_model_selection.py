import pickle

import numpy as np
import pandas as pd
import pytest

from skassess.metrics import BayesianModelComparison
from skassess.samplers import ActiveModelSelector, StopRule


def _pair(n=4000, accs=(0.9, 0.86), seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    preds = [np.where(rng.uniform(size=n) < a, y, 1 - y) for a in accs]
    X = np.stack([np.where(p == 1, 0.8, 0.2) for p in preds], axis=1)
    return X, y, np.stack(preds, axis=1)


def test_top_two_labels_only_disagreements():
    X, y, pred = _pair()
    sel = ActiveModelSelector(random_state=0).fit(X)
    sel.run(y, budget=100, progress=False)
    rows = sel.history_["index"].to_numpy()
    assert len(rows) == 100 and len(set(rows)) == 100
    assert (pred[rows, 0] != pred[rows, 1]).all()
    # random labeling also labels agreements
    rand = ActiveModelSelector(strategy="random", random_state=0).fit(X)
    rand.run(y, budget=100, progress=False)
    rows = rand.history_["index"].to_numpy()
    assert (pred[rows, 0] == pred[rows, 1]).any()


def test_query_is_stable_until_told_and_tell_out_of_order():
    X, y, _ = _pair(500)
    sel = ActiveModelSelector(random_state=1).fit(X)
    first = sel.query()
    assert (sel.query() == first).all()
    other = int(np.flatnonzero(np.arange(500) != first[0])[0])
    sel.tell([other], [y[other]])
    assert sel.n_labeled_ == 1 and sel.estimator_.counts_.sum() == 1
    batch = sel.query(5)
    assert len(set(batch.tolist())) == 5 and other not in batch
    with pytest.raises(ValueError, match=f"item {other} is labeled already"):
        sel.tell([other], [y[other]])
    with pytest.raises(ValueError, match="must lie in the pool"):
        sel.tell([500], [0])


def test_labels_update_the_comparison_like_fit():
    X, y, _ = _pair(800)
    sel = ActiveModelSelector(random_state=2).fit(X)
    sel.run(y, budget=60, batch_size=7, progress=False)
    labels = sel.labels_
    direct = BayesianModelComparison().fit(X, labels)
    np.testing.assert_allclose(sel.estimator_.mean_accuracy(), direct.mean_accuracy())
    np.testing.assert_allclose(sel.estimator_.counts_, direct.counts_)


def test_same_seed_same_sequence_and_pickle():
    X, y, _ = _pair(1000, seed=4)
    a = ActiveModelSelector(random_state=5).fit(X).run(y, budget=30, progress=False)
    b = ActiveModelSelector(random_state=5).fit(X).run(y, budget=15, progress=False)
    b = pickle.loads(pickle.dumps(b)).run(y, budget=15, progress=False)
    assert a.history_["index"].tolist() == b.history_["index"].tolist()


def test_stop_rule_and_exhaustion():
    X, y, _ = _pair(3000, accs=(0.95, 0.8))
    sel = ActiveModelSelector(random_state=0).fit(X)
    sel.run(y, budget=3000, stop=StopRule(probability=0.95), progress=False)
    assert sel.n_labeled_ < 200
    assert sel.history_["p_best"].iloc[-1] >= 0.95 and sel.history_["best"].iloc[-1] == "model 0"
    small = ActiveModelSelector(random_state=0).fit(X[:20])
    with pytest.warns(UserWarning, match="larger than the 20 unlabeled items"):
        small.run(y[:20], budget=50, progress=False)
    with pytest.raises(ValueError, match="The pool is exhausted: 0 unlabeled items"):
        small.query()
    with pytest.raises(ValueError, match="'stop_probability' parameter of ActiveModelSelector"):
        sel.run(y, budget=5, stop_probability=1.5)
    with pytest.raises(ValueError, match="The 'stop_rope' parameter of ActiveModelSelector.run"):
        sel.run(y, budget=5, stop_rope=0)
    with pytest.raises(ValueError, match="The 'stop' parameter of ActiveModelSelector.run"):
        sel.run(y, budget=5, stop=0.95)


def test_deprecated_stop_arguments_still_stop_the_run():
    X, y, _ = _pair(3000, accs=(0.95, 0.8))
    new = ActiveModelSelector(random_state=0).fit(X)
    new.run(y, budget=3000, stop=StopRule(probability=0.95, rope=0.99), progress=False)
    old = ActiveModelSelector(random_state=0).fit(X)
    with pytest.warns(
        FutureWarning,
        match=r"run\(stop_probability=..., stop_rope=...\) is "
        "deprecated since 0.1",
    ):
        old.run(y, budget=3000, stop_probability=0.95, stop_rope=0.99, progress=False)
    assert old.n_labeled_ == new.n_labeled_
    pd.testing.assert_frame_equal(
        old.history_.drop(columns="time"), new.history_.drop(columns="time")
    )


@pytest.mark.slow
def test_rope_stop_rule_decides_equivalence():
    # two models with the same accuracy: P(best) stays near 1/2, the ROPE decides
    X, y, pred = _pair(3000, accs=(0.85, 0.85), seed=2)
    truth = (pred == y[:, None]).mean(axis=0)
    assert abs(truth[0] - truth[1]) < 0.01
    sel = ActiveModelSelector(random_state=0).fit(X)
    sel.run(y, budget=3000, stop=StopRule(rope=0.9), progress=False)
    n_disagree = int((pred[:, 0] != pred[:, 1]).sum())
    assert sel.n_labeled_ < n_disagree  # stopped before every disagreement
    row = sel.estimator_.pairwise(decision_probability=0.9).iloc[0]
    assert row["p_rope"] >= 0.85 and row["decision"] == "rope"
    assert sel.best_probabilities().max() < 0.95
    # a clear difference stops on the ROPE rule too, on the right side
    X, y, _ = _pair(3000, accs=(0.95, 0.8))
    sel = (
        ActiveModelSelector(random_state=0)
        .fit(X)
        .run(y, budget=3000, stop=StopRule(rope=0.95), progress=False)
    )
    assert sel.estimator_.pairwise().iloc[0]["decision"] == "right"


def test_selection_on_a_rate():
    X, y, pred = _pair(5000, accs=(0.9, 0.8))
    comparison = BayesianModelComparison(metric="tpr")
    sel = ActiveModelSelector(comparison, random_state=0).fit(X)
    sel.run(y, budget=3000, stop=StopRule(probability=0.95), progress=False)
    tpr = [np.mean(pred[y == 1, m] == 1) for m in range(2)]
    assert tpr[0] > tpr[1]
    assert sel.best_probabilities().idxmax() == "model 0" and sel.n_labeled_ < 1000

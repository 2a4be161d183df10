"""ActiveAssessor: the ask/tell contract, bad input, reproducibility, resume."""

import pickle

import numpy as np
import pandas as pd
import pytest

from skassess import (
    ActiveAssessor,
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.exceptions import SkassessWarning
from skassess.samplers import EpsilonGreedy, StopRule


def _pool(n=600, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.dirichlet(np.ones(K) * 0.7, size=n)
    y = np.array([rng.choice(K, p=p) for p in X])
    return X, y


@pytest.mark.slow
def test_query_never_returns_a_labeled_row_and_tell_records():
    X, y = _pool()
    y0 = np.full(len(y), -1)
    y0[:100] = y[:100]
    a = ActiveAssessor(random_state=0).fit(X, y0)
    seen = set()
    for _ in range(50):
        idx = a.query(3)
        assert len(set(idx)) == 3
        assert np.all(idx >= 100) and not (set(idx) & seen)
        seen |= set(idx.tolist())
        a.tell(idx, y[idx])
    assert a.n_labeled_ == 250
    hist = a.history_
    assert list(hist.columns) == ["step", "index", "label", "group", "time"]
    assert len(hist) == 150 and hist["step"].max() == 50
    assert a.estimator_.n_labeled_.sum() == 250


@pytest.mark.slow
def test_exhausted_groups_are_never_chosen_and_pool_exhaustion_is_an_error():
    X, y = _pool(n=60)
    a = ActiveAssessor(task="least_accurate", random_state=0).fit(X)
    a.run(y, budget=60, progress=False)
    assert a.n_labeled_ == 60
    with pytest.raises(ValueError, match="pool is exhausted: 0 unlabeled rows"):
        a.query()


def test_budget_larger_than_pool_labels_what_exists_and_warns_once():
    X, y = _pool(n=40)
    a = ActiveAssessor(random_state=0).fit(X)
    with pytest.warns(SkassessWarning, match="budget=100 is larger than the 40") as rec:
        a.run(y, budget=100, progress=False)
    assert len(rec) == 1 and a.n_labeled_ == 40


def test_same_label_twice_is_a_no_op_and_a_different_label_an_error():
    X, y = _pool()
    a = ActiveAssessor(random_state=0).fit(X)
    a.tell([5], [y[5]])
    a.tell([5], [y[5]])
    assert a.n_labeled_ == 1 and len(a.history_) == 1
    with pytest.raises(ValueError, match=r"labels\[0\] = .* for row 5, which already has"):
        a.tell([5], [(y[5] + 1) % 3])
    with pytest.raises(ValueError, match=r"labels\[1\] = 1 for row 7, which already has"):
        a.tell([7, 7], [0, 1])
    assert a.n_labeled_ == 1  # nothing of the failed call was recorded


@pytest.mark.parametrize(
    "indices, labels, match",
    [
        ([600], [0], r"indices must lie in the pool, 0..599; got 600"),
        ([-1], [0], "indices must lie in the pool"),
        ([1.5], [0], "indices must be a 1-D array of integers"),
        ([1, 2], [0], "labels must be one label per index"),
        ([1], [3], r"labels must hold class indices 0..2; labels\[0\] \(pool row 1\) is 3\."),
        ([4, 1], [0, -1], r"labels\[1\] \(pool row 1\) is -1\."),
        ([1], [np.nan], r"labels must hold class indices 0..2; labels\[0\] \(pool row 1\) is NaN"),
        ([1], ["x"], r"not class indices 0..2, such as 'x' at labels\[0\] \(pool row 1\)"),
    ],
)
def test_tell_rejects_bad_input(indices, labels, match):
    X, _ = _pool()
    a = ActiveAssessor(random_state=0).fit(X)
    with pytest.raises(ValueError, match=match):
        a.tell(indices, labels)
    assert a.n_labeled_ == 0


def test_oracle_must_return_one_label_per_index():
    X, y = _pool()
    a = ActiveAssessor(random_state=0).fit(X)
    with pytest.raises(ValueError, match="one label per index: asked for 1"):
        a.run(lambda idx: np.zeros(len(idx) + 1, dtype=int), budget=3, progress=False)
    with pytest.raises(ValueError, match="one label per pool row"):
        a.run(y[:10], budget=3, progress=False)


def test_oracle_labels_outside_the_classes_are_rejected():
    X, y = _pool()
    a = ActiveAssessor(random_state=0).fit(X)
    with pytest.raises(
        ValueError, match=r"labels must hold class indices 0..2; labels\[0\] \(pool row \d+\) is 7"
    ):
        a.run(lambda idx: np.full(len(idx), 7), budget=2, progress=False)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(strategy="greedy"), "The 'strategy' parameter of ActiveAssessor must be"),
        (dict(task="fastest"), "The 'task' parameter of ActiveAssessor must be"),
        (
            dict(strategy="multiple_play", top_m=4),
            "top_m must be an integer from 1 to the number of groups \\(3\\)",
        ),
        (dict(task="compare", compare=(0, 9)), "names the group 9, which does not exist"),
        (dict(task="compare", compare=(1, 1)), "two different groups"),
        (dict(task="compare"), "needs compare="),
        (dict(task="compare", compare=(0, 1), rope=-1), "The 'rope' parameter"),
        (dict(strategy=EpsilonGreedy(epsilon=2)), "The 'epsilon' parameter of EpsilonGreedy"),
        (dict(stop_confidence=0), "The 'stop_confidence' parameter"),
    ],
)
def test_bad_parameters(params, match):
    X, _ = _pool()
    with pytest.raises(ValueError, match=match):
        ActiveAssessor(**params).fit(X)


@pytest.mark.parametrize(
    "task, estimator, match",
    [
        ("least_accurate", BayesianConfusionMatrix(), "needs BayesianAccuracy"),
        ("least_calibrated", BayesianAccuracy(), "BayesianCalibrationError\\(classwise=True\\)"),
        ("most_costly", BayesianConfusionMatrix(), "needs BayesianMisclassificationCost"),
        ("estimate", BayesianAccuracy(metric="tpr"), "metric='tpr' with grouping"),
        (
            "compare",
            BayesianAccuracy(metric="tpr", grouping="score_bins"),
            "task='estimate' only.*metric='tpr'",
        ),
    ],
)
def test_task_and_estimator_must_fit(task, estimator, match):
    X, _ = _pool(K=2)
    with pytest.raises(ValueError, match=match):
        ActiveAssessor(estimator, task=task).fit(X)


@pytest.mark.slow
@pytest.mark.parametrize(
    "task, estimator",
    [
        ("estimate", None),
        ("estimate", BayesianConfusionMatrix(prior="informative")),
        ("estimate", BayesianCalibrationError(n_bins=5)),
        ("least_accurate", None),
        ("most_accurate", None),
        ("least_calibrated", None),
        ("most_costly", BayesianMisclassificationCost(cost_matrix=np.ones((3, 3)) - np.eye(3))),
        ("compare", None),
    ],
)
@pytest.mark.parametrize(
    "strategy", ["thompson", "random", "top_two", "multiple_play", "epsilon_greedy", "bayes_ucb"]
)
def test_every_task_runs_with_every_strategy(task, estimator, strategy):
    X, y = _pool(n=200)
    a = ActiveAssessor(
        estimator,
        task=task,
        strategy=strategy,
        top_m=2,
        compare=(0, 2) if task == "compare" else None,
        random_state=0,
    )
    a.fit(X).run(y, budget=30, progress=False)
    assert a.n_labeled_ == 30
    if task == "compare":
        assert set(a.history_["group"]) <= {0, 2}


@pytest.mark.slow
def test_same_random_state_same_queries():
    X, y = _pool()
    runs = [
        ActiveAssessor(random_state=3).fit(X).run(y, budget=40, progress=False) for _ in range(2)
    ]
    assert runs[0].history_["index"].tolist() == runs[1].history_["index"].tolist()


@pytest.mark.slow
def test_pickle_resumes_the_same_sequence():
    X, y = _pool()
    a = (
        ActiveAssessor(task="least_accurate", random_state=1)
        .fit(X)
        .run(y, budget=20, progress=False)
    )
    b = pickle.loads(pickle.dumps(a))
    a.run(y, budget=20, progress=False)
    b.run(y, budget=20, progress=False)
    assert a.history_["index"].tolist() == b.history_["index"].tolist()
    np.testing.assert_array_equal(a.estimator_.posterior_.alpha, b.estimator_.posterior_.alpha)


def test_replaying_the_history_reproduces_the_posterior():
    X, y = _pool()
    a = ActiveAssessor(random_state=1).fit(X).run(y, budget=50, batch_size=5, progress=False)
    h = a.history_
    # The same seed: the calibrated posterior's summaries are draws seeded by it.
    b = ActiveAssessor(random_state=1).fit(X).tell(h["index"].to_numpy(), h["label"].to_numpy())
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.estimator_.posterior_.alpha, b.estimator_.posterior_.alpha)
    np.testing.assert_array_equal(a.estimator_.posterior_.beta, b.estimator_.posterior_.beta)


def test_string_labels_and_external_groups():
    X, y = _pool(K=2)
    names = np.array(["no", "yes"], dtype=object)[y]
    groups = np.where(np.arange(len(y)) % 3 == 0, "a", "b")
    est = BayesianAccuracy(grouping="external", classes=["no", "yes"], prior="informative")
    a = ActiveAssessor(est, task="compare", compare=("a", "b"), random_state=0)
    a.fit(X, group_by=groups).run(list(names), budget=25, progress=False)
    assert set(a.history_["label"]) <= {"no", "yes"}
    assert isinstance(a.summary(), pd.DataFrame)
    probs = a.comparison_probabilities()
    assert np.isclose(sum(probs), 1.0)


@pytest.mark.slow
def test_stop_rule_and_callback_stop_the_run():
    X, y = _pool(n=2000)
    # Predicted class 1 mostly wrong: the comparison is settled (and certified by the
    # anytime-valid intervals) in tens of labels, not the thousand an even pair needs.
    pred = X.argmax(axis=1)
    flip = (pred == 1) & (np.random.default_rng(1).random(len(y)) < 0.8)
    y = np.where(flip, (pred + 1) % 3, y)
    a = ActiveAssessor(task="compare", compare=(0, 1), random_state=0)
    left = a.fit(X).n_available_  # the two compared groups' rows
    a.run(y, budget=left, progress=False, stop=StopRule(probability=0.8))
    answer = a.answer()
    assert answer["probability"] == max(a.comparison_probabilities()) >= 0.8
    assert answer["certified"] >= 0.8  # Thompson keeps anytime-valid intervals: both must hold
    assert a.n_labeled_ < left
    # the deprecated constructor parameter reads the posterior probability only
    old = ActiveAssessor(task="compare", compare=(0, 1), stop_confidence=0.8, random_state=0)
    with pytest.warns(
        FutureWarning,
        match=r"ActiveAssessor\(stop_confidence=...\) is "
        "deprecated",
    ):
        old.fit(X)
    old.run(y, budget=left, progress=False)
    assert max(old.comparison_probabilities()) >= 0.8
    assert old.n_labeled_ <= a.n_labeled_
    b = ActiveAssessor(random_state=0).fit(X)
    b.run(y, budget=100, progress=False, callback=lambda s: s.n_labeled_ >= 7)
    assert b.n_labeled_ == 7


def test_thompson_finds_the_worst_group_with_fewer_labels_than_random():
    rng = np.random.default_rng(0)
    n, K = 3000, 5
    pred = rng.integers(0, K, n)
    acc = np.array([0.6, 0.9, 0.9, 0.9, 0.9])
    correct = rng.random(n) < acc[pred]
    y = np.where(correct, pred, (pred + 1) % K)
    X = np.full((n, K), 0.1 / (K - 1))
    X[np.arange(n), pred] = 0.9
    labels = {}
    for strategy in ("thompson", "random"):
        # The paper's setting: independent uniform priors per group.
        a = (
            ActiveAssessor(
                BayesianAccuracy(prior="uniform"),
                task="least_accurate",
                strategy=strategy,
                random_state=0,
            )
            .fit(X)
            .run(y, budget=200, progress=False)
        )
        labels[strategy] = a.estimator_.n_labeled_
    # Thompson spends its labels on the worst group and its close rivals.
    assert labels["thompson"][0] > labels["random"][0] * 1.5
    assert labels["thompson"][1:].max() < labels["random"][1:].max()


def _overconfident_pool(n=4000, K=4, seed=0):
    """Over-confident scores: P(correct) = sigmoid(0.5 logit(c) - 0.5)."""
    rng = np.random.default_rng(seed)
    X = rng.dirichlet(np.full(K, 0.3), size=n)
    conf, pred = X.max(axis=1), X.argmax(axis=1)
    p_correct = 1 / (1 + np.exp(-(0.5 * np.log(conf / (1 - conf + 1e-12)) - 0.5)))
    correct = rng.random(n) < p_correct
    wrong = (pred + rng.integers(1, K, size=n)) % K
    y = np.where(correct, pred, wrong)
    return X, y


def test_calibrated_prior_corrects_an_overconfident_model():
    from skassess.samplers import CalibratedPrior

    X, y = _overconfident_pool()
    pred = X.argmax(axis=1)
    truth = np.array([np.mean(y[pred == k] == k) for k in range(X.shape[1])])
    est = BayesianAccuracy(prior="informative", prior_strength=2)
    plain = ActiveAssessor(est, random_state=0).fit(X)
    learned = ActiveAssessor(est, prior_update=CalibratedPrior(), random_state=0).fit(X)
    informative = plain.estimator_.prior_.mean()
    for a in (plain, learned):
        a.run(y, budget=150, progress=False)
    calibrated = learned.estimator_.prior_.mean()
    mapped = np.bincount(pred, weights=learned.prior_update_.predict(X)) / np.bincount(pred)
    # The model's confidence overstates every group's accuracy; 150 labels fix the map,
    # and every group's prior moves towards its accuracy. (The prior mean also averages
    # over the group deviations, which four groups barely identify, so it is not the map.)
    assert np.all(informative > truth + 0.05)
    assert np.abs(mapped - truth).max() < 0.05
    assert np.all(np.abs(calibrated - truth) < np.abs(informative - truth))
    assert learned.estimator_.prior.shape == (X.shape[1], 2)
    err = [
        np.sqrt(np.mean((a.estimator_.posterior_.mean() - truth) ** 2)) for a in (plain, learned)
    ]
    assert err[1] < err[0]


def test_calibrated_prior_depends_only_on_the_labeled_rows():
    from skassess.samplers import CalibratedPrior

    X, y = _overconfident_pool(n=800)
    a = ActiveAssessor(prior_update=CalibratedPrior(), random_state=1).fit(X)
    a.run(y, budget=60, batch_size=7, progress=False)
    h = a.history_
    b = ActiveAssessor(prior_update=CalibratedPrior(), random_state=5).fit(X)
    b.tell(h["index"].to_numpy(), h["label"].to_numpy())
    y0 = np.full(len(y), -1)
    y0[h["index"]] = h["label"]
    c = ActiveAssessor(prior_update=CalibratedPrior(), random_state=7).fit(X, y0)
    for other in (b, c):
        np.testing.assert_allclose(other.estimator_.posterior_.alpha, a.estimator_.posterior_.alpha)
        np.testing.assert_allclose(other.estimator_.posterior_.beta, a.estimator_.posterior_.beta)
    d = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(d.estimator_.prior, a.estimator_.prior)


def test_calibrated_prior_needs_a_per_group_accuracy_estimator():
    from skassess.samplers import CalibratedPrior

    X, _ = _pool()
    a = ActiveAssessor(BayesianConfusionMatrix(), prior_update=CalibratedPrior())
    with pytest.raises(ValueError, match="prior_update needs a per-group accuracy"):
        a.fit(X)
    with pytest.raises(ValueError, match="The 'prior_strength' parameter of CalibratedPrior"):
        ActiveAssessor(prior_update=CalibratedPrior(prior_strength=-1)).fit(X)


@pytest.mark.slow
def test_skip_takes_rows_out_of_the_candidates():
    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.ones(3), size=60)
    assessor = ActiveAssessor(strategy="random", random_state=0).fit(scores)
    assessor.skip([4, 4, 9])
    assert assessor.skipped_.tolist() == [4, 9]
    seen = set()
    for _ in range(58):
        row = int(assessor.query()[0])
        seen.add(row)
        assessor.tell([row], [0])
    assert seen.isdisjoint({4, 9}) and len(seen) == 58
    with pytest.raises(ValueError, match="pool is exhausted"):
        assessor.query()
    with pytest.raises(
        ValueError,
        match="indices holds row 0, which is labeled; only unlabeled rows can be skipped",
    ):
        assessor.skip([0, 1])
    assessor.tell([4], [1])  # a skipped row may still be labeled
    assert assessor.skipped_.tolist() == [9] and assessor.n_labeled_ == 59


def test_identification_probabilities():
    rng = np.random.default_rng(1)
    scores = rng.dirichlet(np.ones(3), size=300)
    assessor = ActiveAssessor(task="least_accurate", random_state=0).fit(scores)
    p = assessor.identification_probabilities(n_draws=500)
    assert p.index.equals(assessor.groups_) and p.sum() == pytest.approx(1)
    # its own generator: the query sequence does not move
    a = ActiveAssessor(task="least_accurate", random_state=0).fit(scores)
    assert a.query(3).tolist() == assessor.query(3).tolist()
    with pytest.raises(ValueError, match="needs an identification task"):
        ActiveAssessor(task="estimate").fit(scores).identification_probabilities()


def test_group_by_with_a_class_grouping_names_the_assessors_way_out():
    X = np.random.default_rng(0).dirichlet(np.ones(3), 60)
    g = np.repeat(["a", "b"], 30)
    with pytest.raises(ValueError, match=r"estimator=BayesianAccuracy\(grouping='external'\)"):
        ActiveAssessor(estimator=BayesianAccuracy()).fit(X, group_by=g)
    fitted = ActiveAssessor(estimator=BayesianAccuracy(grouping="external")).fit(X, group_by=g)
    assert list(fitted.groups_) == ["a", "b"]


def _confidence_pool(n=3000, seed=0):
    """Ten classes; the black box is right with probability its top-1 confidence,
    which spreads from 0.3 to 1."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.3, 1.0, n)
    pred = rng.integers(0, 10, n)
    X = np.tile(((1 - conf) / 9)[:, None], (1, 10))
    X[np.arange(n), pred] = conf
    wrong = (pred + rng.integers(1, 10, n)) % 10
    return X, np.where(rng.random(n) < conf, pred, wrong)


@pytest.mark.slow
def test_thompson_over_confidence_bins_labels_the_uncertain_bins_and_covers():
    """Grouped by equal-count confidence bins, the estimate task's reward sends the
    labels where the outcome is uncertain: over 8 runs of 60 labels, the three least
    confident bins (accuracy 0.3-0.5, variance 0.21-0.25) get more labels than the
    three most confident (0.8-1.0, variance at most 0.16); random labels would split
    them evenly (here: 203 against 96). Seeded coverage of the pool's accuracy: at
    least 6 of 8 runs (at a true 0.95 fewer happen with probability 0.006)."""
    X, y = _confidence_pool()
    truth = np.mean(X.argmax(axis=1) == y)
    covered, n_labeled = 0, np.zeros(10)
    for seed in range(8):
        estimator = BayesianAccuracy(grouping="score_bins", binning="quantile")
        a = ActiveAssessor(estimator, random_state=seed).fit(X)
        a.run(y, budget=60, batch_size=5, progress=False)
        n_labeled += a.estimator_.summary()["n_labeled"].to_numpy()
        lo, hi = a.estimator_.overall_interval(0.95)
        covered += lo <= truth <= hi
    assert n_labeled[:3].sum() > n_labeled[-3:].sum(), n_labeled
    assert covered >= 6, covered


def test_design_groups_of_a_group_strategy_and_none_for_an_item_strategy():
    from skassess.datasets import load_fashion_mnist_scores
    from skassess.samplers import VarianceSampling

    X = load_fashion_mnist_scores().scores[:800]
    groups = ActiveAssessor(random_state=0).fit(X).design_groups()
    np.testing.assert_array_equal(groups, X.argmax(axis=1))
    item = ActiveAssessor(BayesianAccuracy(), strategy=VarianceSampling(), random_state=0)
    assert item.fit(X).design_groups() is None


def test_tell_with_annotators_records_repeats_and_models_the_slips():
    import pandas as pd

    from skassess import BayesianAccuracy

    rng = np.random.default_rng(0)
    X = rng.dirichlet(np.ones(4), 2000)
    y = np.array([rng.choice(4, p=p) for p in X])
    assessor = ActiveAssessor(BayesianAccuracy(n_imputations=4), random_state=0).fit(X)
    rows = assessor.query(40)
    assessor.tell(rows, y[rows], annotator="ana")
    assessor.tell(rows[:10], (y[rows[:10]] + 1) % 4, annotator="ben")  # ben slips
    assert assessor.n_labeled_ == 40
    table = assessor.annotations_
    assert list(table.columns) == ["index", "annotator", "label"] and len(table) == 50
    assert set(assessor.estimator_.annotator_names_) == {"ana", "ben"}
    summary = assessor.estimator_.annotator_summary()
    assert summary.loc["ben", "agreement"] == 0.0
    # The same labels fitted at once give the same estimate.
    wide = pd.DataFrame({"ana": np.full(2000, -1), "ben": np.full(2000, -1)})
    wide.loc[rows, "ana"] = y[rows]
    wide.loc[rows[:10], "ben"] = (y[rows[:10]] + 1) % 4
    direct = BayesianAccuracy(n_imputations=4, random_state=assessor.estimator_.random_state)
    direct.fit(X, wide)
    assert assessor.estimator_.overall_mean() == pytest.approx(direct.overall_mean(), abs=1e-9)
    # A repeated identical label is ignored; a changed one, a label without its
    # annotator and undo are refused.
    assessor.tell(rows[:1], y[rows[:1]], annotator="ana")
    with pytest.raises(ValueError, match="gave pool row"):
        assessor.tell(rows[:1], (y[rows[:1]] + 1) % 4, annotator="ana")
    with pytest.raises(ValueError, match="pass annotator="):
        assessor.tell(rows[:1], y[rows[:1]])
    with pytest.raises(ValueError, match="undo is not available"):
        assessor.undo()
    plain = ActiveAssessor(random_state=0).fit(X)
    plain.tell(rows[:1], y[rows[:1]])
    with pytest.raises(ValueError, match="told without annotators"):
        plain.tell(rows[1:2], y[rows[1:2]], annotator="ana")
    truth = ActiveAssessor(BayesianAccuracy(label_noise="none"), random_state=0).fit(X)
    with pytest.raises(ValueError, match="label_noise='none'"):
        truth.tell(rows[:1], y[rows[:1]], annotator="ana")

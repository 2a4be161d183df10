"""A failure changes nothing; every defect found by fuzzing has its regression test."""

import copy

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from skassess import (
    ActiveAssessor,
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.calibration import BayesianGroupMetrics, EmceeSampler, HierarchicalBetaCalibrator
from skassess.metrics import compare_groups, rank_groups
from skassess.samplers import CalibratedPrior

from .helpers import labeled_pool


def _data(n=300, k=3, seed=0, frac=0.4):
    return labeled_pool(n, k, seed, frac, concentration=0.7)


def _state(obj):
    """A deep copy of everything an object holds, to compare with :func:`_same`."""
    return copy.deepcopy(vars(obj))


def _same(a, b):
    """Structural equality of two states (arrays, frames, posteriors, lists, estimators)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.all((a == b) | (pd.isna(a) & pd.isna(b))))
        )
    if isinstance(a, pd.DataFrame | pd.Series | pd.Index):
        return type(a) is type(b) and a.equals(b)
    if isinstance(a, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return type(a) is type(b) and _same(vars(a), vars(b))
    return a == b or (a != a and b != b)


ESTIMATORS = [
    BayesianAccuracy(random_state=0),
    BayesianAccuracy(metric="tpr", grouping="score_bins", random_state=0),
    BayesianCalibrationError(n_bins=5, random_state=0),
    BayesianConfusionMatrix(random_state=0),
    BayesianMisclassificationCost(random_state=0),
]


# ------------------------------------------------------------ nothing half-done
@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_failed_first_fit_leaves_the_estimator_unfitted(est):
    scores, y, _ = _data()
    est = copy.deepcopy(est)
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(scores, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(NotFittedError):
        est.summary()
    assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_failed_refit_and_partial_fit_keep_the_previous_posterior(est):
    scores, y, _ = _data(k=3 if getattr(est, "metric", "accuracy") == "accuracy" else 2)
    est = copy.deepcopy(est).fit(scores, y)
    before = _state(est)
    bad_width = np.full((5, 5), 0.2)
    for call in (
        lambda: est.fit(scores, y[:-1]),  # a refit with bad labels: the old fit stays
        lambda: est.partial_fit(bad_width, np.zeros(5, dtype=int)),
        lambda: est.partial_fit(scores, y, sample_weight=np.full(len(y), 1e308)),
        lambda: est.add_labels(scores[:3], [0, 1, 7]),
    ):
        with pytest.raises(ValueError):
            call()
        assert _same(_state(est), before)


def test_a_failure_late_in_partial_fit_is_rolled_back(monkeypatch):
    scores, y, _ = _data()
    est = BayesianAccuracy(grouping="external").fit(scores, y, group_by=np.arange(300) % 3)
    before = _state(est)

    def boom(self):
        raise FloatingPointError("late failure")

    monkeypatch.setattr(BayesianAccuracy, "_update_posterior", boom)
    with pytest.raises(FloatingPointError):  # after counts and a new group were added
        est.partial_fit(scores[:10], y[:10], group_by=np.full(10, 7))
    with pytest.raises(FloatingPointError):
        est.fit(scores, y, group_by=np.arange(300) % 3)
    monkeypatch.undo()
    assert _same(_state(est), before)
    assert list(est.groups_) == [0, 1, 2]


@pytest.mark.parametrize("prior_update", [None, CalibratedPrior()])
def test_a_tell_that_raises_leaves_the_session_as_it_was(monkeypatch, prior_update):
    scores, _, truth = _data(n=400)
    a = ActiveAssessor(prior_update=prior_update, random_state=0).fit(scores)
    a.tell(a.query(5), truth[a.query(5)])
    # The query before the snapshot: it reads the posterior, which the calibrated
    # prior (the default) fits when first read.
    idx = a.query(3)
    before = (
        _state(a.estimator_),
        a.labels_.copy(),
        a.history_.copy(),
        a.n_labeled_,
        a._remaining.copy(),
    )
    target = CalibratedPrior if prior_update is not None else BayesianAccuracy
    method = "prior_for" if prior_update is not None else "_update_posterior"

    def boom(*args, **kwargs):
        raise RuntimeError("oracle lost")

    monkeypatch.setattr(target, method, boom)
    with pytest.raises(RuntimeError):
        a.tell(idx, truth[idx])
    monkeypatch.undo()
    after = (_state(a.estimator_), a.labels_, a.history_, a.n_labeled_, a._remaining)
    assert _same(after[0], before[0])
    np.testing.assert_array_equal(after[1], before[1])
    pd.testing.assert_frame_equal(after[2], before[2])
    assert after[3] == before[3]
    np.testing.assert_array_equal(after[4], before[4])
    a.tell(idx, truth[idx])  # and the session goes on
    assert a.n_labeled_ == before[3] + 3


def test_a_tell_with_a_bad_label_records_nothing():
    scores, _, truth = _data(n=200)
    a = ActiveAssessor(random_state=0).fit(scores)
    idx = a.query(4)
    with pytest.raises(ValueError, match="labels"):
        a.tell(idx, [0, 1, 2, 9])
    assert a.n_labeled_ == 0 and len(a.history_) == 0


@pytest.mark.parametrize(
    "est, fit",
    [
        (CalibratedPrior(), lambda e, s, y: e.fit(s, y)),
        (
            BayesianGroupMetrics(method="beta_binomial", n_draws=50, random_state=0),
            lambda e, s, y: e.fit(
                s[:, 0],
                (y == 0).astype(int) * (y >= 0) - (y < 0),
                sensitive_features=np.arange(len(y)) % 2,
            ),
        ),
        (ActiveAssessor(random_state=0), lambda e, s, y: e.fit(s, y)),
    ],
    ids=lambda e: type(e).__name__ if not callable(e) else "",
)
def test_failed_refit_of_the_other_estimators_keeps_the_previous_fit(est, fit):
    scores, y, _ = _data()
    est = fit(copy.deepcopy(est), scores, y)
    before = _state(est)
    with pytest.raises(ValueError):
        fit(est, scores, y[:-1])  # one label short
    assert _same(_state(est), before)


def test_failed_first_fit_of_the_calibrator_leaves_it_unfitted():
    cal = HierarchicalBetaCalibrator(sampler=EmceeSampler(n_steps=20, n_burn=20, max_steps=40))
    with pytest.raises(ValueError, match="n_walkers"):
        cal.set_params(sampler__n_walkers=4).fit(
            np.linspace(0.1, 0.9, 20), np.tile([0, 1], 10), group_by=np.arange(20) % 3
        )
    with pytest.raises(NotFittedError):
        cal.transform([0.5])


# ------------------------------------------------------------ defects found
def test_object_dtype_labels():
    scores, y, _ = _data()
    est = BayesianAccuracy(random_state=0).fit(scores, y.astype(object))
    pd.testing.assert_frame_equal(
        est.summary(), BayesianAccuracy(random_state=0).fit(scores, y).summary()
    )
    est = BayesianAccuracy(missing_label=np.nan).fit(
        scores, np.where(y < 0, None, y).astype(object)
    )
    assert est.n_labeled_.sum() == (y >= 0).sum()


def test_list_of_lists_records_the_number_of_columns():
    scores, y, _ = _data()
    assert BayesianAccuracy().fit(scores.tolist(), y.tolist()).n_features_in_ == 3
    assert BayesianAccuracy().fit(scores[:, 0].tolist(), (y > 0).astype(int)).n_features_in_ == 1


def test_group_metrics_needs_two_groups():
    s = np.linspace(0.1, 0.9, 20)
    with pytest.raises(ValueError, match="sensitive_features must hold at least two groups"):
        BayesianGroupMetrics().fit(s, np.tile([0, 1], 10), sensitive_features=["a"] * 20)


def test_a_list_is_not_a_group_label():
    scores, y, _ = _data()
    est = BayesianAccuracy().fit(scores, y)
    with pytest.raises(TypeError, match="The 'group_a' parameter of compare_groups"):
        compare_groups(est, [0], 1)


def test_nan_draws_are_refused_by_comparisons():
    draws = pd.DataFrame({"a": [np.nan, 0.5, 0.6], "b": [0.1, 0.2, 0.3]})
    for call in (lambda: compare_groups(draws, "a", "b"), lambda: rank_groups(draws)):
        with pytest.raises(ValueError, match="the draws of group 'a' hold NaN"):
            call()


def test_huge_sample_weight_is_refused_not_turned_into_nan():
    scores, y, _ = _data()
    with pytest.raises(ValueError, match="sample_weight must sum to at most 2"):
        BayesianAccuracy().fit(scores, y, sample_weight=np.full(len(y), 1e308))


def test_overall_precision_when_nothing_is_predicted_positive_is_an_error_not_nan():
    est = BayesianAccuracy(metric="precision", grouping="score_bins").fit(
        np.full(10, 0.2), np.zeros(10, dtype=int)
    )
    assert np.isfinite(est.summary()[["mean", "lower", "upper"]].to_numpy()).all()
    with pytest.raises(ValueError, match="The overall ppv is undefined: no row seen is predicted"):
        est.overall_samples(10)
    with pytest.raises(ValueError, match="The overall ppv is undefined"):
        est.overall_mean()


@pytest.mark.parametrize("strength", [2.0, 1e-9])
def test_rates_without_labels_or_positives_stay_finite(strength):
    s = np.linspace(0.05, 0.95, 40)
    est = BayesianAccuracy(metric="tpr", grouping="external", prior_strength=strength).fit(
        s,
        np.zeros(40, dtype=int),
        group_by=np.arange(40) % 2,  # no positives at all
    )
    table = est.summary()[["mean", "lower", "upper"]].to_numpy()
    assert np.isfinite(table).all()
    assert np.isfinite(est.overall_samples(50)).all()
    assert np.isfinite(
        BayesianAccuracy(metric="tpr", grouping="score_bins", prior_strength=strength)
        .fit(s)
        .predict(s)
    ).all()


def test_confusion_matrix_normalized_by_true_class_has_no_nan_row():
    scores = np.tile([[0.9, 0.05, 0.05]], (10, 1))  # class 0 always predicted
    est = BayesianConfusionMatrix(random_state=0).fit(scores, np.zeros(10, dtype=int))
    matrix = est.confusion_matrix("true").to_numpy()
    assert np.isfinite(matrix).all()
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)


def test_most_costly_is_reproducible_with_a_seed():
    scores, _, truth = _data(n=500)
    runs = []
    for _ in range(2):
        a = ActiveAssessor(task="most_costly", random_state=0).fit(scores)
        a.run(truth, 20, progress=False)
        runs.append(a.summary())
    pd.testing.assert_frame_equal(runs[0], runs[1])


def test_small_n_walkers_is_a_clean_error():
    with pytest.raises(ValueError, match="n_walkers"):
        HierarchicalBetaCalibrator(sampler=EmceeSampler(n_walkers=2)).fit(
            np.linspace(0.1, 0.9, 20), np.tile([0, 1], 10)
        )


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(deviations=[]), "deviations"),
        (dict(deviations=[-1.0, 1.0]), "deviations"),
        (dict(map_scale=0.0), "map_scale"),
        (dict(slope_scale=-1.0), "slope_scale"),
    ],
)
def test_calibrated_prior_parameters_are_validated(params, match):
    scores, y, _ = _data()
    with pytest.raises(ValueError, match=match):
        CalibratedPrior(**params).fit(scores, y)

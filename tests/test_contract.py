"""The package contract, one test per promise (see docs/conventions.rst)."""

import inspect

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold

from skassess import (
    ActiveAssessor,
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.calibration import BayesianGroupMetrics, EmceeSampler, HierarchicalBetaCalibrator
from skassess.datasets import load_adult_scores, load_fashion_mnist_scores
from skassess.samplers import CalibratedPrior, QueryStrategy

from .helpers import labeled_pool

METRIC_ESTIMATORS = [
    BayesianAccuracy(prior="informative", random_state=0),
    BayesianAccuracy(grouping="score_bins", n_bins=5, random_state=0),
    BayesianCalibrationError(n_bins=5, random_state=0),
    BayesianConfusionMatrix(prior="informative", random_state=0),
    BayesianMisclassificationCost(cost_matrix=[[0, 1, 4], [1, 0, 1], [2, 1, 0]], random_state=0),
]


_data = labeled_pool


# ------------------------------------------------------------------ signatures
@pytest.mark.parametrize(
    "cls",
    [
        BayesianAccuracy,
        BayesianCalibrationError,
        BayesianConfusionMatrix,
        BayesianMisclassificationCost,
    ],
)
def test_one_fit_signature(cls):
    for method in ("fit", "partial_fit", "add_labels"):
        params = inspect.signature(getattr(cls, method)).parameters
        assert list(params)[:3] in (["self", "X", "y"],)
        for name in ("group_by", "y_pred", "sample_weight"):
            assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, (method, name)
    for method in ("predict", "predict_proba", "apply"):
        params = inspect.signature(getattr(cls, method)).parameters
        assert {"group_by", "y_pred"} <= set(params)
    assert "sample_weight" in inspect.signature(cls.score).parameters


def test_per_row_metadata_names_do_not_collide_with_cv_groups():
    for cls in (
        BayesianAccuracy,
        BayesianCalibrationError,
        BayesianConfusionMatrix,
        HierarchicalBetaCalibrator,
        ActiveAssessor,
        BayesianGroupMetrics,
        CalibratedPrior,
    ):
        assert "groups" not in inspect.signature(cls.fit).parameters, cls
    assert "sensitive_features" in inspect.signature(BayesianGroupMetrics.fit).parameters


def test_grid_search_over_priors_routes_group_by_apart_from_cv_groups():
    data = load_adult_scores("race")
    scores, target = data.scores["LR"].to_numpy(), data.target.to_numpy()
    race = data.sensitive["race"].to_numpy()
    y = np.full(len(target), -1)
    rows = np.random.default_rng(0).choice(len(y), 600, replace=False)
    y[rows] = target[rows]
    folds = np.arange(len(y)) % 5  # scikit-learn's CV groups: the splitter's business
    with sklearn.config_context(enable_metadata_routing=True):
        est = BayesianAccuracy(grouping="external", prior="informative")
        est.set_fit_request(group_by=True).set_score_request(group_by=True)
        search = GridSearchCV(est, {"prior_strength": [2, 20, 200]}, cv=GroupKFold(5))
        search.fit(scores, y, group_by=race, groups=folds)
    assert list(search.best_estimator_.groups_) == sorted(set(race))
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.n_samples_seen_ == len(y)


# --------------------------------------------------------------- missing labels
def test_missing_label_nan_and_strings():
    scores, y, _ = _data()
    ref = BayesianAccuracy(random_state=0).fit(scores, y)
    as_nan = np.where(y < 0, np.nan, y.astype(float))
    nan = BayesianAccuracy(missing_label=np.nan, random_state=0).fit(scores, as_nan)
    pd.testing.assert_frame_equal(nan.summary(), ref.summary())
    names = np.array(["a", "b", "c"], dtype=object)
    as_str = np.where(y < 0, "?", names[np.maximum(y, 0)]).astype(object)
    strings = BayesianAccuracy(classes=names, missing_label="?").fit(scores, as_str)
    np.testing.assert_array_equal(strings.n_success_, ref.n_success_)
    # NaN marks an unlabeled row whatever the marker, as the README says
    default = BayesianAccuracy(random_state=0).fit(scores, as_nan)
    pd.testing.assert_frame_equal(default.summary(), ref.summary())
    # string labels read by pandas, blanks as NaN
    from_pandas = pd.Series(as_str).replace("?", np.nan)
    read = BayesianAccuracy(classes=names, random_state=0).fit(scores, from_pandas)
    np.testing.assert_array_equal(read.n_success_, ref.n_success_)
    np.testing.assert_array_equal(read.n_labeled_, ref.n_labeled_)
    with pytest.raises(ValueError, match="missing_label=None says that every row is labeled"):
        BayesianAccuracy(missing_label=None).fit(scores, as_nan)


def test_plus_minus_one_labels_are_refused_not_dropped():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=1000)
    y = np.where(rng.uniform(size=1000) < p, 1, -1)  # {-1, +1} labels, every row labeled
    with pytest.raises(ValueError, match=r"only the values -1 and 1.*classes=\[-1, 1\]"):
        BayesianAccuracy().fit(p, y)
    est = BayesianAccuracy(classes=[-1, 1], missing_label=np.nan).fit(p, y)
    assert est.n_labeled_.sum() == 1000  # nothing became unlabeled
    with pytest.raises(ValueError, match="missing_label=-1 is also one of classes"):
        BayesianAccuracy(classes=[-1, 1]).fit(p, y)
    # -1 as the marker with only positives labeled: said explicitly with classes=[0, 1].
    few = np.where(np.arange(1000) < 10, 1, -1)
    assert BayesianAccuracy(classes=[0, 1]).fit(p, few).n_labeled_.sum() == 10


# ----------------------------------------------------------- parameter checks
def test_parameters_are_validated_on_every_call():
    scores, y, _ = _data()
    est = BayesianAccuracy().fit(scores, y)
    before = est.summary()
    est.set_params(prior_strength=-5)
    with pytest.raises(ValueError, match="The 'prior_strength' parameter of BayesianAccuracy"):
        est.partial_fit(scores, y)
    with pytest.raises(ValueError, match="The 'prior_strength' parameter"):
        est.add_labels(scores[:2], y[:2])
    est.set_params(prior_strength=2.0)
    pd.testing.assert_frame_equal(est.summary(), before)  # nothing changed meanwhile
    est.set_params(random_state="seed")
    with pytest.raises(ValueError, match="The 'random_state' parameter"):
        est.overall_samples(10)


@pytest.mark.parametrize("metric", ["tpr", "fnr", "tnr", "fpr", "ppv", "npv", "precision"])
@pytest.mark.parametrize("grouping", ["predicted_class", "class_bin"])
def test_degenerate_metric_grouping_is_refused_with_the_grouping_to_use(metric, grouping):
    p = np.random.default_rng(0).uniform(size=50)
    with pytest.raises(ValueError, match="grouping='external'.*or grouping='score_bins'"):
        BayesianAccuracy(metric=metric, grouping=grouping).fit(p, (p > 0.3).astype(int))


def test_selection_rate_needs_no_labels():
    p = np.random.default_rng(0).uniform(size=50)
    with pytest.raises(ValueError, match="selection_rate' needs no labels"):
        BayesianAccuracy(metric="selection_rate", grouping="score_bins").fit(p)


def test_one_default_prior_strength():
    defaults = {
        cls: inspect.signature(cls).parameters["prior_strength"].default
        for cls in (
            BayesianAccuracy,
            BayesianCalibrationError,
            BayesianConfusionMatrix,
            BayesianMisclassificationCost,
        )
    }
    assert set(defaults.values()) == {2.0}
    # With the informative prior the same labels give the same per-class accuracy.
    data = load_fashion_mnist_scores()
    y = np.full(len(data.target), -1)
    rows = np.random.default_rng(0).choice(len(y), 20, replace=False)
    y[rows] = data.target[rows]
    for prior in ("informative", "uniform"):
        acc = BayesianAccuracy(prior=prior).fit(data.scores, y)
        cm = BayesianConfusionMatrix(prior=prior).fit(data.scores, y)
        diag = cm.posterior_.diagonal()
        # Equal up to float32 rounding of the scores (summed in another order).
        np.testing.assert_allclose(diag.alpha, acc.posterior_.alpha, rtol=1e-6)
        np.testing.assert_allclose(diag.beta, acc.posterior_.beta, rtol=1e-6)
        assert acc.overall_mean() == pytest.approx(cm.overall_mean(), rel=1e-6)


# ------------------------------------------------- predict / predict_proba / score
@pytest.mark.parametrize("est", METRIC_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_predict_is_the_mean_of_the_per_group_metric(est):
    scores, y, _ = _data()
    fitted = clone(est).fit(scores, y)
    group = fitted.apply(scores)
    draws = fitted.groupwise_samples(40000).mean(axis=0)
    np.testing.assert_allclose(fitted.predict(scores), draws[group], atol=0.01)


@pytest.mark.parametrize("est", METRIC_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_score_is_the_weighted_mean_log_predict_proba(est):
    scores, y, truth = _data()
    fitted = clone(est).fit(scores, y)
    proba = fitted.predict_proba(scores)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pred = scores.argmax(axis=1)
    outcome = truth if proba.shape[1] == 3 else (pred == truth).astype(int)
    logp = np.log(proba[np.arange(len(truth)), outcome])
    w = np.random.default_rng(1).uniform(size=len(truth))
    assert fitted.score(scores, truth) == pytest.approx(logp.mean())
    assert fitted.score(scores, truth, sample_weight=w) == pytest.approx(
        np.average(logp, weights=w)
    )


def test_n_samples_seen_and_add_labels_protocol():
    scores, y, _ = _data()
    full = BayesianAccuracy(prior="informative").fit(scores, y)
    unlabeled = BayesianAccuracy(prior="informative").fit(scores)
    rows = np.flatnonzero(y >= 0)
    unlabeled.add_labels(scores[rows], y[rows])
    pd.testing.assert_frame_equal(unlabeled.summary(), full.summary())
    assert full.n_samples_seen_ == len(y)
    full.partial_fit(scores[:10])
    assert full.n_samples_seen_ == len(y) + 10


def test_the_prediction_travels_as_y_pred():
    scores, y, _ = _data()
    pred = scores.argmax(axis=1)
    other = (pred + 1) % 3  # a black box that predicts something else from the same scores
    a = BayesianAccuracy().fit(scores, y, y_pred=other)
    manual = [
        (other[(other == k) & (y >= 0)] == y[(other == k) & (y >= 0)]).sum() for k in range(3)
    ]
    np.testing.assert_array_equal(a.n_success_, manual)
    np.testing.assert_array_equal(a.apply(scores, y_pred=other), other)


# ------------------------------------------------------------------- displays
def test_displays_follow_calibration_display():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skassess.metrics import DifferenceDisplay, PosteriorDisplay, ReliabilityDisplay

    scores, y, _ = _data()
    for display in (ReliabilityDisplay, PosteriorDisplay, DifferenceDisplay):
        plot = inspect.signature(display.plot).parameters
        assert plot["ax"].kind is inspect.Parameter.KEYWORD_ONLY
        assert plot["name"].kind is inspect.Parameter.KEYWORD_ONLY
    disp = ReliabilityDisplay.from_predictions(
        y, scores, n_bins=4, binning="quantile", name="model"
    )
    assert disp.line_ is disp.errorbar_[0] and disp.ax_.figure is disp.figure_
    with pytest.raises(TypeError):
        disp.plot(disp.ax_)  # ax is keyword-only
    post = PosteriorDisplay.from_predictions(y, scores)
    assert post.line_ is post.errorbar_[0]


# ------------------------------------------------------- active assessment
class _LeastConfidentFirst(QueryStrategy):
    """An item-level strategy: the unlabeled item with the lowest top-1 score."""

    _parameter_constraints = {}

    def item_utilities(self, context, rng):
        return -context.scores.max(axis=1)


def test_item_level_strategy_and_utilities():
    scores, _, truth = _data()
    a = ActiveAssessor(strategy=_LeastConfidentFirst(), random_state=0).fit(scores)
    idx, u = a.query(3, return_utilities=True)
    order = np.argsort(scores.max(axis=1))
    np.testing.assert_array_equal(idx, order[:3])
    assert u.shape == (3, len(truth)) and np.isnan(u[1, idx[0]])
    a.tell(idx, truth[idx])
    assert np.isnan(a.query(1, return_utilities=True)[1][0, idx]).all()


def test_group_strategy_gives_items_their_groups_utility():
    scores, _, truth = _data()
    a = ActiveAssessor(task="least_accurate", random_state=0).fit(scores)
    idx, u = a.query(1, return_utilities=True)
    group = a.estimator_.apply(scores)
    for g in range(3):
        assert np.unique(u[0, group == g]).size == 1  # every item of a group: one score
    assert u[0, idx[0]] == np.nanmax(u[0])


def test_prior_update_mutates_no_hyperparameter():
    data = load_fashion_mnist_scores()
    base = BayesianAccuracy(prior="informative")
    params = base.get_params()
    a = ActiveAssessor(base, prior_update=CalibratedPrior(), random_state=0).fit(data.scores)
    a.run(data.target, budget=30, progress=False)
    assert base.get_params() == params and a.estimator.get_params() == params
    learned = a.estimator_.get_params()["prior"]
    assert learned.shape == (10, 2)  # a clone built with the learned prior, said in its params
    np.testing.assert_allclose(a.estimator_.prior_.alpha, learned[:, 0])


def test_warnings_point_at_the_caller():
    from skassess.exceptions import SkassessWarning

    p = np.r_[np.full(900, 0.99), np.linspace(0.5, 0.9, 100)]
    for method in ("fit", "partial_fit"):
        with pytest.warns(SkassessWarning, match="tied confidences") as record:
            getattr(BayesianCalibrationError(n_bins=10, binning="quantile"), method)(p)
        assert record[0].filename == __file__, method
    s = np.linspace(0.05, 0.95, 40)
    with pytest.warns(SkassessWarning, match="prior predictive") as record:
        HierarchicalBetaCalibrator(
            random_state=0, sampler=EmceeSampler(n_burn=50, n_steps=50, target_ess=50)
        ).fit(s, np.full(40, -1))
    assert record[0].filename == __file__


def test_a_dataframe_pool_keeps_its_column_names_through_tell():
    import warnings

    scores, _, truth = _data()
    frame = pd.DataFrame(scores, columns=["cat", "dog", "eel"])
    a = ActiveAssessor(random_state=0).fit(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "X does not have valid feature names"
        a.run(truth, budget=5, progress=False)
    assert a.n_labeled_ == 5 and list(a.estimator_.feature_names_in_) == ["cat", "dog", "eel"]


# ------------------------------------------------------- one validation style
def _public_functions():
    import skassess.calibration
    import skassess.datasets
    import skassess.metrics
    import skassess.samplers

    for module in (skassess.metrics, skassess.calibration, skassess.samplers, skassess.datasets):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) and inspect.signature(obj).parameters:
                yield pytest.param(obj, id=f"{module.__name__}.{name}")


@pytest.mark.parametrize("func", list(_public_functions()))
def test_every_public_function_validates_its_arguments_with_validate_params(func):
    # scikit-learn's validate_params wraps the function (functools.wraps) and
    # checks every argument against the constraints it was given.
    assert hasattr(func, "__wrapped__"), func.__name__
    # The first argument gets an object no constraint accepts; the other
    # required ones a placeholder (arguments are checked in order).
    params = inspect.signature(func).parameters
    first = next(iter(params))
    args = {name: 1.0 for name, p in params.items() if p.default is p.empty}
    args[first] = object()
    with pytest.raises(ValueError, match=f"The '{first}' parameter of {func.__name__} must be"):
        func(**args)


def _fitted_group_metrics():
    data = load_adult_scores("sex")
    y = np.where(np.arange(len(data.target)) < 200, data.target, -1)
    return BayesianGroupMetrics(method="beta_binomial", n_draws=50, random_state=0).fit(
        data.scores["LR"].to_numpy(), y, sensitive_features=data.sensitive["sex"]
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda est: est.summary(level=2), "'level' parameter of BayesianAccuracy.summary"),
        (lambda est: est.overall_interval(level=0), "of BayesianAccuracy.overall_interval"),
        (lambda est: est.groupwise_samples(n_draws=0), "of BayesianAccuracy.groupwise_samples"),
        (lambda est: est.posterior_.rvs(size=0), "'size' parameter of BetaPosterior.rvs"),
        (
            lambda est: BayesianConfusionMatrix().fit(*_data()[:2]).confusion_matrix("rows"),
            "'normalize' parameter of BayesianConfusionMatrix.confusion_matrix",
        ),
        (
            lambda est: BayesianMisclassificationCost().fit(*_data()[:2]).summary(n_draws=0),
            "'n_draws' parameter of BayesianMisclassificationCost.summary",
        ),
        (lambda est: _compare(est).interval(level=1.0), "of GroupComparison.interval"),
        (
            lambda est: ActiveAssessor().fit(_data()[0]).query(0),
            "'n' parameter of ActiveAssessor.query",
        ),
        (
            lambda est: ActiveAssessor().fit(_data()[0]).run(_data()[2], budget=0),
            "'budget' parameter of ActiveAssessor.run",
        ),
        (
            lambda est: HierarchicalBetaCalibrator().sample([0.5], n_draws=0),
            "'n_draws' parameter of HierarchicalBetaCalibrator.sample",
        ),
        (
            lambda est: _fitted_group_metrics().differences(rope=-0.1),
            "'rope' parameter of BayesianGroupMetrics.differences",
        ),
    ],
)
def test_method_arguments_are_validated_naming_the_class_called(call, match):
    scores, y, _ = _data()
    est = BayesianAccuracy(random_state=0).fit(scores, y)
    with pytest.raises(ValueError, match=match):
        call(est)


def _compare(est):
    from skassess.metrics import compare_groups

    return compare_groups(est, 0, 1, n_draws=100)


# ------------------------------------------------------- one home per concept
def test_one_eps_defined_once_and_used_by_the_maps():
    import pathlib
    import re

    from scipy.special import logit

    import skassess
    from skassess.calibration._maps import log_odds
    from skassess.utils import _validation

    root = pathlib.Path(skassess.__file__).parent
    definitions = [
        f"{path.relative_to(root)}"
        for path in root.rglob("*.py")
        if re.search(r"^EPS\s*=", path.read_text(), flags=re.MULTILINE)
    ]
    assert definitions == ["utils/_validation.py"]
    from skassess.calibration._maps import EPS

    assert EPS is _validation.EPS
    assert log_odds([1.0])[0] == pytest.approx(logit(1 - _validation.EPS))


def test_one_ece_for_the_function_the_estimator_and_a_direct_computation():
    from skassess.metrics import expected_calibration_error

    scores, _, truth = _data(n=2000, k=3, seed=3)
    conf, pred = scores.max(axis=1), scores.argmax(axis=1)
    edges = np.linspace(0, 1, 11)
    b = np.clip(np.digitize(conf, edges[1:-1]), 0, 9)
    direct = sum(
        (b == j).mean() * abs((pred == truth)[b == j].mean() - conf[b == j].mean())
        for j in range(10)
        if (b == j).any()
    )
    ece = expected_calibration_error(truth, scores, n_bins=10)
    assert ece == pytest.approx(direct, abs=1e-12)
    est = BayesianCalibrationError(n_bins=10, missing_label=None).fit(scores, truth)
    with np.errstate(invalid="ignore"):  # empty bins weigh 0
        accuracy = np.nan_to_num(est.n_success_ / est.n_labeled_)
    assert est.calibration_error(accuracy) == pytest.approx(ece)


@pytest.mark.parametrize("metric", ["tpr", "fpr", "ppv", "npv", "accuracy"])
def test_one_rate_table_for_the_conjugate_and_the_fairness_estimators(metric):
    from sklearn.metrics import confusion_matrix

    rng = np.random.default_rng(0)
    n = 3000
    p1 = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p1).astype(int)
    group = rng.choice(["a", "b"], size=n)
    pred = (p1 > 0.5).astype(int)
    tn, fp, fn, tp = confusion_matrix(y[group == "a"], pred[group == "a"]).ravel()
    direct = {
        "tpr": tp / (tp + fn),
        "fpr": fp / (fp + tn),
        "ppv": tp / (tp + fp),
        "npv": tn / (tn + fn),
        "accuracy": (tp + tn) / (tp + tn + fp + fn),
    }[metric]
    est = BayesianAccuracy(
        metric=metric, grouping="external", prior="uniform", prior_strength=1e-9
    ).fit(p1, y, group_by=group)
    assert est.predict(p1[group == "a"][:1], group_by=["a"])[0] == pytest.approx(direct, 1e-6)
    bgm = BayesianGroupMetrics(method="frequentist", metrics=(metric,)).fit(
        p1, y, sensitive_features=group
    )
    assert bgm.summary().loc[(metric, "a"), "mean"] == pytest.approx(direct, 1e-12)


def test_one_beta_state_vectorized_over_runs_and_groups():
    from skassess.metrics import BetaPosterior

    post = BetaPosterior(np.ones((4, 3)), np.ones((4, 3)))
    runs, groups = np.array([0, 0, 3, 1]), np.array([2, 2, 0, 1])
    after = post.record((runs, groups), np.array([1, 0, 1, 1]))
    successes = np.zeros((4, 3))
    trials = np.zeros((4, 3))
    np.add.at(successes, (runs, groups), [1, 0, 1, 1])
    np.add.at(trials, (runs, groups), 1)
    np.testing.assert_array_equal(after.successes, successes)
    np.testing.assert_array_equal(after.trials, trials)
    one_cell = BetaPosterior(1.0, 1.0).update([1], [2])
    assert after.mean()[0, 2] == pytest.approx(one_cell.mean()[0])


def test_one_rope_function_behind_every_comparison():
    from skassess.metrics import BetaPosterior, compare_groups, rope_probabilities

    scores, y, truth = _data(n=900, seed=5, frac=0.2)
    # Independent Beta posteriors (the calibrated prior draws the groups jointly).
    est = BayesianAccuracy(prior="uniform", random_state=0).fit(scores, y)
    post = est.posterior_
    pair = (
        BetaPosterior(post.alpha[:1], post.beta[:1]),
        BetaPosterior(post.alpha[1:2], post.beta[1:2]),
    )
    exact = rope_probabilities(pair, rope=0.05)[0]
    assessor = ActiveAssessor(
        BayesianAccuracy(prior="uniform"), task="compare", compare=(0, 1)
    ).fit(scores)
    assessor.tell(np.flatnonzero(y >= 0), y[y >= 0])
    np.testing.assert_allclose(assessor.comparison_probabilities(), exact, atol=2e-4)
    drawn = compare_groups(est, 0, 1, rope=0.05, n_draws=200_000).probabilities
    np.testing.assert_allclose(drawn, exact, atol=5e-3)  # 200k draws: SE < 1.2e-3


def test_one_group_encoder_orders_groups_alike():
    data = load_adult_scores("race")
    s, y, g = data.scores["LR"].to_numpy(), data.target.to_numpy(), data.sensitive["race"]
    acc = BayesianAccuracy(grouping="external").fit(s, y, group_by=g)
    cal = HierarchicalBetaCalibrator(
        random_state=0, sampler=EmceeSampler(n_steps=20, n_burn=20, max_steps=40)
    )
    labeled = np.where(np.arange(len(y)) < 300, y, -1)
    with pytest.warns():
        cal.fit(s, labeled, group_by=g)
    assert list(acc.groups_) == list(cal.groups_) == sorted(set(g))


def _failed_refit_cases():
    from sklearn.linear_model import LogisticRegression

    from skassess import (
        ActiveAssessor,
        BayesianAccuracy,
        BayesianCalibrationError,
        BayesianConfusionMatrix,
        BayesianMisclassificationCost,
    )
    from skassess.calibration import BayesianGroupMetrics, HierarchicalBetaCalibrator
    from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor
    from skassess.metrics import BayesianModelComparison
    from skassess.samplers import (
        ActiveModelSelector,
        ActiveTester,
        CalibratedPrior,
        MLPEnsembleSurrogate,
    )

    rng = np.random.default_rng(0)
    S = rng.dirichlet(np.ones(3), 60)
    y = np.where(np.arange(60) % 3 == 0, S.argmax(axis=1), -1)
    y_full = np.array([rng.choice(3, p=p) for p in S])
    bad = S.copy()
    bad[4] = np.nan
    s1 = S[:, 0]
    yb = np.where(np.arange(60) % 2 == 0, (rng.random(60) < s1).astype(int), -1)
    groups = np.array(["a", "b"] * 30)
    models = np.stack([S, rng.dirichlet(np.ones(3), 60)], axis=1)
    Xf = rng.normal(size=(120, 4))
    yf = (Xf[:, 0] > 0).astype(int)
    clf = LogisticRegression().fit(Xf[:60], yf[:60])
    Xbad = Xf[60:].copy()
    Xbad[0, 0] = np.nan
    return {
        "BayesianAccuracy": (BayesianAccuracy(), (S, y), (bad, y)),
        "BayesianConfusionMatrix": (BayesianConfusionMatrix(), (S, y), (bad, y)),
        "BayesianCalibrationError": (BayesianCalibrationError(), (S, y), (bad, y)),
        "BayesianMisclassificationCost": (BayesianMisclassificationCost(), (S, y), (bad, y)),
        "BayesianModelComparison": (BayesianModelComparison(), (models, y), (models, y[:5])),
        "ActiveAssessor": (ActiveAssessor(random_state=0), (S, y), (bad, y)),
        "ActiveTester": (ActiveTester(random_state=0), (S, y), (bad, y)),
        "ActiveModelSelector": (ActiveModelSelector(random_state=0), (models, y), (models, y[:5])),
        "CalibratedPrior": (CalibratedPrior(), (S, y_full), (bad, y_full)),
        "MLPEnsembleSurrogate": (
            MLPEnsembleSurrogate(n_members=2, random_state=0),
            (Xf[:60], yf[:60]),
            (Xbad, yf[60:]),
        ),
        "HierarchicalBetaCalibrator": (
            HierarchicalBetaCalibrator(
                random_state=0,
                sampler=EmceeSampler(n_steps=200, n_burn=100, max_steps=200, progress=False),
            ),
            (s1, yb),
            (s1, yb[:5]),
        ),
        "BayesianGroupMetrics": (
            BayesianGroupMetrics("beta_binomial", random_state=0),
            (s1, yb, groups),
            (s1, yb, groups[:5]),
        ),
        "PerformancePredictor": (
            PerformancePredictor(clf, method="confidence"),
            (Xf[60:], yf[60:]),
            (Xbad, yf[60:]),
        ),
        "PerformanceIntervalRegressor": (
            PerformanceIntervalRegressor(
                PerformancePredictor(clf, method="confidence"), random_state=0
            ),
            (Xf[60:], yf[60:]),
            (Xf[60:], yf[60:70]),
        ),
    }


@pytest.mark.parametrize("name", list(_failed_refit_cases()))
def test_a_failed_refit_keeps_the_previous_fit(name):
    """One rule for every estimator: fit that raises leaves every attribute as it was."""
    import warnings

    est, good, bad = _failed_refit_cases()[name]

    def fit(args):
        if name == "BayesianGroupMetrics":
            return est.fit(args[0], args[1], sensitive_features=args[2])
        return est.fit(*args)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit(good)
        before = dict(vars(est))
        with pytest.raises(ValueError):
            fit(bad)
    assert set(vars(est)) == set(before)
    assert all(vars(est)[k] is v for k, v in before.items())

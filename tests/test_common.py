"""scikit-learn's estimator checks for every public estimator.

The estimators take black-box *scores* (class probabilities) as X, while most
checks feed arbitrary real-valued features. So the checks run twice:

1. on each bare estimator, where every check that fits on arbitrary features
   is an expected failure (listed below with the reason);
2. on each estimator behind a black box: ``_BehindBlackBox`` fits a
   LogisticRegression on the check's features and gives its probabilities to
   the estimator (the situation the library is for). Here every check must
   pass, so fit / partial_fit / predict / score / sample_weight / pickling of
   the estimator itself go through all of scikit-learn's protocols.

The transformer ``HierarchicalBetaCalibrator`` goes through the same two runs;
behind the black box it calibrates the LogisticRegression's top-label
confidence. Its MCMC runs with shorter chains than the default (it still
extends them until R-hat <= 1.01 and ESS >= 100, so no ConvergenceWarning).

``ActiveAssessor``, ``CalibratedPrior`` and ``BayesianGroupMetrics`` (its
sensitive feature derived from the first feature or the row's parity, its scores from a binary
LogisticRegression) go through both runs too, and the harness has
``partial_fit`` for the estimators that have it, so scikit-learn's
``partial_fit`` checks run.

``BayesianModelComparison`` and ``ActiveModelSelector`` compare black boxes:
behind the harness two of them (a LogisticRegression and a depth-2 decision
tree) score the check's items, and their scores, ``(n_samples, 2,
n_classes)``, go to the estimator.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, MetaEstimatorMixin, TransformerMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
    parametrize_with_checks,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from skassess import (
    ActiveAssessor,
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.calibration import (
    BayesianGroupMetrics,
    EmceeSampler,
    HierarchicalBetaCalibrator,
    NUTSSampler,
)
from skassess.exceptions import SkassessWarning
from skassess.meta import (
    ActiveMonitor,
    PerformanceIntervalRegressor,
    PerformanceMonitor,
    PerformancePredictor,
)
from skassess.metrics import BayesianModelComparison
from skassess.samplers import (
    ActiveModelSelector,
    ActiveTester,
    CalibratedPrior,
    MLPEnsembleSurrogate,
)
from skassess.utils.discovery import all_estimators

CALIBRATOR = HierarchicalBetaCalibrator(
    n_draws=200, random_state=0, sampler=EmceeSampler(n_burn=100, n_steps=100, target_ess=100)
)

ESTIMATORS = [
    BayesianAccuracy(),
    BayesianAccuracy(grouping="score_bins", prior="informative", n_bins=3),
    BayesianAccuracy(prior="hierarchical", random_state=0),
    BayesianCalibrationError(n_bins=4),
    BayesianConfusionMatrix(prior="informative"),
    BayesianMisclassificationCost(),
    CALIBRATOR,
    ActiveAssessor(BayesianAccuracy(), random_state=0),
    CalibratedPrior(),
    BayesianGroupMetrics("beta_binomial", n_draws=200, random_state=0),
    BayesianModelComparison(n_draws=200, random_state=0),
    ActiveModelSelector(BayesianModelComparison(n_draws=200), random_state=0),
    ActiveTester(metrics=("accuracy",), random_state=0),
]

NOT_SCORES = (
    "fits on arbitrary real-valued features; X must be class probabilities (rows "
    "non-negative and summing to 1), so fit rejects it with a ValueError"
)
BARE_EXPECTED_FAILURES = {
    name: NOT_SCORES
    for name in [
        "check_all_zero_sample_weights_error",
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimators_dtypes",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_1sample",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_n_features_in",
        "check_n_features_in_after_fitting",
        "check_pipeline_consistency",
        "check_readonly_memmap_input",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weights_list",
        "check_sample_weights_not_an_array",
        "check_sample_weights_not_overwritten",
        "check_sample_weights_pandas_series",
        "check_sample_weights_shape",
        "check_transformer_data_not_an_array",
        "check_transformer_general",
        "check_transformer_preserve_dtypes",
    ]
}


NEEDS_SENSITIVE_FEATURES = (
    "fit needs sensitive_features (the group of each row) and binary scores, which the "
    "check does not give"
)


def _bare_expected_failures(estimator):
    if isinstance(estimator, BayesianGroupMetrics):
        return {
            **BARE_EXPECTED_FAILURES,
            **{
                name: NEEDS_SENSITIVE_FEATURES
                for name in [
                    "check_fit2d_predict1d",
                    "check_n_features_in",
                    "check_fit_check_is_fitted",
                ]
            },
        }
    return BARE_EXPECTED_FAILURES


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_bare_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _has(method):
    return lambda self: hasattr(self.estimator, method)


class _BehindBlackBox(MetaEstimatorMixin, BaseEstimator):
    """Test harness: a LogisticRegression is the black box, ``estimator`` assesses it."""

    def __init__(self, estimator):
        self.estimator = estimator

    def _fitted_estimator(self):
        est = clone(self.estimator)
        if isinstance(est, ActiveAssessor):
            return est.set_params(estimator__classes=self.model_.classes_)
        if isinstance(est, BayesianGroupMetrics):
            return est
        return est.set_params(classes=self.model_.classes_)

    def _fit_args(self, X, y, sample_weight):
        scores = self.model_.predict_proba(X)
        kwargs = {}
        if isinstance(self.estimator, BayesianGroupMetrics):
            # Binary: the first class against the rest; the sensitive feature is the
            # sign of the first feature, or the row's parity when that makes one group
            # (the estimator compares at least two).
            scores = scores[:, :1].sum(axis=1)
            y = (y == self.model_.classes_[0]).astype(int)
            group = np.where(np.asarray(X)[:, 0] > 0, "a", "b")
            if len(set(group)) < 2:
                group = np.where(np.arange(len(group)) % 2, "a", "b")
            kwargs["sensitive_features"] = group
        elif sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return scores, y, kwargs

    def fit(self, X, y, sample_weight=None):
        X, y = validate_data(self, X, y)
        self.model_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
        self.estimator_ = self._fitted_estimator()
        scores, y, kwargs = self._fit_args(X, y, sample_weight)
        self.estimator_.fit(scores, y, **kwargs)
        return self

    @available_if(_has("partial_fit"))
    def partial_fit(self, X, y, sample_weight=None):
        first = not hasattr(self, "model_")
        X, y = validate_data(self, X, y, reset=first)
        if first:
            self.model_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
            self.estimator_ = self._fitted_estimator()
        scores, y, kwargs = self._fit_args(X, y, sample_weight)
        self.estimator_.partial_fit(scores, y, **kwargs)
        return self

    def _scores(self, X):
        check_is_fitted(self)
        return self.model_.predict_proba(validate_data(self, X, reset=False))

    @available_if(_has("predict"))
    def predict(self, X):
        scores = self._scores(X)  # NotFittedError before the attribute lookup
        return self.estimator_.predict(scores)

    @available_if(_has("score"))
    def score(self, X, y):
        scores = self._scores(X)
        return self.estimator_.score(scores, y)


class _BehindTwoBlackBoxes(_BehindBlackBox):
    """Test harness: a LogisticRegression and a shallow tree are the black boxes compared."""

    def _fitted_estimator(self):
        est = clone(self.estimator)
        if isinstance(est, ActiveModelSelector):
            return est.set_params(estimator__classes=self.model_.classes_)
        return est.set_params(classes=self.model_.classes_)

    def _fit_args(self, X, y, sample_weight):
        if not hasattr(self, "tree_"):
            self.tree_ = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
        return self._two_scores(X), y, {}

    def _two_scores(self, X):
        return np.stack([self.model_.predict_proba(X), self.tree_.predict_proba(X)], axis=1)

    def fit(self, X, y):
        if hasattr(self, "tree_"):
            del self.tree_
        return super().fit(X, y)

    @available_if(_has("partial_fit"))
    def partial_fit(self, X, y):
        return super().partial_fit(X, y)

    @available_if(_has("score"))
    def score(self, X, y):
        check_is_fitted(self)
        return self.estimator_.score(self._two_scores(validate_data(self, X, reset=False)), y)


class _UnweightedBehindBlackBox(_BehindBlackBox):
    """The harness for estimators whose fit takes no sample_weight."""

    def fit(self, X, y):
        return super().fit(X, y)

    @available_if(_has("partial_fit"))
    def partial_fit(self, X, y):
        return super().partial_fit(X, y)


class _TransformerBehindBlackBox(TransformerMixin, MetaEstimatorMixin, BaseEstimator):
    """Test harness: ``estimator`` calibrates a LogisticRegression's top-label confidence."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        self.model_ = LogisticRegression().fit(X, y)
        codes = np.searchsorted(self.model_.classes_, y)
        with warnings.catch_warnings():
            # The checks' blobs are separable, so every row is classified correctly:
            # the documented "weakly identified" warning (tested in test_hierarchical).
            warnings.filterwarnings(
                "ignore", "All .* labeled rows have the same outcome", SkassessWarning
            )
            self.estimator_ = clone(self.estimator).fit(self.model_.predict_proba(X), codes)
        return self

    def transform(self, X):
        check_is_fitted(self)
        scores = self.model_.predict_proba(validate_data(self, X, reset=False))
        return np.asarray(self.estimator_.transform(scores))


def _behind_black_box(estimator):
    if isinstance(estimator, TransformerMixin):
        return _TransformerBehindBlackBox(estimator)
    if isinstance(estimator, ActiveAssessor | ActiveTester | BayesianGroupMetrics):
        return _UnweightedBehindBlackBox(estimator)
    if isinstance(estimator, BayesianModelComparison | ActiveModelSelector):
        return _BehindTwoBlackBoxes(estimator)
    return _BehindBlackBox(estimator)


@pytest.mark.slow
@parametrize_with_checks([_behind_black_box(est) for est in ESTIMATORS])
def test_sklearn_checks_behind_black_box(estimator, check):
    check(estimator)


# ------------------------------------------------------------------ every estimator
# The classes without a fit on scores: the query strategies (a strategy is an estimator
# for its parameters only: get_params, clone, validation), the label-free performance
# predictors (fit on features and a fitted model's scores; tested in tests/meta) and the
# surrogate (a classifier on features; tested in tests/samplers), and the calibrator's MCMC
# samplers (parameter objects; tested in tests/calibration). They go through the
# checks that need no fit on the check's data.
LIGHT_CHECKS = (
    check_parameters_default_constructible,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_set_params,
    check_no_attributes_set_in_init,
    check_do_not_raise_errors_in_init_or_set_params,
)
LIGHTLY_CHECKED = [
    *(cls() for _, cls in all_estimators("strategy")),
    PerformancePredictor(LogisticRegression()),
    PerformanceIntervalRegressor(PerformancePredictor(LogisticRegression())),
    PerformanceMonitor(),
    ActiveMonitor(),
    MLPEnsembleSurrogate(random_state=0),
    EmceeSampler(),
    NUTSSampler(),
]


@pytest.mark.parametrize("estimator", LIGHTLY_CHECKED, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", LIGHT_CHECKS, ids=lambda c: c.__name__)
def test_light_checks(estimator, check):
    check(type(estimator).__name__, clone(estimator))


def test_every_public_estimator_is_checked():
    checked = {type(e) for e in ESTIMATORS} | {type(e) for e in LIGHTLY_CHECKED}
    found = {cls for _, cls in all_estimators()}
    assert found - checked == set()
    assert checked - found == set()  # nothing checked that users cannot import


def test_all_estimators_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="type_filter must be None or among"):
        all_estimators("regressor")

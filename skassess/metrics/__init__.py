"""Bayesian assessment metrics: conjugate posteriors and the estimators built on them."""

from ..utils._deprecation import private_names
from ._accuracy import BayesianAccuracy
from ._agreement_patterns import check_model_scores
from ._anytime import anytime_accuracy_interval
from ._calibration_error import BayesianCalibrationError, expected_calibration_error
from ._classifier_comparison import compare_models
from ._confusion import BayesianConfusionMatrix
from ._conjugate import BetaPosterior, DirichletPosterior, robust_mixture_posterior
from ._cost import BayesianMisclassificationCost
from ._difference_display import DifferenceDisplay
from ._group_comparison import (
    GroupComparison,
    compare_groups,
    rank_groups,
    top_m_groups,
    worst_group,
)
from ._model_comparison import BayesianModelComparison
from ._nested_dirichlet import NestedDirichletPosterior
from ._planning import LabelPlan, plan_labels
from ._posterior_display import ModelComparisonDisplay, PosteriorDisplay
from ._rate_table import RATES, rate_terms
from ._reliability_display import ReliabilityDisplay
from ._rope import rope_probabilities

__all__ = [
    "RATES",
    "NestedDirichletPosterior",
    "check_model_scores",
    "rate_terms",
    "robust_mixture_posterior",
    "BayesianAccuracy",
    "BayesianCalibrationError",
    "BayesianConfusionMatrix",
    "BayesianMisclassificationCost",
    "BayesianModelComparison",
    "BetaPosterior",
    "DifferenceDisplay",
    "DirichletPosterior",
    "GroupComparison",
    "LabelPlan",
    "ModelComparisonDisplay",
    "PosteriorDisplay",
    "ReliabilityDisplay",
    "anytime_accuracy_interval",
    "compare_groups",
    "compare_models",
    "expected_calibration_error",
    "plan_labels",
    "rank_groups",
    "worst_group",
    "rope_probabilities",
    "top_m_groups",
]


__getattr__ = private_names(
    __name__,
    {
        "agreement_patterns": "_agreement_patterns",
        "expected_rate_terms": "_rate_table",
    },
    "the documented API (the helpers are private)",
)

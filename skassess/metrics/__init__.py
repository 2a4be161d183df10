"""Bayesian assessment metrics: conjugate posteriors and the estimators built on them."""

from ._accuracy import BayesianAccuracy
from ._calibration_error import BayesianCalibrationError
from ._comparison import GroupComparison, compare_groups, rank_groups, top_m_groups
from ._confusion import BayesianConfusionMatrix
from ._conjugate import BetaPosterior, DirichletPosterior
from ._cost import BayesianMisclassificationCost
from ._display import DifferenceDisplay, PosteriorDisplay, ReliabilityDisplay

__all__ = [
    "BayesianAccuracy",
    "BayesianCalibrationError",
    "BayesianConfusionMatrix",
    "BayesianMisclassificationCost",
    "BetaPosterior",
    "DifferenceDisplay",
    "DirichletPosterior",
    "GroupComparison",
    "PosteriorDisplay",
    "ReliabilityDisplay",
    "compare_groups",
    "rank_groups",
    "top_m_groups",
]

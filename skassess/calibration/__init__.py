"""Calibration maps, hierarchical Bayesian calibration and group-metric posteriors."""

from ._group_metrics import BayesianGroupMetrics
from ._hierarchical import HierarchicalBetaCalibrator
from ._maps import beta_calibration, fit_llo, log_odds
from ._samplers import EmceeSampler, NUTSSampler

__all__ = [
    "BayesianGroupMetrics",
    "EmceeSampler",
    "HierarchicalBetaCalibrator",
    "NUTSSampler",
    "beta_calibration",
    "fit_llo",
    "log_odds",
]

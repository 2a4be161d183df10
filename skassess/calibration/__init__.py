"""Calibration maps, hierarchical Bayesian calibration and group-metric posteriors."""

from ._group_metrics import BayesianGroupMetrics
from ._hierarchical import HierarchicalBetaCalibrator
from ._maps import beta_calibration, fit_llo, log_odds

__all__ = [
    "BayesianGroupMetrics",
    "HierarchicalBetaCalibrator",
    "beta_calibration",
    "fit_llo",
    "log_odds",
]

"""Calibration maps, hierarchical Bayesian calibration and group-metric posteriors."""

from ._group_metrics import BayesianGroupMetrics
from ._hierarchical import HierarchicalBetaCalibrator
from ._maps import EPS, MAPS, beta_calibration, fit_llo, log_odds

__all__ = [
    "EPS",
    "MAPS",
    "BayesianGroupMetrics",
    "HierarchicalBetaCalibrator",
    "beta_calibration",
    "fit_llo",
    "log_odds",
]

"""Calibration maps, hierarchical Bayesian calibration and group-metric posteriors."""

from ..utils._deprecation import private_names
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


__getattr__ = private_names(
    __name__,
    {},
    "the documented API (the helpers are private)",
)

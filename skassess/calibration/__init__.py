"""Calibration maps, hierarchical Bayesian calibration and group-metric posteriors."""

from ._hierarchical import HierarchicalBetaCalibrator
from ._maps import EPS, MAPS, beta_calibration

__all__ = ["EPS", "MAPS", "HierarchicalBetaCalibrator", "beta_calibration"]

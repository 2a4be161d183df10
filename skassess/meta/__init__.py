"""Performance on unlabeled, drifted data: predicted accuracy and prediction intervals.

- :class:`PerformancePredictor`: a black box's accuracy on an unlabeled batch,
  learned from a labeled reference set (six methods).
- :mod:`skassess.meta.drift`: seeded splitters that simulate covariate drift.
"""

from . import drift
from ._predictor import METHODS, PerformancePredictor

__all__ = ["METHODS", "PerformancePredictor", "drift"]

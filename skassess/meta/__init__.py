"""Performance on unlabeled, drifted data: predicted accuracy and prediction intervals.

- :class:`PerformancePredictor`: a black box's accuracy on an unlabeled batch,
  learned from a labeled reference set (six methods).
- :class:`PerformanceIntervalRegressor`: the same prediction with an interval
  whose width is learned from simulated drift (Elder et al.'s uncertainty model).
- :class:`PerformanceMonitor`: a deployed black box's accuracy chunk by chunk
  over time, with alerts and the rows to label next; :class:`MonitorDisplay`
  draws its timeline; :class:`ActiveMonitor` asks for its labels, as an ask/tell
  sampler that a labeling session stores.
- :func:`interval_cost`: Elder et al.'s cost C_alpha of a set of intervals.
- :mod:`skassess.meta.drift`: seeded splitters that simulate covariate drift.
"""

from . import drift
from ._active_monitor import ActiveMonitor
from ._interval import PerformanceIntervalRegressor
from ._monitor import PerformanceMonitor
from ._monitor_display import MonitorDisplay
from ._predictor import PerformancePredictor
from ._pretrained import pretrained_methods
from ._quantile_model import LEVELS, interval_cost

__all__ = [
    "LEVELS",
    "ActiveMonitor",
    "MonitorDisplay",
    "PerformanceIntervalRegressor",
    "PerformanceMonitor",
    "PerformancePredictor",
    "drift",
    "interval_cost",
    "pretrained_methods",
]

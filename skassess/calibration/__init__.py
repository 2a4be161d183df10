"""Calibration maps, hierarchical Bayesian calibration and group-metric posteriors."""

from ..utils._deprecation import private_names
from ._group_metrics import BayesianGroupMetrics
from ._hierarchical import HierarchicalBetaCalibrator
from ._maps import beta_calibration
from ._samplers import EmceeSampler, NUTSSampler

__all__ = [
    "BayesianGroupMetrics",
    "EmceeSampler",
    "HierarchicalBetaCalibrator",
    "NUTSSampler",
    "beta_calibration",
]


def _private(where):
    import importlib

    module, name = where
    return lambda: getattr(importlib.import_module(f"{__name__}.{module}"), name)


__getattr__ = private_names(
    __name__,
    {
        n: _private(w)
        for n, w in {
            "fit_llo": ("_maps", "fit_llo"),
            "log_odds": ("_maps", "log_odds"),
        }.items()
    },
    "the documented API (the helpers are private)",
)

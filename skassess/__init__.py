"""skassess: label-efficient Bayesian assessment of black-box classifiers."""

import importlib
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skassess")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

#: The estimators importable from the top level, and the subpackage of each: imported
#: on first use, so ``skassess --version`` answers without loading them.
_LAZY = {
    "ActiveAssessor": "samplers",
    "BayesianAccuracy": "metrics",
    "BayesianCalibrationError": "metrics",
    "BayesianConfusionMatrix": "metrics",
    "BayesianMisclassificationCost": "metrics",
}

__all__ = [
    "ActiveAssessor",
    "BayesianAccuracy",
    "BayesianCalibrationError",
    "BayesianConfusionMatrix",
    "BayesianMisclassificationCost",
    "__version__",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'skassess' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

"""skassess: label-efficient Bayesian assessment of black-box classifiers."""

from importlib.metadata import PackageNotFoundError, version

from .metrics import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from .samplers import ActiveAssessor

try:
    __version__ = version("skassess")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "ActiveAssessor",
    "BayesianAccuracy",
    "BayesianCalibrationError",
    "BayesianConfusionMatrix",
    "BayesianMisclassificationCost",
    "__version__",
]

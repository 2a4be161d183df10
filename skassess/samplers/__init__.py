"""Active assessment: which item to label next, and many-run simulations."""

from ._active import ActiveAssessor
from ._active_testing import ActiveTester
from ._base import GroupStrategy, QueryContext, QueryStrategy
from ._calibrated_prior import CalibratedPrior
from ._epsilon_greedy import EpsilonGreedy
from ._lucb import LUCBSampling
from ._model_selection import ActiveModelSelector
from ._multiple_play import MultiplePlayThompsonSampling
from ._random import RandomSampling
from ._rewards import TASKS
from ._sampler import ActiveSampler, StopRule
from ._setup import STRATEGIES
from ._simulate import simulate
from ._surrogate import MLPEnsembleSurrogate
from ._thompson import ThompsonSampling
from ._top_two import TopTwoThompsonSampling
from ._ucb import BayesianUCB
from ._variance import VarianceSampling

#: The ``task`` names of ActiveAssessor.
TASKS = TASKS
#: The ``strategy`` names of ActiveAssessor.
STRATEGY_NAMES = tuple(sorted(STRATEGIES))
del STRATEGIES

__all__ = [
    "ActiveAssessor",
    "ActiveModelSelector",
    "ActiveSampler",
    "ActiveTester",
    "BayesianUCB",
    "CalibratedPrior",
    "EpsilonGreedy",
    "GroupStrategy",
    "LUCBSampling",
    "MLPEnsembleSurrogate",
    "MultiplePlayThompsonSampling",
    "QueryContext",
    "QueryStrategy",
    "RandomSampling",
    "StopRule",
    "ThompsonSampling",
    "TopTwoThompsonSampling",
    "VarianceSampling",
    "simulate",
]

"""epsilon-greedy: the best arm at the posterior mean, a random item with prob. epsilon."""

from numbers import Real

from ..utils._sklearn_compat import Interval
from ._base import GroupStrategy


class EpsilonGreedy(GroupStrategy):
    """Reward at the posterior mean; with probability ``epsilon`` a random item.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    Parameters
    ----------
    epsilon : float, default=0.1
        Exploration rate: the run scores every arm 0 (a uniformly random
        item is labeled).
    """

    _parameter_constraints = {"epsilon": [Interval(Real, 0, 1, closed="both")]}

    def __init__(self, epsilon=0.1):
        self.epsilon = epsilon

    def utilities(self, task, state, remaining, rng):
        u = task.reward(state, state.mean()).astype(float, copy=True)
        explore = rng.random(len(u)) < self.epsilon
        u[explore] = 0.0
        return u

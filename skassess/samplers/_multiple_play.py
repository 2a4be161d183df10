"""Multiple-play Thompson sampling (Komiyama et al. 2015) for top-m groups."""

from numbers import Integral

import numpy as np

from ..utils._sklearn_compat import Interval
from ._base import GroupStrategy, one_hot


class MultiplePlayThompsonSampling(GroupStrategy):
    """Draw ``theta``; the ``m`` arms with the highest rewards form the round.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    A round of MP-TS labels one item of each of its ``m`` arms. Labels here
    come one at a time, so each label goes to an arm drawn uniformly from the
    round's arms: the same expected allocation, one label per draw. The chosen
    arm scores 1, the others 0.

    Parameters
    ----------
    m : int, default=1
        Arms per round (``ActiveAssessor`` uses its ``top_m``).

    References
    ----------
    J. Komiyama, J. Honda, H. Nakagawa, "Optimal regret analysis of Thompson
    sampling in stochastic multi-armed bandit problem with multiple plays",
    ICML 2015.
    """

    _parameter_constraints = {"m": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, m=1):
        self.m = m

    def utilities(self, task, state, remaining, rng):
        available = self.available(task, remaining)
        reward = np.where(available, task.reward(state, state.draw(rng)), -np.inf)
        m = min(self.m, reward.shape[1])
        # Random keys break ties; the m best arms of each run.
        order = np.lexsort((rng.random(reward.shape), -reward), axis=1)[:, :m]
        in_round = np.zeros(reward.shape, dtype=bool)
        np.put_along_axis(in_round, order, True, axis=1)
        in_round &= available
        chosen = np.argmax(in_round * (1.0 + rng.random(in_round.shape)), axis=1)
        return one_hot(chosen, reward.shape[1])

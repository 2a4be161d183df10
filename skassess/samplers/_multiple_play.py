"""Multiple-play Thompson sampling (Komiyama et al. 2015) for top-m groups."""

import numpy as np

from ._base import Strategy, uniform_available


class MultiplePlayThompsonSampling(Strategy):
    """Draw ``theta``; the ``m`` arms with the highest rewards form the round.

    A round of MP-TS labels one item of each of its ``m`` arms. Labels here
    come one at a time, so each label goes to an arm drawn uniformly from the
    round's arms: the same expected allocation, one label per draw.

    References
    ----------
    J. Komiyama, J. Honda, H. Nakagawa, "Optimal regret analysis of Thompson
    sampling in stochastic multi-armed bandit problem with multiple plays",
    ICML 2015.
    """

    name = "multiple_play"

    def __init__(self, m=1):
        self.m = m

    def choose(self, task, state, remaining, rng):
        available = self.available(task, remaining)
        reward = np.where(available, task.reward(state, state.draw(rng)), -np.inf)
        m = min(self.m, reward.shape[1])
        # Random keys break ties; the m best arms of each run.
        order = np.lexsort((rng.random(reward.shape), -reward), axis=1)[:, :m]
        in_round = np.zeros(reward.shape, dtype=bool)
        np.put_along_axis(in_round, order, True, axis=1)
        return uniform_available(in_round & available, rng)

"""Bayesian UCB (Kaufmann et al. 2012): an upper posterior quantile of the reward."""

import numpy as np

from ._base import Strategy, argmax_random_ties


class BayesianUCB(Strategy):
    """Label the arm whose reward has the highest ``quantile`` under the posterior.

    The quantile of the reward is estimated from ``n_draws`` posterior draws,
    which works for every task's reward (for the identification tasks it is
    the quantile of the rate itself).

    References
    ----------
    E. Kaufmann, O. Cappe, A. Garivier, "On Bayesian upper confidence bounds
    for bandit problems", AISTATS 2012.
    """

    name = "bayes_ucb"

    def __init__(self, quantile=0.975, n_draws=100):
        self.quantile = quantile
        self.n_draws = n_draws

    def choose(self, task, state, remaining, rng):
        rewards = np.stack([task.reward(state, state.draw(rng)) for _ in range(self.n_draws)])
        # Arms a task never labels have reward -inf; keep them finite for np.quantile.
        rewards = np.maximum(rewards, -np.finfo(np.float64).max)
        bound = np.quantile(rewards, self.quantile, axis=0)
        return argmax_random_ties(bound, self.available(task, remaining), rng)

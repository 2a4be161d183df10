"""Bayesian UCB (Kaufmann et al. 2012): an upper posterior quantile of the reward."""

from numbers import Integral, Real

import numpy as np

from ..utils._sklearn_compat import Interval
from ._base import GroupStrategy


class BayesianUCB(GroupStrategy):
    """Label the arm whose reward has the highest ``quantile`` under the posterior.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    The quantile of the reward is estimated from ``n_draws`` posterior draws,
    which works for every task's reward (for the identification tasks it is
    the quantile of the rate itself).

    Parameters
    ----------
    quantile : float, default=0.975
        Posterior quantile of the reward, in (0, 1).
    n_draws : int, default=100
        Draws that estimate it.

    References
    ----------
    E. Kaufmann, O. Cappe, A. Garivier, "On Bayesian upper confidence bounds
    for bandit problems", AISTATS 2012.
    """

    _parameter_constraints = {
        "quantile": [Interval(Real, 0, 1, closed="neither")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, quantile=0.975, n_draws=100):
        self.quantile = quantile
        self.n_draws = n_draws

    def utilities(self, task, state, remaining, rng):
        rewards = np.stack([task.reward(state, state.draw(rng)) for _ in range(self.n_draws)])
        # Arms a task never labels have reward -inf; keep them finite for np.quantile.
        rewards = np.maximum(rewards, -np.finfo(np.float64).max)
        return np.quantile(rewards, self.quantile, axis=0)

"""Thompson sampling: reward at one posterior draw, best arm wins."""

from ._base import Strategy, argmax_random_ties


class ThompsonSampling(Strategy):
    """Draw ``theta`` from the posterior; label the arm with the highest reward.

    References
    ----------
    W. R. Thompson, "On the likelihood that one unknown probability exceeds
    another in view of the evidence of two samples", Biometrika, 1933.
    """

    name = "thompson"

    def choose(self, task, state, remaining, rng):
        theta = state.draw(rng)
        return argmax_random_ties(task.reward(state, theta), self.available(task, remaining), rng)

"""Top-two Thompson sampling (Russo 2016) for identifying the best arm."""

from numbers import Integral, Real

from ..utils._sklearn_compat import Interval
from ._base import GroupStrategy, one_hot, pick_arms


class TopTwoThompsonSampling(GroupStrategy):
    """With probability ``beta`` label the Thompson leader, else the challenger.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    The challenger is the leader of further posterior draws that disagree with
    the first leader; after ``max_resample`` draws without disagreement the
    leader is kept. The chosen arm scores 1, the others 0.

    Parameters
    ----------
    beta : float, default=0.5
        Probability of labeling the leader.
    max_resample : int, default=100
        Draws tried to find a challenger.

    References
    ----------
    D. Russo, "Simple Bayesian algorithms for best arm identification",
    COLT 2016.
    """

    _parameter_constraints = {
        "beta": [Interval(Real, 0, 1, closed="both")],
        "max_resample": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, beta=0.5, max_resample=100):
        self.beta = beta
        self.max_resample = max_resample

    def utilities(self, task, state, remaining, rng):
        remaining = remaining * self.available(task, remaining)
        leader = pick_arms(task.reward(state, state.draw(rng)), remaining, rng)
        choice = leader.copy()
        pending = rng.random(len(leader)) >= self.beta
        for _ in range(self.max_resample):
            if not pending.any():
                break
            other = pick_arms(task.reward(state, state.draw(rng)), remaining, rng)
            found = pending & (other != leader)
            choice[found] = other[found]
            pending &= ~found
        return one_hot(choice, remaining.shape[1])

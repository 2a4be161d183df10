"""Top-two Thompson sampling (Russo 2016) for identifying the best arm."""


from ._base import Strategy, argmax_random_ties


class TopTwoThompsonSampling(Strategy):
    """With probability ``beta`` label the Thompson leader, else the challenger.

    The challenger is the leader of further posterior draws that disagree with
    the first leader; after ``max_resample`` draws without disagreement the
    leader is kept.

    References
    ----------
    D. Russo, "Simple Bayesian algorithms for best arm identification",
    COLT 2016.
    """

    name = "top_two"

    def __init__(self, beta=0.5, max_resample=100):
        self.beta = beta
        self.max_resample = max_resample

    def choose(self, task, state, remaining, rng):
        available = self.available(task, remaining)
        leader = argmax_random_ties(task.reward(state, state.draw(rng)), available, rng)
        choice = leader.copy()
        pending = rng.random(len(leader)) >= self.beta
        for _ in range(self.max_resample):
            if not pending.any():
                break
            other = argmax_random_ties(task.reward(state, state.draw(rng)), available, rng)
            found = pending & (other != leader)
            choice[found] = other[found]
            pending &= ~found
        return choice

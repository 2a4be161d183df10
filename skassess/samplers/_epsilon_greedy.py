"""epsilon-greedy: the best arm at the posterior mean, a random arm with prob. epsilon."""

from ._base import Strategy, argmax_random_ties, uniform_available


class EpsilonGreedy(Strategy):
    """Reward at the posterior mean; with probability ``epsilon`` a random arm."""

    name = "epsilon_greedy"

    def __init__(self, epsilon=0.1):
        self.epsilon = epsilon

    def choose(self, task, state, remaining, rng):
        available = self.available(task, remaining)
        greedy = argmax_random_ties(task.reward(state, state.mean()), available, rng)
        explore = rng.random(len(greedy)) < self.epsilon
        greedy[explore] = uniform_available(available[explore], rng)
        return greedy

"""What every strategy shares: masked choices with random tie-breaking."""

import numpy as np


def argmax_random_ties(reward, available, rng):
    """Arm with the highest reward among the available ones; ties broken at random.

    Parameters
    ----------
    reward : ndarray of shape (n_runs, n_arms)
    available : ndarray of bool, shape (n_runs, n_arms)
        At least one arm must be available in every run.
    rng : numpy.random.Generator
    """
    reward = np.where(available, reward, -np.inf)
    best = reward.max(axis=1, keepdims=True)
    ties = (reward == best) & available
    return np.argmax(ties * (1.0 + rng.random(reward.shape)), axis=1)


def uniform_available(available, rng):
    """One available arm per run, uniformly at random."""
    return np.argmax(available * (1.0 + rng.random(available.shape)), axis=1)


class Strategy:
    """Base class: ``choose(task, state, remaining, rng)`` returns one arm per run.

    ``remaining`` holds the number of unlabeled rows of each arm, shape
    ``(n_runs, n_arms)``; an arm is available when it has rows left and the
    task allows it.
    """

    name = None

    def available(self, task, remaining):
        return (remaining > 0) & task.allowed

    def choose(self, task, state, remaining, rng):
        raise NotImplementedError

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"

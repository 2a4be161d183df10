"""The non-active baseline: label a row drawn uniformly from the remaining pool."""

import numpy as np

from ._base import Strategy


class RandomSampling(Strategy):
    """Uniform over the remaining (allowed) rows: arms in proportion to their size."""

    name = "random"

    def choose(self, task, state, remaining, rng):
        weights = np.where(task.allowed, remaining, 0).astype(np.float64)
        cum = np.cumsum(weights, axis=1)
        u = rng.random(len(cum)) * cum[:, -1]
        return np.minimum((cum <= u[:, None]).sum(axis=1), cum.shape[1] - 1)

"""The non-active baseline: label an item drawn uniformly from the remaining pool."""

import numpy as np

from ._base import GroupStrategy


class RandomSampling(GroupStrategy):
    """Every item scores the same: a uniformly random remaining (allowed) item.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    Groups are then chosen in proportion to their unlabeled items.

    Examples
    --------
    >>> from skassess import ActiveAssessor
    >>> from skassess.samplers import RandomSampling
    >>> ActiveAssessor(strategy=RandomSampling())
    ActiveAssessor(strategy=RandomSampling())
    """

    _parameter_constraints = {}

    def utilities(self, task, state, remaining, rng):
        return np.zeros(np.shape(remaining), dtype=np.float64)

"""Thompson sampling: reward at one posterior draw, best arm wins."""

from ._base import GroupStrategy


class ThompsonSampling(GroupStrategy):
    """Draw ``theta`` from the posterior; each group scores its reward at the draw.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    References
    ----------
    W. R. Thompson, "On the likelihood that one unknown probability exceeds
    another in view of the evidence of two samples", Biometrika, 1933.

    Examples
    --------
    >>> from skassess import ActiveAssessor
    >>> from skassess.samplers import ThompsonSampling
    >>> ActiveAssessor(strategy=ThompsonSampling(), task="least_accurate")
    ActiveAssessor(strategy=ThompsonSampling(), task='least_accurate')
    """

    _parameter_constraints = {}

    def utilities(self, task, state, remaining, rng):
        return task.reward(state, state.draw(rng))

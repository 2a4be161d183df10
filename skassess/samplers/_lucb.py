"""LUCB: label where the anytime-valid intervals still leave the answer open."""

from numbers import Real

import numpy as np

from ..utils._sklearn_compat import Interval
from ._base import GroupStrategy, one_hot, pick_arms
from ._rewards import CompareTwo, ExtremeRate


class LUCBSampling(GroupStrategy):
    """Label the groups whose anytime-valid intervals keep the answer open.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    The strategy of a labeling run that stops once the answer is confirmed
    (:meth:`ActiveAssessor.certified_level`, the ``--stop-probability`` rule
    of ``skassess label``). The leader is the posterior's answer (the
    lowest posterior mean accuracy for ``task="least_accurate"``, the
    highest for ``"most_accurate"``); a group is open while its
    :meth:`ActiveAssessor.anytime_intervals` interval at ``level`` overlaps
    the leader's on the side that could change the answer. Each label goes
    to one of the leader and the open groups, drawn with probability
    proportional to its interval's width, so the groups with the fewest
    labels, which hold the answer back, are labeled first. For
    ``task="compare"`` the two compared groups are drawn in proportion to
    their widths. Once nothing is open the leader is labeled.

    Thompson sampling labels where the posterior is uncertain; with scores
    that rank the groups confidently it leaves groups with few labels, whose
    anytime-valid intervals stay wide, and the answer is never confirmed.

    Parameters
    ----------
    level : float, default=0.9
        Level of the intervals that decide which groups are open.

    References
    ----------
    S. Kalyanakrishnan, A. Tewari, P. Auer, P. Stone, "PAC subset selection
    in stochastic multi-armed bandits", ICML 2012 (LUCB).

    Examples
    --------
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import ActiveAssessor
    >>> data = load_fashion_mnist_scores()
    >>> assessor = ActiveAssessor(strategy="lucb", task="least_accurate", random_state=0)
    >>> assessor = assessor.fit(data.scores).run(data.target, 60, progress=False)
    >>> int(assessor.anytime_intervals()["n_walked"].min()) > 0  # every class labeled
    True
    """

    _parameter_constraints = {"level": [Interval(Real, 0, 1, closed="neither")]}

    #: ActiveAssessor passes the anytime-valid bounds to :meth:`utilities`.
    uses_anytime_bounds = True

    def __init__(self, level=0.9):
        self.level = level

    def choose_with_bounds(self, task, state, remaining, rng, bounds):
        """One arm per run, given the ``(lower, upper)`` bounds, each ``(n_runs, n_arms)``."""
        allowed_remaining = np.where(task.allowed, remaining, 0)
        return pick_arms(
            self.utilities(task, state, remaining, rng, bounds=bounds), allowed_remaining, rng
        )

    def utilities(self, task, state, remaining, rng, *, bounds=None):
        if bounds is None:
            raise ValueError(
                "LUCBSampling needs the anytime-valid intervals of an ActiveAssessor (its "
                "query passes them); it cannot run in simulate."
            )
        if not isinstance(task, ExtremeRate | CompareTwo):
            raise ValueError(
                "LUCBSampling needs task='least_accurate', 'most_accurate' or 'compare'."
            )
        lower, upper = bounds
        n_runs, n_arms = remaining.shape
        candidates = self.available(task, remaining)
        width = np.where(candidates, upper - lower, 0.0)
        if isinstance(task, ExtremeRate):
            mean = task.reward(state, state.mean())  # sign * mean: the leader is its max
            leader = np.argmax(np.where(task.allowed, mean, -np.inf), axis=1)
            rows = np.arange(n_runs)
            if task.sign < 0:  # least accurate: another group may still be lower
                open_ = lower < upper[rows, leader][:, None]
            else:
                open_ = upper > lower[rows, leader][:, None]
            open_ &= candidates
            open_[rows, leader] = False
            # The leader is open while another group is.
            open_[rows, leader] = candidates[rows, leader] & open_.any(axis=1)
            weights = np.where(open_, width, 0.0)
        else:
            weights = width
        # A draw proportional to the weights; with nothing open, the leader (or any
        # group with rows left).
        fallback = candidates.astype(np.float64)
        if isinstance(task, ExtremeRate):
            chosen = np.zeros_like(fallback)
            chosen[np.arange(n_runs), leader] = 1.0
            fallback = np.where((chosen * candidates).any(axis=1, keepdims=True), chosen, fallback)
        weights = np.where(weights.sum(axis=1, keepdims=True) > 0, weights, fallback)
        cum = np.cumsum(weights, axis=1)
        r = rng.random(n_runs) * cum[:, -1]
        arms = np.minimum((cum <= r[:, None]).sum(axis=1), n_arms - 1)
        return one_hot(arms, n_arms)

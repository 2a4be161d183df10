"""Query strategies: every strategy scores the pool's items; the best-scored item is labeled.

Two kinds share this interface:

* an **item strategy** (:class:`QueryStrategy`) scores each unlabeled item
  directly, e.g. from a surrogate model of the true label;
* a **group strategy** (:class:`GroupStrategy`, the bandits of Ji et al.
  2021) scores each group (arm) from the posterior and gives every item its
  group's score. Labeling a uniformly random item among the best-scored ones
  then labels the best group, with ties between groups broken in proportion
  to their unlabeled items (so equal scores everywhere is random sampling).

``ActiveAssessor.query(..., return_utilities=True)`` returns the item scores.
"""

import numpy as np
from sklearn.base import BaseEstimator

__all__ = ["GroupStrategy", "QueryContext", "QueryStrategy", "pick_arms"]


class QueryContext:
    """What a strategy may look at when it scores the pool (read-only).

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    Attributes
    ----------
    scores : ndarray of shape (n_pool, n_classes)
        The black box's scores of every pool item.
    y_pred : ndarray of shape (n_pool,)
        Its predicted class index of every item.
    labels : ndarray of shape (n_pool,)
        The class index of every labeled item, -1 where unlabeled.
    available : ndarray of bool, shape (n_pool,)
        Items that may be labeled next (unlabeled and allowed by the task).
    arm : ndarray of shape (n_pool,)
        The group (arm) of every item.
    estimator : fitted metric estimator
        The current posterior (``estimator.posterior_``, ``groups_``, ...).
    state : BetaPosterior or DirichletPosterior
        The posterior with a leading axis of one run.
    task : object
        The task's reward (see :mod:`skassess.samplers`).
    """

    def __init__(
        self, *, scores, y_pred, labels, available, arm, estimator, state, task, outcome_proba=None
    ):
        self.scores, self.y_pred, self.labels = scores, y_pred, labels
        self.available, self.arm = available, arm
        self.estimator, self.state, self.task = estimator, state, task
        self._outcome_proba, self._proba = outcome_proba, None

    def outcome_proba(self):
        """The estimator's posterior predictive of every pool item's outcome.

        ``estimator.predict_proba`` of the pool (computed once per context):
        shape ``(n_pool, n_outcomes)``.
        """
        if self._proba is None:
            if self._outcome_proba is None:
                raise ValueError(
                    "This QueryContext was built without the pool's outcome probabilities."
                )
            self._proba = self._outcome_proba()
        return self._proba


def pick_arms(utilities, remaining, rng):
    """One arm per run: the arm of a uniformly random item among the best-scored items.

    Parameters
    ----------
    utilities : ndarray of shape (n_runs, n_arms)
        Score of each arm (every item of the arm has it).
    remaining : ndarray of shape (n_runs, n_arms)
        Items each arm may still label; arms with none are skipped. At least
        one arm of every run must have items.
    rng : numpy.random.Generator

    Returns
    -------
    arms : ndarray of shape (n_runs,)
    """
    available = remaining > 0
    u = np.where(available, utilities, -np.inf)
    best = u.max(axis=1, keepdims=True)
    weights = np.where((u == best) & available, remaining, 0).astype(np.float64)
    cum = np.cumsum(weights, axis=1)
    r = rng.random(len(cum)) * cum[:, -1]
    return np.minimum((cum <= r[:, None]).sum(axis=1), cum.shape[1] - 1)


def one_hot(arms, n_arms):
    """Utilities that choose ``arms``: 1 for the chosen arm of each run, 0 elsewhere."""
    out = np.zeros((len(arms), n_arms))
    out[np.arange(len(arms)), arms] = 1.0
    return out


class QueryStrategy(BaseEstimator):
    """Base class of an item-level strategy: implement :meth:`item_utilities`.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    A strategy is a scikit-learn estimator only for its parameters
    (``get_params``, ``clone``, validation through ``_parameter_constraints``);
    it learns nothing itself.
    """

    # A subclass without parameters needs no constraints of its own.
    _parameter_constraints: dict = {}

    def item_utilities(self, context, rng):
        """Score of every pool item (higher is labeled first); NaN where not available.

        Parameters
        ----------
        context : QueryContext
        rng : numpy.random.Generator

        Returns
        -------
        utilities : ndarray of shape (n_pool,)
        """
        raise NotImplementedError


class GroupStrategy(QueryStrategy):
    """Base class of a group bandit: implement :meth:`utilities` over arms.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    ``utilities(task, state, remaining, rng)`` scores each arm of each run
    (a leading axis of runs lets the simulation advance many runs at once);
    :meth:`choose` picks arms with :func:`pick_arms`. Randomized strategies
    (top-two, multiple-play, epsilon-greedy) score the arm they drew 1 and
    the others 0.
    """

    def available(self, task, remaining):
        return (remaining > 0) & task.allowed

    def utilities(self, task, state, remaining, rng):
        """Score of each arm, shape ``(n_runs, n_arms)``."""
        raise NotImplementedError

    def choose(self, task, state, remaining, rng):
        """One arm per run (see :func:`pick_arms`)."""
        allowed_remaining = np.where(task.allowed, remaining, 0)
        return pick_arms(self.utilities(task, state, remaining, rng), allowed_remaining, rng)

    def item_utilities(self, context, rng):
        remaining = np.bincount(context.arm[context.available], minlength=context.task.n_arms)
        u = self.utilities(context.task, context.state, remaining[None], rng)[0]
        out = u[context.arm].astype(np.float64)
        out[~context.available] = np.nan
        return out

"""Draw items with probabilities that grow with the uncertainty of their outcome."""

from numbers import Integral, Real

import numpy as np

from ..utils._sklearn_compat import Interval
from ._base import QueryStrategy

__all__ = ["VarianceSampling"]


class VarianceSampling(QueryStrategy):
    """Draw the next item at random, favouring those whose label is least predictable.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    Item ``i`` of the ``m`` still available is drawn with probability

    .. math:: q_i = (1 - s) \\frac{\\sigma_i}{\\sum_j \\sigma_j} + \\frac{s}{m},
       \\qquad \\sigma_i = \\sqrt{1 - \\sum_k p_{ik}^2},

    where ``p_i`` is the current posterior predictive of the item's outcome
    (:meth:`~skassess.BayesianAccuracy.predict_proba` of the assessor's
    estimator: for accuracy under the calibrated prior, the calibration map's
    probability that the black box is right at the item's own score; for a
    binary outcome ``sigma_i`` is proportional to ``sqrt(p_i (1 - p_i))``)
    and ``s`` is ``uniform_mix``. This is the design of the active inference
    of Zrnic and Candes (2024), with the model's uncertainty in place of the
    scores' own: a label is most informative where the outcome is least
    predictable, and the uniform share keeps every item's probability at
    least ``s / m``, so confident items are still checked.

    The draw is random (``argmax`` of ``log q_i`` plus Gumbel noise, which
    draws ``i`` with probability ``q_i``), and ``q`` depends only on the
    scores, the groups and the labels already seen; :meth:`draw_probabilities`
    gives it. With the calibrated prior (of accuracy, or of the cost's
    accuracies), ``ActiveAssessor`` weights each told row by its design
    weight ``1 / (m q_i)``, so the
    calibrated posterior is fitted as the design requires (the generalized
    regression estimator, with the design's sandwich variance; see
    :meth:`~skassess.BayesianAccuracy.add_labels`). On a binary model the
    weights can raise the error (of spread, not bias) above random
    labels'; ``ActiveAssessor``'s default Thompson design of the
    ``"estimate"`` task, which labels random rows within a group, does not
    (``docs/benchmarks/designs.md`` has both).

    Until the pool holds ``min_labels`` labels every draw is uniform: the
    posterior that steers the design is first fitted on a random sample (a
    design from the first label, steered by a map fitted on a handful of
    labels, gives intervals too narrow).

    Parameters
    ----------
    uniform_mix : float, default=0.5
        The share ``s`` of uniform sampling in the draw probabilities.
    min_labels : int, default=50
        Labels in the pool before the draws favour uncertain items.

    Examples
    --------
    >>> from skassess import ActiveAssessor, BayesianAccuracy
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> data = load_fashion_mnist_scores()
    >>> assessor = ActiveAssessor(BayesianAccuracy(), strategy="variance", random_state=0)
    >>> assessor = assessor.fit(data.scores).run(data.target, budget=80, progress=False)
    >>> lower, upper = assessor.estimator_.overall_interval(0.95)
    >>> bool(lower <= (data.scores.argmax(1) == data.target).mean() <= upper)
    True

    References
    ----------
    T. Zrnic, E. J. Candes, "Active Statistical Inference", ICML 2024.
    """

    _parameter_constraints = {
        "uniform_mix": [Interval(Real, 0, 1, closed="both")],
        "min_labels": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, uniform_mix=0.5, min_labels=50):
        self.uniform_mix = uniform_mix
        self.min_labels = min_labels

    def draw_probabilities(self, context):
        """The probability ``q_i`` of drawing each available item next (0 elsewhere).

        Parameters
        ----------
        context : QueryContext

        Returns
        -------
        q : ndarray of shape (n_pool,)
        """
        available = np.asarray(context.available, dtype=bool)
        m = available.sum()
        if (np.asarray(context.labels) >= 0).sum() < self.min_labels:
            return np.where(available, 1.0 / m, 0.0)
        proba = np.asarray(context.outcome_proba(), dtype=np.float64)
        sd = np.sqrt(np.clip(1.0 - (proba**2).sum(axis=1), 0.0, None))
        sd = np.where(available, sd, 0.0)
        q = np.where(available, self.uniform_mix / m, 0.0)
        total = sd.sum()
        if total > 0:
            q += (1.0 - self.uniform_mix) * sd / total
        else:  # every outcome certain: uniform draws
            q += np.where(available, (1.0 - self.uniform_mix) / m, 0.0)
        return q

    def item_utilities(self, context, rng):
        q = self.draw_probabilities(context)
        with np.errstate(divide="ignore"):
            u = np.log(q) + rng.gumbel(size=q.shape)
        return np.where(q > 0, u, np.nan)

"""A chunk's accuracy from its label-free prediction and its labels: one posterior.

The prior is the label-free prediction itself: the uncertainty model's
distribution of the error ``e = m - accuracy`` around the predicted accuracy
``m`` (:mod:`skassess.meta._error_levels`: its quantiles at every level, the
sign symmetric), so that ``P(accuracy <= x) = P(e >= m - x)``; its mass below
0 or above 1 goes to the first or last cell of [0, 1]. The error's distribution
is tabulated to the level ``1 - TAIL``; the last ``TAIL`` of the prior's mass
is spread evenly over [0, 1], so that labels the prediction calls all but
impossible still have a posterior (theirs).

The chunk's accuracy is the share ``K / N`` of its ``N`` rows that the black
box gets right, and its labels are a random sample of ``n`` of them, drawn
without replacement: ``s`` correct and ``f = n - s`` wrong ones have the
hypergeometric likelihood ``C(K, s) C(N - K, f)`` (``K`` taken continuous,
through the gamma function), which allows only ``s <= K <= N - f``.

The posterior is computed on ``GRID_CELLS`` equal cells of [0, 1] (and the
two bounds the labels set), each cell's prior mass exact and its likelihood
at its midpoint, the mass spread evenly within the cell. No labels give back
the prior, whose intervals are the label-free ``m +- Q(level)`` to within a
cell; every label then moves the posterior by Bayes' rule alone: the
likelihood ratio is monotone in ``K``, so a correct label never raises
``P(accuracy < t)`` and a wrong one never lowers it, and on average over the
labels the prediction expects, labels narrow it. With every row labeled it
is the observed accuracy.
"""

import numpy as np
from scipy.special import gammaln

from ._error_levels import abs_error_cdf

__all__ = ["ChunkPosterior"]

#: Equal cells of [0, 1] on which the posterior is computed.
GRID_CELLS = 4000
#: The prior's mass spread evenly over [0, 1] (beyond the tabulated error levels).
TAIL = 1e-7


def _prior_cdf(m, q, x):
    """``P(accuracy <= x)`` under the label-free prediction ``m`` with quantiles ``q``."""
    d = m - np.asarray(x, dtype=np.float64)
    above = (1.0 - abs_error_cdf(q, d)) / 2.0  # P(e > |d|)
    return np.where(d >= 0, above, 1.0 - above)


def _log_choose(n, k):
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


class ChunkPosterior:
    """The posterior of a chunk's accuracy.

    Parameters
    ----------
    prediction : float
        The label-free predicted accuracy ``m``.
    quantiles : array-like of shape (len(LEVELS),)
        The uncertainty model's quantiles of ``|e|``.
    n_rows : int
        Rows of the chunk (``N``).
    n_correct, n_wrong : int, default=0
        Its labeled rows that the black box got right and wrong.
    """

    def __init__(self, prediction, quantiles, n_rows, n_correct=0, n_wrong=0):
        N, s, f = int(n_rows), int(n_correct), int(n_wrong)
        if N < 1 or s < 0 or f < 0 or s + f > N:
            raise ValueError(
                f"A chunk of {N} rows cannot hold {s} correct and {f} wrong labeled rows."
            )
        self.n_labeled = s + f
        low, high = s / N, (N - f) / N  # the accuracies the labels leave possible
        if low == high:  # every row labeled: the observed accuracy
            self.edges, self.mass = np.array([low, high]), np.ones(1)
            return
        edges = np.unique(np.concatenate([np.linspace(0.0, 1.0, GRID_CELLS + 1), [low, high]]))
        cdf = _prior_cdf(float(prediction), np.asarray(quantiles, dtype=np.float64), edges)
        cdf[0], cdf[-1] = 0.0, 1.0  # the mass outside [0, 1] in the end cells
        prior = (1.0 - TAIL) * np.maximum(np.diff(cdf), 0.0) + TAIL * np.diff(edges)
        log_post = np.log(prior)
        if self.n_labeled:
            K = N * (edges[:-1] + edges[1:]) / 2.0
            possible = (K >= s) & (N - K >= f)
            with np.errstate(invalid="ignore"):
                ll = _log_choose(K, s) + _log_choose(N - K, f)
            log_post = np.where(possible, log_post + ll, -np.inf)
        mass = np.exp(log_post - log_post.max())
        self.edges, self.mass = edges, mass / mass.sum()

    def mean(self):
        """The posterior mean of the accuracy."""
        return float(self.mass @ ((self.edges[:-1] + self.edges[1:]) / 2.0))

    def cdf(self, t):
        """``P(accuracy < t)``."""
        return float(np.clip(np.interp(float(t), self.edges, self._cumulative()), 0.0, 1.0))

    def _cumulative(self):
        cum = np.concatenate([[0.0], np.cumsum(self.mass)])
        cum[-1] = 1.0
        return cum

    def quantile(self, p):
        """The accuracy below which the posterior has mass ``p``."""
        cum = self._cumulative()
        if len(self.mass) == 1:
            return float(self.edges[0])
        # the first edge where the cumulative mass reaches p, interpolated within its cell
        i = int(np.clip(np.searchsorted(cum, p, side="left"), 1, len(cum) - 1))
        span = cum[i] - cum[i - 1]
        inside = 0.0 if span <= 0 else (p - cum[i - 1]) / span
        return float(
            self.edges[i - 1] + np.clip(inside, 0.0, 1.0) * (self.edges[i] - self.edges[i - 1])
        )

    def interval(self, level):
        """The equal-tailed interval of mass ``level``."""
        tail = (1.0 - float(level)) / 2.0
        return self.quantile(tail), self.quantile(1.0 - tail)

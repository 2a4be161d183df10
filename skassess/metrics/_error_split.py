"""The split of each predicted class's errors among the true classes, its trust learned.

Under the calibrated prior the true class of a wrong row predicted ``k`` is
``phi_k ~ Dirichlet(c m_k(beta))``, one Dirichlet per predicted class:

* ``m_k`` the informative prior's shares (half as the scores spread the
  errors, half even; :meth:`BayesianConfusionMatrix._informative_errors`);
* ``c`` one concentration for all predicted classes, ``log c ~ N(log(K - 1),
  SPLIT_PRIOR_SD^2)`` (``K - 1`` pseudo-counts: the fixed prior before);
* for a cost, ``m_k(beta)_j`` proportional to ``m_kj exp(beta z_jk)`` with
  ``z`` the cost matrix standardized over its off-diagonal cells: one tilt of
  every class's errors toward the cheap (``beta < 0``) or the costly classes,
  its prior half at ``beta = 0`` (the scores' spread, ``PRIOR_NO_TILT``) and
  half ``N(0, TILT_PRIOR_SD^2)``; a tilt leaves a share ``b`` of the errors
  spread as the scores say (``BACKGROUND_SHARES``).

``(c, beta, b)`` are integrated on a grid, weighed by the labeled errors'
Dirichlet-multinomial marginal likelihoods. Errors that stray from the
scores' spread lower ``c`` and the labels take over; errors as the scores
spread them raise it. The tilt is shared by the predicted classes, so it
carries what the labeled errors say about the cost of the unlabeled errors of
every class, and its uncertainty moves them together: a draw of the split
first draws ``(c, beta, b)``. Without it each class's few errors say little
about its own split, and the classes' even priors all err the same way
where the scores are silent on which errors are costly.

Written here because no library offers a Dirichlet-multinomial with a
hyperprior on its concentration and direction integrated on a grid.
"""

import numpy as np
from scipy.special import gammaln, logsumexp

from ._conjugate import MIN_PSEUDO_COUNT

#: Prior sd of the log concentration around ``log(K - 1)``.
SPLIT_PRIOR_SD = 1.5
#: Prior sd of the tilt per standard deviation of the cost: 2, wide enough for
#: ordinal costs, where the errors fall almost all on the neighbouring, cheap
#: classes (a tilt of about -3).
TILT_PRIOR_SD = 2.0
#: The concentration's grid, in prior standard deviations.
_C_GRID = np.linspace(-3.0, 3.0, 17)
#: The prior's weight on no tilt: the labels weigh it against a tilt by their
#: marginal likelihoods, so a tilt costs width only where the errors call for one.
PRIOR_NO_TILT = 0.5
#: The shares of each class's errors a tilt leaves spread as the scores say (a
#: uniform prior over them): one tilt makes the errors' shares fall geometrically
#: with their cost, where a model's errors are often a few cheap classes and
#: the rest anywhere.
BACKGROUND_SHARES = (0.0, 0.1, 0.25)
#: The tilt's grid spans this many prior standard deviations either side, in
#: steps that move the odds of the cheapest against the costliest class by at
#: most ``exp(_TILT_STEP)`` (the cost is steep in the tilt: a coarser grid biased
#: it), with at most ``_TILT_POINTS`` points.
_TILT_SPAN, _TILT_STEP, _TILT_POINTS = 4.0, 0.4, 161
#: Grid points whose weight is below this share of the largest are dropped.
_KEEP = 1e-9


class ErrorSplit:
    """The posterior of every predicted class's split of its errors.

    Parameters
    ----------
    errors : ndarray of shape (K, K)
        Labeled errors per (predicted class, true class), 0 on the diagonal
        (design-weighted counts under a design).
    prior : ndarray of shape (K, K)
        The informative prior's pseudo-counts; their off-diagonal shares per
        row are ``m_k``.
    cost : ndarray of shape (K, K) or None
        ``C[j, k]``, the cost of predicting ``k`` when the truth is ``j``;
        None (or one cost for every error) for no tilt.
    """

    def __init__(self, errors, prior, cost=None):
        K = errors.shape[0]
        off = ~np.eye(K, dtype=bool)
        share = np.where(off, prior, 0.0)
        share = share / share.sum(axis=1, keepdims=True)
        tilt, log_prior_tilt, background = np.zeros(1), np.zeros(1), np.zeros(1)
        z = np.zeros((K, K))
        if cost is not None:
            values = cost.T[off]  # [k, j] order
            if values.std() > 0:
                z = np.where(off, (cost.T - values.mean()) / values.std(), 0.0)
                span = TILT_PRIOR_SD * _TILT_SPAN
                step = _TILT_STEP / (values.max() - values.min()) * values.std()
                points = int(min(_TILT_POINTS, 2 * np.ceil(span / step) + 1))
                grid = np.linspace(-span, span, points)
                # half the prior on no tilt (the scores' spread), half spread over the
                # grid: each point its normal density times the grid's step
                tilt = np.r_[0.0, grid]
                log_prior_tilt = np.log(PRIOR_NO_TILT) * np.r_[1.0, np.zeros(points)]
                log_prior_tilt[1:] = (
                    np.log1p(-PRIOR_NO_TILT)
                    - 0.5 * (grid / TILT_PRIOR_SD) ** 2
                    - np.log(TILT_PRIOR_SD * np.sqrt(2 * np.pi))
                    + np.log(grid[1] - grid[0])
                )
        log_c = np.log(K - 1) + SPLIT_PRIOR_SD * _C_GRID
        n = errors.sum(axis=1)
        # the tilted shares, (tilt, K, K), normalized in log space (a steep cost
        # matrix would overflow exp)
        with np.errstate(divide="ignore"):
            log_t = np.where(off, np.log(share) + tilt[:, None, None] * z, -np.inf)
        tilted = np.exp(log_t - logsumexp(log_t, axis=2, keepdims=True))
        if len(tilt) > 1:
            # beside each tilt, a share of the errors spread as the scores say: the
            # errors of one class mostly on its neighbours, the rest anywhere
            mixed = [(1.0 - b) * tilted[1:] + b * share for b in BACKGROUND_SHARES]
            tilted = np.concatenate([tilted[:1], *mixed])
            background = np.r_[0.0, np.repeat(BACKGROUND_SHARES, len(tilt) - 1)]
            tilt = np.r_[0.0, np.tile(tilt[1:], len(BACKGROUND_SHARES))]
            log_prior_tilt = np.r_[
                log_prior_tilt[0],
                np.tile(log_prior_tilt[1:], len(BACKGROUND_SHARES))
                - np.log(len(BACKGROUND_SHARES)),
            ]
        # Only the cells with labeled errors enter the likelihood beyond each row's
        # total: log Gamma(a + 0) - log Gamma(a) = 0 (errors are few, K^2 cells many).
        rows, cols = np.nonzero(errors * off)
        e = errors[rows, cols]
        log_w = np.empty((len(log_c), len(tilt)))
        for i, lc in enumerate(log_c):
            c = np.exp(lc)
            a = c * tilted[:, rows, cols]  # (tilt, cells)
            log_w[i] = (gammaln(c) - gammaln(c + n)).sum() + (gammaln(a + e) - gammaln(a)).sum(
                axis=1
            )
        log_w += log_prior_tilt[None, :] - 0.5 * _C_GRID[:, None] ** 2
        w = np.exp(log_w - log_w.max())
        keep = np.flatnonzero(w.ravel() >= _KEEP)
        ci, ti = np.unravel_index(keep, w.shape)
        self.weights = w.ravel()[keep] / w.ravel()[keep].sum()
        self.concentration = np.exp(log_c[ci])
        self.tilt, self.background = tilt[ti], background[ti]
        used, self._tilt_index = np.unique(ti, return_inverse=True)
        self._tilted, self._errors, self._off = tilted[used], errors, off

    def _alpha_at(self, points):
        """The posterior pseudo-counts at grid points ``points``, (len, K, K)."""
        c = self.concentration[points, None, None]
        return np.where(self._off, c * self._tilted[self._tilt_index[points]] + self._errors, 0.0)

    def _moments(self):
        """The mixture's mean shares and the sum of each row's variances.

        At a grid point of concentration ``c`` and tilted shares ``T`` the
        pseudo-counts are ``c T + E`` (``E`` the labeled errors), whose row
        totals are ``c + n_k`` since each row of ``T`` sums to 1. The
        Dirichlet's first and second moments are therefore sums over the
        points of per-class scalars times ``T``, ``T^2`` and ``E``, and the
        points that share a tilt are summed first: ``K^2`` work per tilt, not
        per grid point (17 times less; summed point by point, a prior over 100
        classes took 0.35 s).
        """
        off = self._off
        errors = np.where(off, self._errors, 0.0)
        n = errors.sum(axis=1)
        c, w, tilts = self.concentration, self.weights, self._tilt_index
        total = c[:, None] + n[None, :]  # (points, K)
        first = w[:, None] / total  # the weight over alpha_0
        square = first / (total + 1.0)  # the weight over alpha_0 (alpha_0 + 1)
        per_tilt = np.zeros((3, len(self._tilted), len(n)))
        np.add.at(per_tilt[0], tilts, c[:, None] * first)
        np.add.at(per_tilt[1], tilts, c[:, None] * square)
        np.add.at(per_tilt[2], tilts, (c**2)[:, None] * square)
        shares = self._tilted
        mean = np.einsum("uk,ukj->kj", per_tilt[0], shares) + errors * first.sum(axis=0)[:, None]
        # E[phi^2] = (c^2 T^2 + c T (2 E + 1) + E (E + 1)) / (alpha_0 (alpha_0 + 1))
        second = (
            np.einsum("uk,ukj,ukj->kj", per_tilt[2], shares, shares)
            + np.einsum("uk,ukj->kj", per_tilt[1], shares) * (2.0 * errors + 1.0)
            + errors * (errors + 1.0) * square.sum(axis=0)[:, None]
        )
        mean, second = np.where(off, mean, 0.0), np.where(off, second, 0.0)
        var = np.maximum(second - mean**2, 0.0).sum(axis=1)
        return mean, var, c.max() + n

    def mean(self):
        """Each predicted class's posterior mean shares of its errors, (K, K)."""
        return self._moments()[0]

    def alpha(self):
        """The Dirichlet of the mixture's mean and total variance, per predicted class.

        Its draws are independent across the predicted classes; the estimators
        draw through :meth:`alpha_draws`, which keeps their dependence.
        """
        mean, var, biggest = self._moments()
        spread = (mean * (1.0 - mean)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            size = np.where(var > 0, spread / var - 1.0, biggest)
        size = np.maximum(size, MIN_PSEUDO_COUNT)
        return np.where(self._off, np.maximum(mean * size[:, None], MIN_PSEUDO_COUNT), 0.0)

    def alpha_draws(self, size, rng):
        """The pseudo-counts of ``size`` draws, each at a draw of ``(c, beta)``."""
        return self._alpha_at(rng.choice(len(self.weights), size=size, p=self.weights))

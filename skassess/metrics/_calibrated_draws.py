"""The calibrated model's draws: the labels' dispersion and the pool's counts.

See :mod:`skassess.metrics._calibrated_model` for the model.
"""

import numpy as np
from scipy.special import expit

from ._calibrated_model import (
    BLOCK_FLOATS,
    DEVIATION_VAR,
    RATIO_PRIOR_DOF,
    deviation_draws,
    sigmoid,
)


def quasi_likelihood_spread(mean, noise, centre, ratio, *, design=False):
    """Draws of unlabeled successes spread by the labels' dispersion ``R``.

    ``mean`` and ``noise`` (shape ``(n_draws, n_groups)``) are each draw's
    expected successes under the map and its binomial noise, ``centre``
    their mean over the posterior, ``ratio`` a draw of ``R`` per draw. The
    quasi-likelihood scaling of a posterior (McCullagh and Nelder 1989, sec.
    9.2): the draws' deviation from their centre is multiplied by
    ``sqrt(max(R, 1))``,

        centre + sqrt(max(R, 1)) (mean + noise - centre),

    so the model's own spread is the least the labels are given. Under a
    design (``design=True``) ``R`` is the design's variance of the pool's
    level over the model's (a sandwich): it scales the map's part
    ``mean - centre``, not the rows' binomial noise, and below 1 only the
    part along the pool's total (each group's share of the draws' total
    deviation), so that the groups' own spread is kept:

        centre + D + (sqrt(R) - 1) P D + noise  (R < 1),
        centre + sqrt(R) D + noise              (R >= 1),

    with ``D = mean - centre`` and ``P D`` its projection on the total.
    """
    root = np.sqrt(ratio)[:, None]
    if not design:
        return centre + np.maximum(root, 1.0) * (mean + noise - centre)
    deviation = mean - centre
    total = deviation.sum(axis=1, keepdims=True)
    along = total * ((deviation * total).sum(axis=0) / max((total**2).sum(), 1e-300))
    deviation = np.where(root < 1.0, deviation + (root - 1.0) * along, deviation * root)
    return centre + deviation + noise


class _DrawSummaries:
    """Summaries of a posterior held as draws ``_draws`` of shape ``(n_draws, n_groups)``."""

    def moments(self):
        """Posterior mean and variance of each group's rate (from the stored draws)."""
        d = self.draws
        # Within the draws' range: identical draws (a fully labeled group) average
        # to their value, not one rounding error off it.
        return np.clip(d.mean(axis=0), d.min(axis=0), d.max(axis=0)), d.var(axis=0)

    def interval(self, level=0.95):
        """Equal-tailed interval ``(lower, upper)`` per group (from the stored draws)."""
        tail = (1.0 - level) / 2.0
        lo, hi = np.quantile(self.draws, [tail, 1.0 - tail], axis=0)
        return lo, hi


class _PosteriorDraws:
    """Draws of the calibrated model's posterior (the draws of :class:`CalibratedRates`)."""

    def _dispersion(self):
        """The labels' dispersion ``R`` around the posterior-mean map, and its posterior.

        The estimate is ``R_hat = sum (z - p)^2 / sum p (1 - p)`` over the
        labeled rows, times ``n / (n - 2)`` for the map's two parameters (per
        labeled cell of ``n_c`` rows with ``s_c`` successes, ``(z - p)^2``
        sums to ``s_c (1 - p)^2 + (n_c - s_c) p^2``). Its numerator taken as a
        scaled chi-square with Satterthwaite's ``nu`` degrees of freedom
        (:meth:`_ratio_dof`) and an ``IG(1, 1)`` prior on ``R``
        (``RATIO_PRIOR_DOF = 2``), the posterior of ``R`` is ``IG(1 + nu / 2, 1 +
        nu R_hat / 2)``, of mean ``R_hat + 2 / nu``. Sets ``_ratio_posterior``
        to its (shape, scale) and ``ratio_estimate`` to ``(R_hat, nu)``, both
        None with two labels or fewer (``R`` is then 1), and returns its mean.
        """
        self._ratio_posterior = self.ratio_estimate = None
        n, s = self._cell_n, self._cell_s
        total = n.sum()
        if total <= 2:
            return 1.0
        p = self._proba_at(*self._cell_index)
        expected = (n * p * (1.0 - p)).sum() / total
        if not expected > 0:
            return 1.0
        if self._cell_n2 is None:
            observed = (s * (1.0 - p) ** 2 + (n - s) * p**2).sum() / total
        else:
            # Under a design the squared residuals are summed with the squared
            # design weights: the ratio is then the sandwich variance of the
            # weighted fit's level over its model variance (see the Notes).
            n2, s2 = self._cell_n2, self._cell_s2
            observed = (s2 * (1.0 - p) ** 2 + (n2 - s2) * p**2).sum() / total
        ratio = float(observed / expected * total / (total - 2.0))
        nu = self._ratio_dof(p)
        self.ratio_estimate = (ratio, nu)
        if not np.isfinite(nu):
            self._ratio_posterior = (np.inf, ratio)
            return ratio
        nu0 = RATIO_PRIOR_DOF
        self._ratio_posterior = ((nu0 + nu) / 2.0, (nu0 + nu * ratio) / 2.0)
        return (nu0 + nu * ratio) / (nu0 + nu - 2.0)

    def _ratio_dof(self, p):
        """Satterthwaite's degrees of freedom ``nu = 2 E^2 / Var`` of the ratio's numerator.

        The numerator ``sum d^2 (z - p)^2`` (``d = 1`` without a design) has
        mean ``E = sum d^2 p (1 - p)`` and variance ``sum d^4 p (1 - p) (1 -
        2 p)^2`` at the map's ``p``; a cell's design weights are about equal
        (the draw probability is a function of the cell's score), so its ``sum
        d^4`` is ``(sum d^2)^2`` over its labels. Few labels where the outcome
        is uncertain (saturated scores) leave few degrees of freedom: the
        ratio is then mostly noise.
        """
        n2 = self._cell_n if self._cell_n2 is None else self._cell_n2
        v = p * (1.0 - p) * n2
        var = (v * (1.0 - 2.0 * p) ** 2 * n2 / self.labeled[self._cell_index]).sum()
        return float(2.0 * v.sum() ** 2 / var) if var > 0 else np.inf

    def _ratio_draws(self, size, rng):
        """Draws of ``R`` from its posterior (see :meth:`_dispersion`), or None (``R = 1``)."""
        if self._ratio_posterior is None:
            return None
        shape, scale = self._ratio_posterior
        if not np.isfinite(shape):
            return np.full(size, scale)
        return scale / rng.gamma(shape, size=size)

    # ---------------------------------------------------------------- draws
    def rvs(self, size, rng):
        """Joint draws of every group's rate on the pool, shape ``(size, n_groups)``.

        Each draw takes ``(a, b, tau)`` from the grid, each labeled group's
        deviation from its posterior given them (a normal of the quadrature's
        mean and variance), each other group's from ``tau t_4``, and the
        unlabeled rows' successes from a normal of their Poisson-binomial
        mean and variance (clipped to the rows available), spread by the
        labels' dispersion (:func:`quasi_likelihood_spread`).
        """
        node = self._node_draws(size, rng)
        u = self._deviations(node, rng)
        return self._rates(self._count_draws(node, u, rng), node, u)

    def count_draws(self, size, rng):
        """Joint draws of each group's successes on the pool, shape ``(size, n_groups)``.

        The labeled successes as observed, the unlabeled ones drawn (see :meth:`rvs`).
        """
        node = self._node_draws(size, rng)
        return self._count_draws(node, self._deviations(node, rng), rng)

    def _node_draws(self, size, rng):
        """Grid nodes ``(a, b, tau)`` drawn by their posterior weights."""
        return rng.choice(self.weights.size, size=size, p=self.weights)

    def _rates(self, successes, node, u):
        """Each group's rate from drawn successes ``(size, n_groups)``."""
        n_rows = self.rows.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = successes / n_rows
        # A group with no rows (grown but empty) has the map's rate at its mean score.
        empty = ~(n_rows > 0)
        if empty.any():
            rate[:, empty] = expit(self.center + self.a[node][:, None] + u[:, empty])
        return rate

    def _count_draws(self, node, u, rng):
        """Each group's successes at drawn nodes and deviations, ``(size, n_groups)``.

        The unlabeled rows' successes: a normal of their Poisson-binomial mean
        and variance at the draw's map, spread about the centre by the labels'
        dispersion (:func:`quasi_likelihood_spread`) and clipped to the rows
        available; the labeled successes added as observed. The first call
        (the model's own draws) sets the centre: the mean of its unspread draws.
        """
        size, G = node.size, self.n_groups
        unlabeled = self.rows - self.labeled
        g, bins = np.nonzero(unlabeled > 0)
        # In single precision: each group's sum runs over at most N_BINS cells,
        # so its relative error is about 1e-7, far below the draws' spread.
        x = (self.ell[g, bins] - self.center).astype(np.float32)
        weight = np.zeros((g.size, G), dtype=np.float32)
        weight[np.arange(g.size), g] = unlabeled[g, bins]
        mean = np.zeros((size, G))
        var = np.zeros((size, G))
        step = max(1, BLOCK_FLOATS // max(g.size, 1))
        b = self.b[node].astype(np.float32)
        level = (self.center + self.a[node][:, None] + u).astype(np.float32)  # per draw, group
        for s in range(0, size, step):
            sl = slice(s, s + step)
            # sigmoid(center + a + u + b x), built in one buffer
            p = b[sl, None] * x[None, :]
            p += level[sl][:, g]
            sigmoid(p, out=p)
            mean[sl] = p @ weight
            q = 1.0 - p
            q *= p
            var[sl] = q @ weight
        noise = np.sqrt(var) * rng.standard_normal((size, G))
        if self._count_center is None:
            self._count_center = (mean + noise).mean(axis=0)
        ratio = self._ratio_draws(size, rng)
        if ratio is not None:
            drawn = quasi_likelihood_spread(
                mean, noise, self._count_center, ratio, design=self._cell_n2 is not None
            )
        else:
            drawn = mean + noise
        drawn = np.clip(drawn, 0.0, unlabeled.sum(axis=1))
        return self._labeled_successes() + drawn

    def _labeled_successes(self):
        """Each group's labeled successes."""
        return np.minimum(self.success, self.labeled).sum(axis=1)

    def count_rvs(self, size, rng):
        """Joint draws of each group's successes and rows on the pool, each ``(size, G)``.

        The numerator and denominator of each group's rate (the rows are fixed).
        """
        successes = self.count_draws(size, rng)
        return successes, np.broadcast_to(self.rows.sum(axis=1), successes.shape)

    def _deviations(self, node, rng):
        """Each group's deviation at the drawn grid nodes, shape ``(len(node), n_groups)``.

        A labeled group's from its posterior given the node (a normal of the
        quadrature's mean and variance), any other group's from the t prior.
        """
        tau = self.tau[node][:, None]
        u = deviation_draws(rng, (node.size, self.n_groups), tau)
        var = np.broadcast_to(DEVIATION_VAR * tau**2, u.shape).copy()
        lab = self._lab_group
        if lab.size:
            u[:, lab] = self._u_mean[node] + rng.standard_normal((node.size, lab.size)) * np.sqrt(
                self._u_var[node]
            )
            var[:, lab] = self._u_var[node]
        # Condition on the pool level's prior (a perturbed-observation Kalman
        # update: exact for normal deviations).
        w = self._share
        sd = self._node_level_sd[node]
        gain = var * w / (sd**2 + var @ w**2)[:, None]
        miss = (
            self._node_level_mean[node]
            - (self.a[node] + u @ w)
            - sd * rng.standard_normal(node.size)
        )
        return u + miss[:, None] * gain

    def variance_draws(self, size, rng):
        """Draws of the mean Bernoulli variance ``p (1 - p)`` over the pool's rows.

        Each draw takes the map's ``(a, b)`` and the groups' deviations from
        the posterior (as :meth:`rvs` does) and averages ``p (1 - p)`` at every
        row's score. Shape ``(size,)``.
        """
        node = self._node_draws(size, rng)
        u = self._deviations(node, rng)
        g, b = np.nonzero(self.rows > 0)
        total = max(float(self.rows.sum()), 1e-300)
        out = np.zeros(size)
        for sl, p in self._cell_blocks(node, u, g, self.ell[g, b] - self.center):
            out[sl] = (p * (1.0 - p)) @ self.rows[g, b] / total
        return out

    def _cell_blocks(self, node, u, groups, x):
        """``(slice, p)`` over blocks of draws: the success probability ``sigmoid(m +
        a + b x + u_g)`` at cells of centred logits ``x`` in ``groups``, at the drawn
        nodes and deviations, shape ``(block, n_cells)``."""
        step = max(1, BLOCK_FLOATS // max(groups.size, 1))
        for start in range(0, node.size, step):
            sl = slice(start, start + step)
            p = self.b[node[sl], None] * x[None, :]
            # the map's level and the deviation per group, then per cell
            p += (self.center + self.a[node[sl], None] + u[sl])[:, groups]
            yield sl, sigmoid(p, out=p)

    def _proba_at(self, groups, bins):
        """Posterior mean probability of success at cells ``(groups, bins)``.

        :meth:`cell_proba` is this at every cell; the dispersion needs it at
        the labeled cells only. The mean over the model's own draws of the map
        and the deviations, a block of cells at a time.
        """
        node, u = self._parameter_draws
        level = self.center + self.a[node][:, None] + u  # per draw and group
        b = self.b[node][:, None]
        x = self.ell[groups, bins] - self.center
        out = np.empty(x.size)
        step = max(1, BLOCK_FLOATS // node.size)
        for start in range(0, x.size, step):
            sl = slice(start, start + step)
            p = b * x[None, sl]
            p += level[:, groups[sl]]
            out[sl] = sigmoid(p, out=p).mean(axis=0)
        return out

    def cell_proba(self):
        """Posterior mean probability of success of a row in each (group, bin) cell.

        The map at the cell's own log-odds (its rows' mean, the bin's middle
        where it has none): the probability the model gives each row it holds
        there. Shape ``(n_groups, N_BINS)``; computed once, when first asked.
        """
        if getattr(self, "_cell_proba", None) is None:
            groups, bins = np.indices(self.ell.shape).reshape(2, -1)
            self._cell_proba = self._proba_at(groups, bins).reshape(self.ell.shape)
        return self._cell_proba

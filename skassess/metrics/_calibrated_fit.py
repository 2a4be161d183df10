"""The calibrated model's inference: the grid of the map and the groups' quadrature.

See :mod:`skassess.metrics._calibrated_model` for the model; this is the
integration of its ``(a, b, tau)`` and of each group's deviation.
"""

import numpy as np
from scipy.special import logsumexp

from ._calibrated_model import (
    DEVIATION_DF,
    DEVIATION_VAR,
    EDGE_TOLERANCE,
    GRID_HALF_WIDTH,
    LOG_TOLERANCE,
    N_GRID,
    N_HERMITE,
    N_TAU,
    PRIOR_SCALE_TAU,
    QUADRATURE_BLOCK,
    TAU_MAX,
    log_deviation_density,
    log_sigmoid,
    sigmoid,
)


class _MapGrid:
    """The posterior of the map's ``(a, b, tau)`` on a grid, each group's deviation
    integrated by quadrature (the inference of :class:`CalibratedRates`)."""

    def _score_spread(self):
        """Root mean square of the rows' ``l - m`` (at least 0.1: a pool at one score)."""
        total = self.rows.sum()
        if not total > 0:
            return 1.0
        return max(float(np.sqrt((self.rows * (self.ell - self.center) ** 2).sum() / total)), 0.1)

    # ------------------------------------------------------------ likelihood
    def _log_prior_slope(self, b):
        """Log prior density of the slope under the component being fitted."""
        sd = self._slope_sd
        return -0.5 * ((b - self._slope_mean) / sd) ** 2 - np.log(np.sqrt(2 * np.pi) * sd)

    @staticmethod
    def _log_normal(x, var):
        return -0.5 * x**2 / var - 0.5 * np.log(2 * np.pi * var)

    def _level_var(self, tau):
        """Prior variance of the pool's level plus the unlabeled groups' part of it."""
        return self._level_sd**2 + DEVIATION_VAR * tau**2 * self._share2_free

    def _joint_modes(self, taus):
        """Joint mode of ``(a, b, u)`` at each ``tau`` and the Laplace terms around it.

        Newton's method on the joint log posterior, at every ``tau`` at once;
        its Hessian is an arrow (each ``u_g`` couples only to ``a`` and ``b``),
        solved through the Schur complement in O(groups). Returns one dict per
        ``tau`` with the mode, the covariance of ``(a, b)`` with ``u``
        integrated out (Laplace), each group's ``u`` at the mode, its slope in
        ``(a, b)`` and its standard deviation, and the Laplace log evidence at
        that ``tau``.
        """
        G, T = self._lab_group.size, taus.size
        x, n, s = self._cell_x, self._cell_n, self._cell_s
        onehot = np.zeros((x.size, G))
        onehot[np.arange(x.size), self._cell_group] = 1.0
        nu = DEVIATION_DF
        share = self._share_lab
        V = self._level_var(taus)  # (T,)
        tau = taus[:, None]
        theta = np.tile([self._level_mean, self._slope_mean], (T, 1)).astype(np.float64)
        u = np.zeros((T, G))

        def log_post(theta, u):
            eta = self.center + theta[:, :1] + theta[:, 1:] * x + u @ onehot.T
            ll = s * log_sigmoid(eta) + (n - s) * log_sigmoid(-eta)
            return (
                ll.sum(axis=1)
                + log_deviation_density(u, tau).sum(axis=1)
                + self._log_normal(theta[:, 0] + u @ share - self._level_mean, V)
                + self._log_prior_slope(theta[:, 1])
            )

        def solve_uu(h_uu, rhs):
            """``(diag(h_uu) + share share' / V)^-1 rhs`` per ``tau`` (Sherman-Morrison);
            ``rhs`` of shape ``(T, G)`` or ``(T, G, k)``."""
            ds = share / h_uu
            denominator = V + ds @ share
            if rhs.ndim == 2:
                d = rhs / h_uu
                return d - ds * ((d @ share) / denominator)[:, None]
            d = rhs / h_uu[:, :, None]
            coef = np.einsum("tgk,g->tk", d, share) / denominator[:, None]
            return d - ds[:, :, None] * coef[:, None, :]

        def terms(theta, u):
            eta = self.center + theta[:, :1] + theta[:, 1:] * x + u @ onehot.T
            p = sigmoid(eta)
            r, w = s - n * p, n * p * (1.0 - p)
            level = (theta[:, 0] + u @ share - self._level_mean) / V
            # The t prior's gradient, and its IRLS weight as a positive curvature
            # (the t density is not log-concave; the grid integrates it exactly).
            prec = (nu + 1.0) / (nu * tau**2 + u**2)
            g_u = r @ onehot - prec * u - share * level[:, None]
            slope = (theta[:, 1] - self._slope_mean) / self._slope_sd**2
            g_t = np.column_stack([r.sum(axis=1) - level, (r * x).sum(axis=1) - slope])
            w_g = w @ onehot
            h_uu = w_g + prec
            # The level's prior ties a to every u (a rank-one term).
            cross = np.stack([w_g + share / V[:, None], (w * x) @ onehot], axis=-1)
            wx = (w * x).sum(axis=1)
            h_tt = np.empty((T, 2, 2))
            h_tt[:, 0, 0] = w.sum(axis=1) + 1.0 / V
            h_tt[:, 0, 1] = h_tt[:, 1, 0] = wx
            h_tt[:, 1, 1] = (w * x * x).sum(axis=1) + 1.0 / self._slope_sd**2
            schur = h_tt - np.einsum("tgi,tgj->tij", cross, solve_uu(h_uu, cross))
            return g_u, g_t, h_uu, cross, schur

        value = log_post(theta, u)
        moving = np.ones(T, dtype=bool)
        for _ in range(100):
            g_u, g_t, h_uu, cross, schur = terms(theta, u)
            rhs = g_t - np.einsum("tgi,tg->ti", cross, solve_uu(h_uu, g_u))
            d_t = np.linalg.solve(schur, rhs[:, :, None])[:, :, 0]
            d_u = solve_uu(h_uu, g_u - np.einsum("tgi,ti->tg", cross, d_t))
            step = np.where(moving, 1.0, 0.0)
            new = value.copy()
            searching = moving.copy()
            while searching.any():  # halve each tau's step until its value does not drop
                trial = log_post(theta + step[:, None] * d_t, u + step[:, None] * d_u)
                new = np.where(searching, trial, new)
                searching &= (new < value - 1e-10) & (step >= 1e-6)
                step = np.where(searching, step / 2.0, step)
            theta, u = theta + step[:, None] * d_t, u + step[:, None] * d_u
            value = np.where(moving, new, value)
            size = np.abs(step[:, None] * d_t).max(axis=1)
            if G:
                size = np.maximum(size, np.abs(step[:, None] * d_u).max(axis=1))
            moving &= size >= 1e-8
            if not moving.any():
                break
        _, _, h_uu, cross, schur = terms(theta, u)
        log_det_uu = np.log(h_uu).sum(axis=1) + np.log1p((share / h_uu) @ share / V)
        laplace = (
            value
            + 0.5 * (G + 2) * np.log(2 * np.pi)
            - 0.5 * log_det_uu
            - 0.5 * np.linalg.slogdet(schur)[1]
        )
        cov = np.linalg.inv(schur)
        level_part = np.zeros((T, G, 2))
        level_part[:, :, 0] = share / V[:, None]
        slope = (cross - level_part) / h_uu[:, :, None]
        return [
            {
                "theta": theta[t],
                "cov": cov[t],
                "u": u[t],
                "slope": slope[t],
                "sd": 1.0 / np.sqrt(h_uu[t]),
                "laplace": laplace[t],
            }
            for t in range(T)
        ]

    def _group_loglik(self, a, b, tau, mode):
        """Each labeled group's log likelihood at nodes ``(a, b, tau)``.

        The deviation ``u_g`` is integrated by adaptive Gauss-Hermite
        quadrature, centred where the joint mode of the node's ``tau`` puts
        it given ``(a, b)`` and scaled by its Laplace standard deviation.
        ``mode`` holds, per node, that mode's ``theta`` ``(n, 2)``, ``u`` and
        ``sd`` ``(n, G)`` and ``slope`` ``(n, G, 2)`` (:meth:`_joint_modes`).
        Returns ``(loglik, u_mean, u_var)`` of shape ``(n_nodes, G)``, ``G``
        the labeled groups.
        """
        n_nodes, m, G = a.size, self._cell_x.size, self._lab_group.size
        if G == 0:
            return tuple(np.zeros((n_nodes, 0)) for _ in range(3))
        out = [np.empty((n_nodes, G)) for _ in range(3)]
        onehot = np.zeros((m, G), dtype=np.float32)
        onehot[np.arange(m), self._cell_group] = 1.0
        n_cell = self._cell_n.astype(np.float32)
        n_fail = (self._cell_n - self._cell_s).astype(np.float32)
        gh_x = self._gh_x[None, :, None]
        step = max(1, QUADRATURE_BLOCK // (N_HERMITE * max(m, G)))
        for start in range(0, n_nodes, step):
            sl = slice(start, start + step)
            theta, slope = mode["theta"][sl], mode["slope"][sl]
            da, db = a[sl] - theta[:, 0], b[sl] - theta[:, 1]
            centre = mode["u"][sl] - da[:, None] * slope[:, :, 0] - db[:, None] * slope[:, :, 1]
            scale = np.sqrt(2.0) * mode["sd"][sl]  # (n, G)
            u = centre[:, None, :] + scale[:, None, :] * gh_x  # (n, K, G)
            base = self.center + a[sl, None] + b[sl, None] * self._cell_x  # (n, m)
            # Each cell's term in single precision (the fit's largest cost; a
            # group's sum is then within about 1e-5 of double precision's).
            eta = u.astype(np.float32)[:, :, self._cell_group]
            eta += base.astype(np.float32)[:, None, :]  # (n, K, m)
            # s log sigmoid(eta) + (n - s) log sigmoid(-eta), with log sigmoid(-eta) =
            # log sigmoid(eta) - eta: one transcendental evaluation, not two
            ll = log_sigmoid(eta)
            ll *= n_cell
            eta *= n_fail
            ll -= eta
            log_f = (ll @ onehot).astype(np.float64)
            log_f += log_deviation_density(u, tau[sl, None, None])
            log_f += (self._gh_logw + self._gh_x**2)[None, :, None]
            log_f += np.log(scale)[:, None, :]
            # log of the sum over the nodes, the largest term taken out
            top = log_f.max(axis=1, keepdims=True)
            post = np.exp(log_f - top)
            mass = post.sum(axis=1)
            total = np.log(mass) + top[:, 0]
            post /= mass[:, None, :]
            mean = (post * u).sum(axis=1)
            second = (post * u**2).sum(axis=1)
            out[0][sl], out[1][sl], out[2][sl] = total, mean, np.maximum(second - mean**2, 0.0)
        return tuple(out)

    # ------------------------------------------------------------------ fit
    def _fit(self):
        """The grid of ``(a, b, tau)`` of every component of the map's prior, weighted."""
        parts = []
        for level_mean, level_sd, log_weight, slope_mean, slope_sd in self._components:
            self._level_mean, self._level_sd = level_mean, level_sd
            self._slope_mean, self._slope_sd = slope_mean, slope_sd
            for a, b, tau, w, u_mean, u_var in self._fit_component():
                n = a.size
                parts.append(
                    (
                        a,
                        b,
                        tau,
                        w + log_weight,
                        u_mean,
                        u_var,
                        np.full(n, level_mean),
                        np.full(n, level_sd),
                    )
                )
        a, b, tau, log_w, u_mean, u_var, level_mean, level_sd = (
            np.concatenate(v) for v in zip(*parts, strict=True)
        )
        self.log_evidence = float(logsumexp(log_w))
        keep = log_w > log_w.max() - LOG_TOLERANCE
        self.a, self.b, self.tau = a[keep], b[keep], tau[keep]
        self.weights = np.exp(log_w[keep] - logsumexp(log_w[keep]))
        self._u_mean, self._u_var = u_mean[keep], u_var[keep]
        self._node_level_mean, self._node_level_sd = level_mean[keep], level_sd[keep]

    def _fit_component(self):
        """Grid nodes of one prior of the map: ``(a, b, tau, log weight, u mean, u var)``."""
        edges = np.linspace(0.0, TAU_MAX, N_TAU + 1)
        taus = (edges[:-1] + edges[1:]) / 2.0
        # Half-normal prior mass of each cell (renormalised over the grid).
        log_tau_prior = -0.5 * (taus / PRIOR_SCALE_TAU) ** 2
        log_tau_prior -= logsumexp(log_tau_prior)
        modes = self._joint_modes(taus)
        laplace = np.array([m["laplace"] for m in modes]) + log_tau_prior
        kept = np.flatnonzero(laplace >= laplace.max() - LOG_TOLERANCE)
        stacked = {k: np.stack([modes[t][k] for t in kept]) for k in ("theta", "u", "slope", "sd")}
        chol = np.linalg.cholesky(np.stack([modes[t]["cov"] for t in kept]) + 1e-12 * np.eye(2))
        z = np.linspace(-1.0, 1.0, N_GRID)
        grid = np.vstack([v.ravel() for v in np.meshgrid(z, z, indexing="ij")])  # (2, N)
        edge = (np.abs(grid) == 1.0).any(axis=0)
        n = grid.shape[1]
        half = np.full(kept.size, GRID_HALF_WIDTH)
        parts = [None] * kept.size
        pending = np.arange(kept.size)
        # Every kept tau's grid at once; a grid whose edges hold mass is widened
        # x 1.6 and computed again (at most six times).
        for attempt in range(6):
            ab = stacked["theta"][pending][:, :, None] + chol[pending] @ (
                half[pending, None, None] * grid
            )  # (P, 2, N)
            a, b = ab[:, 0].ravel(), ab[:, 1].ravel()
            node = np.repeat(pending, n)
            tau = taus[kept][node]
            loglik, u_mean, u_var = self._group_loglik(
                a, b, tau, {k: v[node] for k, v in stacked.items()}
            )
            cell = np.log(
                np.abs(np.linalg.det(chol[pending])) * (2 * half[pending] / (N_GRID - 1)) ** 2
            )
            # The pool level's prior, over the groups' posteriors at the node.
            level = self._log_normal(
                a + u_mean @ self._share_lab - self._level_mean,
                self._level_var(tau) + u_var @ self._share_lab**2,
            )
            w = loglik.sum(axis=1) + level + self._log_prior_slope(b)
            w = w.reshape(pending.size, n) + (log_tau_prior[kept][pending] + cell)[:, None]
            wider = []
            for j, t in enumerate(pending):
                rows = slice(j * n, (j + 1) * n)
                parts[t] = (a[rows], b[rows], tau[rows], w[j], u_mean[rows], u_var[rows])
                if w[j][edge].max() >= w[j].max() - EDGE_TOLERANCE and attempt < 5:
                    wider.append(t)
            pending = np.array(wider, dtype=int)
            if not pending.size:
                break
            half[pending] *= 1.6
        return parts

"""The hierarchical calibration model in the form gradient samplers need.

:class:`NonCenteredModel` holds the labeled rows and gives the log density of
the thesis model (per-group beta calibration maps, normal population of
their parameters) and its gradient at one point, in the non-centered
parameterization ``q = (mu, log sigma, z)`` with ``t_g = mu + sigma z_g``:
the group parameters are a fixed transform of independent normals, the
geometry a gradient sampler needs when groups have few labels.

The gradient is written out (the chain rule through the beta map and the
non-centered prior) because the core dependencies have no automatic
differentiation; tests compare it with finite differences. It sits on the
sampler's hot path (one call per leapfrog step), so the rows are sorted by
group once and summed with ``np.add.reduceat``, and the softplus and the
sigmoid share one exponential.
"""

import numpy as np

__all__ = ["NonCenteredModel", "split"]


def split(q, n_params, n_groups, hierarchical):
    """Point(s) ``(..., n_dim)`` -> group parameters ``(..., G, P)``, mu, sigma.

    Without the hierarchy ``q`` is the group parameters and mu, sigma are None.
    """
    P, G = n_params, n_groups
    if not hierarchical:
        return q.reshape(q.shape[:-1] + (G, P)), None, None
    mu, sigma = q[..., :P], np.exp(q[..., P : 2 * P])
    z = q[..., 2 * P :].reshape(q.shape[:-1] + (G, P))
    return mu[..., None, :] + sigma[..., None, :] * z, mu, sigma


class NonCenteredModel:
    """Log density and gradient of the calibration model at one point.

    Parameters
    ----------
    names : tuple of str
        The map's parameters, a subset of ``("a", "b", "c")`` in that order
        (log a, log b and c are sampled; a map without b shares log a).
    mu_scale, sigma_scale : ndarray of shape (P,)
        Hyperprior scales: mu ~ N(0, mu_scale), sigma ~ half-N(0, sigma_scale);
        without the hierarchy, t ~ N(0, mu_scale).
    n_groups : int
    hierarchical : bool
    codes : ndarray of int, shape (n,)
        Group code of each labeled row.
    log_s, log_1s : ndarray of shape (n,)
        ``log s`` and ``log(1 - s)`` of the clipped scores.
    outcome : ndarray of shape (n,)
        1.0 where the row's outcome is positive (y = 1, or correct).

    A plain object of arrays, so that chains can run in worker processes.
    """

    def __init__(
        self, names, mu_scale, sigma_scale, n_groups, hierarchical, codes, log_s, log_1s, outcome
    ):
        self.names = tuple(names)
        self.mu_scale = np.asarray(mu_scale, dtype=np.float64)
        self.sigma_scale = np.asarray(sigma_scale, dtype=np.float64)
        self.n_groups = int(n_groups)
        self.hierarchical = bool(hierarchical)
        order = np.argsort(codes, kind="stable")
        codes = np.asarray(codes)[order]
        # z = a log s - b log(1 - s) + c = <(a, b, c)[group], features>; rows in
        # group order, so a group's coefficients are repeated, not gathered
        self.features = np.stack([log_s[order], -log_1s[order], np.ones(len(codes))])
        self.outcome = np.asarray(outcome, dtype=np.float64)[order]
        self.counts = np.bincount(codes, minlength=self.n_groups)
        self.present = np.flatnonzero(self.counts)
        self.starts = np.cumsum(self.counts)[self.present] - self.counts[self.present]
        # column of t holding log a, log b, c (log b is log a when the map has no b)
        self.columns = [self.names.index(k) if k in self.names else None for k in "abc"]
        if self.columns[1] is None:
            self.columns[1] = 0

    @property
    def n_params(self):
        return len(self.names)

    @property
    def n_dim(self):
        return self.n_groups * self.n_params + (2 * self.n_params if self.hierarchical else 0)

    def initial(self, n_chains, rng):
        """Starting points ``(n_chains, n_dim)`` near the prior."""
        P, G = self.n_params, self.n_groups
        if not self.hierarchical:
            return rng.normal(0.0, 0.5, (n_chains, G * P)) * np.tile(self.mu_scale, G)
        return np.concatenate(
            [
                rng.normal(0.0, 0.5, (n_chains, P)) * self.mu_scale,
                np.log(self.sigma_scale) + rng.normal(0.0, 0.3, (n_chains, P)),
                rng.normal(0.0, 1.0, (n_chains, G * P)),
            ],
            axis=1,
        )

    def log_prob_grad(self, q):
        """``(log p(q | data), its gradient)``; ``(-inf, 0)`` where the density overflows."""
        P, G = self.n_params, self.n_groups
        t, mu, sigma = split(q, P, G, self.hierarchical)
        ia, ib, ic = self.columns
        # per-group (a, b, c), the map's coefficients on the feature columns
        coef = np.zeros((3, G))
        with np.errstate(over="ignore", invalid="ignore"):
            coef[0] = np.exp(t[:, ia])
            coef[1] = np.exp(t[:, ib])
            if ic is not None:
                coef[2] = t[:, ic]
            z = np.einsum("ij,ij->j", np.repeat(coef, self.counts, axis=1), self.features)
            # log-likelihood sum(y z - softplus(z)) and residual y - sigmoid(z),
            # with one exponential
            e = np.exp(-np.abs(z))
            loglik = self.outcome @ z - np.maximum(z, 0.0).sum() - np.log1p(e).sum()
            inv = 1.0 / (1.0 + e)
            residual = self.outcome - np.where(z >= 0.0, inv, e * inv)
        sums = np.zeros((3, G))
        if len(self.starts):
            sums[:, self.present] = np.add.reduceat(residual * self.features, self.starts, axis=1)
        sums[:2] *= coef[:2]  # d/d log a = a * sum(r log s), likewise b
        grad_t = np.zeros((G, P))
        for column, d in zip((ia, ib, ic), sums, strict=True):
            if column is not None:
                grad_t[:, column] += d
        if not self.hierarchical:
            logp = loglik - 0.5 * np.sum((t / self.mu_scale) ** 2)
            grad = (grad_t - t / self.mu_scale**2).ravel()
        else:
            zq = q[2 * P :].reshape(G, P)
            ratio = sigma / self.sigma_scale
            mu_ratio = mu / self.mu_scale
            zflat = q[2 * P :]
            # mu ~ N(0, mu_scale), sigma ~ half-N(0, sigma_scale) in log sigma
            # (+ log sigma, the Jacobian), z ~ N(0, 1)
            logp = (
                loglik
                - 0.5 * (mu_ratio @ mu_ratio)
                + q[P : 2 * P].sum()
                - 0.5 * (ratio @ ratio)
                - 0.5 * (zflat @ zflat)
            )
            grad = np.concatenate(
                [
                    grad_t.sum(axis=0) - mu_ratio / self.mu_scale,
                    (grad_t * zq).sum(axis=0) * sigma - ratio**2 + 1.0,
                    (grad_t * sigma - zq).ravel(),
                ]
            )
        if not np.isfinite(logp + grad.sum()):
            return -np.inf, np.zeros_like(q)
        return logp, grad

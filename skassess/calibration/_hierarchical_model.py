"""The hierarchical beta calibration model: its density, its hyperpriors, its draws.

Group g's rows are calibrated by the beta map (Kull et al. 2017)
logit P(y = 1 | s) = c_g + a_g log s - b_g log(1 - s); the groups'
(log a_g, log b_g, c_g) are drawn around population means mu with
population scales sigma (thesis eqs. 4.5-4.11): mu ~ N(0, MU_SCALE),
sigma ~ half-N(0, SIGMA_SCALE). mu is integrated out in closed form
(the groups' covariance is compound-symmetric) and sigma on
N_SIGMA_NODES nodes of equal prior mass, so the sampler sees the group
parameters alone; _hyper_draws draws mu and sigma back given them.
"""

import numpy as np
import pandas as pd
from scipy.special import expit, ndtri

from ._maps import MAPS, log_features
from ._nuts_model import NonCenteredModel, split

#: Hyperprior scales (thesis eqs. 4.5-4.11): mu ~ N(0, MU_SCALE), sigma ~ half-N(0, SIGMA_SCALE),
#: for the log of a, the log of b and c.
MU_SCALE = {"a": 0.4, "b": 0.4, "c": 2.0}


SIGMA_SCALE = {"a": 0.15, "b": 0.15, "c": 0.75}


#: Quadrature nodes of each population scale sigma (equal prior mass).
N_SIGMA_NODES = 64
#: Nodes in logit(s) of sample_sums on many rows.
N_NODES = 8192


def append_steps(old, new, shape):
    """``_constrained``'s output of a chain's steps followed by that of its next steps.

    ``draws`` and ``hyper`` hold one row per sample in (chain, step, walker)
    order and ``monitored`` has shape ``(n_chains, n_steps, n_walkers, k)``;
    ``shape`` is the whole chain's.
    """
    n_chains, _, n_walkers, _ = shape

    def steps(a):  # (n_chains * n_steps * n_walkers, ...) -> (n_chains, n_steps, n_walkers, ...)
        return a.reshape(n_chains, -1, n_walkers, *a.shape[1:])

    def join(a, b):
        both = np.concatenate([steps(a), steps(b)], axis=1)
        return both.reshape(-1, *a.shape[1:])

    hyper = old["hyper"]
    if hyper is not None:
        hyper = pd.DataFrame(join(hyper.to_numpy(), new["hyper"].to_numpy()), columns=hyper.columns)
    return {
        "draws": join(old["draws"], new["draws"]),
        "hyper": hyper,
        "columns": new["columns"],
        "monitored": np.concatenate([old["monitored"], new["monitored"]], axis=1),
    }


class _BetaCalibrationModel:
    """The hierarchical beta calibration model: its density, its hyperpriors, its draws."""

    # ----------------------------------------------------------------- model
    def _layout(self):
        """(P, G, parameter names, mu scales, sigma scales); cached, it sits on the hot path."""
        key = (self.map, self.prior_scale, len(self.groups_))
        cached = getattr(self, "_layout_cache", None)
        if cached is None or cached[0] != key:
            names = MAPS[self.map]
            mu_scale = np.array([MU_SCALE[k] for k in names]) * self.prior_scale
            sigma_scale = np.array([SIGMA_SCALE[k] for k in names]) * self.prior_scale
            cached = (key, (len(names), len(self.groups_), names, mu_scale, sigma_scale))
            self._layout_cache = cached
        return cached[1]

    def _sigma_nodes(self):
        """Equal-prior-mass nodes of each half-normal sigma, ``(N_SIGMA_NODES, P)``."""
        sigma_scale = self._layout()[4]
        # (the constant sum over nodes, log N_SIGMA_NODES per parameter, is left out)
        q = ndtri(0.5 + 0.5 * (np.arange(N_SIGMA_NODES) + 0.5) / N_SIGMA_NODES)
        return q[:, None] * sigma_scale[None, :]

    def _group_params(self, theta):
        """Sample ``(n, G * P)`` -> per-group (log a, log b, c), each ``(n, G)``."""
        P, G, names, *_ = self._layout()
        t = theta.reshape(theta.shape[0], G, P)
        log_a = t[..., 0]
        log_b = t[..., names.index("b")] if "b" in names else log_a
        c = t[..., names.index("c")] if "c" in names else np.zeros_like(log_a)
        return log_a, log_b, c

    def _log_prior_terms(self, t):
        """log N(t_p | 0, sigma_k^2 I + mu_scale_p^2 11') per node k and parameter p.

        ``t`` has shape ``(n, G, P)``; returns ``(n, N_SIGMA_NODES, P)``. The
        compound-symmetric covariance has a closed-form inverse and
        determinant, so mu is integrated out exactly.
        """
        const, inv_s2, shrink = self._prior_constants()
        sq = (t**2).sum(axis=1)[:, None, :]
        tot2 = (t.sum(axis=1) ** 2)[:, None, :]
        return const - 0.5 * (sq * inv_s2 - tot2 * shrink)

    def _prior_constants(self):
        cached = getattr(self, "_constants", None)
        if cached is not None and cached[0] == len(self.groups_):
            return cached[1]
        P, G, _, mu_scale, _ = self._layout()
        s2 = self._sigma_nodes() ** 2  # (K, P)
        tau2 = mu_scale**2
        inv_s2 = 1.0 / s2
        shrink = tau2 / (s2 + G * tau2) * inv_s2
        const = -0.5 * ((G - 1) * np.log(s2) + np.log(s2 + G * tau2))
        self._constants = (G, (const, inv_s2, shrink))
        return self._constants[1]

    def _log_prob(self, theta):
        P, G, _, mu_scale, _ = self._layout()
        log_a, log_b, c = self._group_params(theta)
        g, ls, l1s, t = self._data
        with np.errstate(over="ignore", invalid="ignore"):
            logit = c[:, g] + np.exp(log_a)[:, g] * ls - np.exp(log_b)[:, g] * l1s
            loglik = (t * logit - np.logaddexp(0.0, logit)).sum(axis=1)
        params = theta.reshape(len(theta), G, P)
        if self.hierarchical:
            terms = self._log_prior_terms(params)
            top = terms.max(axis=1)
            logprior = (np.log(np.exp(terms - top[:, None, :]).sum(axis=1)) + top).sum(axis=1)
        else:
            logprior = -0.5 * ((params / mu_scale) ** 2).sum(axis=(1, 2))
        out = loglik + logprior
        return np.where(np.isfinite(out), out, -np.inf)

    def _nuts_model(self, codes, log_s, log_1s, outcome):
        """The model of the labeled rows in the non-centered form NUTS samples."""
        _, G, names, mu_scale, sigma_scale = self._layout()
        return NonCenteredModel(
            names, mu_scale, sigma_scale, G, self.hierarchical, codes, log_s, log_1s, outcome
        )

    def _hyper_draws(self, theta, rng):
        """Draws of mu and sigma given each sample of the group parameters.

        sigma given t is discrete on the nodes (weights: prior mass times the
        marginal density of t); mu given t and sigma is normal.
        """
        P, G, names, mu_scale, _ = self._layout()
        t = theta.reshape(len(theta), G, P)
        logw = self._log_prior_terms(t)  # (n, K, P)
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        cdf = np.cumsum(w, axis=1)
        u = rng.random((len(t), 1, P)) * cdf[:, -1:, :]
        k = np.minimum((cdf < u).sum(axis=1), N_SIGMA_NODES - 1)  # (n, P)
        sigma = self._sigma_nodes()[k, np.arange(P)]
        var = 1.0 / (1.0 / mu_scale**2 + G / sigma**2)
        mean = var * t.sum(axis=1) / sigma**2
        mu = mean + np.sqrt(var) * rng.standard_normal(mean.shape)
        columns = [f"mu_{k}" for k in names] + [f"sigma_{k}" for k in names]
        return pd.DataFrame(np.concatenate([mu, sigma], axis=1), columns=columns)

    def _initial(self, shape, rng):
        """Dispersed starting points, ``(*shape, n_dim)``, drawn near the prior."""
        P, G, _, mu_scale, _ = self._layout()
        return rng.normal(0.0, 0.5, (*shape, G * P)) * np.tile(mu_scale, G)

    def _constrained(self, chain, rng):
        """Constrained draws, hyperparameter draws and the monitored quantities of a chain."""
        n_chains, n_steps, n_walkers, n_dim = chain.shape
        P, G, names, *_ = self._layout()
        flat = chain.reshape(-1, n_dim)
        mu = sigma = None
        if self._noncentered:  # NUTS samples (mu, log sigma, z): the group parameters
            t, mu, sigma = split(flat, P, G, self.hierarchical)
            flat = t.reshape(len(flat), G * P)
        log_a, log_b, c = self._group_params(flat)
        draws = np.stack([np.exp(log_a), np.exp(log_b), c], axis=2)
        columns, values = [], []
        for name in names:
            for j, group in enumerate(self.groups_):
                columns.append(f"{name}[{group}]")
                values.append(draws[:, j, "abc".index(name)])
        hyper = None
        if self.hierarchical:
            monitored = [f"mu_{k}" for k in names]
            if mu is not None:  # sampled by NUTS: sigma is monitored too
                hyper = pd.DataFrame(
                    np.concatenate([mu, sigma], axis=1),
                    columns=monitored + [f"sigma_{k}" for k in names],
                )
                monitored = list(hyper.columns)
            else:
                # sigma is drawn exactly on its nodes given each sample, so its
                # convergence is that of the group parameters; its discrete draws
                # would only add tie noise to R-hat. mu is monitored.
                hyper = self._hyper_draws(flat, rng)
            columns += monitored
            values += [hyper[k].to_numpy() for k in monitored]
        monitored = np.stack(values, axis=1).reshape(n_chains, n_steps, n_walkers, -1)
        return {"draws": draws, "hyper": hyper, "columns": columns, "monitored": monitored}

    # ------------------------------------------------------------- prediction
    def _thinned(self, n_draws):
        n = self.draws_.shape[0]
        take = np.linspace(0, n - 1, min(n_draws, n)).round().astype(np.intp)
        return self.draws_[take]

    def _nodes(self, s):
        """The nodes in ``s`` and each row's position among them (a float index)."""
        top = np.log1p(-self.eps) - np.log(self.eps)  # logit(1 - eps)
        t = np.linspace(-top, top, N_NODES)
        clipped = np.clip(s, self.eps, 1.0 - self.eps)
        position = (np.log(clipped) - np.log1p(-clipped) + top) / (t[1] - t[0])
        return expit(t), np.clip(position, 0.0, N_NODES - 1.0)

    def _sample_rows(self, s, codes, draws):
        ls, l1s = log_features(s, self.eps)
        a, b, c = draws[:, codes, 0], draws[:, codes, 1], draws[:, codes, 2]
        return expit(c + a * ls - b * l1s)

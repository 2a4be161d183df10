"""A hierarchical Beta prior over exchangeable groups, integrated on an adaptive grid.

Each group's rate is ``theta_g ~ Beta(mu kappa, (1 - mu) kappa)``: the groups
share an unknown mean ``mu ~ Uniform(0, 1)`` and an unknown concentration
``kappa`` in ``[KAPPA_MIN, KAPPA_MAX]`` with ``1 / sqrt(kappa)`` uniform (the
scale of the groups' spread: Gelman et al., *Bayesian Data Analysis*, 3rd
ed., section 5.3). Given ``(mu, kappa)``
the groups are independent Beta-Bernoulli cells, so the posterior is a
mixture over ``(mu, kappa)`` of conjugate posteriors, weighted by the
beta-binomial marginal likelihood of every group's labels.

The two hyperparameters are integrated by quadrature rather than sampled: the
integral is two-dimensional and smooth, a grid gives the same answer on every
call (an MCMC run would add its own noise to every refit of an active
labeling loop), and it costs a few thousand ``betaln`` per group.
"""

import numpy as np
from scipy.special import betainc, betaln, expit, logsumexp

from ._conjugate import BetaPosterior

#: Range of the groups' concentration ``kappa`` (prior pseudo-counts per group):
#: from groups nearly unrelated (0.5) to groups equal up to the last 1e-2.
KAPPA_MIN, KAPPA_MAX = 0.5, 1e4
#: Nodes of ``log kappa`` (midpoints of equal cells).
N_KAPPA = 40
#: Nodes of ``logit mu`` in the first, coarse pass and in each refined row.
N_COARSE, N_FINE = 241, 81
#: Range of ``logit mu`` searched by the coarse pass.
LOGIT_RANGE = 15.0
#: Nodes whose log weight is this far below the largest are dropped.
LOG_TOLERANCE = 30.0
#: Mass of the smallest nodes left out of the quantiles of :meth:`interval`.
QUANTILE_TOLERANCE = 1e-6
#: Bisection steps of those quantiles (2**-40: below a float's relevance here).
N_BISECTION = 40


class HierarchicalBeta:
    """The posterior of exchangeable Bernoulli rates under a shared Beta hyperprior.

    Parameters
    ----------
    successes, trials : ndarray of shape (n_groups,)
        Counts per group (may be fractional for weighted data).

    Attributes
    ----------
    mu, kappa : ndarray of shape (n_nodes,)
        Quadrature nodes of the hyperparameters.
    weights : ndarray of shape (n_nodes,)
        Their posterior weights (sum to 1).
    log_evidence : float
        Log probability of the labels under the hierarchical prior.
    """

    def __init__(self, successes, trials):
        self.successes = np.asarray(successes, dtype=np.float64)
        self.failures = np.asarray(trials, dtype=np.float64) - self.successes
        # Midpoints of N_KAPPA equal cells of log kappa.
        edges = np.linspace(np.log(KAPPA_MIN), np.log(KAPPA_MAX), N_KAPPA + 1)
        log_kappa = (edges[:-1] + edges[1:]) / 2.0
        # Coarse pass: where in logit mu the mass is, for each kappa.
        u = np.linspace(-LOGIT_RANGE, LOGIT_RANGE, N_COARSE)
        step = u[1] - u[0]
        coarse = self._log_density(u[None, :], log_kappa[:, None])
        keep = coarse > coarse.max() - LOG_TOLERANCE
        rows = np.flatnonzero(keep.any(axis=1))
        lo = np.array([u[keep[r]].min() for r in rows]) - step
        hi = np.array([u[keep[r]].max() for r in rows]) + step
        # Refined pass: N_FINE nodes over that range, row by row (a trapezoid-free
        # midpoint rule: each node stands for its cell).
        frac = (np.arange(N_FINE) + 0.5) / N_FINE
        fine_u = lo[:, None] + (hi - lo)[:, None] * frac[None, :]
        fine_k = np.broadcast_to(log_kappa[rows][:, None], fine_u.shape)
        log_w = self._log_density(fine_u, fine_k) + np.log((hi - lo) / N_FINE)[:, None]
        # The prior weight of each log kappa node.
        log_w = (log_w + self._log_kappa_prior(log_kappa)[rows][:, None]).ravel()
        self.log_evidence = float(logsumexp(log_w))
        w = np.exp(log_w - log_w.max())
        kept = w > np.exp(-LOG_TOLERANCE)
        self.mu = expit(fine_u.ravel()[kept])
        self.kappa = np.exp(fine_k.ravel()[kept])
        self._row = np.repeat(np.arange(len(rows)), N_FINE)[kept]  # its kappa node
        self.weights = w[kept] / w[kept].sum()

    @staticmethod
    def _log_kappa_prior(log_kappa):
        """Log prior weight of each node of ``log kappa`` (sums to 1).

        ``1 / sqrt(kappa)`` uniform is a density ``kappa^(-1/2)`` in ``log
        kappa``: less mass on large ``kappa`` than a log-uniform prior, which
        with a few labels per group shrinks every group to the mean.
        """
        w = -0.5 * log_kappa
        return w - logsumexp(w)

    def _log_density(self, u, log_kappa):
        """Log posterior density (unnormalized) of ``(logit mu, log kappa)``."""
        mu, kappa = np.broadcast_arrays(expit(u), np.exp(log_kappa))
        a, b = mu * kappa, (1.0 - mu) * kappa
        # The Uniform(0, 1) prior of mu, as a density of logit mu.
        out = np.broadcast_to(np.log(mu) + np.log1p(-mu), a.shape)
        # Groups with the same counts share a term: one per distinct (s, f) pair.
        labeled = self.successes + self.failures > 0
        pairs, times = np.unique(
            np.column_stack([self.successes[labeled], self.failures[labeled]]),
            axis=0,
            return_counts=True,
        )
        base = betaln(a, b)
        for (s, f), m in zip(pairs, times, strict=True):
            out = out + m * (betaln(a + s, b + f) - base)
        return out

    def _distinct(self):
        """The distinct ``(successes, failures)`` pairs and each group's pair.

        Groups with the same counts have the same posterior (e.g. the many
        unlabeled classes of a 100,000-class model), so the per-node arrays
        are computed once per pair: O(nodes x pairs), not O(nodes x groups).
        """
        if not hasattr(self, "_pairs"):
            pairs, inverse = np.unique(
                np.column_stack([self.successes, self.failures]), axis=0, return_inverse=True
            )
            self._pairs, self._inverse = pairs, inverse.ravel()
        return self._pairs, self._inverse

    def _components(self):
        """Per node and distinct count pair: the conjugate posterior's shape parameters."""
        pairs, _ = self._distinct()
        a = self.mu[:, None] * self.kappa[:, None] + pairs[None, :, 0]
        b = (1.0 - self.mu[:, None]) * self.kappa[:, None] + pairs[None, :, 1]
        return a, b

    def moments(self):
        """Posterior mean and variance of each group's rate (exact over the grid)."""
        a, b = self._components()
        inverse = self._distinct()[1]
        n = a + b
        mean = self.weights @ (a / n)
        second = self.weights @ (a * (a + 1.0) / (n * (n + 1.0)))
        return mean[inverse], (second - mean**2)[inverse]

    def posterior(self):
        """One Beta per group with the mixture's mean and variance."""
        mean, var = self.moments()
        return BetaPosterior.from_moments(mean, var, self.successes, self.failures)

    def interval(self, level=0.95):
        """Equal-tailed interval ``(lower, upper)`` per group, from the mixture over kappa.

        The Beta of :meth:`posterior` has the mixture's mean and variance but
        thinner tails (95 % intervals from it cover ~92 % of rates drawn from
        the prior); the tails come from mixing over ``kappa``. So each
        ``kappa`` node's mixture over ``mu`` (smooth, unimodal in ``mu``)
        becomes one Beta of its mean and variance, and the quantiles of the
        mixture of those Betas over ``kappa`` are found by bisection of its
        CDF.
        """
        a, b = self._components()
        n = a + b
        mean, second = a / n, a * (a + 1.0) / (n * (n + 1.0))
        n_rows = self._row.max() + 1
        row_w = np.bincount(self._row, weights=self.weights, minlength=n_rows)
        kept = row_w > QUANTILE_TOLERANCE * row_w.max()

        def row_sum(x):
            out = np.zeros((n_rows, x.shape[1]))
            np.add.at(out, self._row, self.weights[:, None] * x)
            return out[kept] / row_w[kept][:, None]

        m, m2 = row_sum(mean), row_sum(second)
        strength = np.maximum(m * (1.0 - m) / np.maximum(m2 - m**2, 1e-300) - 1.0, 1e-12)
        ra, rb = (m * strength)[:, None, :], ((1.0 - m) * strength)[:, None, :]
        w = row_w[kept] / row_w[kept].sum()
        tail = (1.0 - level) / 2.0
        target = np.array([tail, 1.0 - tail])[:, None]  # (2, 1): lower and upper
        lo = np.zeros((2, a.shape[1]))
        hi = np.ones_like(lo)
        for _ in range(N_BISECTION):
            mid = (lo + hi) / 2.0
            below = np.tensordot(w, betainc(ra, rb, mid[None]), axes=1) < target
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        # The outer ends of the last brackets: a quantile closer to 0 or 1 than
        # 2**-40 (rates drawn that close round to 0 or 1) stays inside.
        inverse = self._distinct()[1]
        return lo[0][inverse], hi[1][inverse]

    def predictive(self):
        """The Beta (mean and variance matched) of a new group's rate, one per group.

        The prior a group with no label has once the others are seen: its mean
        is the posterior mean of ``mu``, the rate every group is shrunk toward.
        """
        mu, kappa = self.mu, self.kappa
        mean = self.weights @ mu
        second = self.weights @ (mu * (mu * kappa + 1.0) / (kappa + 1.0))
        zeros = np.zeros_like(self.successes)
        return BetaPosterior.from_moments(
            np.full_like(zeros, mean), np.full_like(zeros, second - mean**2), zeros, zeros
        )

    def rvs(self, size, rng):
        """Joint draws of every group's rate, shape ``(size, n_groups)``.

        Each draw takes ``(mu, kappa)`` from the grid posterior, then every
        group from its conjugate posterior given them: the groups are
        dependent through ``mu`` and ``kappa``, which an overall rate needs.
        """
        node = rng.choice(len(self.weights), size=size, p=self.weights)
        a, b = self._components()
        inverse = self._distinct()[1]
        return rng.beta(a[node][:, inverse], b[node][:, inverse])

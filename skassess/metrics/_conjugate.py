"""Conjugate posteriors vectorized over groups: Beta-Bernoulli and Dirichlet-multinomial.

Both classes are immutable values. A posterior remembers its prior and the
counts it has seen, so that two posteriors built from the same prior on
disjoint data merge exactly: ``prior + counts_1 + counts_2``.
"""

import numpy as np
from scipy import special, stats
from sklearn.utils import check_random_state

from .._validation import check_level

__all__ = ["BetaPosterior", "DirichletPosterior"]


def _positive(name, value):
    value = np.array(value, dtype=np.float64)
    if not np.all(np.isfinite(value)) or np.any(value <= 0):
        raise ValueError(f"{name} must be finite and > 0; got {value.tolist()!r}.")
    return value


def _counts(name, value, shape):
    value = np.array(value, dtype=np.float64)
    try:
        value = np.broadcast_to(value, shape).copy()
    except ValueError:
        raise ValueError(
            f"{name} must have shape {shape}; got shape {value.shape}."
        ) from None
    if not np.all(np.isfinite(value)) or np.any(value < 0):
        raise ValueError(f"{name} must be finite and >= 0; got {value.tolist()!r}.")
    return value


class BetaPosterior:
    """Beta posteriors of ``G`` independent Bernoulli rates.

    Group ``g`` has the prior ``Beta(prior_alpha[g], prior_beta[g])``; after
    ``r`` successes in ``n`` trials its posterior is
    ``Beta(prior_alpha[g] + r, prior_beta[g] + n - r)``.

    Parameters
    ----------
    prior_alpha, prior_beta : array-like of shape (n_groups,)
        Prior pseudo-counts of successes and failures, each > 0.
    successes, failures : array-like of shape (n_groups,), default=None
        Counts already seen (non-negative, may be fractional for weighted
        data). None means zero.

    Examples
    --------
    >>> from skassess.metrics import BetaPosterior
    >>> post = BetaPosterior([1.0, 1.0], [1.0, 1.0]).update([8, 1], [10, 10])
    >>> post.mean()
    array([0.75      , 0.16666667])
    >>> lower, upper = post.interval(0.95)
    >>> bool(lower[0] < 0.75 < upper[0])
    True
    """

    def __init__(self, prior_alpha, prior_beta, successes=None, failures=None):
        a0, b0 = np.broadcast_arrays(
            _positive("prior_alpha", prior_alpha), _positive("prior_beta", prior_beta)
        )
        self.prior_alpha = np.atleast_1d(a0).astype(np.float64)
        self.prior_beta = np.atleast_1d(b0).astype(np.float64)
        shape = self.prior_alpha.shape
        self.successes = _counts("successes", 0.0 if successes is None else successes, shape)
        self.failures = _counts("failures", 0.0 if failures is None else failures, shape)

    @property
    def n_groups(self):
        """Number of groups."""
        return self.prior_alpha.shape[0]

    @property
    def alpha(self):
        """Posterior first shape parameter, ``prior_alpha + successes``."""
        return self.prior_alpha + self.successes

    @property
    def beta(self):
        """Posterior second shape parameter, ``prior_beta + failures``."""
        return self.prior_beta + self.failures

    def update(self, successes, trials):
        """Return the posterior after ``successes`` out of ``trials`` more outcomes."""
        shape = self.prior_alpha.shape
        successes = _counts("successes", successes, shape)
        trials = _counts("trials", trials, shape)
        if np.any(successes > trials):
            g = int(np.flatnonzero(successes > trials)[0])
            raise ValueError(
                f"successes must not exceed trials; group {g} has {successes[g]} > "
                f"{trials[g]}."
            )
        return BetaPosterior(
            self.prior_alpha,
            self.prior_beta,
            self.successes + successes,
            self.failures + trials - successes,
        )

    def merge(self, other):
        """Combine with a posterior of the same prior fitted on disjoint data."""
        if not isinstance(other, BetaPosterior):
            raise TypeError(f"can only merge a BetaPosterior; got {type(other).__name__}.")
        if not (
            np.array_equal(self.prior_alpha, other.prior_alpha)
            and np.array_equal(self.prior_beta, other.prior_beta)
        ):
            raise ValueError("Posteriors with different priors cannot be merged.")
        return BetaPosterior(
            self.prior_alpha,
            self.prior_beta,
            self.successes + other.successes,
            self.failures + other.failures,
        )

    def mean(self):
        """Posterior mean per group."""
        a, b = self.alpha, self.beta
        return a / (a + b)

    def var(self):
        """Posterior variance per group."""
        a, b = self.alpha, self.beta
        n = a + b
        return a * b / (n * n * (n + 1.0))

    def interval(self, level=0.95):
        """Equal-tailed credible interval ``(lower, upper)`` per group."""
        tail = (1.0 - check_level(level)) / 2.0
        a, b = self.alpha, self.beta
        return stats.beta.ppf(tail, a, b), stats.beta.isf(tail, a, b)

    def rvs(self, size=1, random_state=None):
        """Draw rates: an array of shape ``(size, n_groups)``."""
        rng = check_random_state(random_state)
        return rng.beta(self.alpha, self.beta, size=(size, self.n_groups))

    def log_predictive(self, outcomes, group_index):
        """Log posterior predictive probability of single outcomes.

        Parameters
        ----------
        outcomes : array-like of shape (n,)
            0/1 outcomes.
        group_index : array-like of int of shape (n,)
            Group of each outcome.
        """
        outcomes = np.asarray(outcomes)
        a, b = self.alpha[group_index], self.beta[group_index]
        return np.where(outcomes == 1, np.log(a), np.log(b)) - np.log(a + b)

    def log_marginal_likelihood(self):
        """Log probability of the observed outcome sequence per group, under the prior."""
        return special.betaln(self.alpha, self.beta) - special.betaln(
            self.prior_alpha, self.prior_beta
        )

    def __repr__(self):
        return (
            f"BetaPosterior(n_groups={self.n_groups}, "
            f"mean={np.array2string(self.mean(), precision=3, threshold=6)})"
        )


class DirichletPosterior:
    """Dirichlet posteriors of ``G`` independent categorical distributions over ``K`` values.

    Row ``g`` has the prior ``Dirichlet(prior_alpha[g])``; after observing
    ``counts[g]`` its posterior is ``Dirichlet(prior_alpha[g] + counts[g])``.

    Parameters
    ----------
    prior_alpha : array-like of shape (n_groups, n_categories)
        Prior pseudo-counts, each > 0.
    counts : array-like of shape (n_groups, n_categories), default=None
        Counts already seen. None means zero.

    Examples
    --------
    >>> from skassess.metrics import DirichletPosterior
    >>> post = DirichletPosterior([[0.5, 0.5]]).update([[9, 1]])
    >>> post.mean()
    array([[0.86363636, 0.13636364]])
    """

    def __init__(self, prior_alpha, counts=None):
        alpha = _positive("prior_alpha", prior_alpha)
        if alpha.ndim != 2:
            raise ValueError(
                f"prior_alpha must be 2-D (n_groups, n_categories); got shape {alpha.shape}."
            )
        self.prior_alpha = alpha
        self.counts = _counts("counts", 0.0 if counts is None else counts, alpha.shape)

    @property
    def n_groups(self):
        """Number of groups (rows)."""
        return self.prior_alpha.shape[0]

    @property
    def n_categories(self):
        """Number of categories (columns)."""
        return self.prior_alpha.shape[1]

    @property
    def alpha(self):
        """Posterior parameters, ``prior_alpha + counts``."""
        return self.prior_alpha + self.counts

    def update(self, counts):
        """Return the posterior after more ``counts`` of shape (n_groups, n_categories)."""
        counts = _counts("counts", counts, self.prior_alpha.shape)
        return DirichletPosterior(self.prior_alpha, self.counts + counts)

    def merge(self, other):
        """Combine with a posterior of the same prior fitted on disjoint data."""
        if not isinstance(other, DirichletPosterior):
            raise TypeError(
                f"can only merge a DirichletPosterior; got {type(other).__name__}."
            )
        if not np.array_equal(self.prior_alpha, other.prior_alpha):
            raise ValueError("Posteriors with different priors cannot be merged.")
        return DirichletPosterior(self.prior_alpha, self.counts + other.counts)

    def mean(self):
        """Posterior mean, shape (n_groups, n_categories); rows sum to 1."""
        a = self.alpha
        return a / a.sum(axis=1, keepdims=True)

    def var(self):
        """Marginal posterior variance of each cell."""
        a = self.alpha
        a0 = a.sum(axis=1, keepdims=True)
        return a * (a0 - a) / (a0 * a0 * (a0 + 1.0))

    def interval(self, level=0.95):
        """Equal-tailed marginal credible interval ``(lower, upper)`` of each cell.

        The marginal of cell ``k`` is ``Beta(alpha_k, sum(alpha) - alpha_k)``.
        """
        tail = (1.0 - check_level(level)) / 2.0
        a = self.alpha
        rest = a.sum(axis=1, keepdims=True) - a
        return stats.beta.ppf(tail, a, rest), stats.beta.isf(tail, a, rest)

    def rvs(self, size=1, random_state=None):
        """Draw distributions: an array of shape ``(size, n_groups, n_categories)``.

        Draws use stick-breaking with Beta variables, which stays exact for
        very small pseudo-counts where normalized Gamma draws underflow to 0/0
        (numpy's ``Generator.dirichlet`` does the same, but for one parameter
        vector at a time).
        """
        rng = check_random_state(random_state)
        return dirichlet_draws(np.broadcast_to(self.alpha, (size,) + self.alpha.shape), rng)

    def log_predictive(self, outcomes, group_index):
        """Log posterior predictive probability of single categorical outcomes."""
        a = self.alpha
        outcomes = np.asarray(outcomes)
        group_index = np.asarray(group_index)
        return np.log(a[group_index, outcomes]) - np.log(a.sum(axis=1)[group_index])

    def log_marginal_likelihood(self):
        """Log probability of the observed outcome sequence per group, under the prior."""

        def log_mvbeta(a):
            return special.gammaln(a).sum(axis=1) - special.gammaln(a.sum(axis=1))

        return log_mvbeta(self.alpha) - log_mvbeta(self.prior_alpha)

    def __repr__(self):
        return f"DirichletPosterior(n_groups={self.n_groups}, n_categories={self.n_categories})"


def dirichlet_draws(alpha, rng):
    """Dirichlet draws over the last axis of ``alpha`` (any leading shape).

    Stick-breaking with Beta variables stays on the simplex for the very small
    pseudo-counts where normalized Gamma draws underflow to 0/0.
    """
    k = alpha.shape[-1]
    tail = np.flip(np.cumsum(np.flip(alpha, -1), axis=-1), -1)  # sum of alpha_j, j >= i
    out = np.empty(alpha.shape)
    remaining = np.ones(alpha.shape[:-1])
    for i in range(k - 1):
        piece = remaining * rng.beta(alpha[..., i], tail[..., i + 1])
        out[..., i] = piece
        remaining = remaining - piece
    out[..., k - 1] = np.maximum(remaining, 0.0)
    return out

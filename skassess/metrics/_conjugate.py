"""Conjugate posteriors vectorized over groups (and runs): Beta-Bernoulli and Dirichlet.

Both classes are immutable values. A posterior remembers its prior and the
counts it has seen, so that two posteriors built from the same prior on
disjoint data merge exactly: ``prior + counts_1 + counts_2``.
"""

from numbers import Real

import numpy as np
from scipy import special, stats
from sklearn.utils import check_random_state

from ..utils._params import LEVEL, N_DRAWS, validate_args, validate_params
from ..utils._sklearn_compat import Interval

__all__ = ["BetaPosterior", "DirichletPosterior", "robust_mixture_posterior"]

#: The smallest pseudo-count a prior built from the scores gets: it keeps Beta
#: and Dirichlet parameters > 0 where the scores give a cell no mass at all
#: (numpy samples Beta parameters down to about 1e-300). Not a probability clip.
MIN_PSEUDO_COUNT = 1e-300

#: The total pseudo-count of a row above which normalized Gamma draws cannot all
#: underflow (a Gamma(0.1) variable is below 1e-300 with probability < 1e-29).
_GAMMA_SAFE = 0.1


def check_positive(name, value):
    value = np.array(value, dtype=np.float64)
    if not np.all(np.isfinite(value)) or np.any(value <= 0):
        raise ValueError(f"{name} must be finite and > 0; got {value.tolist()!r}.")
    return value


def check_counts(name, value, shape):
    value = np.array(value, dtype=np.float64)
    try:
        value = np.broadcast_to(value, shape).copy()
    except ValueError:
        raise ValueError(f"{name} must have shape {shape}; got shape {value.shape}.") from None
    if not np.all(np.isfinite(value)) or np.any(value < 0):
        raise ValueError(f"{name} must be finite and >= 0; got {value.tolist()!r}.")
    return value


class BetaPosterior:
    """Beta posteriors of independent Bernoulli rates, vectorized over any leading axes.

    Read more in the :ref:`User Guide <ug_accuracy>`.

    Cell ``i`` has the prior ``Beta(prior_alpha[i], prior_beta[i])``; after
    ``r`` successes in ``n`` trials its posterior is
    ``Beta(prior_alpha[i] + r, prior_beta[i] + n - r)``. The last axis is the
    group; leading axes (e.g. independent simulation runs) are batch axes.

    Parameters
    ----------
    prior_alpha, prior_beta : array-like of shape (..., n_groups)
        Prior pseudo-counts of successes and failures, each > 0.
    successes, failures : array-like of shape (..., n_groups), default=None
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
    >>> runs = BetaPosterior([[1.0, 1.0]] * 3, 1.0)  # 3 runs x 2 groups
    >>> runs.record(([0, 2], [1, 0]), [1, 0]).successes
    array([[0., 1.],
           [0., 0.],
           [0., 0.]])
    """

    def __init__(self, prior_alpha, prior_beta, successes=None, failures=None):
        a0, b0 = np.broadcast_arrays(
            check_positive("prior_alpha", prior_alpha), check_positive("prior_beta", prior_beta)
        )
        self.prior_alpha = np.atleast_1d(a0).astype(np.float64)
        self.prior_beta = np.atleast_1d(b0).astype(np.float64)
        shape = self.prior_alpha.shape
        self.successes = check_counts("successes", 0.0 if successes is None else successes, shape)
        self.failures = check_counts("failures", 0.0 if failures is None else failures, shape)

    @classmethod
    def from_moments(
        cls, mean, var, successes, failures, *, min_strength=0.0, max_strength=1e12, floor=1e-9
    ):
        """The posterior after these counts whose mean and variance are as given.

        A posterior known only by its moments (e.g. a mixture over
        hyperparameters) becomes one Beta per cell: the Beta of that ``mean``
        and ``var``, whose prior pseudo-counts are it minus the counts. Where
        that would leave a pseudo-count below ``floor`` (a mixture wider than
        the counts alone allow), the Beta is narrowed just enough, keeping the
        mean; its strength ``alpha + beta`` is kept within ``[min_strength,
        max_strength]`` unless the counts need more.

        Parameters
        ----------
        mean, var : array-like of shape (..., n_groups)
            Posterior mean (clipped to ``[1e-9, 1 - 1e-9]``) and variance (a
            variance rounded below 0 is read as 0, the narrowest Beta).
        successes, failures : array-like of shape (..., n_groups)
            Counts seen.
        min_strength, max_strength : float, default=0, 1e12
            Bounds of the posterior strength ``alpha + beta`` (a zero variance
            gives ``max_strength``).
        floor : float, default=1e-9
            The smallest prior pseudo-count.

        Returns
        -------
        posterior : BetaPosterior

        Examples
        --------
        >>> from skassess.metrics import BetaPosterior
        >>> post = BetaPosterior.from_moments(0.75, 0.75 * 0.25 / 11, 4.0, 1.0)
        >>> post.prior_alpha, post.prior_beta, post.mean()
        (array([3.5]), array([1.5]), array([0.75]))
        """
        mean = np.clip(np.asarray(mean, dtype=np.float64), 1e-9, 1 - 1e-9)
        var = np.maximum(np.asarray(var, dtype=np.float64), 0.0)
        successes = np.asarray(successes, dtype=np.float64)
        failures = np.asarray(failures, dtype=np.float64)
        needed = np.maximum((successes + floor) / mean, (failures + floor) / (1.0 - mean))
        with np.errstate(divide="ignore"):
            strength = np.clip(mean * (1.0 - mean) / var - 1.0, min_strength, max_strength)
        total = np.maximum(strength, needed)
        return cls(
            np.maximum(total * mean - successes, floor),
            np.maximum(total * (1.0 - mean) - failures, floor),
            successes,
            failures,
        )

    @property
    def shape(self):
        """Shape of the cells, ``(..., n_groups)``."""
        return self.prior_alpha.shape

    @property
    def n_groups(self):
        """Number of groups (the last axis)."""
        return self.prior_alpha.shape[-1]

    @property
    def alpha(self):
        """Posterior first shape parameter, ``prior_alpha + successes``."""
        return self.prior_alpha + self.successes

    @property
    def beta(self):
        """Posterior second shape parameter, ``prior_beta + failures``."""
        return self.prior_beta + self.failures

    @property
    def trials(self):
        """Outcomes seen per cell, ``successes + failures``."""
        return self.successes + self.failures

    def update(self, successes, trials):
        """Return the posterior after ``successes`` out of ``trials`` more outcomes."""
        shape = self.shape
        successes = check_counts("successes", successes, shape)
        trials = check_counts("trials", trials, shape)
        if np.any(successes > trials):
            g = np.unravel_index(int(np.flatnonzero(successes > trials)[0]), shape)
            g = g[0] if len(g) == 1 else g
            raise ValueError(
                f"successes must not exceed trials; cell {g} has {successes[g]} > {trials[g]}."
            )
        return unchecked_beta_posterior(
            self.prior_alpha,
            self.prior_beta,
            self.successes + successes,
            self.failures + trials - successes,
        )

    def record(self, index, outcomes):
        """Return the posterior after one 0/1 outcome in each cell ``index`` points to.

        ``index`` is a tuple of integer arrays, one per axis (e.g. ``(runs,
        groups)``); a cell may appear several times. This is the step of an
        active-assessment loop.
        """
        outcomes = np.asarray(outcomes, dtype=np.float64)
        successes, failures = self.successes.copy(), self.failures.copy()
        np.add.at(successes, index, outcomes)
        np.add.at(failures, index, 1.0 - outcomes)
        return unchecked_beta_posterior(self.prior_alpha, self.prior_beta, successes, failures)

    def with_prior(self, prior_alpha, prior_beta):
        """The same counts under another prior (e.g. one learned from the labels)."""
        return BetaPosterior(prior_alpha, prior_beta, self.successes, self.failures)

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
        """Posterior mean per cell."""
        a, b = self.alpha, self.beta
        return a / (a + b)

    def var(self):
        """Posterior variance per cell."""
        a, b = self.alpha, self.beta
        n = a + b
        return a * b / (n * n * (n + 1.0))

    @validate_args({"level": [LEVEL]})
    def interval(self, level=0.95):
        """Equal-tailed credible interval ``(lower, upper)`` per cell."""
        tail = (1.0 - level) / 2.0
        a, b = self.alpha, self.beta
        return stats.beta.ppf(tail, a, b), stats.beta.isf(tail, a, b)

    @validate_args(
        {
            "size": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def rvs(self, size=1, random_state=None):
        """Draw rates: an array of shape ``(size, *shape)``.

        numpy's Generator samples Beta parameters down to about 1e-300
        (Johnk's algorithm in log space), so near-zero priors are exact too.
        """
        rng = check_random_state(random_state)
        return rng.beta(self.alpha, self.beta, size=(size,) + self.shape)

    def draw(self, rng):
        """One draw of every cell, shape ``shape`` (``rng``: a numpy Generator)."""
        return rng.beta(self.alpha, self.beta)

    def expected_abs_deviation(self, center):
        """``E|theta - center|`` per cell, exactly (``center`` broadcasts).

        ``E|theta - c| = E[theta] - c + 2 (c I_c(a, b) - E[theta] I_c(a + 1, b))``
        with ``I`` the regularized incomplete beta function.
        """
        a, b = self.alpha, self.beta
        c = np.clip(center, 0.0, 1.0)
        m = a / (a + b)
        return m - c + 2.0 * (c * special.betainc(a, b, c) - m * special.betainc(a + 1.0, b, c))

    def log_predictive(self, outcomes, group_index):
        """Log posterior predictive probability of single outcomes (one batch cell each).

        Parameters
        ----------
        outcomes : array-like of shape (n,)
            0/1 outcomes.
        group_index : array-like of int of shape (n,)
            Group of each outcome (1-D posteriors only).
        """
        outcomes = np.asarray(outcomes)
        a, b = self.alpha[group_index], self.beta[group_index]
        return np.where(outcomes == 1, np.log(a), np.log(b)) - np.log(a + b)

    def log_marginal_likelihood(self):
        """Log probability of the observed outcome sequence per cell, under the prior."""
        return special.betaln(self.alpha, self.beta) - special.betaln(
            self.prior_alpha, self.prior_beta
        )

    def __repr__(self):
        return (
            f"BetaPosterior(shape={self.shape}, "
            f"mean={np.array2string(self.mean(), precision=3, threshold=6)})"
        )


@validate_params(
    {
        "prior_alpha": ["array-like", Real],
        "prior_beta": ["array-like", Real],
        "successes": ["array-like", Real],
        "failures": ["array-like", Real],
        "prior_weight": [Interval(Real, 0, 1, closed="both")],
        "vague": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def robust_mixture_posterior(
    prior_alpha, prior_beta, successes, failures, *, prior_weight, vague=1.0
):
    """The posterior of a rate under a robust mixture prior, as one Beta per cell.

    The prior is ``w Beta(prior_alpha, prior_beta) + (1 - w) Beta(vague,
    vague)`` (``w = prior_weight``): the informative component holds with
    probability ``w``, and the labels learn how far: each component's weight
    is updated by its marginal likelihood of the counts (Schmidli et al.,
    2014, Biometrics 70: 1023-1032). Where the counts contradict the
    informative component, the posterior moves to the vague one and so to
    the counts alone. The posterior mixture is returned as the Beta of its
    mean and variance (:meth:`BetaPosterior.from_moments`, as for the
    hierarchical prior), with the posterior weight of the informative
    component.

    Parameters
    ----------
    prior_alpha, prior_beta : array-like of shape (..., n_groups)
        The informative component, each > 0.
    successes, failures : array-like of shape (..., n_groups)
        Counts seen (non-negative).
    prior_weight : float in [0, 1]
        Prior probability of the informative component.
    vague : float, default=1.0
        Both parameters of the vague component.

    Returns
    -------
    posterior : BetaPosterior
    weight : ndarray
        Posterior probability of the informative component per cell.

    Examples
    --------
    >>> from skassess.metrics._conjugate import robust_mixture_posterior
    >>> post, w = robust_mixture_posterior(90.0, 10.0, 9, 1, prior_weight=0.9)
    >>> round(float(w[0]), 2), round(float(post.mean()[0]), 3)
    (0.97, 0.9)
    >>> post, w = robust_mixture_posterior(90.0, 10.0, 10, 40, prior_weight=0.9)
    >>> bool(w[0] < 1e-6), round(float(post.mean()[0]), 3)
    (True, 0.212)
    """
    informative = BetaPosterior(prior_alpha, prior_beta, successes, failures)
    flat = BetaPosterior(
        np.full(informative.shape, float(vague)),
        float(vague),
        informative.successes,
        informative.failures,
    )
    w = float(prior_weight)
    with np.errstate(divide="ignore"):
        log_w1 = np.log(w) + informative.log_marginal_likelihood()
        log_w0 = np.log1p(-w) + flat.log_marginal_likelihood()
    weight = np.exp(log_w1 - np.logaddexp(log_w1, log_w0))
    m1, m0 = informative.mean(), flat.mean()
    mean = weight * m1 + (1.0 - weight) * m0
    second = weight * (informative.var() + m1**2) + (1.0 - weight) * (flat.var() + m0**2)
    post = BetaPosterior.from_moments(
        mean, second - mean**2, informative.successes, informative.failures
    )
    return post, weight


def unchecked_beta_posterior(prior_alpha, prior_beta, successes, failures):
    """A :class:`BetaPosterior` from arrays that are already valid (no copies, no checks).

    For the package's inner loops, whose arrays a checked posterior produced.
    """
    obj = BetaPosterior.__new__(BetaPosterior)
    obj.prior_alpha, obj.prior_beta = prior_alpha, prior_beta
    obj.successes, obj.failures = successes, failures
    return obj


class _CategoricalRows:
    """Shape accessors of posteriors with ``prior_alpha`` and ``counts`` of shape
    ``(..., n_groups, n_categories)``."""

    @property
    def shape(self):
        """Shape ``(..., n_groups, n_categories)``."""
        return self.prior_alpha.shape

    @property
    def n_groups(self):
        """Number of groups (rows)."""
        return self.prior_alpha.shape[-2]

    @property
    def n_categories(self):
        """Number of categories (columns)."""
        return self.prior_alpha.shape[-1]

    @property
    def alpha(self):
        """Posterior parameters, ``prior_alpha + counts``."""
        return self.prior_alpha + self.counts


class DirichletPosterior(_CategoricalRows):
    """Dirichlet posteriors of independent categorical distributions, vectorized over groups.

    Read more in the :ref:`User Guide <ug_confusion>`.

    Row ``g`` has the prior ``Dirichlet(prior_alpha[g])``; after observing
    ``counts[g]`` its posterior is ``Dirichlet(prior_alpha[g] + counts[g])``.
    The last axis holds the categories, the one before it the groups; further
    leading axes (e.g. simulation runs) are batch axes.

    Parameters
    ----------
    prior_alpha : array-like of shape (..., n_groups, n_categories)
        Prior pseudo-counts, each > 0.
    counts : array-like of the same shape, default=None
        Counts already seen. None means zero.

    Examples
    --------
    >>> from skassess.metrics import DirichletPosterior
    >>> post = DirichletPosterior([[0.5, 0.5]]).update([[9, 1]])
    >>> post.mean()
    array([[0.86363636, 0.13636364]])
    """

    def __init__(self, prior_alpha, counts=None):
        alpha = check_positive("prior_alpha", prior_alpha)
        if alpha.ndim < 2:
            raise ValueError(
                "prior_alpha must have shape (..., n_groups, n_categories); got shape "
                f"{alpha.shape}."
            )
        self.prior_alpha = alpha
        self.counts = check_counts("counts", 0.0 if counts is None else counts, alpha.shape)

    def update(self, counts):
        """Return the posterior after more ``counts`` of the posterior's shape."""
        counts = check_counts("counts", counts, self.prior_alpha.shape)
        return DirichletPosterior(self.prior_alpha, self.counts + counts)

    def record(self, index, outcomes):
        """Return the posterior after one observed category per cell ``index`` points to.

        ``index`` is a tuple of integer arrays for the leading axes and the
        group axis (e.g. ``(runs, groups)``); ``outcomes`` the categories.
        """
        counts = self.counts.copy()
        np.add.at(counts, tuple(index) + (np.asarray(outcomes),), 1.0)
        obj = DirichletPosterior.__new__(DirichletPosterior)
        obj.prior_alpha, obj.counts = self.prior_alpha, counts
        return obj

    def merge(self, other):
        """Combine with a posterior of the same prior fitted on disjoint data."""
        if not isinstance(other, DirichletPosterior):
            raise TypeError(f"can only merge a DirichletPosterior; got {type(other).__name__}.")
        if not np.array_equal(self.prior_alpha, other.prior_alpha):
            raise ValueError("Posteriors with different priors cannot be merged.")
        return DirichletPosterior(self.prior_alpha, self.counts + other.counts)

    def mean(self):
        """Posterior mean; sums to 1 over the last axis."""
        a = self.alpha
        return a / a.sum(axis=-1, keepdims=True)

    def var(self):
        """Marginal posterior variance of each cell."""
        a = self.alpha
        a0 = a.sum(axis=-1, keepdims=True)
        return a * (a0 - a) / (a0 * a0 * (a0 + 1.0))

    def marginal(self, category):
        """The Beta marginal of one category per row, e.g. the diagonal of a confusion matrix.

        ``category`` is an int or an integer array of shape ``(n_groups,)``.
        """
        a = self.alpha
        cat = np.broadcast_to(np.asarray(category), a.shape[:-1])
        own = np.take_along_axis(a, cat[..., None], axis=-1)[..., 0]
        return BetaPosterior(own, a.sum(axis=-1) - own)

    @validate_args({"level": [LEVEL]})
    def interval(self, level=0.95):
        """Equal-tailed marginal credible interval ``(lower, upper)`` of each cell.

        The marginal of cell ``k`` is ``Beta(alpha_k, sum(alpha) - alpha_k)``.
        """
        tail = (1.0 - level) / 2.0
        a = self.alpha
        rest = a.sum(axis=-1, keepdims=True) - a
        return stats.beta.ppf(tail, a, rest), stats.beta.isf(tail, a, rest)

    @validate_args(
        {
            "size": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def rvs(self, size=1, random_state=None):
        """Draw distributions: an array of shape ``(size, *shape)``.

        Draws switch to stick-breaking with Beta variables where a row's
        pseudo-counts sum to less than 0.1, which stays exact where normalized Gamma
        draws underflow to 0/0 (numpy's ``Generator.dirichlet`` does the same,
        but for one parameter vector at a time).
        """
        rng = check_random_state(random_state)
        return dirichlet_draws(np.broadcast_to(self.alpha, (size,) + self.alpha.shape), rng)

    def draw(self, rng):
        """One draw of every row, shape ``shape`` (``rng``: a numpy Generator)."""
        return dirichlet_draws(self.alpha, rng)

    def log_predictive(self, outcomes, group_index):
        """Log posterior predictive probability of single categorical outcomes."""
        a = self.alpha
        outcomes = np.asarray(outcomes)
        group_index = np.asarray(group_index)
        return np.log(a[group_index, outcomes]) - np.log(a.sum(axis=-1)[group_index])

    def log_marginal_likelihood(self):
        """Log probability of the observed outcome sequence per group, under the prior."""

        def log_mvbeta(a):
            return special.gammaln(a).sum(axis=-1) - special.gammaln(a.sum(axis=-1))

        return log_mvbeta(self.alpha) - log_mvbeta(self.prior_alpha)

    def __repr__(self):
        return f"DirichletPosterior(shape={self.shape})"


def dirichlet_draws(alpha, rng):
    """Dirichlet draws over the last axis of ``alpha`` (any leading shape).

    Rows whose pseudo-counts sum to >= 0.1 use normalized Gamma draws; the
    others stick-breaking with Beta variables, which stays on the simplex for
    the very small pseudo-counts where normalized Gamma draws underflow to 0/0. A zero
    ``alpha`` is a category with no mass (always drawn 0): the draw is then
    the Dirichlet of the other categories, exactly (aggregated posteriors pad
    their rows this way).
    """
    if alpha.size and np.all(alpha.sum(axis=-1) >= _GAMMA_SAFE):
        # Normalized Gamma draws, twice as fast: exact unless every category of a row
        # underflows, i.e. their sum, a Gamma(sum alpha) variable, falls below 1e-300:
        # probability < 1e-29 when sum alpha >= 0.1. A category that underflows alone
        # is below 1e-300 anyway.
        draws = rng.standard_gamma(alpha)
        return draws / draws.sum(axis=-1, keepdims=True)
    k = alpha.shape[-1]
    tail = np.flip(np.cumsum(np.flip(alpha, -1), axis=-1), -1)  # sum of alpha_j, j >= i
    out = np.empty(alpha.shape)
    remaining = np.ones(alpha.shape[:-1])
    padded = not np.all(alpha > 0)
    for i in range(k - 1):
        a, b = alpha[..., i], tail[..., i + 1]
        if padded:
            share = rng.beta(np.where(a > 0, a, 1.0), np.where(b > 0, b, 1.0))
            share = np.where(a > 0, np.where(b > 0, share, 1.0), 0.0)
        else:
            share = rng.beta(a, b)
        piece = remaining * share
        out[..., i] = piece
        remaining = remaining - piece
    out[..., k - 1] = np.maximum(remaining, 0.0)
    return out

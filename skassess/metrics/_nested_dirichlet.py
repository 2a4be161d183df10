"""The nested Dirichlet posterior of a confusion matrix: accuracy first, then where errors go.

For predicted class ``k`` the true class is drawn in two steps: correct with
probability ``theta_kk ~ Beta(a_k, b_k)``; if not, class ``j != k`` with
probability ``phi_kj``, ``phi_k ~ Dirichlet(beta_k)`` over the other classes,
independent of ``theta_kk``. So ``theta_kj = (1 - theta_kk) phi_kj``. This is
the generalized Dirichlet of Connor and Mosimann (1969) with one break, and it
is conjugate to the multinomial: ``n_kk`` adds to ``a_k``, the row's errors
``sum_{j != k} n_kj`` to ``b_k`` and each ``n_kj`` to ``beta_kj``.

The plain Dirichlet is the case ``b_k = sum_{j != k} beta_kj``. It ties the
accuracy's prior failures to the spread of the errors: a prior with the
accuracy of :class:`BayesianAccuracy` (``b_k = N0 (1 - s_k)``, tiny for a
confident model) leaves the error cells almost no pseudo-counts, so each is a
spike at 0 whose interval misses the cell until a label falls in it. Here the
two have separate strengths.
"""

import numpy as np
from scipy import stats
from sklearn.utils import check_random_state

from ..utils._params import LEVEL, N_DRAWS, validate_args
from ._conjugate import (
    _CategoricalRows,
    check_counts,
    check_positive,
    dirichlet_draws,
    unchecked_beta_posterior,
)

__all__ = ["NestedDirichletPosterior"]


class NestedDirichletPosterior(_CategoricalRows):
    """Accuracy-then-error Dirichlet posteriors of the rows of confusion matrices.

    Read more in the :ref:`User Guide <ug_confusion>`.

    Row ``k`` (predicted class ``k``) has ``theta_kk ~ Beta(alpha_kk,
    failures_k)`` and, given an error, the true class ``j != k`` from
    ``Dirichlet(alpha_kj, j != k)``. Vectorized over leading batch axes (e.g.
    simulation runs), like :class:`DirichletPosterior`, and interchangeable
    with it where a confusion-matrix posterior is expected.

    Parameters
    ----------
    prior_alpha : array-like of shape (..., n_classes, n_classes)
        Diagonal: the accuracy's prior successes ``a_k``; off-diagonal: the
        error distribution's pseudo-counts ``beta_kj``. Each > 0 (``n_classes
        >= 2``).
    prior_failures : array-like of shape (..., n_classes)
        The accuracy's prior failures ``b_k``, each > 0.
    counts : array-like of shape (..., n_classes, n_classes), default=None
        Counts already seen (row predicted, column true class). None means zero.

    See Also
    --------
    DirichletPosterior : The case ``failures_k = sum_{j != k} alpha_kj``.

    References
    ----------
    .. [1] R. J. Connor, J. E. Mosimann, "Concepts of independence for
       proportions with a generalization of the Dirichlet distribution",
       JASA 64 (1969).

    Examples
    --------
    >>> from skassess.metrics._nested_dirichlet import NestedDirichletPosterior
    >>> prior = NestedDirichletPosterior([[9.0, 1.0], [1.0, 9.0]], [1.0, 1.0])
    >>> prior.update([[3, 1], [0, 4]]).mean()
    array([[0.85714286, 0.14285714],
           [0.07142857, 0.92857143]])
    """

    def __init__(self, prior_alpha, prior_failures, counts=None):
        alpha = check_positive("prior_alpha", prior_alpha)
        if alpha.ndim < 2 or alpha.shape[-1] != alpha.shape[-2] or alpha.shape[-1] < 2:
            raise ValueError(
                "prior_alpha must have shape (..., n_classes, n_classes) with n_classes >= 2;"
                f" got shape {alpha.shape}."
            )
        failures = check_positive("prior_failures", prior_failures)
        if failures.shape != alpha.shape[:-1]:
            raise ValueError(
                f"prior_failures must have shape {alpha.shape[:-1]}; got shape {failures.shape}."
            )
        self.prior_alpha = alpha
        self.prior_failures = failures
        self.counts = check_counts("counts", 0.0 if counts is None else counts, alpha.shape)

    @classmethod
    def _trusted(cls, prior_alpha, prior_failures, counts):
        obj = cls.__new__(cls)
        obj.prior_alpha, obj.prior_failures, obj.counts = prior_alpha, prior_failures, counts
        return obj

    @classmethod
    def from_dirichlet(cls, alpha):
        """The nested form of ``Dirichlet(alpha)`` per row: the same distribution."""
        alpha = check_positive("alpha", alpha)
        diag = np.eye(alpha.shape[-1], dtype=bool)
        return cls(alpha, np.where(diag, 0.0, alpha).sum(axis=-1))

    @property
    def _off(self):
        return ~np.eye(self.n_categories, dtype=bool)

    @property
    def failures(self):
        """The accuracy's posterior failures, ``prior_failures`` + the row's errors."""
        return self.prior_failures + np.where(self._off, self.counts, 0.0).sum(axis=-1)

    @property
    def error_alpha(self):
        """Posterior pseudo-counts of the error distribution; 0 on the diagonal."""
        return np.where(self._off, self.alpha, 0.0)

    def diagonal(self):
        """The Beta posterior of each row's accuracy ``theta_kk``, exactly."""
        return unchecked_beta_posterior(
            np.diagonal(self.prior_alpha, axis1=-2, axis2=-1),
            self.prior_failures,
            np.diagonal(self.counts, axis1=-2, axis2=-1),
            self.failures - self.prior_failures,
        )

    def update(self, counts):
        """Return the posterior after more ``counts`` of the posterior's shape."""
        counts = check_counts("counts", counts, self.shape)
        return self._trusted(self.prior_alpha, self.prior_failures, self.counts + counts)

    def record(self, index, outcomes):
        """Return the posterior after one observed true class per row ``index`` points to.

        ``index`` is a tuple of integer arrays for the leading axes and the
        row axis (e.g. ``(runs, rows)``); ``outcomes`` the true classes.
        """
        counts = self.counts.copy()
        np.add.at(counts, tuple(index) + (np.asarray(outcomes),), 1.0)
        return self._trusted(self.prior_alpha, self.prior_failures, counts)

    def merge(self, other):
        """Combine with a posterior of the same prior fitted on disjoint data."""
        if not isinstance(other, NestedDirichletPosterior):
            raise TypeError(
                f"can only merge a NestedDirichletPosterior; got {type(other).__name__}."
            )
        if not (
            np.array_equal(self.prior_alpha, other.prior_alpha)
            and np.array_equal(self.prior_failures, other.prior_failures)
        ):
            raise ValueError("Posteriors with different priors cannot be merged.")
        return self.update(other.counts)

    def _moments(self):
        """Accuracy mean, E[(1 - acc)], E[(1 - acc)^2] and the error Dirichlet's a, S."""
        a = np.diagonal(self.alpha, axis1=-2, axis2=-1)
        b = self.failures
        n = a + b
        err = self.error_alpha
        return a / n, b / n, b * (b + 1.0) / (n * (n + 1.0)), err, err.sum(axis=-1)

    def mean(self):
        """Posterior mean; sums to 1 over the last axis."""
        acc, miss, _, err, total = self._moments()
        return err / total[..., None] * miss[..., None] + _on_diagonal(acc)

    def var(self):
        """Marginal posterior variance of each cell.

        Off the diagonal, ``theta_kj = X Y`` with independent ``X = 1 - theta_kk``
        and ``Y = phi_kj``: ``Var = E[X^2] E[Y^2] - E[X]^2 E[Y]^2``.
        """
        acc, miss, miss_sq, err, total = self._moments()
        t = total[..., None]
        y_sq = err * (err + 1.0) / (t * (t + 1.0))
        off = miss_sq[..., None] * y_sq - (miss[..., None] * err / t) ** 2
        return np.where(self._off, off, 0.0) + _on_diagonal(self.diagonal().var())

    def total_var(self):
        """Sum over each row's cells of the marginal variances, shape ``shape[:-1]``."""
        return _row_total_var(
            np.diagonal(self.alpha, axis1=-2, axis2=-1),
            self.failures,
            *_error_sums(self.error_alpha),
        )

    def total_var_after(self):
        """:meth:`total_var` after one more label of each true class, shape ``shape``.

        Entry ``[..., k, j]``: the total variance of row ``k`` had one more row
        predicted ``k`` turned out to be of class ``j``. O(K^2) per batch cell.
        """
        a = np.diagonal(self.alpha, axis1=-2, axis2=-1)[..., None]
        b = self.failures[..., None]
        err = self.error_alpha
        total, sq = _error_sums(err)
        total, sq = total[..., None], sq[..., None]
        after_error = _row_total_var(a, b + 1.0, total + 1.0, sq + 2.0 * err + 1.0)
        after_hit = _row_total_var(a + 1.0, b, total, sq)
        return np.where(self._off, after_error, after_hit)

    @validate_args(
        {
            "level": [LEVEL],
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def interval(self, level=0.95, n_draws=4000, random_state=None):
        """Equal-tailed marginal credible interval ``(lower, upper)`` of each cell.

        The diagonal is the exact Beta interval. An off-diagonal cell is the
        product of two independent Beta variables, which has no closed-form
        quantile: its bounds are quantiles of ``n_draws`` Monte Carlo draws
        (seeded by ``random_state``, so the same posterior gives the same
        interval), unless the row is a plain Dirichlet, where they are exact.
        """
        # The quantiles of a product of two Beta variables need numerical
        # integration with a root search per cell; draws are simpler and their
        # error (~1/sqrt(n_draws) in the tail probability) is far below the
        # interval's width.
        rng = check_random_state(random_state)
        tail = (1.0 - level) / 2.0
        acc = self.diagonal()
        lower, upper = np.empty(self.shape), np.empty(self.shape)
        K = self.n_categories
        err = self.error_alpha
        exact = np.isclose(self.failures, err.sum(axis=-1), rtol=1e-12, atol=0.0)
        alpha = self.alpha
        rest = alpha.sum(axis=-1, keepdims=True) - alpha
        lower[...] = stats.beta.ppf(tail, alpha, rest)
        upper[...] = stats.beta.isf(tail, alpha, rest)
        flat_rows = np.flatnonzero(~exact.ravel())
        lo2, up2 = lower.reshape(-1, K), upper.reshape(-1, K)
        a_flat = acc.alpha.ravel()
        b_flat = acc.beta.ravel()
        err = err.reshape(-1, K)
        for r in flat_rows:
            miss = rng.beta(b_flat[r], a_flat[r], size=n_draws)
            draws = dirichlet_draws(np.broadcast_to(err[r], (n_draws, K)), rng) * miss[:, None]
            lo2[r], up2[r] = np.quantile(draws, [tail, 1.0 - tail], axis=0)
        diag_lo, diag_up = acc.interval(level)
        idx = np.arange(K)
        lower[..., idx, idx] = diag_lo
        upper[..., idx, idx] = diag_up
        return lower, upper

    @validate_args(
        {
            "size": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def rvs(self, size=1, random_state=None):
        """Draw distributions: an array of shape ``(size, *shape)``."""
        rng = check_random_state(random_state)
        return self._draw(rng, (size,) + self.shape)

    def draw(self, rng):
        """One draw of every row, shape ``shape`` (``rng``: a numpy Generator)."""
        return self._draw(rng, self.shape)

    def _draw(self, rng, shape):
        acc = self.diagonal()
        hit = rng.beta(
            np.broadcast_to(acc.alpha, shape[:-1]), np.broadcast_to(acc.beta, shape[:-1])
        )
        phi = dirichlet_draws(np.broadcast_to(self.error_alpha, shape), rng)
        return phi * (1.0 - hit)[..., None] + _on_diagonal(hit)

    def __repr__(self):
        return f"NestedDirichletPosterior(shape={self.shape})"


def _on_diagonal(values):
    """A (..., K) array on the diagonal of a (..., K, K) array of zeros."""
    return values[..., None] * np.eye(values.shape[-1])


def _error_sums(err):
    return err.sum(axis=-1), (err * err).sum(axis=-1)


def _row_total_var(a, b, total, sq):
    """Sum of a row's cell variances from the accuracy ``Beta(a, b)`` and the error
    Dirichlet's total ``S = sum beta_j`` and ``Q = sum beta_j^2``:
    ``Var(acc) + E[X^2] (Q + S) / (S (S + 1)) - E[X]^2 Q / S^2`` with ``X = 1 - acc``."""
    n = a + b
    var_acc = a * b / (n * n * (n + 1.0))
    miss = b / n
    miss_sq = b * (b + 1.0) / (n * (n + 1.0))
    return (
        var_acc
        + miss_sq * (sq + total) / (total * (total + 1.0))
        - miss * miss * sq / (total * total)
    )

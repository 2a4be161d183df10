"""The uncertainty model's error at any level: half-widths and the probability of a shortfall.

The uncertainty model predicts quantiles ``Q(a)`` of a batch's absolute error
``|e|`` (``e`` = predicted minus true accuracy) at the levels ``LEVELS``
(0.50, 0.55, ..., 0.95). Here that becomes a whole distribution:

- between two of ``LEVELS``, ``Q`` is interpolated linearly;
- below 0.5, ``Q(a) = Q(0.5) z(a) / z(0.5)``, with ``z(a)`` the normal quantile
  ``Phi^-1((1 + a) / 2)``: the shape of a half-normal through ``Q(0.5)``;
- above 0.95, the tail of a Student t: ``Q(a) = Q(0.95) t_nu(a) / t_nu(0.95)``
  with ``t_nu(a)`` the quantile ``F_nu^-1((1 + a) / 2)`` and ``nu`` the degrees
  of freedom whose ratio ``t_nu(0.95) / t_nu(0.8)`` is the batch's
  ``Q(0.95) / Q(0.8)``, bounded to ``[1, inf]``: a normal tail where the
  quantiles grow like a normal's or slower (the tail is never lighter), a
  Cauchy's at the heaviest;
- the error's sign is symmetric: ``P(e > d) = P(|e| > d) / 2`` for ``d >= 0``.

So an interval ``prediction +- Q(a)`` exists at every level in (0, 1), and the
probability that the true accuracy is below a threshold ``t`` is
``P(e > prediction - t)``.
"""

from numbers import Real

import numpy as np
from scipy.special import ndtri
from scipy.stats import t as t_dist

from ._quantile_model import LEVELS

__all__ = ["abs_error_cdf", "check_levels", "error_quantiles", "probability_below"]

# The t tail's degrees of freedom, tabulated against t_nu(0.95) / t_nu(0.8) (decreasing in nu)
_NU = np.geomspace(1.0, 1e4, 400)
_RATIO = t_dist.ppf(0.975, _NU) / t_dist.ppf(0.9, _NU)

_LEVELS = np.asarray(LEVELS)
_I80, _I95 = LEVELS.index(0.8), LEVELS.index(0.95)
# levels at which the CDF of |e| is tabulated, for probability_below
_GRID = np.concatenate([np.linspace(0.0, 0.95, 96)[1:-1], 1.0 - np.geomspace(0.05, 1e-7, 120)])


def check_levels(level, name="level"):
    """``level`` (a float or a sequence of floats in (0, 1)) as a 1-d float array."""
    values = [level] if isinstance(level, Real) else level
    ok = (
        isinstance(values, list | tuple | np.ndarray)
        and np.ndim(values) == 1
        and len(values) > 0
        and all(isinstance(v, Real) and not isinstance(v, bool) for v in values)
    )
    arr = np.asarray(values, dtype=np.float64) if ok else None
    if arr is None or not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"{name} must be a number in (0, 1) or a sequence of them; got {level!r}.")
    return arr


def _z(level):
    return ndtri((1.0 + np.asarray(level, dtype=np.float64)) / 2.0)


def error_quantiles(q, level):
    """The half-widths ``Q(level)`` of each batch's error, at any levels in (0, 1).

    Parameters
    ----------
    q : array-like of shape (n_batches, len(LEVELS)) or (len(LEVELS),)
        The uncertainty model's quantiles of ``|e|`` at ``LEVELS``,
        non-decreasing and non-negative.
    level : float or array-like of shape (n_levels,)
        Levels in (0, 1).

    Returns
    -------
    ndarray of shape (n_batches, n_levels) (or the shapes of the inputs
    without those axes).
    """
    Q = np.asarray(q, dtype=np.float64)
    a = np.asarray(level, dtype=np.float64)
    if np.any(~((a > 0) & (a < 1))):
        raise ValueError(f"level must be in (0, 1); got {level!r}.")
    Q2, a1 = np.atleast_2d(Q), np.atleast_1d(a)
    out = np.empty((Q2.shape[0], a1.size))
    mid = (a1 >= LEVELS[0]) & (a1 <= LEVELS[-1])
    for j in np.flatnonzero(mid):
        out[:, j] = [np.interp(a1[j], _LEVELS, row) for row in Q2]
    low = a1 < LEVELS[0]
    out[:, low] = Q2[:, :1] * (_z(a1[low]) / _z(LEVELS[0]))
    high = a1 > LEVELS[-1]
    if high.any():
        q80, q95 = Q2[:, _I80], Q2[:, _I95]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.nan_to_num(q95 / q80, nan=0.0, posinf=np.inf)
        nu = np.interp(ratio, _RATIO[::-1], _NU[::-1])  # ratio beyond the table: nu = 1 or 1e4
        nu = np.where(ratio <= _RATIO[-1], np.inf, nu)  # a normal's ratio or less: a normal tail
        tail = np.where(
            np.isinf(nu[:, None]),
            _z(a1[high])[None, :] / _z(0.95),
            t_dist.ppf((1 + a1[high])[None, :] / 2, np.minimum(nu, 1e4)[:, None])
            / t_dist.ppf(0.975, np.minimum(nu, 1e4))[:, None],
        )
        out[:, high] = q95[:, None] * tail
    if Q.ndim == 1:
        out = out[0]
    return out if a.ndim else out[..., 0]


def abs_error_cdf(q, d):
    """``P(|e| <= d)`` of one batch's error, at the absolute errors ``d`` (array-like).

    The distribution of ``|e|`` whose quantiles :func:`error_quantiles` gives,
    tabulated on levels up to ``1 - 1e-7`` and linear between them; 1 beyond
    the last.
    """
    table = np.maximum.accumulate(error_quantiles(q, _GRID))
    d = np.abs(np.asarray(d, dtype=np.float64))
    xp, fp = np.concatenate([[0.0], table]), np.concatenate([[0.0], _GRID])
    return np.where(d > table[-1], 1.0, np.interp(d, xp, fp))


def probability_below(prediction, q, threshold):
    """``P(true accuracy < threshold)`` for each batch.

    Parameters
    ----------
    prediction : array-like of shape (n_batches,)
        The predicted accuracies.
    q : array-like of shape (n_batches, len(LEVELS))
        The uncertainty model's quantiles of ``|e|``.
    threshold : float

    Returns
    -------
    ndarray of shape (n_batches,)
    """
    m = np.atleast_1d(np.asarray(prediction, dtype=np.float64))
    Q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    d = m - float(threshold)
    # the CDF of |e| at |d|: the level whose half-width is |d|
    tail = np.array([(1.0 - float(abs_error_cdf(Q[i], d[i]))) / 2.0 for i in range(m.size)])
    return np.where(d >= 0, tail, 1.0 - tail)  # P(e > |d|), or its complement

"""Calibration maps: beta calibration and its special cases, and their MAP fit.

    f(s; a, b, c) = 1 / (1 + exp(-c - a log s + b log(1 - s))),   a, b >= 0.

``"llo"`` (linear in log-odds) is the restriction ``a = b``:
``f = sigmoid(c + a logit(s))``; ``"temperature"`` is ``a = b = 1/T, c = 0``:
``f = sigmoid(logit(s) / T)``. ``a = b = 1, c = 0`` is the identity (Kull,
Silva Filho, Flach 2017).

This is the one home of the maps: the hierarchical calibrator samples them,
``CalibratedPrior`` fits the LLO map by MAP with :func:`fit_llo`, and scores
are clipped to ``[EPS, 1 - EPS]`` before their logarithms everywhere.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit

from ..utils._params import validate_params
from ..utils._sklearn_compat import Interval
from ..utils._validation import EPS, naming

__all__ = ["EPS", "MAPS", "beta_calibration", "fit_llo", "log_odds"]

#: A clipping margin: scores are clipped to ``[eps, 1 - eps]``.
_EPS_RANGE = Interval(Real, 0, 0.5, closed="neither")
_SCALE = Interval(Real, 0, None, closed="neither")

#: Calibration maps and the names of their per-group parameters.
MAPS = {
    "beta": ("a", "b", "c"),
    "llo": ("a", "c"),
    "temperature": ("a",),
}


def log_features(s, eps=EPS):
    """``log s`` and ``log(1 - s)`` of the clipped scores (refusing NaN and values off [0, 1])."""
    s = np.asarray(s, dtype=np.float64)
    if not np.all((s >= 0.0) & (s <= 1.0)):  # NaN fails too
        bad = s[~((s >= 0.0) & (s <= 1.0))].flat[0]
        raise ValueError(f"s must hold scores in [0, 1]; got {bad!r}.")
    s = np.clip(s, eps, 1.0 - eps)
    return np.log(s), np.log1p(-s)


@validate_params(
    {
        "s": [Real, "array-like"],
        "eps": [_EPS_RANGE],
    },
    prefer_skip_nested_validation=True,
)
def log_odds(s, eps=EPS):
    """``logit(s)`` of the scores clipped to ``[eps, 1 - eps]`` (within +-6.9 by default).

    Examples
    --------
    >>> from skassess.calibration._maps import log_odds
    >>> log_odds([0.5, 1.0]).round(3)
    array([0.   , 6.907])
    """
    ls, l1s = log_features(s, eps)
    return ls - l1s


@validate_params(
    {
        "s": [Real, "array-like"],
        "a": [Interval(Real, 0, None, closed="left"), "array-like"],
        "b": [Interval(Real, 0, None, closed="left"), "array-like"],
        "c": [Real, "array-like"],
        "eps": [_EPS_RANGE],
    },
    prefer_skip_nested_validation=True,
)
def beta_calibration(s, a=1.0, b=1.0, c=0.0, *, eps=EPS):
    """Beta calibration map ``f(s; a, b, c)``, broadcasting over all arguments.

    Parameters
    ----------
    s : array-like
        Scores in [0, 1], clipped to ``[eps, 1 - eps]``.
    a, b : float or array-like, default=1.0
        Non-negative shape parameters (``a = b`` gives LLO).
    c : float or array-like, default=0.0
        Log-odds shift.
    eps : float, default=1e-3

    Returns
    -------
    p : ndarray
        Calibrated probabilities.

    Examples
    --------
    >>> from skassess.calibration import beta_calibration
    >>> beta_calibration([0.2, 0.5, 0.9])  # a = b = 1, c = 0: the identity
    array([0.2, 0.5, 0.9])
    >>> beta_calibration([0.2, 0.5, 0.9], a=0.5, b=0.5).round(3)  # T = 2
    array([0.333, 0.5  , 0.75 ])
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    for name, value in (("a", a), ("b", b)):
        if not np.all(value >= 0):  # also refuses NaN
            raise ValueError(f"{name} must be >= 0 everywhere; got {value!r}.")
    try:
        np.broadcast_shapes(np.shape(s), a.shape, b.shape, np.shape(c))
    except ValueError:
        raise ValueError(
            f"s, a, b and c must broadcast together; got shapes {np.shape(s)}, {a.shape}, "
            f"{b.shape} and {np.shape(c)}."
        ) from None
    ls, l1s = log_features(s, eps)
    return expit(c + a * ls - b * l1s)


@validate_params(
    {
        "x": ["array-like"],
        "z": ["array-like"],
        "intercept_scale": [_SCALE],
        "slope_scale": [_SCALE],
        "intercept_mean": [Real],
        "sample_weight": ["array-like", None],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def fit_llo(
    x, z, *, intercept_scale, slope_scale, intercept_mean=0.0, sample_weight=None, n_iter=25
):
    """MAP slope and intercept of the LLO map ``P(z = 1) = sigmoid(a x + c)``, per run.

    Newton's method on the log posterior with independent priors
    ``a ~ N(1, slope_scale^2)`` and ``c ~ N(intercept_mean, intercept_scale^2)``
    (centred on the identity map when ``x`` are log-odds minus
    ``intercept_mean``), vectorized over runs.

    Parameters
    ----------
    x : ndarray of shape (n_runs, n)
        Log-odds of the scores (e.g. :func:`log_odds`, possibly centred).
    z : ndarray of shape (n_runs, n)
        0/1 outcomes.
    intercept_scale, slope_scale : float
        Prior standard deviations, > 0.
    intercept_mean : float, default=0.0
    sample_weight : ndarray of shape (n_runs, n), default=None
        Weights of the likelihood terms (None: ones).
    n_iter : int, default=25
        At most this many Newton steps (it stops when a step is below 1e-8).

    Returns
    -------
    slope, intercept : ndarray of shape (n_runs,)

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.calibration._maps import fit_llo
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(1, 5000))
    >>> z = (rng.random((1, 5000)) < 1 / (1 + np.exp(-(2 * x - 1)))).astype(float)
    >>> slope, intercept = fit_llo(x, z, intercept_scale=10.0, slope_scale=10.0)
    >>> [round(float(slope[0]), 1), round(float(intercept[0]), 1)]
    [2.0, -1.0]
    """
    with naming("x"):
        x = np.asarray(x, dtype=np.float64)
    with naming("z"):
        z = np.asarray(z, dtype=np.float64)
    with naming("sample_weight"):
        w0 = 1.0 if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"x must be 2-D (n_runs, n) with n_runs >= 1; got shape {x.shape}.")
    for name, value in (("z", z), ("sample_weight", w0)):
        if np.ndim(value) and np.shape(value) != x.shape:
            raise ValueError(f"{name} must have the shape of x {x.shape}; got {np.shape(value)}.")
    if not (np.isfinite(x).all() and np.isfinite(z).all() and np.all(np.isfinite(w0))):
        raise ValueError("x, z and sample_weight must be finite.")
    n_runs = x.shape[0]
    theta = np.tile([1.0, intercept_mean], (n_runs, 1))
    prior = np.array([1.0, intercept_mean])
    with np.errstate(under="ignore"):  # a huge scale is a flat prior: precision 0
        precision = np.array([slope_scale, intercept_scale], dtype=np.float64) ** -2.0

    def log_posterior(theta, runs=slice(None)):
        eta = theta[:, :1] * x[runs] + theta[:, 1:]
        weight = w0[runs] if np.ndim(w0) else w0
        return (weight * (z[runs] * eta - np.logaddexp(0.0, eta))).sum(1) - 0.5 * (
            precision * (theta - prior) ** 2
        ).sum(1)

    current = log_posterior(theta)
    for _ in range(n_iter):
        p = expit(theta[:, :1] * x + theta[:, 1:])
        r = w0 * (z - p)
        w = w0 * p * (1 - p)
        g = np.stack([(r * x).sum(1), r.sum(1)], axis=1) - precision * (theta - prior)
        h11 = (w * x * x).sum(1) + precision[0]
        h12 = (w * x).sum(1)
        h22 = w.sum(1) + precision[1]
        det = h11 * h22 - h12 * h12
        step = np.stack(
            [(h22 * g[:, 0] - h12 * g[:, 1]) / det, (h11 * g[:, 1] - h12 * g[:, 0]) / det], axis=1
        )
        # Newton's method is not globally convergent on a logistic likelihood
        # (a flat region far from the data sends it off); halve the step of
        # the runs whose log posterior would fall.
        new = theta + step
        value = log_posterior(new)
        for _ in range(30):
            worse = ~(value >= current - 1e-12)
            if not worse.any():
                break
            step[worse] *= 0.5
            new[worse] = theta[worse] + step[worse]
            value[worse] = log_posterior(new[worse], worse)
        theta, current = new, value
        if np.abs(step).max() < 1e-8:
            break
    return theta[:, 0], theta[:, 1]

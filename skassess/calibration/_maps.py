"""Beta calibration maps and their special cases (Kull, Silva Filho, Flach 2017).

    f(s; a, b, c) = 1 / (1 + exp(-c - a log s + b log(1 - s))),   a, b >= 0.

``"llo"`` (linear in log-odds) is the restriction ``a = b``:
``f = sigmoid(c + a logit(s))``; ``"temperature"`` is ``a = b = 1/T, c = 0``:
``f = sigmoid(logit(s) / T)``. ``a = b = 1, c = 0`` is the identity.
"""

import numpy as np
from scipy.special import expit

#: Scores are clipped to [EPS, 1 - EPS] before their logarithms: the default
#: bound keeps log-odds within +-6.9 so that a saturated score (exactly 0 or 1,
#: as naive Bayes often gives) cannot dominate the fit.
EPS = 1e-3

#: Calibration maps and the names of their per-group parameters.
MAPS = {
    "beta": ("a", "b", "c"),
    "llo": ("a", "c"),
    "temperature": ("a",),
}


def check_map(map):
    if not isinstance(map, str) or map not in MAPS:
        raise ValueError(f"map must be one of {sorted(MAPS)}; got {map!r}.")
    return map


def check_eps(eps):
    if not (isinstance(eps, float | int) and 0 < eps < 0.5):
        raise ValueError(f"eps must be a number in (0, 0.5); got {eps!r}.")
    return float(eps)


def log_features(s, eps=EPS):
    """``log s`` and ``log(1 - s)`` of the clipped scores."""
    s = np.clip(np.asarray(s, dtype=np.float64), eps, 1.0 - eps)
    return np.log(s), np.log1p(-s)


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
    ls, l1s = log_features(s, eps)
    return expit(c + a * ls - b * l1s)

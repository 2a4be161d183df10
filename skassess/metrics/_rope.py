"""The region of practical equivalence (ROPE): one function, one convention.

For a difference ``Delta`` and a half-width ``rope`` in metric units, the three
probabilities are ``P(Delta < -rope)``, ``P(|Delta| <= rope)`` and
``P(Delta > rope)`` (Kruschke 2018; baycomp's ``(p_left, p_rope, p_right)``).
Every comparison the package reports goes through :func:`rope_probabilities`.
"""

import numpy as np
from scipy.special import betainc, betaincinv, ndtr

from ..utils._params import ROPE, validate_params
from ..utils._sklearn_compat import StrOptions
from ..utils._validation import naming
from ._conjugate import BetaPosterior

__all__ = ["rope_probabilities"]

#: Quantile nodes of the quadrature over the narrower of two Beta posteriors.
N_NODES = 48


@validate_params(
    {
        "delta": ["array-like", tuple],
        "rope": [ROPE],
        "method": [StrOptions({"auto", "draws", "quadrature", "normal"})],
    },
    prefer_skip_nested_validation=True,
)
def rope_probabilities(delta, rope=0.05, *, method="auto"):
    """Probabilities ``(p_left, p_rope, p_right)`` of a difference against a ROPE.

    Parameters
    ----------
    delta : array-like of shape (..., n_draws) or tuple of two BetaPosterior
        Either posterior draws of ``Delta`` (the last axis), or a pair
        ``(post_a, post_b)`` of Beta posteriors of the same shape, for
        ``Delta = theta_a - theta_b`` with independent ``theta``.
    rope : float, default=0.05
        Half-width of the region of practical equivalence, ``>= 0``.
    method : {"auto", "draws", "quadrature", "normal"}, default="auto"
        ``"draws"`` (the only choice for draws): the share of draws in each
        region. For a pair of Beta posteriors, ``"quadrature"`` (``"auto"``)
        integrates the exact densities, to about 1e-4; ``"normal"`` uses a
        normal distribution with the exact mean and variance of ``Delta`` (fast
        and approximate: the comparison reward's one-step look-ahead).

    Returns
    -------
    probabilities : ndarray of shape (..., 3)
        ``P(Delta < -rope)``, ``P(|Delta| <= rope)``, ``P(Delta > rope)``;
        each row sums to 1.

    Raises
    ------
    ValueError
        If ``rope`` is negative or not a number, or the draws hold NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import BetaPosterior, rope_probabilities
    >>> rope_probabilities(np.array([-0.2, 0.0, 0.01, 0.3]), rope=0.05)
    array([0.25, 0.5 , 0.25])
    >>> a, b = BetaPosterior(60.0, 40.0), BetaPosterior(50.0, 50.0)
    >>> rope_probabilities((a, b), rope=0.05).round(3)  # exact quadrature
    array([[0.015, 0.221, 0.764]])
    """
    rope = float(rope)
    if isinstance(delta, tuple):
        if len(delta) != 2 or not all(isinstance(p, BetaPosterior) for p in delta):
            raise ValueError("delta as a tuple must be two BetaPosterior objects (a, b).")
        if method == "draws":
            raise ValueError("method='draws' needs an array of draws, not two posteriors.")
        a, b = delta
        if a.shape != b.shape:
            raise ValueError(f"the two posteriors differ in shape: {a.shape} and {b.shape}.")
        if method == "normal":
            return _normal(a.mean() - b.mean(), a.var() + b.var(), rope)
        return _quadrature(a, b, rope)
    if method not in ("auto", "draws"):
        raise ValueError(f"method={method!r} needs a pair of Beta posteriors, not draws.")
    with naming("delta"):
        draws = np.asarray(delta, dtype=np.float64)
    if draws.ndim == 0 or draws.shape[-1] == 0:
        raise ValueError("delta must hold at least one draw.")
    if np.isnan(draws).any():
        raise ValueError(
            "delta holds NaN draws; a difference of undefined rates has no probability."
        )
    left = (draws < -rope).mean(axis=-1)
    right = (draws > rope).mean(axis=-1)
    return np.stack([left, 1.0 - left - right, right], axis=-1)


def _normal(mean, var, rope):
    sd = np.sqrt(np.maximum(var, 1e-300))
    left = ndtr((-rope - mean) / sd)
    right = 1.0 - ndtr((rope - mean) / sd)
    return np.stack([left, 1.0 - left - right, right], axis=-1)


def _quadrature(post_a, post_b, rope, n_nodes=N_NODES):
    """Exact up to quadrature: the outer integral over the narrower posterior's quantiles.

    A midpoint rule on ``n_nodes`` quantiles of the narrower posterior, the
    other posterior's exact CDF inside: the integrand is then smooth.
    """
    pa = np.stack([post_a.alpha.ravel(), post_a.beta.ravel()], axis=1)
    pb = np.stack([post_b.alpha.ravel(), post_b.beta.ravel()], axis=1)
    swap = (post_a.var() < post_b.var()).ravel()  # outer = the narrower one
    outer = np.where(swap[:, None], pa, pb)
    inner = np.where(swap[:, None], pb, pa)
    u = (np.arange(n_nodes) + 0.5) / n_nodes
    t = betaincinv(outer[:, :1], outer[:, 1:], u)  # (n, nodes)

    def cdf(x):
        return betainc(inner[:, :1], inner[:, 1:], np.clip(x, 0.0, 1.0))

    # Delta = theta_a - theta_b. With outer = a: Delta < -r  <=>  theta_b > t + r.
    #                             With outer = b: Delta < -r  <=>  theta_a < t - r.
    s = swap[:, None]
    below = np.where(s, 1.0 - cdf(t + rope), cdf(t - rope)).mean(axis=1)
    above = np.where(s, cdf(t - rope), 1.0 - cdf(t + rope)).mean(axis=1)
    out = np.stack([below, 1.0 - below - above, above], axis=1)
    return out.reshape(post_a.shape + (3,))

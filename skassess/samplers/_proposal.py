"""ActiveTester's draw proposal: the metrics' relative variances and the share of uniform sampling.

The proposal ``q_i`` is proportional to ``sqrt(sum_k w_k r_ik)``, with
``r_ik`` item ``i``'s expected squared residual along metric ``k``'s
gradient and ``w_k = 1 / sum_i r_ik`` (each metric's variance relative to
its variance under uniform sampling): the optimum of ``sum_k w_k Var_k``, in
which accuracy, whose residuals are small, is not outvoted by the per-class
metrics. It is mixed with uniform sampling at the share that the earlier
draws' importance weights estimate to give the least variance.
"""

import numpy as np

from ._control_variate import mix

__all__ = ["relative_roots", "uniform_share"]


def relative_roots(residuals, unlabeled):
    """``sqrt(sum_k w_k r_ik)`` for every pool item, and the weights ``w_k``.

    Parameters
    ----------
    residuals : ndarray of shape (n_metrics, n_pool)
        Expected squared residuals ``r_ik`` (negative values read as 0).
    unlabeled : ndarray of int
        The items the weights are summed over.

    Returns
    -------
    roots : ndarray of shape (n_pool,)
    weights : ndarray of shape (n_metrics,)
        ``1 / sum_{i in unlabeled} r_ik``; 0 for a metric without residual.
    """
    resid = np.maximum(residuals, 0.0)
    total = resid[:, unlabeled].sum(axis=1)
    weights = np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
    return np.sqrt(weights @ resid), weights


def uniform_share(draws, labels, pred, proposal, n_unlabeled, grad, name, weights, floor):
    """The share of uniform sampling that the earlier draws say gives the least variance.

    A draw from ``q`` adds ``sum_i r_i^2 / q_i`` to the weighted variance of
    the metrics (``r_i^2`` the weighted squared residual ``e_i - g_i`` along
    each metric's gradient). An earlier draw ``j``, drawn with probability
    ``q_j``, gives the unbiased estimate ``r_j^2 / (q'_j q_j)`` of that sum
    for a proposal ``q'``; the mixtures ``(1 - s) proposal + s uniform`` for
    ``s`` in ``floor``, 0.25, 0.5 and 1 (those not below ``floor``) are
    compared on their mean. Where the residuals the draws met lie where the
    proposal puts little mass (scores or a surrogate sure of the wrong
    items), the share rises towards uniform sampling. The share is fixed
    before the draws it is used for, so the estimate stays unbiased whatever
    it is.

    Parameters
    ----------
    draws : list of Draw
        The resolved draws (their items, draw probabilities and components).
    labels, pred : ndarray of shape (n_pool,)
        True classes (of the drawn items at least) and predicted classes.
    proposal : ndarray of shape (n_pool,)
        The proposal's mass of every item, as if it were unlabeled.
    n_unlabeled : int
    grad : ndarray of shape (n_metrics, K, K)
    name : str
        The control variate (a key of ``CANDIDATES``).
    weights : ndarray of shape (n_metrics,)
    floor : float
        The least share (``uniform_mix``).

    Returns
    -------
    float
    """
    idx = np.array([d.index for d in draws])
    q_old = np.array([d.q for d in draws])
    comp = np.stack([d.components for d in draws], axis=1)
    resid = np.eye(grad.shape[-1])[labels[idx]] - mix(name, comp)
    r2 = weights @ ((grad[:, pred[idx], :] * resid[None]).sum(-1) ** 2)
    shares = sorted({s for s in (floor, 0.25, 0.5, 1.0) if s >= floor})
    cost = [np.mean(r2 / (q_old * ((1.0 - s) * proposal[idx] + s / n_unlabeled))) for s in shares]
    return float(shares[int(np.argmin(cost))])

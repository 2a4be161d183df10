"""Metrics as functions of a pool's confusion totals, and their gradients.

``M[a, y]`` counts the pool items the model under test predicts as class
``a`` whose true class is ``y``. Its row sums ``r_a`` (items predicted ``a``)
are known before any label; its diagonal ``d`` and column sums ``s`` are not.
Every metric of :mod:`skassess.samplers._acquisition` is a smooth function of
``M``:

==============  ==========================  =======================================
metric          value                       nonzero gradient entries
==============  ==========================  =======================================
accuracy        ``sum(d) / N``              ``(c, c)``: ``1 / N``
precision_c     ``d_c / r_c``               ``(c, c)``: ``1 / r_c``
recall_c        ``d_c / s_c``               ``(c, c)``: ``1/s_c - d_c/s_c^2``;
                                            ``(a != c, c)``: ``-d_c / s_c^2``
f1_c            ``2 d_c / (r_c + s_c)``     ``(c, c)``: ``2/t - 2 d_c/t^2``;
                                            ``(a != c, c)``: ``-2 d_c / t^2``
macro_f1        ``mean_c f1_c``             the mean of the f1 gradients
==============  ==========================  =======================================

with ``t = r_c + s_c``. The row sums are fixed, so the gradients leave them
out: every deviation the estimators apply them to sums to zero along each row
(a label moves mass within its predicted class's row only). A ratio whose
denominator is 0 is 0 (scikit-learn's ``zero_division=0``).
"""

import numpy as np

__all__ = ["metric_gradients", "metric_names", "metric_values"]


def _ratio(num, den):
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def metric_names(metrics, classes):
    """Display names: ``"accuracy"``, ``"precision[3]"``, ..."""
    return [name if c is None else f"{name}[{classes[c]}]" for name, c in metrics]


def metric_values(M, metrics):
    """Metric values of confusion totals ``M`` of shape ``(..., K, K)``: ``(..., n_metrics)``."""
    M = np.asarray(M, dtype=np.float64)
    d = np.diagonal(M, axis1=-2, axis2=-1)
    r, s = M.sum(axis=-1), M.sum(axis=-2)
    n = r.sum(axis=-1)
    f1 = _ratio(2.0 * d, r + s)
    out = []
    for name, c in metrics:
        if name == "accuracy":
            out.append(_ratio(d.sum(axis=-1), n))
        elif name == "precision":
            out.append(_ratio(d[..., c], r[..., c]))
        elif name == "recall":
            out.append(_ratio(d[..., c], s[..., c]))
        elif name == "f1":
            out.append(f1[..., c])
        else:  # macro_f1
            out.append(f1.mean(axis=-1))
    return np.stack(out, axis=-1)


def metric_gradients(M, metrics):
    """Gradient of each metric with respect to ``M`` (rows fixed): ``(n_metrics, K, K)``."""
    M = np.asarray(M, dtype=np.float64)
    K = M.shape[-1]
    d, r, s = np.diag(M), M.sum(axis=1), M.sum(axis=0)
    n = r.sum()
    # Gradients of every class's recall and F1: column c carries -d/s^2 (or
    # -2d/t^2); the diagonal adds 1/s (or 2/t).
    eye = np.eye(K)
    recall = _ratio(eye, s) - _ratio(d, s**2)[None, :] * np.ones((K, 1))
    t = r + s
    f1 = _ratio(2.0 * eye, t) - _ratio(2.0 * d, t**2)[None, :] * np.ones((K, 1))
    out = np.zeros((len(metrics), K, K))
    for k, (name, c) in enumerate(metrics):
        if name == "accuracy":
            out[k] = _ratio(eye, n)
        elif name == "precision":
            out[k, c, c] = _ratio(1.0, r[c])
        elif name == "recall":
            out[k, :, c] = recall[:, c]
        elif name == "f1":
            out[k, :, c] = f1[:, c]
        else:  # macro_f1
            out[k] = f1 / K
    return out

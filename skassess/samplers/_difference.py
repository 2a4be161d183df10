"""An unbiased estimate of a pool's confusion totals from actively drawn labels.

The estimator of :class:`~skassess.samplers.ActiveTester`. The rows of the
pool's confusion totals ``T[a, y]`` (``a`` the predicted class, ``y`` the
true one) are estimated one by one: the row sizes are known, so each row is
a stratum. A label drawn from a proposal ``q`` over the unlabeled items
``U`` that lands in row ``c`` gives one estimate of that row,

    Z = sum_{labeled i in c} e_i + sum_{i in U, c} g_i + (e_I - g_I) / q(I | c),

with ``e`` the one-hot true class, ``g_i`` any prediction of item ``i``'s
class fixed before the draw (the surrogate, the model's scores, ...) and
``q(i | c) = q(i) / sum_{U, c} q`` the draw's probability given its row.
Whatever ``g`` is, ``E[Z | past, row c] = T[c]``: the ``Z`` of a row's
successive draws differ from ``T[c]`` by martingale differences (sampling
without replacement as in the LURE estimator of Farquhar et al. 2021, with
``g`` as a control variate as in active statistical inference, Zrnic and
Candes 2024). Their mean is unbiased for the row; conditioning on the row
(post-stratification) keeps a per-class metric as precise as labeling that
class alone. A row no draw has reached yet is predicted by ``g``. A metric is
a smooth function ``h(T)``; its standard error comes from the delta method
(see :mod:`skassess.samplers._confusion_metrics`), summed over rows (draws
in different rows are uncorrelated).

The variance of each row's mean is estimated two ways and the larger is
kept: from the spread of its ``Z`` (consistent, but blind to errors no draw
has met yet, e.g. the first labels of a 98 %-accurate model), and from what
``g`` predicts of each draw's conditional variance (right when ``g`` is
calibrated). A row with one draw or none has only the second.
"""

import numpy as np
from scipy.special import gammaln
from scipy.stats import norm

from ._confusion_metrics import metric_gradients, metric_values

__all__ = ["DifferenceEstimate", "shrink_errors"]

#: Grid of the strengths of the even prior on where a row's errors go.
_STRENGTHS = np.geomspace(0.1, 1e4, 41)


def shrink_errors(T, counts):
    """Spread each row's estimated unlabeled errors by a Dirichlet-multinomial posterior mean.

    Row ``c``'s labeled items and its diagonal (its correct items) are kept.
    The errors estimated among its *unlabeled* items, ``R = T[c] - counts[c]``
    off the diagonal, are spread over the other classes as ``(n_e pi + m u) /
    (n_e + m)``: ``pi`` their estimated shares (negative cells clipped to 0),
    ``n_e`` the errors among the row's labels, ``u`` even shares and ``m`` the
    strength of greatest Dirichlet-multinomial marginal likelihood of the
    labeled errors' classes (a tie, as with one error, keeps the smallest).
    A row without a labeled error gets even shares. The diagonal, and so
    accuracy and per-class precision, is untouched; recall and F1, whose
    columns add every row's errors, lose the noise of a few errors per row;
    a fully labeled row is left exact. With random labels and the plug-in
    ``T``, this is the Dirichlet-multinomial posterior mean of the row's
    errors with an even prior of strength ``m`` (empirical Bayes).

    Parameters
    ----------
    T : ndarray of shape (K, K)
        Estimated confusion totals (rows: predicted class).
    counts : ndarray of shape (K, K)
        Labeled items per (predicted, true) class.

    Returns
    -------
    ndarray of shape (K, K)
    """
    K = T.shape[0]
    out = np.array(T, dtype=np.float64)
    off = ~np.eye(K, dtype=bool)
    counts = np.asarray(counts, dtype=np.float64)
    for c in range(K):
        n_err = counts[c][off[c]]
        ne = n_err.sum()
        rest = out[c] - counts[c]  # the unlabeled items' estimated classes
        errors = rest.sum() - rest[c]
        if errors <= 0:
            continue
        u = np.full(K - 1, 1.0 / (K - 1))
        est = np.maximum(rest[off[c]], 0.0)
        pi = est / est.sum() if est.sum() > 0 else u
        if ne > 0:
            a = _STRENGTHS[:, None] * u[None]
            loglik = (gammaln(_STRENGTHS) - gammaln(_STRENGTHS + ne)
                      + (gammaln(a + n_err[None]) - gammaln(a)).sum(axis=1))
            m = _STRENGTHS[int(np.argmax(loglik))]
            pi = (ne * pi + m * u) / (ne + m)
        else:
            pi = u
        out[c, off[c]] = n_err + errors * pi
    return out


class DifferenceEstimate:
    """The draws so far, per row, and the estimate of the metrics they give.

    Parameters
    ----------
    n_classes : int
    metrics : list of (name, class index or None)
    """

    def __init__(self, n_classes, metrics):
        self.n_classes, self.metrics = n_classes, metrics
        # Per row, one entry per draw (lists: appending a draw is O(1)).
        self.Z = [[] for _ in range(n_classes)]
        self.model_var = [[] for _ in range(n_classes)]

    @property
    def n_draws(self):
        return sum(len(z) for z in self.Z)

    def add(self, row, Z, model_var):
        """Record one draw in ``row``: its ``Z`` (K,) and predicted variances (n_metrics,)."""
        self.Z[row].append(np.asarray(Z, dtype=np.float64))
        self.model_var[row].append(np.asarray(model_var, dtype=np.float64))

    def totals(self, plugin, counts=None):
        """The estimate of the confusion totals; ``plugin`` (K, K) fills rows without draws.

        With ``counts`` (labeled items per cell), each row's errors are spread
        by :func:`shrink_errors`.
        """
        T = np.array(plugin, dtype=np.float64)
        for c, z in enumerate(self.Z):
            if z:
                T[c] = np.mean(z, axis=0)
        return T if counts is None else shrink_errors(T, counts)

    def estimate(self, plugin, plugin_var, level=0.95, counts=None):
        """``(value, se, lower, upper)`` of each metric.

        Parameters
        ----------
        plugin : ndarray of shape (K, K)
            ``g``'s prediction of each row (labels where known).
        plugin_var : ndarray of shape (K, n_metrics)
            Its predicted variance, for rows without a draw.
        level : float
        counts : ndarray of shape (K, K), default=None
            Labeled items per cell: spread each row's errors (:func:`shrink_errors`).
        """
        T = self.totals(plugin, counts)
        value = metric_values(T, self.metrics)
        grad = metric_gradients(T, self.metrics)  # (n_metrics, K, K)
        var = np.zeros(len(self.metrics))
        for c, z in enumerate(self.Z):
            n = len(z)
            if n == 0:
                var += plugin_var[c]
                continue
            model = np.sum(self.model_var[c], axis=0) / n**2
            if n > 1:
                u = (np.asarray(z) - T[c]) @ grad[:, c, :].T  # (n, n_metrics)
                model = np.maximum(model, (u**2).sum(axis=0) / (n * (n - 1)))
            var += model
        se = np.sqrt(var)
        z = norm.ppf(0.5 + level / 2.0)
        value = np.clip(value, 0.0, 1.0)
        return value, se, np.clip(value - z * se, 0.0, 1.0), np.clip(value + z * se, 0.0, 1.0)

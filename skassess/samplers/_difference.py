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
class alone. A metric is a smooth function ``h(T)``; its standard error
comes from the delta method (see :mod:`skassess.samplers._confusion_metrics`),
summed over rows (draws in different rows are uncorrelated).

Post-stratifying needs draws in the row: a row that few draws reach (many
classes, few labels) would be left to ``g``, whose bias then goes straight
into the estimate (an overconfident model's scores on a 100-class pool put
accuracy 1-3 points high). Such rows, those whose expected number of draws
(the sum of each draw's probability of landing in them) is below
``MIN_EXPECTED_DRAWS`` or that have fewer than two draws, are estimated
together without conditioning on where the draws landed: every draw ``t``
gives

    Z_t[c] = sum_{labeled i in c} e_i + sum_{i in U, c} g_i + [I_t in c] (e_I - g_I) / q(I),

unbiased for every row ``c`` whether or not the draw reached it, and the
mean over all draws is the estimate (the Hansen-Hurwitz form of the same
difference estimator).

The variance of each row's mean is estimated two ways and the larger is
kept: from the spread of its ``Z`` (consistent, but blind to errors no draw
has met yet, e.g. the first labels of a 98 %-accurate model), and from what
``g`` predicts of each draw's conditional variance (right when ``g`` is
calibrated). For the rows estimated together, the spread is that of the
draws' residual terms (about their mean, which also counts the drift of
``g`` between draws: conservative).
"""

import numpy as np
from scipy.special import gammaln
from scipy.stats import norm

from ._confusion_metrics import metric_gradients, metric_values

__all__ = ["DifferenceEstimate", "shrink_errors"]

#: Grid of the strengths of the even prior on where a row's errors go.
_STRENGTHS = np.geomspace(0.1, 1e4, 41)
#: A row is estimated from its own draws alone once it expects this many of them.
MIN_EXPECTED_DRAWS = 5.0


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
            loglik = (
                gammaln(_STRENGTHS)
                - gammaln(_STRENGTHS + ne)
                + (gammaln(a + n_err[None]) - gammaln(a)).sum(axis=1)
            )
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
        K = n_classes
        # Per row, one entry per draw (lists: appending a draw is O(1)).
        self.Z = [[] for _ in range(K)]
        self.model_var = [[] for _ in range(K)]
        # The unconditional form: sums over all draws of the totals each started
        # from, of their residual terms (in the row they reached), of their
        # chances of reaching each row, and of g's prediction of their variance.
        self.base_sum = np.zeros((K, K))
        self.resid_sum = np.zeros((K, K))
        self.expected = np.zeros(K)
        self.pooled_var = np.zeros((K, len(metrics)))
        self.resid = []  # (row, residual term) of every draw, for the spread

    @property
    def n_draws(self):
        return sum(len(z) for z in self.Z)

    def add(self, row, Z, model_var, *, base=None, resid=None, row_prob=None, pooled_var=None):
        """Record one draw in ``row``.

        Parameters
        ----------
        row : int
        Z : ndarray of shape (K,)
            The row's estimate from this draw (post-stratified).
        model_var : ndarray of shape (n_metrics,)
            ``g``'s prediction of its variance.
        base : ndarray of shape (K, K), default=None
            The totals the draw started from (labels, and ``g`` on the
            unlabeled items); None: the unconditional form is not kept and
            every row is post-stratified.
        resid : ndarray of shape (K,)
            The residual term ``(e_I - g_I) / q(I)``.
        row_prob : ndarray of shape (K,)
            The draw's probability of landing in each row.
        pooled_var : ndarray of shape (K, n_metrics)
            Per row, ``g``'s prediction of the residual term's variance.
        """
        self.Z[row].append(np.asarray(Z, dtype=np.float64))
        self.model_var[row].append(np.asarray(model_var, dtype=np.float64))
        if base is not None:
            self.base_sum += base
            self.resid_sum[row] += resid
            self.expected += row_prob
            self.pooled_var += pooled_var
            self.resid.append((row, np.asarray(resid, dtype=np.float64)))

    def pooled_rows(self):
        """Rows estimated without conditioning on the draws that reached them."""
        if not self.resid:
            return np.zeros(self.n_classes, dtype=bool)
        few = np.array([len(z) < 2 for z in self.Z])
        return (self.expected < MIN_EXPECTED_DRAWS) | few

    def totals(self, plugin, counts=None):
        """The estimate of the confusion totals; ``plugin`` (K, K) fills rows without draws.

        With ``counts`` (labeled items per cell), each row's errors are spread
        by :func:`shrink_errors`.
        """
        T = np.array(plugin, dtype=np.float64)
        for c, z in enumerate(self.Z):
            if z:
                T[c] = np.mean(z, axis=0)
        pooled = self.pooled_rows()
        if pooled.any():
            T[pooled] = (self.base_sum[pooled] + self.resid_sum[pooled]) / len(self.resid)
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
        pooled = self.pooled_rows()
        var = np.zeros(len(self.metrics))
        for c, z in enumerate(self.Z):
            n = len(z)
            if pooled[c]:
                continue
            if n == 0:
                var += plugin_var[c]
                continue
            model = np.sum(self.model_var[c], axis=0) / n**2
            if n > 1:
                u = (np.asarray(z) - T[c]) @ grad[:, c, :].T  # (n, n_metrics)
                model = np.maximum(model, (u**2).sum(axis=0) / (n * (n - 1)))
            var += model
        if pooled.any():
            var += self._pooled_variance(grad, pooled)
        se = np.sqrt(var)
        z = norm.ppf(0.5 + level / 2.0)
        value = np.clip(value, 0.0, 1.0)
        return value, se, np.clip(value - z * se, 0.0, 1.0), np.clip(value + z * se, 0.0, 1.0)

    def _pooled_variance(self, grad, pooled):
        """Variance of the rows estimated together, along each metric's gradient.

        Each draw's residual term along the gradients (0 for a draw that
        landed in a post-stratified row): their spread about their mean, or
        ``g``'s prediction of it, whichever is larger.
        """
        n = len(self.resid)
        w = np.zeros((n, len(self.metrics)))
        for j, (row, r) in enumerate(self.resid):
            if pooled[row]:
                w[j] = grad[:, row, :] @ r
        model = self.pooled_var[pooled].sum(axis=0) / n**2
        if n > 1:
            model = np.maximum(model, ((w - w.mean(axis=0)) ** 2).sum(axis=0) / (n * (n - 1)))
        return model

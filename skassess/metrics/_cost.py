"""BayesianMisclassificationCost: posterior of the expected cost of a classifier's errors."""

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._params import LEVEL, N_DRAWS, validate_args, validated
from ._base import DEFAULT_PRIOR_STRENGTH, DRAW_CHUNK
from ._confusion import BayesianConfusionMatrix
from ._conjugate import MIN_PSEUDO_COUNT, dirichlet_draws
from ._noisy_labels import DEFAULT_ANNOTATOR_PRIOR


@fill_doc
class BayesianMisclassificationCost(BayesianConfusionMatrix):
    """Bayesian estimate of a black-box classifier's expected misclassification cost.

    Read more in the :ref:`User Guide <ug_confusion>`.

    Uses the nested Dirichlet model of :class:`BayesianConfusionMatrix`: among rows
    predicted ``k`` the true class has distribution ``theta_k``, so the
    expected cost of predicting ``k`` is ``cost_k = sum_j C[j, k] theta_kj``
    and the overall expected cost per row is ``sum_k p_k cost_k``.

    Parameters
    ----------
    cost_matrix : array-like of shape (n_classes, n_classes), default=None
        ``C[j, k]``: cost of predicting class ``k`` when the true class is
        ``j`` (rows true, columns predicted, as scikit-learn's confusion
        matrix). Finite and non-negative. None means the 0-1 cost, for which
        the expected cost is the error rate.
    prior : {"calibrated", "uniform", "informative", "hierarchical"} or array-like, \
            default="calibrated"
        As in :class:`BayesianConfusionMatrix`. With ``"calibrated"`` the cost
        is that of the pool's rows: a labeled row costs what its label says,
        and of the unlabeled rows the calibrated model draws how many are
        right, the Dirichlet of the errors what the wrong ones cost; that
        Dirichlet's concentration and its tilt toward the cheap or the costly
        classes are learned from the labeled errors (see the user guide,
        *The errors' split under the calibrated prior*).
    prior_strength : float, default=2.0
        ``N0``, the prior's weight in pseudo-labels.
    {{classes}}
    {{missing_label}}
    {{label_noise}}
    {{random_state}}

    Attributes
    ----------
    cost_matrix_ : ndarray of shape (n_classes, n_classes)
        The cost matrix used.
    posterior_ : NestedDirichletPosterior
        Posterior per predicted class over the true class.
    prior_ : NestedDirichletPosterior
        The prior it started from.
    counts_ : ndarray of shape (n_classes, n_classes)
        Labeled rows per (predicted class, true class).
    {{predicted_class_groups}}
    {{fitted_rows}}
    {{label_noise_fitted}}

    See Also
    --------
    BayesianConfusionMatrix : The posterior this estimator builds on.

    Notes
    -----
    ``overall_*`` methods give the overall expected cost;
    :meth:`groupwise_samples` and :meth:`predict` the expected cost per
    predicted class (of a row predicted ``k``).

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import BayesianMisclassificationCost
    >>> scores = np.array([[0.8, 0.2], [0.7, 0.3], [0.1, 0.9], [0.4, 0.6]])
    >>> cost = [[0, 1], [5, 0]]  # missing a positive costs 5
    >>> est = BayesianMisclassificationCost(cost_matrix=cost, random_state=0)
    >>> round(est.fit(scores, [0, 1, 1, 1]).overall_mean(), 4)  # every row labeled
    1.25
    """

    _parameter_constraints = {
        **BayesianConfusionMatrix._parameter_constraints,
        "cost_matrix": ["array-like", None],
    }

    def __init__(
        self,
        *,
        cost_matrix=None,
        prior="calibrated",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        classes=None,
        missing_label=-1,
        label_noise="auto",
        annotator_prior=DEFAULT_ANNOTATOR_PRIOR,
        slip_evidence="bounds",
        n_imputations=20,
        random_state=None,
    ):
        super().__init__(
            prior=prior,
            prior_strength=prior_strength,
            classes=classes,
            missing_label=missing_label,
            label_noise=label_noise,
            annotator_prior=annotator_prior,
            slip_evidence=slip_evidence,
            n_imputations=n_imputations,
            random_state=random_state,
        )
        self.cost_matrix = cost_matrix

    def _check_params_vs_input(self, n_classes):
        _checked_cost(self.cost_matrix, n_classes)

    def _init_stats(self, n_groups):
        super()._init_stats(n_groups)
        self.cost_matrix_ = _checked_cost(self.cost_matrix, self.n_classes_)

    def _split_cost(self):
        return self.cost_matrix_

    def _group_metric_mean(self):
        return self._cost(self.posterior_.mean())

    def _cost(self, theta):
        """theta[..., k, j] -> expected cost per predicted class [..., k]."""
        return np.einsum("...kj,jk->...k", theta, self.cost_matrix_)

    def _cost_levels(self):
        """The posterior of each predicted class's error cost, aggregated by cost value.

        The cost of predicting ``k`` is ``C[k, k] theta_kk + (1 - theta_kk)
        sum_v v * P(C[y, k] = v | pred = k, error)`` over the distinct values
        ``v`` of column ``k`` of the cost matrix off the diagonal; by the
        aggregation property of the Dirichlet, the shares of the values among
        the errors are Dirichlet with the summed pseudo-counts. Returns
        ``(values, alpha)`` of shape ``(K, V)`` (``V`` the most distinct
        values), padded with zero pseudo-counts. For the 0-1 cost ``V = 1``: a draw needs ``O(K)``
        numbers instead of ``O(K^2)``.
        """
        values, member = self._cost_level_map()
        return values, self._aggregate_levels(member)

    def _cost_level_map(self):
        """The distinct error costs per predicted class, ``(K, V)``, and the sparse
        map of the cells ``(k, j)`` onto them."""
        K = self.n_classes_
        off = ~np.eye(K, dtype=bool)
        columns = [
            np.unique(self.cost_matrix_[off[:, k], k], return_inverse=True) for k in range(K)
        ]
        V = max(len(u) for u, _ in columns)
        values, level = np.zeros((K, V)), np.zeros((K, K), dtype=np.int64)
        for k, (u, inverse) in enumerate(columns):
            values[k, : len(u)] = u
            level[k, off[:, k]] = k * V + inverse
        member = sparse.csr_matrix(
            (off.ravel().astype(np.float64), (np.arange(K * K), level.ravel())),
            shape=(K * K, K * V),
        )
        return values, member

    def _aggregate_levels(self, member, alpha=None):
        """Errors' pseudo-counts ``(..., K, K)`` (None: the posterior's) summed by cost
        value, ``(..., K, V)``: a sparse sum, ``O(K^2)`` a draw whatever the levels."""
        K = self.n_classes_
        alpha = self.posterior_.alpha if alpha is None else alpha
        alpha = np.where(~np.eye(K, dtype=bool), alpha, 0.0)
        lead = alpha.shape[:-2]
        flat = alpha.reshape(-1, K * K)
        return np.asarray(member.T @ flat.T).T.reshape(lead + (K, -1))

    def _draw_width(self):
        return self.n_classes_ * (self._cost_levels()[0].shape[1] + 1)

    def _groupwise_samples(self, n_draws, rng):
        if self._calibrated():
            return self._pool_cost_samples(n_draws, rng)
        values, alpha = self._cost_levels()
        hit_cost = np.diagonal(self.cost_matrix_)
        chunk = max(1, DRAW_CHUNK // alpha.size)
        out = np.empty((n_draws, self.n_classes_))
        for start in range(0, n_draws, chunk):
            m = min(chunk, n_draws - start)
            hit = self._accuracy_samples(m, rng)
            shares = dirichlet_draws(np.broadcast_to(alpha, (m,) + alpha.shape), rng)
            out[start : start + m] = hit * hit_cost + (1.0 - hit) * (shares * values).sum(axis=-1)
        return out

    def _pool_cost_samples(self, n_draws, rng):
        """Draws of each predicted class's mean cost on the pool (the calibrated prior).

        A labeled row costs what its label says; of the unlabeled rows
        predicted ``k``, the calibrated model draws how many are right (cost
        ``C[k, k]``), and the wrong ones cost, in sum, a normal draw of mean
        ``W X`` and variance ``W V`` (``W`` of them, ``X`` and ``V`` the mean
        and variance of an error's cost under a draw of the Dirichlet of
        ``_cost_levels``). So a fully labeled pool's cost is its observed one.
        """
        values, member = self._cost_level_map()
        alpha = self._aggregate_levels(member)
        hit_cost = np.diagonal(self.cost_matrix_)
        n_rows = self.n_rows_
        labeled = self.counts_.sum(axis=1)
        unlabeled = np.maximum(n_rows - labeled, 0.0)
        right_labeled = np.diagonal(self.counts_)
        labeled_cost = self._observed_group_sums()
        # each draw holds the error split's K x K pseudo-counts before they are summed by level
        chunk = max(1, DRAW_CHUNK // max(alpha.size, self.n_classes_**2))
        out = np.empty((n_draws, self.n_classes_))
        for start in range(0, n_draws, chunk):
            m = min(chunk, n_draws - start)
            hit = self._accuracy_samples(m, rng)
            right = np.clip(hit * n_rows - right_labeled, 0.0, unlabeled)
            wrong = unlabeled - right
            # the errors' split, its concentration and tilt drawn with it
            levels = self._aggregate_levels(member, self._error_alpha_draws(m, rng))
            shares = dirichlet_draws(levels, rng)
            mean = (shares * values).sum(axis=-1)
            var = np.maximum((shares * values**2).sum(axis=-1) - mean**2, 0.0)
            errors = np.maximum(
                wrong * mean + np.sqrt(wrong * var) * rng.standard_normal(wrong.shape), 0.0
            )
            with np.errstate(invalid="ignore", divide="ignore"):
                pool = (labeled_cost + right * hit_cost + errors) / n_rows
            # A predicted class with no row: the cost of a new row predicted so.
            out[start : start + m] = np.where(n_rows > 0, pool, hit * hit_cost + (1.0 - hit) * mean)
        return out

    def _pool_cost_mean(self):
        """Posterior mean of each predicted class's cost on the pool (the calibrated prior).

        The mean of :meth:`_pool_cost_samples` but for their clipping: the
        accuracy (the Beta's mean, the calibrated model's) and an error's cost
        (the Dirichlet's mean) enter linearly and independently.
        """
        values, alpha = self._cost_levels()
        total = np.maximum(alpha.sum(axis=1), MIN_PSEUDO_COUNT)
        error_cost = (alpha * values).sum(axis=1) / total
        hit = np.diagonal(self.posterior_.mean())
        n_rows, labeled = self.n_rows_, self.counts_.sum(axis=1)
        right = hit * n_rows - np.diagonal(self.counts_)
        wrong = np.maximum(n_rows - labeled, 0.0) - right
        with np.errstate(invalid="ignore", divide="ignore"):
            pool = (
                self._observed_group_sums()
                + right * np.diagonal(self.cost_matrix_)
                + wrong * error_cost
            ) / n_rows
        return np.where(n_rows > 0, pool, self._cost(self.posterior_.mean()))

    def _overall_exact_mean(self):
        mean = self._pool_cost_mean() if self._calibrated() else self._cost(self.posterior_.mean())
        return float(mean @ self.group_weights_)

    _overall_name = "expected cost"

    def _group_metric_moments(self):
        """Exact mean and variance of each predicted class's cost.

        The cost is ``Y = X + theta (c - X)``: ``theta`` the accuracy (Beta),
        ``c = C[k, k]``, ``X = sum_v v phi_v`` the cost of an error, ``phi``
        Dirichlet (``_cost_levels``) and independent of ``theta``; a
        Dirichlet gives ``E[X^2] = ((sum v alpha)^2 + sum v^2 alpha) /
        (alpha_0 (alpha_0 + 1))``.
        """
        values, alpha = self._cost_levels()
        total = np.maximum(alpha.sum(axis=1), MIN_PSEUDO_COUNT)
        first = (alpha * values).sum(axis=1)
        m1 = first / total
        m2 = (first**2 + (alpha * values**2).sum(axis=1)) / (total * (total + 1.0))
        hit = self.posterior_.diagonal()
        t1, t2 = hit.mean(), hit.var() + hit.mean() ** 2
        c = np.diagonal(self.cost_matrix_)
        mean = m1 + t1 * (c - m1)
        second = m2 + 2.0 * t1 * (c * m1 - m2) + t2 * (c**2 - 2.0 * c * m1 + m2)
        return mean, np.maximum(second - mean**2, 0.0)

    def _observed_group_sums(self):
        return self._cost(self.counts_)

    @validated
    @validate_args(
        {
            "level": [LEVEL],
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def summary(self, level=0.95, n_draws=4000, random_state=None):
        """Posterior of the expected cost per predicted class as a DataFrame.

        Returns
        -------
        summary : pandas.DataFrame
            One row per predicted class with ``n_labeled``, ``weight``
            (``p_k``), ``prior_mean``, ``mean`` (exact) and ``lower``/``upper``
            (Monte Carlo quantiles of ``n_draws`` draws).
        """
        check_is_fitted(self)
        tail = (1.0 - level) / 2.0
        draws = self.groupwise_samples(n_draws, random_state)
        lower, upper = np.quantile(draws, [tail, 1.0 - tail], axis=0)
        mean = self._pool_cost_mean() if self._calibrated() else self._cost(self.posterior_.mean())
        if self._mixed():  # the mean of the mixture over the draws of the true labels
            mean = np.clip(draws.mean(axis=0), lower, upper)
        if self._mixed():  # the mean of the mixture over the draws of the true labels
            mean = np.clip(draws.mean(axis=0), lower, upper)
        return pd.DataFrame(
            {
                "n_labeled": self.counts_.sum(axis=1),
                "weight": self.group_weights_,
                "prior_mean": self._cost(self.prior_.mean()),
                "mean": mean,
                "lower": lower,
                "upper": upper,
            },
            index=self._class_index("predicted_class"),
        )


def _checked_cost(cost_matrix, K):
    if cost_matrix is None:
        return 1.0 - np.eye(K)
    cost = np.asarray(cost_matrix, dtype=np.float64)
    if cost.shape != (K, K):
        raise ValueError(
            f"cost_matrix must have shape (n_classes, n_classes) = ({K}, {K}); got "
            f"shape {cost.shape}."
        )
    if not np.all(np.isfinite(cost)) or np.any(cost < 0):
        raise ValueError(f"cost_matrix must be finite and non-negative; got {cost.tolist()!r}.")
    return cost

"""Beta-Bernoulli posteriors of a rate per group (accuracy, TPR, FPR, ...).

Every rate is ``P(outcome | condition)`` within a group. For each metric the
table below says, for a labeled row, whether the condition holds and whether
the outcome happened; and, for any row, what the model's own scores expect of
both (used by the informative prior).

=========  ================  ===============  ===============  ==================
metric     condition (obs)   outcome (obs)    condition (exp)  outcome (exp)
=========  ================  ===============  ===============  ==================
accuracy   always            y == pred        1                p_pred
tpr        y == 1            pred == 1        p_1              p_1 [pred == 1]
fnr        y == 1            pred == 0        p_1              p_1 [pred == 0]
tnr        y == 0            pred == 0        p_0              p_0 [pred == 0]
fpr        y == 0            pred == 1        p_0              p_0 [pred == 1]
precision  pred == 1         y == 1           [pred == 1]      p_1 [pred == 1]
=========  ================  ===============  ===============  ==================
"""

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .._validation import check_labels, check_level
from ._base import _BaseAssessor
from ._conjugate import BetaPosterior

METRICS = ("accuracy", "tpr", "fnr", "tnr", "fpr", "precision")
#: Rates conditioned on the true class: (class, outcome class).
_ON_TRUE = {"tpr": (1, 1), "fnr": (1, 0), "tnr": (0, 0), "fpr": (0, 1)}

#: Prior means are kept inside [EPS, 1 - EPS] so that Beta parameters stay > 0.
EPS = 1e-6


def _terms(metric, scores, pred, conf):
    """Model-expected (condition, outcome) per row."""
    if metric == "accuracy":
        return None, conf
    if metric == "precision":
        cond = (pred == 1).astype(np.float64)
        return cond, scores[:, 1] * cond
    true_class, out_class = _ON_TRUE[metric]
    cond = scores[:, true_class]
    return cond, cond * (pred == out_class)


def _observed(metric, pred, y):
    """Observed (condition, outcome) of labeled rows, as booleans."""
    if metric == "accuracy":
        return None, pred == y
    if metric == "precision":
        return pred == 1, y == 1
    true_class, out_class = _ON_TRUE[metric]
    return y == true_class, pred == out_class


class _BetaAssessor(_BaseAssessor):
    """A Beta posterior per group of the rate named by ``_metric()``."""

    _group_arrays = (
        "n_rows_",
        "n_labeled_",
        "n_success_",
        "expected_condition_",
        "expected_success_",
        "n_condition_rows_",
        "n_labeled_rows_",
    )

    def _metric(self):
        return getattr(self, "metric", "accuracy")

    def _check_params(self, scores):
        metric = self._metric()
        if metric != "accuracy" and scores.shape[1] != 2:
            raise ValueError(
                f"metric={metric!r} needs binary scores (2 classes); X has "
                f"{scores.shape[1]} score columns."
            )

    def _init_stats(self, n_groups):
        for name in self._group_arrays:
            setattr(self, name, np.zeros(n_groups))

    def _accumulate(self, scores, pred, conf, group, y, weight):
        metric, G = self._metric(), self.grouping_.n_groups

        def count(w, mask=None):
            if mask is None:
                return np.bincount(group, weights=w, minlength=G)
            return np.bincount(group[mask], weights=w[mask], minlength=G)

        self.n_rows_ += count(weight)
        cond, outcome = _terms(metric, scores, pred, conf)
        self.expected_condition_ += count(weight if cond is None else weight * cond)
        self.expected_success_ += count(weight * outcome)
        if metric == "precision":
            self.n_condition_rows_ += count(weight * cond)
        labeled = y >= 0
        if labeled.any():
            self._count_labels(pred[labeled], group[labeled], y[labeled], weight[labeled])

    def _count_labels(self, pred, g, y, w):
        """Add labeled rows (already counted as rows) to the outcome counts."""
        G = self.grouping_.n_groups
        cond_obs, out_obs = _observed(self._metric(), pred, y)
        eligible = np.ones(len(g), dtype=bool) if cond_obs is None else cond_obs
        self.n_labeled_rows_ += np.bincount(g, weights=w, minlength=G)
        self.n_labeled_ += np.bincount(g, weights=w * eligible, minlength=G)
        self.n_success_ += np.bincount(g, weights=w * (eligible & out_obs), minlength=G)

    # ----------------------------------------------------------------- priors
    def _prior_params(self):
        G = self.grouping_.n_groups
        if isinstance(self.prior, str) and self.prior == "uniform":
            half = np.full(G, self.prior_strength / 2.0)
            return half, half.copy()
        if isinstance(self.prior, str):  # informative
            mean = self._expected_rate()
            return self.prior_strength * mean, self.prior_strength * (1.0 - mean)
        prior = np.asarray(self.prior, dtype=np.float64)
        if prior.shape not in {(2,), (G, 2)}:
            raise ValueError(
                f"prior as an array must have shape (2,) or (n_groups, 2) = ({G}, 2) of "
                f"(alpha, beta) pseudo-counts; got shape {prior.shape}."
            )
        if not np.all(np.isfinite(prior)) or np.any(prior <= 0):
            raise ValueError(f"prior pseudo-counts must be finite and > 0; got {prior!r}.")
        prior = np.broadcast_to(prior, (G, 2))
        return prior[:, 0].copy(), prior[:, 1].copy()

    def _expected_rate(self):
        """The rate each group would have if the scores were calibrated."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.expected_success_ / self.expected_condition_
        mean = np.where(self.expected_condition_ > 0, mean, 0.5)
        return np.clip(mean, EPS, 1.0 - EPS)

    def _update_posterior(self):
        alpha, beta = self._prior_params()
        self.prior_ = BetaPosterior(alpha, beta)
        self.posterior_ = self.prior_.update(self.n_success_, self.n_labeled_)

    # ---------------------------------------------------------- group weights
    def _overall_weights(self, n_draws, rng):
        """Weight of each group in the overall rate: fixed (G,) or drawn (n_draws, G)."""
        p = self.group_weights_
        metric = self._metric()
        if metric == "accuracy":
            return p
        if metric == "precision":
            return p * self.n_condition_rows_ / np.maximum(self.n_rows_, 1e-300)
        true_class, _ = _ON_TRUE[metric]
        base = self._base_rate_posterior(true_class)
        return p * base.rvs(n_draws, rng)

    def _base_rate_posterior(self, true_class):
        """Posterior of P(y = true_class | group), to weight rates conditioned on y."""
        # expected_condition_ is the sum of p_{true_class} over the group's rows.
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.expected_condition_ / self.n_rows_
        mean = np.clip(np.where(self.n_rows_ > 0, mean, 0.5), EPS, 1 - EPS)
        if isinstance(self.prior, str) and self.prior == "informative":
            a0, b0 = self.prior_strength * mean, self.prior_strength * (1 - mean)
        else:
            a0 = b0 = np.full(len(mean), self.prior_strength / 2.0)
        # Labeled rows of the group, and among them those with y == true_class.
        return BetaPosterior(a0, b0).update(self.n_labeled_, self.n_labeled_rows_)

    def _overall_samples(self, n_draws, rng):
        theta = self.posterior_.rvs(n_draws, rng)
        weights = self._overall_weights(n_draws, rng)
        weights = np.broadcast_to(weights, theta.shape)
        total = weights.sum(axis=1)
        with np.errstate(invalid="ignore"):
            return (theta * weights).sum(axis=1) / total

    def _overall_exact_mean(self):
        if self._metric() not in ("accuracy", "precision"):
            return None
        weights = self._overall_weights(1, None)
        return float(weights @ self.posterior_.mean() / weights.sum())

    def _groupwise_samples(self, n_draws, rng):
        return self.posterior_.rvs(n_draws, rng)

    # ---------------------------------------------------------------- outputs
    def predict(self, X, groups=None):
        """Posterior mean of the rate in each row's group.

        For ``metric="accuracy"`` this is the posterior probability that the
        black box is right on the row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores.
        groups : array-like of shape (n_samples,), default=None
            Group of each row (``grouping="external"`` only).

        Returns
        -------
        rate : ndarray of shape (n_samples,)
        """
        _, _, group = self._rows(X, groups)
        return self.posterior_.mean()[group]

    def score(self, X, y, groups=None):
        """Mean log posterior predictive probability of the labeled rows' outcomes.

        Only labeled rows for which the metric is defined count (for TPR,
        rows with ``y == 1``). Higher is better; use it to choose priors in
        :class:`~sklearn.model_selection.GridSearchCV`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores.
        y : array-like of shape (n_samples,)
            True labels, ``-1`` for unlabeled rows.
        groups : array-like of shape (n_samples,), default=None
            Group of each row (``grouping="external"`` only).

        Returns
        -------
        score : float
        """
        scores, pred, group = self._rows(X, groups)
        y = check_labels(y, scores.shape[0], self.n_classes_, self._checked_classes(
            self.n_classes_))
        labeled = y >= 0
        cond, outcome = _observed(self._metric(), pred[labeled], y[labeled])
        eligible = np.ones(labeled.sum(), dtype=bool) if cond is None else cond
        if not eligible.any():
            raise ValueError(
                "score needs at least one labeled row (y != -1) on which the metric "
                "is defined."
            )
        logp = self.posterior_.log_predictive(
            outcome[eligible].astype(int), group[labeled][eligible]
        )
        return float(logp.mean())

    def summary(self, level=0.95):
        """Posterior per group as a DataFrame.

        Parameters
        ----------
        level : float, default=0.95
            Credible level of the equal-tailed intervals.

        Returns
        -------
        summary : pandas.DataFrame
            One row per group with ``n_labeled`` (labeled rows on which the
            metric is defined), ``weight`` (share ``p_g`` of all rows),
            ``prior_mean``, ``mean``, ``lower`` and ``upper``.
        """
        check_is_fitted(self)
        level = check_level(level)
        lower, upper = self.posterior_.interval(level)
        return pd.DataFrame(
            {
                "n_labeled": self.n_labeled_,
                "weight": self.group_weights_,
                "prior_mean": self.prior_.mean(),
                "mean": self.posterior_.mean(),
                "lower": lower,
                "upper": upper,
            },
            index=self.groups_,
        )

    def log_marginal_likelihood(self):
        """Log probability of all labeled outcomes under the prior (beta-binomial).

        Useful to choose ``prior_strength`` by empirical Bayes.
        """
        check_is_fitted(self)
        return float(self.posterior_.log_marginal_likelihood().sum())

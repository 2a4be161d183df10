"""Beta-Bernoulli posteriors of a rate per group (accuracy, TPR, FPR, ...).

Every rate is ``P(outcome | condition)`` within a group, as in the rate table
of :mod:`skassess.metrics._rate_table`. A labeled row on which the condition
holds is one Bernoulli trial of the group's rate; the model's own scores give
every row's expected condition and outcome (the informative prior).
"""

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..utils._memory import check_draw_memory
from ..utils._params import LEVEL, N_DRAWS, validate_args, validated
from ._base import DEFAULT_N_DRAWS, _BaseAssessor
from ._calibrated_binary import CalibratedBinaryRates
from ._calibrated_model import N_BINS, add_to_cells, score_bin, score_logit
from ._conjugate import BetaPosterior
from ._departure import DepartureCheck
from ._design import DESIGN_ARRAYS, DesignCounts
from ._hierarchical import HierarchicalBeta
from ._lazy_fit import LazyCalibratedFit
from ._prior_checks import _PriorChecks, beta_prior
from ._rate_table import (
    CONDITION_ON_LABEL,
    CONDITION_ON_PREDICTION,
    canonical_rate,
    expected_rate_terms,
    rate_terms,
)

#: Level of the prior-data conflict check of the informative prior (two-sided).

#: Rates a BayesianAccuracy accepts (selection_rate is refused with a reason).
METRICS = (
    "accuracy",
    "tpr",
    "fnr",
    "tnr",
    "fpr",
    "ppv",
    "npv",
    "precision",
    "recall",
    "selection_rate",
)


class _RateAssessor(DepartureCheck, _PriorChecks, DesignCounts, LazyCalibratedFit, _BaseAssessor):
    """A posterior per group of the rate named by ``metric``: the calibrated model
    (``prior="calibrated"``), or a Beta per group (the other priors)."""

    #: Arrays of the calibrated model: per group and bin of the score's log-odds
    #: (the design-weighted sums are the likelihood's under an unequal design).
    _score_arrays = (
        "score_rows_",
        "score_logit_",
        "score_labeled_",
        "score_success_",
        *DESIGN_ARRAYS,
    )
    _group_arrays = (
        "n_rows_",
        "n_labeled_",
        "n_success_",
        "expected_condition_",
        "expected_success_",
        "n_condition_rows_",
        "n_labeled_rows_",
        *_score_arrays,
    )
    _LAZY = (*LazyCalibratedFit._LAZY, "departure_")
    #: Whether the informative prior is checked against the labels (accuracy estimators).
    _checks_prior_conflict = False

    def _metric(self):
        return canonical_rate(getattr(self, "metric", "accuracy"))

    def _check_params_vs_input(self, n_classes):
        name = getattr(self, "metric", "accuracy")
        metric = self._metric()
        grouping = self._grouping_kind_of()
        if metric == "selection_rate":
            raise ValueError(
                "metric='selection_rate' needs no labels: it is the share of rows the "
                "black box predicts positive, known exactly from X. Use "
                "BayesianGroupMetrics for its differences between groups."
            )
        if metric != "accuracy" and n_classes != 2:
            raise ValueError(
                f"metric={name!r} needs binary scores (2 classes); X has {n_classes} score columns."
            )
        if grouping in ("predicted_class", "class_bin") and metric != "accuracy":
            reason = (
                "its outcome is the prediction, which is constant within a predicted "
                "class, so the rate is exactly 0 or 1 there"
                if metric in CONDITION_ON_LABEL
                else "its condition is the prediction, so it is undefined in one of the "
                "predicted classes"
            )
            raise ValueError(
                f"metric={name!r} with grouping={grouping!r} is degenerate: {reason}. Use "
                "grouping='external' (with group_by, e.g. a sensitive attribute) or "
                "grouping='score_bins'."
            )

    def _prior_kind(self):
        """The prior in use: ``"auto"`` is ``"calibrated"``."""
        prior = self.prior
        if not isinstance(prior, str):
            return "array"
        return "calibrated" if prior == "auto" else prior

    def _calibrated(self):
        return self._prior_kind() == "calibrated"

    def _init_stats(self, n_groups):
        # The calibrated model's per-bin arrays are empty under the other priors; a
        # binary rate's model has a block of bins per predicted class.
        bins = N_BINS * (1 if self._metric() == "accuracy" else 2) if self._calibrated() else 0
        for name in self._group_arrays:
            shape = (n_groups, bins) if name in self._score_arrays else (n_groups,)
            setattr(self, name, np.zeros(shape))

    def _accumulate(self, scores, pred, conf, group, y, weight):
        metric, G = self._metric(), self.grouping_.n_groups

        def count(w):
            return np.bincount(group, weights=w, minlength=G)

        self.n_rows_ += count(weight)
        if metric == "accuracy":
            self.expected_condition_ += count(weight)
            self.expected_success_ += count(weight * conf)
        else:
            cond, joint = expected_rate_terms(metric, scores, pred)
            self.expected_condition_ += count(weight * cond)
            self.expected_success_ += count(weight * joint)
        if metric in CONDITION_ON_PREDICTION:
            cond, _ = rate_terms(metric, pred, 0)  # the condition ignores y
            self.n_condition_rows_ += count(weight * cond)
        if self._calibrated():
            ell, col = self._score_cells(pred, conf)
            cell = (group, col)
            add_to_cells(self.score_rows_, cell, weight)
            add_to_cells(self.score_logit_, cell, weight * ell)
        labeled = y >= 0
        if labeled.any():
            self._count_labels(
                pred[labeled], group[labeled], y[labeled], weight[labeled], conf[labeled]
            )

    def _count_labels(self, pred, g, y, w, conf=None, design_weight=None):
        """Add labeled rows (already counted as rows) to the outcome counts."""
        G = self.grouping_.n_groups
        cond, out = rate_terms(self._metric(), pred, y)
        self.n_labeled_rows_ += np.bincount(g, weights=w, minlength=G)
        self.n_labeled_ += np.bincount(g, weights=w * cond, minlength=G)
        self.n_success_ += np.bincount(g, weights=w * cond * out, minlength=G)
        if self._calibrated():
            # Accuracy's model is of being right; a binary rate's of the class, so
            # every labeled row counts, whether or not the rate's condition holds.
            outcome = out if self._metric() == "accuracy" else (y == 1)
            cell = (g, self._score_cells(pred, conf)[1])
            self._start_design_counts()
            np.add.at(self.score_labeled_, cell, w)
            np.add.at(self.score_success_, cell, w * outcome)
            self._add_design_counts(cell, w, outcome, design_weight)

    def _score_cells(self, pred, conf):
        """Log-odds and column of each row in the calibrated model's per-bin arrays.

        Accuracy: the top-1 score's log-odds. A binary rate: the positive
        class's, ``p_1`` (``conf`` is the predicted class's score), in the
        block of the predicted class.
        """
        if self._metric() == "accuracy":
            ell = score_logit(conf)
            return ell, score_bin(ell)
        pred = np.asarray(pred)
        ell = score_logit(np.where(pred == 1, conf, 1.0 - conf))
        return ell, score_bin(ell) + N_BINS * (pred == 1)

    def _observed_outcomes(self, pred, y):
        cond, out = rate_terms(self._metric(), pred, y)
        return cond > 0, out.astype(np.intp)

    # ----------------------------------------------------------------- priors
    def _prior_params(self):
        G = self.grouping_.n_groups
        if isinstance(self.prior, str) and self.prior == "uniform":
            half = np.full(G, self.prior_strength / 2.0)
            return half, half.copy()
        if isinstance(self.prior, str):  # informative
            return beta_prior(self.prior_strength, self.expected_success_, self.expected_condition_)
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

    def _hierarchical(self):
        return self._prior_kind() == "hierarchical"

    def _update_posterior(self):
        if self._calibrated():
            # The scores through a calibration map whose trust the labels set;
            # draws, intervals and evidence come from the model itself, fitted
            # when first read (LazyCalibratedFit).
            self._mark_calibrated_stale()
        elif self._hierarchical():
            # Each group's posterior is a mixture over the shared (mu, kappa); the
            # Beta state holds its mean and variance, joint draws and intervals come
            # from the mixture itself. prior_: a new group's rate given the labels.
            self._hierarchy = HierarchicalBeta(self.n_success_, self.n_labeled_)
            self.posterior_ = self._hierarchy.posterior()
            self.prior_ = self._hierarchy.predictive()
        else:
            self._hierarchy = None
            alpha, beta = self._prior_params()
            self.prior_ = BetaPosterior(alpha, beta)
            self.posterior_ = self.prior_.update(self.n_success_, self.n_labeled_)
        metric = self._metric()
        if metric in CONDITION_ON_LABEL:
            # P(condition | group), e.g. P(y = 1 | g) for TPR: it weighs the groups in
            # the overall rate. Its prior follows `prior` with the same strength.
            if isinstance(self.prior, str) and self.prior == "informative":
                a0, b0 = beta_prior(self.prior_strength, self.expected_condition_, self.n_rows_)
            else:
                a0 = b0 = np.full(len(self.n_rows_), self.prior_strength / 2.0)
            self.condition_posterior_ = BetaPosterior(a0, b0).update(
                self.n_labeled_, self.n_labeled_rows_
            )

    def _fit_calibrated(self):
        counts = (self.score_rows_, self.score_logit_, self.score_labeled_, self.score_success_)
        if self._metric() == "accuracy":
            model = self._calibrated_model()
        else:
            model = CalibratedBinaryRates(
                *counts,
                metric=self._metric(),
                successes=self.n_success_,
                failures=self.n_labeled_ - self.n_success_,
                random_state=self._model_random_state(),
                design=self._design_arrays() or None,
            )
        self._hierarchy = model
        self.dispersion_ = model.dispersion
        self.posterior_ = model.posterior()
        self._calibrated_stale = False

    def _fit_deferred(self, name):
        # A new group's rate (its own draws): computed when first read.
        if name == "prior_" and self._calibrated():
            self.prior_ = self._hierarchy.predictive()
        if name == "departure_" and self._checks_departure():
            self._fit_departure()

    # ---------------------------------------------------------- group weights
    def _overall_weights(self, n_draws, rng):
        """Weight of each group in the overall rate: fixed (G,) or drawn (n_draws, G)."""
        p = self.group_weights_
        metric = self._metric()
        if metric == "accuracy":
            return p
        if metric in CONDITION_ON_PREDICTION:
            weights = p * self.n_condition_rows_ / np.maximum(self.n_rows_, 1e-300)
            if not weights.sum() > 0:
                raise ValueError(
                    f"The overall {metric} is undefined: no row seen is predicted "
                    f"{'positive' if metric == 'ppv' else 'negative'}, so its condition never "
                    "holds (per-group summaries still show the prior)."
                )
            return weights
        return p * self.condition_posterior_.rvs(n_draws, rng)

    def _theta_samples(self, n_draws, rng):
        """Draws of every group's rate, shape ``(n_draws, n_groups)``."""
        if getattr(self, "_hierarchy", None) is not None:
            return self._hierarchy.rvs(n_draws, rng)
        return self.posterior_.rvs(n_draws, rng)

    def _own_overall_samples(self, n_draws):
        if not self._calibrated() or self._hierarchy.n_draws != n_draws:
            return None
        if self._metric() != "accuracy":
            if self._metric() in CONDITION_ON_PREDICTION:
                self._overall_weights(1, None)  # raises where no row is predicted so
            return self._hierarchy.overall_draws().copy()
        weights = self.group_weights_
        return self._hierarchy.draws @ weights / weights.sum()

    def _overall_samples(self, n_draws, rng):
        if self._calibrated() and self._metric() != "accuracy":
            if self._metric() in CONDITION_ON_PREDICTION:
                self._overall_weights(1, None)  # raises where no row is predicted so
            # The pool's counts drawn jointly: no weights to draw.
            return self._hierarchy.overall_rvs(n_draws, rng)
        theta = self._theta_samples(n_draws, rng)
        weights = np.array(np.broadcast_to(self._overall_weights(n_draws, rng), theta.shape))
        total = weights.sum(axis=1)
        underflow = ~(total > 0)
        if underflow.any():
            # A tiny prior and no row meeting the condition: every drawn P(condition | g)
            # can underflow to 0. Weigh those draws by the posterior means instead.
            weights[underflow] = self.group_weights_ * self.condition_posterior_.mean()
            total[underflow] = weights[underflow].sum(axis=1)
        return (theta * weights).sum(axis=1) / total

    def _overall_exact_mean(self):
        if self._metric() in CONDITION_ON_LABEL:
            return None
        weights = self._overall_weights(1, None)
        return float(weights @ self.posterior_.mean() / weights.sum())

    def _groupwise_samples(self, n_draws, rng):
        return self._theta_samples(n_draws, rng)

    @validated
    @validate_args({"n_draws": [N_DRAWS], "random_state": ["random_state"]})
    def groupwise_counts(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Joint posterior draws of each group's counts on the pool (calibrated prior).

        A rate is a ratio of counts over the group's rows: for accuracy the
        right rows over the rows, for TPR the positives predicted positive
        over the positives, for PPV the positives over the rows predicted
        positive. Labeled rows count as labeled; the other rows' classes are
        drawn. Sums of these counts over several groups give the rate of
        their union in the same draws (e.g. a privileged group against all
        the others).

        Parameters
        ----------
        n_draws : int, default=4000
            Number of Monte Carlo draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws; None uses the estimator's ``random_state``.

        Returns
        -------
        numerator, denominator : ndarray of shape (n_draws, n_groups)
            Weighted counts, when ``fit`` had ``sample_weight``.

        Raises
        ------
        ValueError
            If the prior is not ``"calibrated"`` (or ``"auto"``): the other
            priors model each group's rate, not the pool's counts.
        DrawMemoryError
            If the draws would not fit in the memory available (checked first).

        Examples
        --------
        >>> import numpy as np
        >>> from skassess import BayesianAccuracy
        >>> X = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
        >>> est = BayesianAccuracy(grouping="external", random_state=0).fit(
        ...     X, [0, 1, -1, -1], group_by=["a", "a", "b", "b"])
        >>> num, den = est.groupwise_counts(n_draws=100)
        >>> den[0].tolist()  # each group's rows
        [2.0, 2.0]
        >>> num[:, 0].min()  # both labeled rows of group a are right
        np.float64(2.0)
        """
        check_is_fitted(self)
        if not self._calibrated():
            raise ValueError(
                f"groupwise_counts needs prior='calibrated' (or 'auto'); got prior="
                f"{self.prior!r}, which models each group's rate, not the pool's counts. "
                "Use groupwise_samples for its draws of the rates."
            )
        check_draw_memory(
            2 * n_draws, self.n_rows_.size, f"{type(self).__name__}.groupwise_counts", "groups"
        )
        num, den = self._hierarchy.count_rvs(n_draws, self._rng(random_state))
        return np.asarray(num, dtype=np.float64), np.array(den, dtype=np.float64)

    def _group_metric_mean(self):
        return self.posterior_.mean()

    def _outcome_proba(self):
        m = self.posterior_.mean()
        return np.column_stack([1.0 - m, m])

    def _row_outcome_proba(self, pred, conf, group):
        if not (self._calibrated() and self._metric() == "accuracy"):
            return None
        p = self._map_proba(pred, conf, group)
        return np.column_stack([1.0 - p, p])

    def _map_proba(self, pred, conf, group):
        """The calibrated model's posterior mean map at each row's score, in its group."""
        return self._hierarchy.cell_proba()[group, self._score_cells(pred, conf)[1]]

    def predict_positive_proba(self, X, *, group_by=None, y_pred=None):
        """Posterior mean probability that each row's class is the positive one (class 1).

        Binary scores under the calibrated prior: the fitted map at the row's
        own score, in its group. For a binary rate (``metric="tpr"``, ...)
        the map of the row's predicted class, fitted to every labeled row's
        class; for accuracy the map of being right, as the positive class's
        probability (``P(right)`` for a row predicted positive, ``1 -
        P(right)`` otherwise). It is the scores recalibrated by the labels:
        :func:`~skassess.metrics.plan_labels` simulates a rate's labelings
        from it.

        Parameters
        ----------
        X, group_by, y_pred
            As in :meth:`apply`.

        Returns
        -------
        proba : ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            Scores of more than two classes, or a prior other than
            ``"calibrated"`` (its groups have no map of the scores).

        Examples
        --------
        >>> import numpy as np
        >>> from skassess import BayesianAccuracy
        >>> rng = np.random.default_rng(0)
        >>> p1 = rng.uniform(size=2000)
        >>> X = np.column_stack([1 - p1, p1])
        >>> y = np.full(2000, -1)
        >>> y[:300] = rng.random(300) < p1[:300]
        >>> est = BayesianAccuracy(metric="ppv", grouping="external", random_state=0)
        >>> proba = est.fit(X, y, group_by=np.zeros(2000)).predict_positive_proba(
        ...     X, group_by=np.zeros(2000))
        >>> proba.shape
        (2000,)
        """
        _, pred, conf, group_by = self._rows(X, group_by, y_pred, reset=False)
        if self.n_classes_ != 2:
            raise ValueError(
                f"predict_positive_proba needs binary scores; this estimator was fitted on "
                f"{self.n_classes_} classes."
            )
        if not self._calibrated():
            raise ValueError(
                f"predict_positive_proba needs prior='calibrated' (a map of the scores); "
                f"got prior={self.prior!r}."
            )
        group = np.asarray(self.grouping_.transform(pred, conf, group_by), dtype=np.intp)
        p = self._map_proba(pred, conf, group)
        return np.where(pred == 1, p, 1.0 - p) if self._metric() == "accuracy" else p

    # ---------------------------------------------------------------- outputs
    @validate_args({"level": [LEVEL]})
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
            ``prior_mean``, ``mean``, ``lower`` and ``upper``. For accuracy
            with ``prior="calibrated"`` and a ``departure_threshold``, also
            ``departure_p`` (the posterior predictive p-value of the group's
            labels under the shared map, ``departure_``), ``flagged`` (below
            the threshold) and ``labels_lower``, ``labels_upper`` (the
            group's labels alone, uniform prior); a flagged group's
            ``lower`` and ``upper`` hold both intervals.
        """
        check_is_fitted(self)
        self._warn_prior_conflict()
        lower, upper = self.groupwise_interval(level)
        mean = self.posterior_.mean()
        if self._calibrated():
            # The model's own mean (the Beta state rounds it), inside its interval.
            mean = np.clip(self._hierarchy.moments()[0], lower, upper)
        frame = pd.DataFrame(
            {
                "n_labeled": self.n_labeled_,
                "weight": self.group_weights_,
                "prior_mean": self.prior_.mean(),
                "mean": mean,
                "lower": lower,
                "upper": upper,
            },
            index=self.groups_,
        )
        if self._checks_departure():
            frame["departure_p"] = self.departure_.to_numpy()
            frame["flagged"] = self._flagged_groups()
            frame["labels_lower"], frame["labels_upper"] = self._labels_interval(level)
        return frame

    @validate_args({"level": [LEVEL]})
    def groupwise_interval(self, level=0.95):
        """Each group's equal-tailed credible interval, as :meth:`summary` has it.

        Parameters
        ----------
        level : float, default=0.95
            Credible level.

        Returns
        -------
        lower, upper : ndarray of shape (n_groups,)
            In the order of ``groups_``.

        Examples
        --------
        >>> import numpy as np
        >>> from skassess import BayesianAccuracy
        >>> est = BayesianAccuracy(prior="uniform").fit(
        ...     [[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]], [0, 1, -1])
        >>> lower, upper = est.groupwise_interval()
        >>> bool(np.all(lower < upper))
        True
        """
        check_is_fitted(self)
        if getattr(self, "_hierarchy", None) is not None:
            return self._held_interval(*self._hierarchy.interval(level), level)
        return self.posterior_.interval(level)

    def log_marginal_likelihood(self):
        """Log probability of all labeled outcomes under the prior (beta-binomial).

        Useful to choose ``prior_strength`` by empirical Bayes.
        """
        check_is_fitted(self)
        if getattr(self, "_hierarchy", None) is not None:
            return self._hierarchy.log_evidence
        return float(self.posterior_.log_marginal_likelihood().sum())

"""The contract every assessment estimator shares: fit, partial_fit, predict, score.

* ``fit(X, y=None, *, group_by=None, y_pred=None, sample_weight=None)``:
  ``X`` the black box's scores, ``y`` true labels with ``missing_label`` for
  unlabeled rows, ``group_by`` the group of each row (``grouping="external"``),
  ``y_pred`` the black box's own predictions (default: the argmax of ``X``).
  All three per-row arguments are metadata and can be routed.
* ``partial_fit`` adds rows (the conjugate update); ``add_labels`` labels rows
  counted before as unlabeled (active assessment).
* ``apply`` maps rows to groups; ``predict`` gives the posterior mean of the
  per-group metric at each row's group; ``predict_proba`` the posterior
  predictive distribution of the outcome the estimator models; ``score`` the
  weighted mean log of ``predict_proba`` at the observed outcomes.
"""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._dask import is_dask_collection
from ..utils._deprecation import warn_deprecated
from ..utils._groups import check_group_by
from ..utils._memory import check_draw_memory
from ..utils._params import LEVEL, N_DRAWS, atomic, reset_fitted, validate_args, validated
from ..utils._sklearn_compat import Interval, MissingValues, StrOptions
from ..utils._validation import (
    BLOCK,
    check_classes,
    check_design_weight,
    check_labels,
    check_sample_weight,
    validate_scores,
)
from ..utils._warnings import warn
from ._grouping import make_grouping
from ._merging import MergeStats

DEFAULT_N_DRAWS = 4000
#: The overall interval warns when the prior moves the overall metric's mean by
#: more than this many posterior standard deviations: a 95 % interval shifted
#: by 0.5 sd holds the truth about 92 % of the time.
MAX_PRIOR_PULL = 0.5
#: Floats per temporary array of posterior draws: draws of an overall quantity
#: are made this many numbers at a time, so memory does not grow with n_draws.
DRAW_CHUNK = 2**22
#: The default prior strength N0 of every conjugate estimator (pseudo-labels).
DEFAULT_PRIOR_STRENGTH = 2.0


class _BaseAssessor(MergeStats, BaseEstimator):
    """Fit / partial_fit around sufficient statistics accumulated per group.

    Subclasses set ``_group_arrays`` (names of learned arrays whose first axis
    is the group) and implement ``_init_stats``, ``_accumulate``,
    ``_count_labels``, ``_update_posterior``, ``_observed_outcomes``,
    ``_outcome_proba`` and ``_group_metric_mean``.
    """

    _parameter_constraints = {
        "prior": [StrOptions({"uniform", "informative"}), "array-like"],
        "prior_strength": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "missing_label": [MissingValues()],
        "random_state": ["random_state"],
    }
    _group_arrays = ()
    _grouping_kind = "predicted_class"

    # ------------------------------------------------------------------ fitting
    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, group_by=None, y_pred=None, sample_weight=None):
        """Fit the posterior from scratch.

        ``X`` may be a Dask Array or DataFrame (and the per-row arguments Dask
        collections partitioned alike): each partition is fitted where it
        lives and the fits are merged (:meth:`merge`), on Dask's current
        scheduler; the result is the fit on all rows, to floating-point
        summation order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores: class probabilities per row (rows sum to 1), or
            P(class 1) for a binary problem.
        y : array-like of shape (n_samples,), default=None
            True labels; rows equal to ``missing_label`` are unlabeled. None:
            no row is labeled, the posterior is the prior.
        group_by : array-like of shape (n_samples,), default=None
            Group of each row, required with ``grouping="external"`` only
            (e.g. a sensitive attribute).
        y_pred : array-like of shape (n_samples,), default=None
            The black box's predicted label of each row. None: the class with
            the highest score. Pass it when ``X`` holds scores whose argmax is
            not the prediction (e.g. calibrated scores).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights, counted as repetitions of the row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        reset_fitted(self)
        return self._partial_fit(X, y, group_by, y_pred, sample_weight)

    @validated
    @atomic
    def partial_fit(self, X, y=None, *, group_by=None, y_pred=None, sample_weight=None):
        """Update the posterior with another batch of rows (the conjugate update).

        The first call sets the classes, the grouping and its bins; later
        calls add counts. Any split of the data into batches gives the same
        posterior as one call to :meth:`fit` (with ``binning="quantile"``,
        the bin edges come from the first batch).

        Parameters
        ----------
        X, y, group_by, y_pred, sample_weight
            As in :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._partial_fit(X, y, group_by, y_pred, sample_weight)

    def _partial_fit(self, X, y, group_by, y_pred, sample_weight):
        first = not hasattr(self, "n_classes_")
        if is_dask_collection(X):
            rows = {"y": y, "group_by": group_by, "y_pred": y_pred, "sample_weight": sample_weight}
            return self._fit_dask(X, rows, first)
        return self._add_rows(X, y, group_by, y_pred, sample_weight, first=first)

    def _add_rows(self, X, y, group_by, y_pred, sample_weight, first):
        scores, pred, conf, group_by = self._rows(X, group_by, y_pred, reset=first)
        n, K = scores.shape
        y = check_labels(y, n, K, self._classes(K), missing_label=self.missing_label)
        weight = check_sample_weight(sample_weight, n)
        if first:
            self._check_params_vs_input(K)
            classes = np.arange(K) if self.classes is None else np.asarray(self.classes)
            grouping = make_grouping(
                self._grouping_kind_of(),
                class_labels=classes,
                n_bins=getattr(self, "n_bins", 10),
                strategy=self._binning(),
            ).fit(conf, group_by)
            # Nothing above changed the estimator; now it becomes fitted.
            self.n_classes_, self.classes_, self.grouping_ = K, classes, grouping
            self.n_samples_seen_ = 0
            self._init_stats(grouping.n_groups)
        elif self.grouping_.uses_group_by:
            self._grow_groups(group_by)
        # Blocks keep the per-row temporaries in cache and the extra memory bounded.
        for start in range(0, n, BLOCK):
            rows = slice(start, start + BLOCK)
            gb = None if group_by is None else group_by[rows]
            group = self.grouping_.transform(pred[rows], conf[rows], gb)
            self._accumulate(scores[rows], pred[rows], conf[rows], group, y[rows], weight[rows])
        self.n_samples_seen_ += n
        self._update_posterior()
        return self

    @validated
    @atomic
    def add_labels(
        self, X, y, *, group_by=None, y_pred=None, sample_weight=None, design_weight=None
    ):
        """Record the labels of rows already counted, unlabeled, by fit or partial_fit.

        Only the labeled-outcome counts change; the rows' group shares and
        the informative prior (which used every row) stay as they are. This is
        the update of an active-assessment loop, where the whole pool is
        fitted unlabeled first and labels arrive later.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the rows being labeled.
        y : array-like of shape (n_samples,)
            Their true labels (``missing_label`` rows are skipped).
        group_by, y_pred, sample_weight
            As in :meth:`fit`.
        design_weight : array-like of shape (n_samples,), default=None
            Where the rows were drawn for labeling with unequal
            probabilities: each row's probability under a uniform draw over
            the probability it was drawn with (``1 / (m q_i)`` for a draw
            with probability ``q_i`` among ``m`` candidates). The calibrated
            prior weighs each label's term of its calibration map's
            likelihood by it, which keeps its estimate valid under the
            design (see the user guide, *Active designs*); the confusion
            matrix and the cost weigh each labeled error's share of its
            predicted class's errors by it too. None: every row 1
            (random labeling, or a design that is uniform within each
            group). Other priors raise a ValueError when it is given.

        Returns
        -------
        self : object
        """
        pred, group, y, weight, conf = self._labeled_batch(
            X, y, group_by, y_pred, sample_weight, with_conf=True
        )
        labeled = y >= 0
        design = {}
        if design_weight is not None:
            design_weight = self._checked_design_weight(design_weight, len(y))
            design["design_weight"] = design_weight[labeled]
        self._count_labels(
            pred[labeled], group[labeled], y[labeled], weight[labeled], conf[labeled], **design
        )
        self._update_posterior()
        return self

    def _supports_design_weight(self):
        """Whether :meth:`add_labels` takes ``design_weight`` (the calibrated prior)."""
        return False

    def _checked_design_weight(self, design_weight, n):
        if not self._supports_design_weight():
            prior = getattr(self, "prior", None)
            raise ValueError(
                f"design_weight is taken by the calibrated prior only (prior='calibrated' "
                f"of BayesianAccuracy, BayesianConfusionMatrix or "
                f"BayesianMisclassificationCost); {type(self).__name__} with "
                f"prior={prior!r} got it."
            )
        return check_design_weight(design_weight, n)

    def _rows(self, X, group_by, y_pred, reset):
        """Validated scores, predicted class, its score and ``group_by`` of a batch."""
        if not reset:
            check_is_fitted(self)
        scores, pred, conf = validate_scores(self, X, y_pred=y_pred, reset=reset)
        return scores, pred, conf, self._checked_group_by(group_by, scores.shape[0])

    def _labeled_batch(self, X, y, group_by, y_pred, sample_weight, with_conf=False):
        """Predicted class, group, label code and weight of each row of a fitted batch.

        With ``with_conf``, also the score of the predicted class.
        """
        scores, pred, conf, group_by = self._rows(X, group_by, y_pred, reset=False)
        n = scores.shape[0]
        y = check_labels(
            y, n, self.n_classes_, self._classes(self.n_classes_), missing_label=self.missing_label
        )
        weight = check_sample_weight(sample_weight, n)
        out = pred, self.grouping_.transform(pred, conf, group_by), y, weight
        return (*out, conf) if with_conf else out

    def _classes(self, n_classes):
        return None if self.classes is None else check_classes(self.classes, n_classes)

    def _binning(self):
        """``binning``, or the deprecated ``strategy`` when it was given."""
        strategy = getattr(self, "strategy", "deprecated")
        if strategy != "deprecated":
            name = type(self).__name__
            warn_deprecated(f"{name}(strategy=...)", f"{name}(binning=...)")
            return strategy
        return getattr(self, "binning", "uniform")

    def _grouping_kind_of(self):
        return getattr(self, "grouping", self._grouping_kind)

    def _checked_group_by(self, group_by, n):
        """Validate ``group_by``: required with external groups, refused otherwise."""
        kind = self._grouping_kind_of()
        if kind in ("external", "external_bin"):
            if group_by is None:
                raise ValueError(
                    "group_by is required with grouping='external'; pass one group label per row."
                )
            return check_group_by(group_by, n)
        if group_by is not None:
            raise ValueError(
                f"group_by was passed, but the grouping is {kind!r}; set "
                "grouping='external' to group rows by these labels."
            )
        return None

    def _check_params_vs_input(self, n_classes):
        """Check parameters that depend on the data (hook for subclasses)."""

    def _grow_groups(self, group_by):
        old_n = self.grouping_.n_groups
        position = self.grouping_.extend(group_by)
        if self.grouping_.n_groups == old_n:
            return
        for name in self._group_arrays:
            old = getattr(self, name, None)
            if old is None:  # an array its version did not keep (started when first needed)
                continue
            new = np.zeros((self.grouping_.n_groups,) + old.shape[1:], dtype=old.dtype)
            new[position] = old
            setattr(self, name, new)

    # -------------------------------------------------------------- per row
    def apply(self, X, *, group_by=None, y_pred=None):
        """Index of each row's group, in the order of ``groups_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores.
        group_by : array-like of shape (n_samples,), default=None
            Group of each row (``grouping="external"`` only).
        y_pred : array-like of shape (n_samples,), default=None
            The black box's predicted labels; None: the argmax of ``X``.

        Returns
        -------
        group_index : ndarray of shape (n_samples,), dtype intp
        """
        _, pred, conf, group_by = self._rows(X, group_by, y_pred, reset=False)
        return np.asarray(self.grouping_.transform(pred, conf, group_by), dtype=np.intp)

    def predict(self, X, *, group_by=None, y_pred=None):
        """Posterior mean of the per-group metric in each row's group.

        The per-group metric is the quantity :meth:`groupwise_samples` draws
        and :func:`~skassess.metrics.compare_groups` compares: a group's
        accuracy (or rate), a bin's calibration gap, a predicted class's
        accuracy or expected cost.

        Parameters
        ----------
        X, group_by, y_pred
            As in :meth:`apply`.

        Returns
        -------
        metric : ndarray of shape (n_samples,)
        """
        group = self.apply(X, group_by=group_by, y_pred=y_pred)
        return self._group_metric_mean()[group]

    def predict_proba(self, X, *, group_by=None, y_pred=None):
        """Posterior predictive distribution of each row's outcome, were it labeled.

        The outcome is what a label reveals to the estimator: whether the rate's
        outcome happened (columns ``[P(no), P(yes)]``; for accuracy, whether
        the black box is right) for the Beta estimators, and the true class
        (columns in the order of ``classes_``) for the Dirichlet estimators.
        Under the calibrated prior of accuracy it is the calibration map's
        probability at the row's own score (in its group); otherwise every
        row of a group has the group's predictive.

        Parameters
        ----------
        X, group_by, y_pred
            As in :meth:`apply`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_outcomes)
        """
        _, pred, conf, group_by = self._rows(X, group_by, y_pred, reset=False)
        group = np.asarray(self.grouping_.transform(pred, conf, group_by), dtype=np.intp)
        rows = self._row_outcome_proba(pred, conf, group)
        return self._outcome_proba()[group] if rows is None else rows

    def _row_outcome_proba(self, pred, conf, group):
        """Each row's predictive where the model has one per row, else None (per group)."""
        return None

    def score(self, X, y, *, group_by=None, y_pred=None, sample_weight=None):
        """Weighted mean log posterior predictive probability of the labeled rows' outcomes.

        ``mean(log predict_proba(X)[i, outcome_i])`` over the labeled rows on
        which the metric is defined (for TPR, rows with ``y == 1``). Higher is
        better: :class:`~sklearn.model_selection.GridSearchCV` uses it to
        choose priors.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores.
        y : array-like of shape (n_samples,)
            True labels; ``missing_label`` rows are skipped.
        group_by, y_pred
            As in :meth:`apply`.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the mean.

        Returns
        -------
        score : float
        """
        pred, group, y, weight, conf = self._labeled_batch(
            X, y, group_by, y_pred, sample_weight, with_conf=True
        )
        group = np.asarray(group, dtype=np.intp)
        labeled = y >= 0
        eligible, outcome = self._observed_outcomes(pred[labeled], y[labeled])
        w = weight[labeled][eligible]
        if not eligible.any() or w.sum() <= 0:
            raise ValueError(
                "score needs at least one labeled row (y is not missing_label) with a "
                "positive weight on which the metric is defined."
            )
        rows = np.flatnonzero(labeled)[eligible]
        proba = self._row_outcome_proba(pred[rows], conf[rows], group[rows])
        if proba is None:
            proba = self._outcome_proba()[group[rows]]
        proba = proba[np.arange(rows.size), outcome[eligible]]
        return float(np.average(np.log(proba), weights=w))

    # --------------------------------------------------------------- summaries
    @property
    def groups_(self):
        """Label of each group (a pandas Index)."""
        check_is_fitted(self)
        return self.grouping_.index()

    @property
    def group_weights_(self):
        """Share ``p_g`` of each group among all rows seen (labeled or not)."""
        check_is_fitted(self)
        return self.n_rows_ / self.n_rows_.sum()

    def _rng(self, random_state):
        return check_random_state(self.random_state if random_state is None else random_state)

    @validated
    @validate_args(
        {
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def overall_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior draws of the overall metric.

        Parameters
        ----------
        n_draws : int, default=4000
            Number of Monte Carlo draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws; None uses the estimator's ``random_state`` (with
            the calibrated prior and ``n_draws=4000``, the model's own draws,
            those behind :meth:`summary`).

        Returns
        -------
        samples : ndarray of shape (n_draws,)
        """
        check_is_fitted(self)
        if random_state is None:
            own = self._own_overall_samples(n_draws)
            if own is not None:
                return own
        rng = self._rng(random_state)
        chunk = max(1, DRAW_CHUNK // max(self._draw_width(), 1))
        return np.concatenate(
            [
                self._overall_samples(min(chunk, n_draws - start), rng)
                for start in range(0, n_draws, chunk)
            ]
        )

    def _own_overall_samples(self, n_draws):
        """The overall metric in the fitted model's own ``n_draws`` draws, or None (hook)."""
        return None

    #: What the overall metric is called in messages.
    _overall_name = "accuracy"

    def _overall_prior_pull(self):
        """``(pull, sd)`` of the overall metric under a uniform prior, or None (no check)."""
        return None

    def _warn_prior_conflict(self):
        """Warn when the labels contradict an informative prior (hook for subclasses)."""

    def _draw_width(self):
        """Floats one posterior draw needs (the chunk size of :meth:`overall_samples`)."""
        return self.n_rows_.size

    @validate_args(
        {
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def overall_mean(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior mean of the overall metric (exact where it is linear in the rates)."""
        check_is_fitted(self)
        exact = self._overall_exact_mean()
        if exact is not None:
            return exact
        return float(self.overall_samples(n_draws, random_state).mean())

    @validate_args(
        {
            "level": [LEVEL],
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def overall_interval(self, level=0.95, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Equal-tailed credible interval ``(lower, upper)`` of the overall metric.

        Warns (SkassessWarning) when independent uniform priors over the
        groups move the overall accuracy's (or expected cost's) mean by more
        than half its posterior standard deviation from what the labels say (user guide,
        *The hierarchical prior*): the interval then mostly reflects the
        prior's 1/2.
        """
        check_is_fitted(self)
        pull = self._overall_prior_pull()
        if pull is not None and abs(pull[0]) > MAX_PRIOR_PULL * pull[1]:
            name = self._overall_name
            warn(
                f"The uniform prior moves the overall {name} by {pull[0]:+.3f}, "
                f"{abs(pull[0]) / max(pull[1], 1e-300):.1f} posterior standard deviations, "
                "from the "
                f"labels' values: independent priors over {self.n_rows_.size} groups pull "
                "every group toward the prior's mean, so this interval may not hold the "
                f"overall {name}. Use prior='calibrated' (the default) for overall quantities."
            )
        self._warn_prior_conflict()
        tail = (1.0 - level) / 2.0
        lower, upper = np.quantile(self.overall_samples(n_draws, random_state), [tail, 1.0 - tail])
        return float(lower), float(upper)

    @validated
    @validate_args(
        {
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def groupwise_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior draws of the per-group metric, shape ``(n_draws, n_groups)``.

        This is the quantity that :meth:`predict` averages and
        :func:`compare_groups` and :func:`rank_groups` compare.

        Raises
        ------
        DrawMemoryError
            If the draws would not fit in the memory available (checked first).
        """
        check_is_fitted(self)
        check_draw_memory(
            n_draws, self.n_rows_.size, f"{type(self).__name__}.groupwise_samples", "groups"
        )
        return self._groupwise_samples(n_draws, self._rng(random_state))

    def _overall_exact_mean(self):
        return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True
        return tags

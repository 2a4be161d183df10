"""Plumbing shared by every assessment estimator: input checks, grouping, partial_fit."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    BLOCK,
    check_classes,
    check_groups,
    check_labels,
    check_level,
    check_sample_weight,
    check_scores,
    predicted_classes,
    refuse_top_label_scores,
)
from ._grouping import make_grouping

DEFAULT_N_DRAWS = 4000


class _BaseAssessor(BaseEstimator):
    """Fit / partial_fit around sufficient statistics accumulated per group.

    Subclasses set ``_group_arrays`` (names of learned arrays whose first axis
    is the group), and implement ``_grouping_kind``, ``_init_stats``,
    ``_accumulate`` and ``_update_posterior``.
    """

    _parameter_constraints = {
        "prior": [StrOptions({"uniform", "informative"}), "array-like"],
        "prior_strength": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "random_state": ["random_state"],
    }
    _group_arrays = ()
    #: True for estimators that need every class probability, not only the top one.
    _needs_full_probabilities = False

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, *, groups=None, sample_weight=None):
        """Fit the posterior from scratch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores: class probabilities per row (rows sum to 1), or
            P(class 1) for a binary problem.
        y : array-like of shape (n_samples,), default=None
            True labels; ``-1`` marks an unlabeled row. None: no row is
            labeled, the posterior is the prior.
        groups : array-like of shape (n_samples,), default=None
            Group of each row, required with ``grouping="external"`` only.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights, counted as repetitions of the row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, attr)
        return self.partial_fit(X, y, groups=groups, sample_weight=sample_weight)

    def partial_fit(self, X, y=None, *, groups=None, sample_weight=None):
        """Update the posterior with another batch of rows (the conjugate update).

        The first call sets the classes, the grouping and its bins; later
        calls add counts. Any split of the data into batches gives the same
        posterior as one call to :meth:`fit` (for ``binning="equal_mass"``,
        the bin edges come from the first batch).

        Parameters
        ----------
        X, y, groups, sample_weight
            As in :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first = not hasattr(self, "n_classes_")
        if first:
            self._validate_params()
        predicted = predicted_classes(X)
        scores = self._validate_scores(X, reset=first)
        n = scores.shape[0]
        y = check_labels(y, n, scores.shape[1], self._checked_classes(scores.shape[1]))
        weight = check_sample_weight(sample_weight, n)
        groups = self._checked_groups(groups, n)
        if first:
            self.n_classes_ = scores.shape[1]
            self.classes_ = (
                np.arange(self.n_classes_) if self.classes is None else np.asarray(self.classes)
            )
            self._check_params(scores)
            self.grouping_ = make_grouping(
                self._grouping_kind(),
                n_classes=self.n_classes_,
                classes=self.classes_,
                n_bins=getattr(self, "n_bins", 10),
                binning=getattr(self, "binning", "equal_width"),
            ).fit(scores, groups)
            self._init_stats(self.grouping_.n_groups)
        elif self.grouping_.uses_groups:
            self._grow_groups(groups)
        # Blocks keep the per-row temporaries in cache and the extra memory bounded.
        for start in range(0, n, BLOCK):
            rows = slice(start, start + BLOCK)
            block = scores[rows]
            pred, conf = _top1(block, None if predicted is None else predicted[rows])
            group = self.grouping_.transform(
                block, None if groups is None else groups[rows], pred=pred, confidence=conf
            )
            self._accumulate(block, pred, conf, group, y[rows], weight[rows])
        self.n_rows_seen_ = getattr(self, "n_rows_seen_", 0) + n
        self._update_posterior()
        return self

    def _add_labels(self, pred, group, y):
        """Record labels of rows the estimator has already counted (active assessment).

        ``pred`` and ``group`` are the rows' predicted classes and groups, as
        :meth:`_rows` returns them; only the labeled-outcome counts change.
        """
        self._count_labels(pred, group, y, np.ones(len(y)))
        self._update_posterior()

    def _validate_scores(self, X, reset):
        if self._needs_full_probabilities:
            refuse_top_label_scores(X, self)
        if getattr(X, "ndim", 2) == 2 and not isinstance(X, list | tuple):
            validate_data(self, X, reset=reset, skip_check_array=True)
        elif reset:
            self.n_features_in_ = 1
        return check_scores(X, n_classes=None if reset else self.n_classes_)

    def _checked_classes(self, n_classes):
        return None if self.classes is None else check_classes(self.classes, n_classes)

    def _checked_groups(self, groups, n):
        """Validate ``groups`` once: required with external groups, refused otherwise."""
        kind = self._grouping_kind()
        if kind == "external":
            return check_groups(groups, n)
        if groups is not None:
            raise ValueError(
                f"groups were passed, but the grouping is {kind!r}; set "
                "grouping='external' to group rows by these labels."
            )
        return None

    def _check_params(self, scores):
        """Check parameters that depend on the data (hook for subclasses)."""

    def _grouping_kind(self):
        return getattr(self, "grouping", "predicted_class")

    def _grow_groups(self, groups):
        old_n = self.grouping_.n_groups
        position = self.grouping_.extend(groups)
        if self.grouping_.n_groups == old_n:
            return
        for name in self._group_arrays:
            old = getattr(self, name)
            new = np.zeros((self.grouping_.n_groups,) + old.shape[1:], dtype=old.dtype)
            new[position] = old
            setattr(self, name, new)

    def _rows(self, X, groups):
        """Validate scores at predict time; return (scores, predicted class, group)."""
        check_is_fitted(self)
        predicted = predicted_classes(X)
        scores = self._validate_scores(X, reset=False)
        groups = self._checked_groups(groups, scores.shape[0])
        pred, conf = _top1(scores, predicted)
        return scores, pred, self.grouping_.transform(scores, groups, pred=pred, confidence=conf)

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

    def overall_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior draws of the overall metric.

        Parameters
        ----------
        n_draws : int, default=4000
            Number of Monte Carlo draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws; None uses the estimator's ``random_state``.

        Returns
        -------
        samples : ndarray of shape (n_draws,)
        """
        check_is_fitted(self)
        _check_n_draws(n_draws)
        return self._overall_samples(n_draws, self._rng(random_state))

    def overall_mean(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior mean of the overall metric (exact where it is linear in the rates)."""
        check_is_fitted(self)
        exact = self._overall_exact_mean()
        if exact is not None:
            return exact
        return float(self.overall_samples(n_draws, random_state).mean())

    def overall_interval(self, level=0.95, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Equal-tailed credible interval ``(lower, upper)`` of the overall metric."""
        tail = (1.0 - check_level(level)) / 2.0
        lower, upper = np.quantile(
            self.overall_samples(n_draws, random_state), [tail, 1.0 - tail]
        )
        return float(lower), float(upper)

    def groupwise_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior draws of the per-group quantity, shape ``(n_draws, n_groups)``.

        This is the quantity that :func:`compare_groups` and :func:`rank_groups`
        compare.
        """
        check_is_fitted(self)
        _check_n_draws(n_draws)
        return self._groupwise_samples(n_draws, self._rng(random_state))

    def _overall_exact_mean(self):
        return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True
        return tags


def _top1(scores, predicted=None):
    """Predicted class (the argmax unless given) and its score, per row."""
    pred = scores.argmax(axis=1) if predicted is None else predicted
    return pred, np.take_along_axis(scores, pred[:, None], axis=1)[:, 0]


def _check_n_draws(n_draws):
    if not isinstance(n_draws, Integral) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer; got {n_draws!r}.")

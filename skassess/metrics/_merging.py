"""Fits of one estimator on disjoint rows, merged: their sufficient statistics add up.

Every assessment estimator keeps sums over rows (counts, expected counts,
the calibrated model's per-bin sums) and derives its posterior from them, so
fitting two sets of rows apart and adding the sums gives the estimator that
one fit on all the rows gives, to floating-point summation order. A fit on
many machines is a fit per partition (:meth:`MergeStats.empty_like` then
``partial_fit``) merged on the way back (:meth:`MergeStats.merge`).
"""

import copy

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

#: Parameters that do not change the sums (only the draws made from them).
_DRAW_PARAMS = ("random_state",)


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    try:
        return bool(a == b)
    except ValueError:  # array-likes whose == is elementwise
        return np.array_equal(np.asarray(a), np.asarray(b))


def check_mergeable(est, other, draw_params):
    """Refuse to merge ``other`` into ``est`` unless both are fitted estimators of
    the same class and parameters (``draw_params`` excepted)."""
    check_is_fitted(est)
    if type(other) is not type(est):
        raise TypeError(f"merge needs another {type(est).__name__}; got {type(other).__name__}.")
    check_is_fitted(other)
    mine, theirs = est.get_params(deep=False), other.get_params(deep=False)
    for name in mine:
        if name not in draw_params and not _same(mine[name], theirs[name]):
            raise ValueError(
                f"merge needs the same parameters; {name}={mine[name]!r} here and "
                f"{theirs[name]!r} in the other estimator."
            )


class MergeStats:
    """Mixin of the assessment estimators: :meth:`merge` and :meth:`empty_like`.

    The estimator lists its per-group sums in ``_group_arrays`` (and, where
    kept apart, ``_score_arrays`` and ``_extra_stat_arrays``); each is an
    array whose first axis is the group.
    """

    _extra_stat_arrays = ()

    def _stat_arrays(self):
        names = (*self._group_arrays, *getattr(self, "_score_arrays", ()), *self._extra_stat_arrays)
        return list(dict.fromkeys(names))

    # hooks of the estimator
    def _check_params_vs_input(self, n_classes):
        """Check parameters that depend on the data."""

    def _init_stats(self, n_groups):
        """Zero sums for ``n_groups`` groups."""
        raise NotImplementedError

    def _update_posterior(self):
        """The posterior from the sums."""
        raise NotImplementedError

    def _start_stat_arrays(self):
        """Start the sums a fit of an older version lacks (from its counts)."""

    def _fit_dask(self, X, rows, first):
        """Fit (``first``) or update from Dask collections, partition by partition."""
        from ..utils._dask import fit_partitions

        quantile = self._binning() == "quantile"
        if first and quantile:
            raise ValueError(
                "binning='quantile' takes its bin edges from the rows of one fit; over Dask "
                "partitions they would come from the first partition alone, and the fit "
                "would differ from a fit on all rows. Use binning='uniform', or fit a "
                "sample of the rows in memory first (its edges are then shared: "
                "est.fit(sample_X, sample_y); est.partial_fit(X, y))."
            )
        merged = fit_partitions(self, X, rows, template=not first)
        if merged is None:
            raise ValueError("X, a Dask collection, holds no rows.")
        if first:
            vars(self).update(vars(merged))
            return self
        return self.merge(merged)

    def empty_like(self):
        """This fitted estimator's frame with no rows: classes, groups and bins kept, sums zero.

        What a partition fits (``empty_like().partial_fit(rows)``) so that the
        fits of all partitions can be merged: quantile bin edges and the groups
        known so far are shared, the counts are not.

        Returns
        -------
        estimator : object
            A new estimator of the same parameters, fitted on no row.
        """
        check_is_fitted(self)
        new = clone(self)
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self, name):
                setattr(new, name, getattr(self, name))
        new._check_params_vs_input(self.n_classes_)
        new.n_classes_, new.classes_ = self.n_classes_, self.classes_
        new.grouping_ = copy.deepcopy(self.grouping_)
        new.n_samples_seen_ = 0
        new._init_stats(new.grouping_.n_groups)
        new._update_posterior()
        return new

    def merge(self, other):
        """Add the rows of ``other``, an estimator of the same parameters fitted on other rows.

        The result is the estimator that one fit on both sets of rows gives
        (to floating-point summation order): its counts are the sums of the
        two. Groups of ``grouping="external"`` are matched by label, and a
        group only ``other`` saw is added. ``random_state`` may differ (it
        only seeds draws); this estimator's is kept.

        Parameters
        ----------
        other : estimator
            Fitted, of the same class and parameters, with the same classes
            and, for score bins, the same bin edges (``empty_like`` shares them).

        Returns
        -------
        self : object
            This estimator, with the rows of ``other`` added.
        """
        check_mergeable(self, other, _DRAW_PARAMS)
        if not np.array_equal(self.classes_, other.classes_):
            raise ValueError(
                f"merge needs the same classes; {list(self.classes_)!r} here and "
                f"{list(other.classes_)!r} in the other estimator."
            )
        edges, other_edges = (getattr(g, "edges", None) for g in (self.grouping_, other.grouping_))
        if edges is not None and not np.array_equal(edges, other_edges):
            raise ValueError(
                "merge needs the same score bins; the two estimators' quantile bin edges "
                "differ (fit each part from empty_like() of one estimator)."
            )
        other = copy.copy(other)  # sums it starts are its own, not shared
        for est in (self, other):
            est._start_stat_arrays()
        if self.grouping_.uses_group_by:
            self._grow_groups(other.grouping_.labels)
            position = self.grouping_.index().get_indexer(other.grouping_.index())
        else:
            position = np.arange(self.grouping_.n_groups)
        for name in self._stat_arrays():
            np.add.at(getattr(self, name), position, getattr(other, name))
        self.n_samples_seen_ += other.n_samples_seen_
        self._update_posterior()
        return self

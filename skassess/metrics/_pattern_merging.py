"""Fits of a model comparison on disjoint items, merged: the per-pattern counts add up.

:class:`~skassess.metrics.BayesianModelComparison` keeps, per agreement
pattern, the labeled items' outcome counts, the unlabeled and all items, and
the sum of the items' prior outcome probabilities; its prior and posterior
derive from them. Two fits on disjoint items merge into the fit on both by
adding those sums over the union of their patterns, so a pool held in
partitions is fitted partition by partition where each lives.
"""

import copy

import numpy as np

from ..utils._dask import (
    aligned_blocks,
    check_signed_labels,
    import_dask,
    is_dask_collection,
    merge_pair,
    merge_tree,
)
from ..utils._dask import values as block_values
from ..utils._validation import checked_codes
from ._merging import check_mergeable

#: Per-pattern sums (first axis: the pattern).
PATTERN_SUMS = ("counts_", "_q_sum", "n_unlabeled_", "_n_items")
#: Parameters that do not change the sums.
DRAW_PARAMS = ("random_state", "n_draws", "rope")


def _fit_partition(estimator, index, X, y):
    X = block_values(X)
    if X.shape[0] == 0:
        return None
    y = None if y is None else block_values(y)
    if y is not None and y.shape[0] != X.shape[0]:
        raise ValueError(
            f"partition {index}: y has {y.shape[0]} items and X {X.shape[0]}; partition them alike."
        )
    est = copy.deepcopy(estimator)
    try:
        with checked_codes():  # the {-1, +1} check ran on the whole collection
            est.fit(X, y)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc
    est.pattern_ = None  # the items stay where they are
    return est


class PatternMerging:
    """Mixin: :meth:`merge`, and fits on Dask collections partition by partition."""

    def merge(self, other):
        """Add the items of ``other``, a comparison of the same models fitted on other items.

        The result is the fit on both sets of items (to floating-point
        summation order): the per-pattern counts add up over the union of the
        two fits' patterns, kept in sorted order as :meth:`fit` keeps them.
        ``pattern_`` is the two fits' concatenated (None if either is None).

        Parameters
        ----------
        other : BayesianModelComparison
            Fitted, with the same parameters (``random_state``, ``n_draws``
            and ``rope`` may differ: this estimator's are kept), models and
            classes.

        Returns
        -------
        self : BayesianModelComparison
        """
        check_mergeable(self, other, DRAW_PARAMS)
        for name in ("n_models_", "n_classes_"):
            if getattr(self, name) != getattr(other, name):
                raise ValueError(
                    f"merge needs the same {name}; {getattr(self, name)} here and "
                    f"{getattr(other, name)} in the other estimator."
                )
        tables = [self._key_table, other._key_table]
        keys, inverse = np.unique(np.vstack(tables), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        at = [inverse[: len(tables[0])], inverse[len(tables[0]) :]]
        for name in PATTERN_SUMS:
            parts = [getattr(self, name), getattr(other, name)]
            total = np.zeros((len(keys), *parts[0].shape[1:]), dtype=parts[0].dtype)
            for where, part in zip(at, parts, strict=True):
                np.add.at(total, where, part)
            setattr(self, name, total)
        patterns = [self.pattern_, other.pattern_]
        self.pattern_ = (
            None
            if any(p is None for p in patterns)
            else np.concatenate([at[0][patterns[0]], at[1][patterns[1]]])
        )
        self._key_table = keys
        self.patterns_ = keys[:, : self.n_models_]
        self.n_correct_labeled_ = self.n_correct_labeled_ + other.n_correct_labeled_
        self.n_samples_ += other.n_samples_
        self._set_prior()
        return self

    def _set_prior(self):  # pragma: no cover - the estimator's
        raise NotImplementedError

    def _fit_dask(self, X, y):
        """The fit of every partition of ``X`` (and ``y``) where it lives, merged."""
        dask = import_dask()
        if y is not None and not is_dask_collection(y):
            raise TypeError(
                f"y must be a Dask collection partitioned as X when X is one; got "
                f"{type(y).__name__}."
            )
        blocks = aligned_blocks(X, {"y": y})
        n_classes = X.shape[2] if X.ndim == 3 else 2
        check_signed_labels(y, n_classes, self.classes, self.missing_label)
        fit_one = dask.delayed(_fit_partition, pure=True)
        parts = [fit_one(self, i, x, rows["y"]) for i, (x, rows) in enumerate(blocks)]
        merged = merge_tree(parts, dask.delayed(merge_pair, pure=True))
        if merged is None:
            raise ValueError("X, a Dask collection, holds no items.")
        return merged

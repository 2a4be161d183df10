"""What BayesianGroupMetrics needs from its rows, as sums that add over partitions.

Apart from its labeled rows, a fit of the calibrated, beta-binomial and
frequentist methods reads the rows only through per-group sums: the rows and
the unlabeled rows predicted 0 and 1 per group, each metric's label-free
terms per group, the range of each metric's slope in ``y`` per predicted
class, and the calibrated model (:class:`~skassess.metrics.BayesianAccuracy`)
fitted on the unlabeled rows. :class:`GroupTotals` holds them for one block of
rows; :meth:`GroupTotals.merge` adds another block's, so the totals of a file
are those of its partitions merged, whatever machine summed each.
"""

import copy

import numpy as np
import pandas as pd

from ..metrics import BayesianAccuracy
from ..utils._groups import check_group_by
from ..utils._validation import (
    as_scalar,
    check_classes,
    check_labels,
    check_scores,
    checked_codes,
)
from ._group_calibrated import metric_coefficients

__all__ = [
    "GroupTotals",
    "calibrated_models",
    "checked_partition",
    "checked_rows",
    "fit_partitions_totals",
]


GROUP_BY_REQUIRED = (
    "group_by is required: the group of each row, e.g. fit(X, y, group_by=data['sex']) "
    "(sensitive_features= is an alias)."
)


def calibrated_models(metrics):
    """The calibrated models the metrics need: ``"accuracy"`` (of being right),
    and ``"tpr"`` (of the class, behind every other metric)."""
    models = []
    if any(isinstance(m, str) and m == "accuracy" for m in metrics.values()):
        models.append("accuracy")
    if any(not (isinstance(m, str) and m == "accuracy") for m in metrics.values()):
        models.append("tpr")
    return models


def calibrated_model(metric, random_state=None):
    """The calibrated model of ``metric`` over external groups, classes 0 and 1."""
    return BayesianAccuracy(
        metric=metric, grouping="external", classes=[0, 1], random_state=random_state
    )


def _scores(s):
    return np.column_stack([1.0 - s, s])


class GroupTotals:
    """Per-group sums of a block of rows, and its labeled rows.

    Attributes
    ----------
    labels : list
        The groups seen, in order of first appearance.
    n_rows, unlabeled : ndarray of shape (n_groups,) and (2, n_groups)
        Rows per group, and unlabeled rows predicted 0 and 1 per group.
    constants : dict
        Per metric, shape (2, n_groups): the sums of its numerator's and
        denominator's terms at ``y = 0``.
    slopes : dict
        Per metric, shape (2, 2, 2): for its numerator and denominator, per
        predicted class, the smallest and largest slope in ``y`` (NaN where no
        row is predicted that class).
    labeled : tuple of ndarray
        The labeled rows' P(y = 1), label (0 / 1) and group.
    fits : dict
        Per calibrated model (:func:`calibrated_models`), the model fitted on
        the unlabeled rows (None where there are none).
    """

    def __init__(self, labels, n_rows, unlabeled, constants, slopes, labeled, fits):
        self.labels = labels
        self.n_rows = n_rows
        self.unlabeled = unlabeled
        self.constants = constants
        self.slopes = slopes
        self.labeled = labeled
        self.fits = fits

    @classmethod
    def of_rows(cls, metrics, s, y, groups, *, threshold, models):
        """The totals of rows: P(y = 1) ``s``, labels ``y`` coded 0 / 1 (-1:
        unlabeled) and raw ``groups``, with the metrics' coefficients
        (``metric_coefficients``) at the predictions at ``threshold``."""
        labels = pd.unique(pd.Series(groups, dtype=object)).tolist()
        codes = pd.Index(labels, dtype=object).get_indexer(pd.Series(groups, dtype=object))
        G = len(labels)
        pred = (s > threshold).astype(np.intp)
        lab = y >= 0

        def per_group(weights):
            return np.bincount(codes, weights=weights, minlength=G)

        constants, slopes = {}, {}
        for name, metric in metrics.items():
            a_n, b_n, a_d, b_d = metric_coefficients(name, metric, pred)
            constants[name] = np.stack([per_group(a_n), per_group(a_d)])
            ranges = np.full((2, 2, 2), np.nan)
            for i, b in enumerate((b_n, b_d)):
                for k in (0, 1):
                    values = b[pred == k]
                    if values.size:
                        ranges[i, k] = values.min(), values.max()
            slopes[name] = ranges
        fits = {}
        unl = ~lab
        for metric in models:
            fits[metric] = (
                calibrated_model(metric).fit(
                    _scores(s[unl]), y[unl], group_by=groups[unl], y_pred=pred[unl]
                )
                if unl.any()
                else None
            )
        return cls(
            labels,
            np.bincount(codes, minlength=G).astype(np.float64),
            np.stack([per_group((unl & (pred == k)).astype(np.float64)) for k in (0, 1)]),
            constants,
            slopes,
            (s[lab], y[lab], groups[lab]),
            fits,
        )

    def merge(self, other):
        """Add the rows of ``other`` (the totals of other rows of the same metrics)."""
        if other is None:
            return self
        known = set(self.labels)
        labels = self.labels + [g for g in other.labels if g not in known]
        to = pd.Index(labels, dtype=object).get_indexer(pd.Index(other.labels, dtype=object))

        def added(mine, theirs):
            out = np.zeros((*mine.shape[:-1], len(labels)))
            out[..., : mine.shape[-1]] = mine
            out[..., to] += theirs
            return out

        fits = {}
        for metric, fit in self.fits.items():
            theirs = other.fits[metric]
            fits[metric] = (
                theirs
                if fit is None
                else fit
                if theirs is None
                else copy.deepcopy(fit).merge(theirs)
            )
        return GroupTotals(
            labels,
            added(self.n_rows, other.n_rows),
            added(self.unlabeled, other.unlabeled),
            {k: added(v, other.constants[k]) for k, v in self.constants.items()},
            {
                k: np.stack(
                    [
                        np.fmin(v[..., 0], other.slopes[k][..., 0]),
                        np.fmax(v[..., 1], other.slopes[k][..., 1]),
                    ],
                    axis=-1,
                )
                for k, v in self.slopes.items()
            },
            tuple(np.concatenate([a, b]) for a, b in zip(self.labeled, other.labeled, strict=True)),
            fits,
        )

    def in_order(self, index):
        """The per-group arrays in the order of ``index`` (every group seen)."""
        at = pd.Index(self.labels, dtype=object).get_indexer(index)
        return (
            self.n_rows[at],
            self.unlabeled[:, at],
            {k: v[:, at] for k, v in self.constants.items()},
        )

    def model(self, metric, index, free_codes, *, threshold, random_state):
        """The calibrated model of ``metric`` on every row, with the labels of the
        groups ``free_codes`` (positions in ``index``) left out.

        Its groups are those of ``index``, in that order, whatever order the
        partitions met them in: the unlabeled rows' fit and the labeled rows'
        fit are merged into a frame of every group with no row.
        """
        s, y, groups = self.labeled
        frame_rows = np.array([as_scalar(v) for v in index], dtype=object)
        frame = (
            calibrated_model(metric)
            .fit(_scores(np.full(len(index), 0.5)), np.full(len(index), -1), group_by=frame_rows)
            .empty_like()
        )
        if self.fits[metric] is not None:
            frame.merge(self.fits[metric])
        if len(s):
            codes = index.get_indexer(pd.Index(groups, dtype=object))
            y_fit = np.where(np.isin(codes, list(free_codes)), -1, y) if len(free_codes) else y
            pred = (s > threshold).astype(np.intp)
            frame.merge(
                calibrated_model(metric).fit(_scores(s), y_fit, group_by=groups, y_pred=pred)
            )
        return frame.set_params(random_state=random_state)


def checked_rows(X, y, group_by, name, classes, missing_label):
    """P(y = 1), labels coded 0 / 1 (-1: unlabeled) and the groups of rows."""
    scores = check_scores(X)
    if scores.shape[1] != 2:
        raise ValueError(
            f"X must hold binary scores P(y = 1) (1-D or two columns); got "
            f"{scores.shape[1]} columns."
        )
    s = scores[:, 1]
    classes = None if classes is None else check_classes(classes, 2)
    y = check_labels(y, len(s), 2, classes, missing_label=missing_label)
    if group_by is None:
        raise ValueError(GROUP_BY_REQUIRED)
    return s, y, check_group_by(group_by, len(s), name=name)


def checked_partition(estimator, index, name, X, y, group_by):
    """One partition's :func:`checked_rows`; errors name the partition."""
    from ..utils._dask import values

    X, y, group_by = values(X), values(y), values(group_by)
    for arg, value in (("y", y), (name, group_by)):
        if value.shape[0] != X.shape[0]:
            raise ValueError(
                f"partition {index}: {arg} has {value.shape[0]} rows and X {X.shape[0]}; "
                "partition them alike."
            )
    try:
        with checked_codes():  # the {-1, +1} check ran on the whole collection
            return checked_rows(X, y, group_by, name, estimator.classes, estimator.missing_label)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc


def _partition_totals(estimator, index, metrics, name, X, y, group_by):
    """The totals of one partition (None for an empty one); errors name it."""
    from ..utils._dask import values

    if values(X).shape[0] == 0:
        return None
    s, y, groups = checked_partition(estimator, index, name, X, y, group_by)
    try:
        return GroupTotals.of_rows(
            metrics,
            s,
            y,
            groups,
            threshold=estimator.threshold,
            models=calibrated_models(metrics),
        )
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc


def fit_partitions_totals(estimator, X, y, group_by, metrics, name):
    """The totals of Dask collections, summed partition by partition where each
    lives and merged in a tree: only the per-group sums and the labeled rows
    travel."""
    from ..utils._dask import aligned_blocks, import_dask, merge_pair, merge_tree

    if group_by is None:
        raise ValueError(GROUP_BY_REQUIRED)
    dask = import_dask()
    blocks = aligned_blocks(X, {"y": y, name: group_by})
    part = dask.delayed(_partition_totals, pure=True)
    parts = [
        part(estimator, i, metrics, name, x, rows["y"], rows[name])
        for i, (x, rows) in enumerate(blocks)
    ]
    totals = merge_tree(parts, dask.delayed(merge_pair, pure=True))
    if totals is None:
        raise ValueError("X, a Dask collection, holds no rows.")
    return totals

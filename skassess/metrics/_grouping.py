"""How rows map to groups: predicted class, score bins, class x bin, external labels,
external labels x bin.

A grouping is fitted once, on the first batch an estimator sees, and then maps
any batch (its predicted classes, top-1 confidences and, for external groups,
per-row labels) to group indices ``0..n_groups-1``. Score-bin groupings bin
the top-1 confidence: ``strategy="uniform"`` (equal width) or ``"quantile"``
(equal numbers of rows), as in :func:`sklearn.calibration.calibration_curve`.
"""

import numpy as np
import pandas as pd

from ..exceptions import SkassessWarning
from ..utils._groups import GroupEncoder
from ..utils._warnings import warn

GROUPINGS = ("predicted_class", "score_bins", "class_bin", "external", "external_bin")
STRATEGIES = ("uniform", "quantile")


def make_grouping(kind, *, class_labels, n_bins=10, strategy="uniform"):
    """Return an unfitted grouping of the given ``kind`` (one of ``GROUPINGS``)."""
    if kind == "predicted_class":
        return PredictedClassGrouping(class_labels)
    if kind == "score_bins":
        return ScoreBinGrouping(n_bins, strategy)
    if kind == "class_bin":
        return ClassBinGrouping(class_labels, n_bins, strategy)
    if kind == "external_bin":
        return ExternalBinGrouping(n_bins, strategy)
    return ExternalGrouping()


class PredictedClassGrouping:
    """One group per class; a row belongs to its predicted class."""

    name = "predicted_class"
    uses_group_by = False

    def __init__(self, class_labels):
        self.labels = np.asarray(class_labels)

    @property
    def n_groups(self):
        return len(self.labels)

    def fit(self, confidence, group_by=None):
        return self

    def transform(self, pred, confidence, group_by=None):
        return pred

    def index(self):
        return pd.Index(self.labels, name=self.name)


def _quantile_edges(confidence, n_bins):
    edges = np.quantile(confidence, np.linspace(0.0, 1.0, n_bins + 1))
    edges[0], edges[-1] = 0.0, 1.0
    unique = np.unique(edges)
    if len(unique) < len(edges):
        warn(
            f"Quantile binning found tied confidences: {len(unique) - 1} bins instead "
            f"of n_bins={n_bins}.",
            SkassessWarning,
        )
    return unique


class ScoreBinGrouping:
    """Bins of the top-1 confidence; bin ``b`` holds ``edges[b] <= c < edges[b+1]``.

    The last bin also holds ``c = 1``. Quantile edges come from the
    confidences of the first batch.
    """

    name = "bin"
    uses_group_by = False

    def __init__(self, n_bins, strategy):
        self.n_bins = n_bins
        self.strategy = strategy
        self.edges = None

    @property
    def n_groups(self):
        return len(self.edges) - 1

    @property
    def n_bins_fitted(self):
        return len(self.edges) - 1

    def fit(self, confidence, group_by=None):
        if self.strategy == "uniform":
            self.edges = np.linspace(0.0, 1.0, self.n_bins + 1)
        else:
            self.edges = _quantile_edges(confidence, self.n_bins)
        return self

    def bins(self, confidence):
        c = confidence
        if self.strategy != "uniform":
            return np.searchsorted(self.edges[1:-1], c, side="right")
        # Equal width: arithmetic, then a correction where floating point puts c on
        # the wrong side of an edge; the same bins as searchsorted, twice as fast.
        last = len(self.edges) - 2
        b = np.minimum((c * (last + 1)).astype(np.intp), last)
        b -= c < self.edges[b]
        b += c >= self.edges[b + 1]
        return np.minimum(b, last)

    def transform(self, pred, confidence, group_by=None):
        return self.bins(confidence)

    def index(self):
        return pd.RangeIndex(self.n_groups, name=self.name)


class ClassBinGrouping(ScoreBinGrouping):
    """Predicted class x confidence bin; group ``k * n_bins + b``."""

    name = "class_bin"

    def __init__(self, class_labels, n_bins, strategy):
        super().__init__(n_bins, strategy)
        self.labels = np.asarray(class_labels)

    @property
    def n_groups(self):
        return len(self.labels) * self.n_bins_fitted

    def transform(self, pred, confidence, group_by=None):
        return pred * self.n_bins_fitted + self.bins(confidence)

    def index(self):
        return pd.MultiIndex.from_product(
            [self.labels, range(self.n_bins_fitted)], names=["predicted_class", "bin"]
        )


class ExternalGrouping:
    """Groups given per row (``group_by``, e.g. a sensitive attribute).

    A later ``partial_fit`` may bring new groups: :meth:`extend` returns where
    the old groups moved so that accumulated statistics can follow them.
    """

    name = "group"
    uses_group_by = True

    def __init__(self):
        self.encoder = GroupEncoder(self.name)

    @property
    def n_groups(self):
        return self.encoder.n_groups

    def fit(self, confidence, group_by=None):
        self.encoder.fit(group_by)
        return self

    def extend(self, group_by):
        """Add unseen groups; return the new position of each old group."""
        return self.encoder.extend(group_by)

    def transform(self, pred, confidence, group_by=None):
        return self.encoder.transform(group_by)

    @property
    def labels(self):
        return self.encoder.categories_.to_numpy()

    def index(self):
        return self.encoder.categories_


class ExternalBinGrouping(ScoreBinGrouping):
    """Groups given per row x confidence bin; cell ``g * n_bins + b``.

    As :class:`ExternalGrouping`, a later ``partial_fit`` may bring new
    groups; :meth:`extend` then returns where each old cell moved.
    """

    name = "group_bin"
    uses_group_by = True

    def __init__(self, n_bins, strategy):
        super().__init__(n_bins, strategy)
        self.encoder = GroupEncoder("group")

    @property
    def n_groups(self):
        return self.encoder.n_groups * self.n_bins_fitted

    def fit(self, confidence, group_by=None):
        super().fit(confidence)
        self.encoder.fit(group_by)
        return self

    def extend(self, group_by):
        """Add unseen groups; return the new position of each old cell."""
        moved = self.encoder.extend(group_by)
        n_bins = self.n_bins_fitted
        return (moved[:, None] * n_bins + np.arange(n_bins)).ravel()

    def transform(self, pred, confidence, group_by=None):
        return self.encoder.transform(group_by) * self.n_bins_fitted + self.bins(confidence)

    @property
    def labels(self):
        return self.encoder.categories_.to_numpy()

    def index(self):
        return pd.MultiIndex.from_product(
            [self.encoder.categories_, range(self.n_bins_fitted)], names=["group", "bin"]
        )

"""How rows map to groups: predicted class, score bins, class x bin, external labels.

A grouping is fitted once, on the first batch an estimator sees, and then maps
any batch of scores (and, for external groups, per-row labels) to group
indices ``0..n_groups-1``. Score-bin groupings bin the top-1 confidence.
"""

import warnings

import numpy as np
import pandas as pd

from .._validation import _py
from ..exceptions import SkassessWarning

GROUPINGS = ("predicted_class", "score_bins", "class_bin", "external")
BINNINGS = ("equal_width", "equal_mass")


def make_grouping(kind, *, n_classes, classes=None, n_bins=10, binning="equal_width"):
    """Return an unfitted grouping of the given ``kind`` (one of ``GROUPINGS``)."""
    class_labels = np.arange(n_classes) if classes is None else np.asarray(classes)
    if kind == "predicted_class":
        return PredictedClassGrouping(class_labels)
    if kind == "score_bins":
        return ScoreBinGrouping(n_bins, binning)
    if kind == "class_bin":
        return ClassBinGrouping(class_labels, n_bins, binning)
    if kind == "external":
        return ExternalGrouping()
    raise ValueError(f"grouping must be one of {GROUPINGS}; got {kind!r}.")


class PredictedClassGrouping:
    """One group per class; a row belongs to the class with the highest score."""

    name = "predicted_class"
    uses_groups = False

    def __init__(self, class_labels):
        self.labels = np.asarray(class_labels)

    @property
    def n_groups(self):
        return len(self.labels)

    def fit(self, scores, groups=None):
        return self

    def transform(self, scores, groups=None, pred=None, confidence=None):
        return scores.argmax(axis=1) if pred is None else pred

    def index(self):
        return pd.Index(self.labels, name=self.name)


def _equal_mass_edges(confidence, n_bins):
    edges = np.quantile(confidence, np.linspace(0.0, 1.0, n_bins + 1))
    edges[0], edges[-1] = 0.0, 1.0
    unique = np.unique(edges)
    if len(unique) < len(edges):
        warnings.warn(
            f"Equal-mass binning found tied confidences: {len(unique) - 1} bins instead "
            f"of n_bins={n_bins}.",
            SkassessWarning,
            stacklevel=4,
        )
    return unique


class ScoreBinGrouping:
    """Bins of the top-1 confidence; bin ``b`` holds ``edges[b] <= c < edges[b+1]``.

    The last bin also holds ``c = 1``. Equal-mass edges are quantiles of the
    confidences of the first batch.
    """

    name = "bin"
    uses_groups = False

    def __init__(self, n_bins, binning):
        self.n_bins = n_bins
        self.binning = binning
        self.edges = None

    @property
    def n_groups(self):
        return len(self.edges) - 1

    def fit(self, scores, groups=None):
        if self.binning == "equal_width":
            self.edges = np.linspace(0.0, 1.0, self.n_bins + 1)
        else:
            self.edges = _equal_mass_edges(scores.max(axis=1), self.n_bins)
        return self

    def transform(self, scores, groups=None, pred=None, confidence=None):
        c = scores.max(axis=1) if confidence is None else confidence
        if self.binning != "equal_width":
            return np.searchsorted(self.edges[1:-1], c, side="right")
        # Equal width: arithmetic, then a correction where floating point puts c on
        # the wrong side of an edge; the same bins as searchsorted, twice as fast.
        last = len(self.edges) - 2
        b = np.minimum((c * (last + 1)).astype(np.intp), last)
        b -= c < self.edges[b]
        b += c >= self.edges[b + 1]
        return np.minimum(b, last)

    def index(self):
        return pd.RangeIndex(self.n_groups, name=self.name)


class ClassBinGrouping(ScoreBinGrouping):
    """Predicted class x confidence bin; group ``k * n_bins + b``."""

    name = "class_bin"

    def __init__(self, class_labels, n_bins, binning):
        super().__init__(n_bins, binning)
        self.labels = np.asarray(class_labels)

    @property
    def n_groups(self):
        return len(self.labels) * self.n_bins_fitted

    @property
    def n_bins_fitted(self):
        return len(self.edges) - 1

    def transform(self, scores, groups=None, pred=None, confidence=None):
        pred = scores.argmax(axis=1) if pred is None else pred
        return pred * self.n_bins_fitted + super().transform(scores, confidence=confidence)

    def index(self):
        return pd.MultiIndex.from_product(
            [self.labels, range(self.n_bins_fitted)], names=["predicted_class", "bin"]
        )


class ExternalGrouping:
    """Groups given per row at fit time (e.g. a sensitive attribute).

    Takes group arrays already checked by ``check_groups``.

    Group labels are kept sorted (when they are sortable). A later
    ``partial_fit`` may bring new labels; :meth:`extend` returns where the old
    groups moved so that accumulated statistics can follow them.
    """

    name = "group"
    uses_groups = True

    def __init__(self):
        self.labels = np.array([], dtype=object)

    @property
    def n_groups(self):
        return len(self.labels)

    def fit(self, scores, groups=None):
        self.labels = np.array([], dtype=object)
        self.extend(groups)
        return self

    def extend(self, groups):
        """Add unseen labels; return the new position of each old group."""
        new = pd.unique(pd.Series(groups, dtype=object))
        known = set(self.labels.tolist())
        added = [g for g in new.tolist() if g not in known]
        old = self.labels.tolist()
        merged = old + added
        try:
            merged = sorted(merged)
        except TypeError:
            pass
        self.labels = np.array(merged, dtype=object)
        position = {g: i for i, g in enumerate(merged)}
        return np.array([position[g] for g in old], dtype=np.intp)

    def transform(self, scores, groups=None, pred=None, confidence=None):
        codes = pd.Index(self.labels).get_indexer(pd.Series(groups, dtype=object))
        if (codes < 0).any():
            row = int(np.flatnonzero(codes < 0)[0])
            raise ValueError(
                f"groups holds {_py(groups[row])!r} at row {row}, a group not seen in fit; "
                f"known groups: {self.labels.tolist()!r}."
            )
        return codes

    def index(self):
        return pd.Index(self.labels, name=self.name)

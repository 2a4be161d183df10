"""Label-free accuracy of a scores file's unlabeled rows (``skassess assess --meta``)."""

import numpy as np
import pandas as pd

from ..meta import LEVELS, PerformanceIntervalRegressor, PerformancePredictor, pretrained_methods

__all__ = ["META_METHODS", "RowSample", "check_meta", "predict_unlabeled"]

#: The skassess.meta methods that need only the scores (no features).
META_METHODS = ("confidence", "atc", "doc", "calibrated_scores", "meta_model", "combined")


class RowSample:
    """A uniform sample of at most ``size`` rows of a file read in batches.

    Each row gets a uniform random key and the ``size`` smallest keys are
    kept, so the sample does not depend on the batch size -- reservoir
    sampling by keys, a few lines that no dependency offers for array batches.
    """

    def __init__(self, size, rng):
        self.size = size
        self.rng = rng
        self.keys = np.empty(0)
        self.scores = None
        self.labels = np.empty(0, dtype=np.int64)
        self.n_seen = 0

    def add(self, scores, labels):
        n = len(labels)
        if n == 0:
            return
        self.n_seen += n
        keys = self.rng.uniform(size=n)
        if self.scores is None:
            self.scores = scores[:0]
        self.keys = np.concatenate([self.keys, keys])
        self.scores = np.concatenate([self.scores, scores])
        self.labels = np.concatenate([self.labels, labels])
        if len(self.keys) > self.size:
            keep = np.argpartition(self.keys, self.size)[: self.size]
            self.keys, self.scores, self.labels = (
                self.keys[keep],
                self.scores[keep],
                self.labels[keep],
            )


def check_meta(meta):
    """``meta`` as a list of method names, checked."""
    if meta is None:
        return None
    methods = [meta] if isinstance(meta, str) else list(meta)
    bad = [m for m in methods if m not in META_METHODS]
    if bad or not methods:
        raise ValueError(
            f"meta: {bad[0] if bad else meta!r} is not a score-only method; "
            f"choose from {list(META_METHODS)!r}."
        )
    return methods


def _two_columns(scores):
    return np.column_stack([1 - scores, scores]) if scores.ndim == 1 else scores


def predict_unlabeled(labeled, unlabeled, methods, n_classes, *, random_state, level=0.95):
    """Each method's predicted accuracy of the unlabeled rows, learned on the labeled ones.

    Parameters
    ----------
    labeled, unlabeled : RowSample
    methods : list of str
        Among :data:`META_METHODS`.
    n_classes : int
    level : float
        The intervals' coverage, clipped to the uncertainty model's levels
        (at most 0.95).

    Returns
    -------
    pandas.DataFrame
        One row per method: ``accuracy``, ``lower``, ``upper``, ``level``
        (NaN where the method has no shipped uncertainty model), with
        ``rows`` and ``sampled`` of the unlabeled rows and ``reference``, the
        labeled rows used.
    """
    methods = check_meta(methods)
    if unlabeled.n_seen == 0:
        raise ValueError("meta: every row is labeled; there is no unlabeled row to predict.")
    codes = labeled.labels
    if len(codes) < 20 or len(np.unique(codes)) < 2:
        raise ValueError(
            f"meta: predicting the unlabeled rows' accuracy needs at least 20 labeled rows of "
            f"two or more classes; the file has {labeled.n_seen} labeled rows of "
            f"{len(np.unique(codes))} classes."
        )
    S_ref, S_new = _two_columns(labeled.scores), _two_columns(unlabeled.scores)
    classes = list(range(n_classes))
    level = float(min(max(level, LEVELS[0]), LEVELS[-1]))
    rows = []
    for method in methods:
        pp = PerformancePredictor(method=method, classes=classes, random_state=random_state)
        if method in pretrained_methods():
            pir = PerformanceIntervalRegressor(pp, level=level, random_state=random_state)
            out = pir.fit(None, codes, scores=S_ref).predict(None, scores=S_new)
            row = {k: float(out[k]) for k in ("accuracy", "lower", "upper", "level")}
        else:
            row = {
                "accuracy": pp.fit(None, codes, scores=S_ref).predict(None, scores=S_new),
                "lower": np.nan,
                "upper": np.nan,
                "level": np.nan,
            }
        rows.append(
            {
                "method": method,
                **row,
                "rows": unlabeled.n_seen,
                "sampled": len(unlabeled.labels),
                "reference": len(codes),
            }
        )
    return pd.DataFrame(rows).set_index("method")

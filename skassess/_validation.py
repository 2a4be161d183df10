"""Input checks for scores, labels and groups: the only place they are checked.

Every function raises a ``ValueError`` that names the argument and shows the
offending value; nothing is coerced silently and no row is dropped.
"""

import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import _check_sample_weight, check_array

#: Absolute tolerance on the row sums of a score matrix.
ROW_SUM_TOL = 1e-6
#: Rows checked, and counted by partial_fit, at a time: temporaries stay O(BLOCK).
BLOCK = 1 << 15


def check_scores(X, *, n_classes=None, input_name="X"):
    """Validate black-box scores and return them as a ``(n, K)`` float array.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
        Class probabilities, one row per item. A 1-D array (or a single
        column) holds P(class 1) of a binary problem and is expanded to the
        two columns ``[1 - p, p]``.
    n_classes : int, default=None
        Number of classes the scores must have, or None to accept any.
    input_name : str, default="X"
        Name of the argument, used in error messages.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes), dtype float64
    """
    X = check_array(
        X,
        ensure_2d=False,
        dtype=np.float64,
        ensure_all_finite=False,
        input_name=input_name,
    )
    if X.ndim == 2 and X.shape[1] == 1:
        X = X[:, 0]
    if X.ndim == 1:
        _check_range(X[:, None], input_name, binary=True)
        scores = np.empty((X.shape[0], 2))
        scores[:, 1] = X
        np.subtract(1.0, X, out=scores[:, 0])
    else:  # check_array allows 1-D or 2-D only
        _check_range(X, input_name, binary=False)
        scores = X
    if n_classes is not None and scores.shape[1] != n_classes:
        raise ValueError(
            f"{input_name} has {scores.shape[1]} score columns, but the estimator was "
            f"fitted with {n_classes} classes."
        )
    return scores


def _check_range(X, input_name, binary):
    # Block-wise flat reductions (a flat min, BLAS row sums) instead of reductions
    # along the short class axis, which numpy does slowly; rows are located only
    # when a check fails, and temporaries stay O(block).
    ones = np.ones(X.shape[1])
    for start in range(0, X.shape[0], BLOCK):
        block = X[start : start + BLOCK]
        sums = block @ ones
        bad = ~np.isfinite(sums)  # NaN and inf propagate into the row sum
        if bad.any():
            row = start + int(np.flatnonzero(bad)[0])
            raise ValueError(f"{input_name} contains NaN or inf: row {row} is {_fmt(X[row])}.")
        if block.min() < 0:
            row = start + int(np.flatnonzero((block < 0).any(axis=1))[0])
            raise ValueError(
                f"Negative values in data passed to {input_name}: scores must be "
                f"probabilities; row {row} is {_fmt(X[row])}."
            )
        if binary:
            if block.max() > 1:
                row = start + int(np.flatnonzero(block[:, 0] > 1)[0])
                raise ValueError(
                    f"Binary scores in {input_name} are P(class 1) and must lie in [0, 1]; "
                    f"row {row} is {_py(X[row, 0])!r}."
                )
            continue
        bad = np.abs(sums - 1.0) > ROW_SUM_TOL
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"The scores in {input_name} must sum to 1 per row (tolerance "
                f"{ROW_SUM_TOL:g}); row {start + i} sums to {sums[i]:.8g}."
            )


def _py(value):
    """A numpy scalar as the plain Python value, for messages."""
    return value.item() if isinstance(value, np.generic) else value


def _fmt(row):
    return np.array2string(np.asarray(row), precision=6, threshold=12)


def check_labels(y, n_samples, n_classes, classes=None, name="y"):
    """Validate true labels and return class indices, ``-1`` for unlabeled rows.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
        True labels. ``-1`` marks an unlabeled row. Without ``classes`` the
        labels are class indices ``0..n_classes-1``; with ``classes`` they
        are entries of ``classes``. None means that no row is labeled.
    n_samples : int
        Number of rows the labels must have.
    n_classes : int
        Number of classes (score columns).
    classes : array-like of shape (n_classes,), default=None
        The label of each score column.

    Returns
    -------
    y : ndarray of shape (n_samples,), dtype int64
    """
    if y is None:
        return np.full(n_samples, -1, dtype=np.int64)
    if classes is not None and isinstance(y, list | tuple):
        y = np.array(y, dtype=object)  # keep the integer marker -1 beside string labels
    y = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.DataFrame) else y)
    if y.ndim == 2 and y.shape[1] == 1:
        raise ValueError(
            f"{name} must be 1-D; got shape {y.shape}. Pass y.ravel() for a single column."
        )
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {y.shape}.")
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} entries, but X has {n_samples} rows.")
    if classes is not None:
        return _map_classes(y, n_classes, classes)
    if y.dtype.kind in "iu":
        out = y.astype(np.int64, copy=False)
    elif y.dtype.kind == "b":
        out = y.astype(np.int64)
    elif y.dtype.kind == "f":
        if np.isnan(y).any():
            row = int(np.flatnonzero(np.isnan(y))[0])
            raise ValueError(
                f"{name} contains NaN at row {row}; mark unlabeled rows with -1."
            )
        if (y != np.round(y)).any():
            row = int(np.flatnonzero(y != np.round(y))[0])
            raise ValueError(
                f"{name} must hold class indices 0..{n_classes - 1} or -1; row {row} is "
                    f"{_py(y[row])!r}."
            )
        out = y.astype(np.int64)
    else:
        row = int(np.flatnonzero(~np.isin(y, np.arange(-1, n_classes)))[0]) if y.size else 0
        raise ValueError(
            f"{name} holds labels such as {_py(y[row])!r} that are not class indices "
            f"0..{n_classes - 1}"
            " or -1; pass classes=[...] to map labels to score columns."
        )
    if out.size:
        bad = (out < -1) | (out >= n_classes)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must hold class indices 0..{n_classes - 1} or -1 (unlabeled); "
                f"row {row} is {_py(out[row])!r}."
            )
    return out


def _map_classes(y, n_classes, classes):
    classes = check_classes(classes, n_classes)
    index = {c: i for i, c in enumerate(classes.tolist())}
    inverse, uniques = pd.factorize(y, use_na_sentinel=False)
    codes = np.empty(len(uniques), dtype=np.int64)
    for j, value in enumerate(list(uniques)):
        if value in index:
            codes[j] = index[value]
        elif _is_unlabeled_marker(value):
            codes[j] = -1
        else:
            row = int(np.flatnonzero(inverse == j)[0])
            hint = (
                " (the marker is the integer -1: hold string labels in an object array)"
                if value == "-1" else ""
            )
            raise ValueError(
                f"y holds the label {_py(value)!r} at row {row}, which is not in classes="
                f"{classes.tolist()!r} and is not the unlabeled marker -1{hint}."
            )
    return codes[inverse]


def _is_unlabeled_marker(value):
    return isinstance(value, numbers.Number) and not isinstance(value, bool) and value == -1


def check_classes(classes, n_classes):
    """Validate the ``classes`` parameter against the number of score columns."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.shape[0] != n_classes:
        raise ValueError(
            f"classes must list one label per score column ({n_classes}); got "
            f"{classes.tolist()!r}."
        )
    if len(set(classes.tolist())) != n_classes:
        raise ValueError(f"classes must not repeat a label; got {classes.tolist()!r}.")
    return classes


def check_groups(groups, n_samples, input_name="groups"):
    """Validate per-row group labels (any hashable values) and return an array."""
    if groups is None:
        raise ValueError(
            f"{input_name} is required with grouping='external'; pass one label per row."
        )
    if isinstance(groups, pd.Series | pd.Index | pd.Categorical):
        missing = np.asarray(pd.isna(groups))
        groups = np.asarray(groups, dtype=object)
    else:
        groups = np.asarray(groups)
        missing = np.asarray(pd.isna(groups)) if groups.ndim == 1 else None
    if groups.ndim != 1:
        raise ValueError(f"{input_name} must be 1-D; got an array of shape {groups.shape}.")
    if groups.shape[0] != n_samples:
        raise ValueError(
            f"{input_name} has {groups.shape[0]} entries, but X has {n_samples} rows."
        )
    if missing is not None and missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{input_name} has a missing value at row {row}.")
    return groups


def check_sample_weight(sample_weight, n_samples):
    """Validate non-negative per-row weights (None means all ones)."""
    return _check_sample_weight(
        sample_weight, np.empty((n_samples, 0)), dtype=np.float64, ensure_non_negative=True
    )


def check_level(level):
    """Validate a credible level in (0, 1)."""
    if not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1); got {level!r}.")
    return float(level)


class TopLabelScores(np.ndarray):
    """Scores rebuilt from the predicted class and its confidence only.

    A plain ndarray in every other respect; estimators that need the full
    class probabilities (the confusion matrix and the cost) refuse it.
    """


class CalibratedScores(np.ndarray):
    """Calibrated scores that keep the black box's own predicted class.

    A calibration map can move a score across 0.5 (or below another class's
    score); the assessment must still judge the black box's prediction, so
    the predicted class of every row travels with the array as
    ``predicted``, and the metric estimators use it instead of the argmax.
    Row indexing keeps it aligned. ``full_probabilities`` is False when only
    the top-label confidence was calibrated (the other classes merely share
    the rest), so the confusion matrix and the cost refuse the array.
    """

    def __new__(cls, scores, predicted, full_probabilities=True):
        obj = np.asarray(scores, dtype=np.float64).view(cls)
        obj.predicted = np.asarray(predicted, dtype=np.intp)
        obj.full_probabilities = bool(full_probabilities)
        return obj

    def __array_finalize__(self, obj):
        self.predicted = getattr(obj, "predicted", None)
        self.full_probabilities = getattr(obj, "full_probabilities", True)

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if not isinstance(out, CalibratedScores):
            return out
        if not isinstance(key, tuple):
            key = (key,)
        rows, cols = (key[0], key[1:]) if key else (slice(None), ())
        whole_rows = all(isinstance(c, slice) and c == slice(None) for c in cols)
        if out.ndim != self.ndim or not whole_rows or self.predicted is None:
            return out.view(np.ndarray)  # not a set of whole rows: a plain array
        out.predicted = self.predicted[rows]
        return out

    def __reduce__(self):
        constructor, args, state = super().__reduce__()
        return constructor, args, (state, self.predicted, self.full_probabilities)

    def __setstate__(self, state):
        base, self.predicted, self.full_probabilities = state
        super().__setstate__(base)


def predicted_classes(X):
    """The black box's predicted classes carried by ``X``, or None (use the argmax)."""
    return X.predicted if isinstance(X, CalibratedScores) else None


def refuse_top_label_scores(X, estimator):
    if isinstance(X, CalibratedScores) and not X.full_probabilities:
        raise ValueError(
            f"{type(estimator).__name__} needs the full class probabilities; X holds "
            "calibrated top-label confidences only (HierarchicalBetaCalibrator with "
            "target='top_label'). Accuracy, calibration and identification work with it."
        )
    if isinstance(X, TopLabelScores):
        raise ValueError(
            f"{type(estimator).__name__} needs the full class probabilities; X holds only "
            "the top-1 confidence (from a file in the 'Index Correct Predicted Confidence' "
            "format). Accuracy, calibration and identification work with it."
        )


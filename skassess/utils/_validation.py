"""Input checks for scores, labels, predictions and weights: the only place they are checked.

Every function raises a ``ValueError`` that names the argument and shows the
offending value; nothing is coerced silently and no row is dropped.
"""

import contextlib
import contextvars
import numbers
import re

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array

from ._sklearn_compat import check_sample_weight as _check_sample_weight

__all__ = [
    "BLOCK",
    "EPS",
    "ROW_SUM_TOL",
    "as_scalar",
    "naming",
    "check_classes",
    "check_labels",
    "check_predictions",
    "check_sample_weight",
    "check_scores",
    "top1",
    "validate_scores",
]

#: Set inside skassess while it refits on labels it has checked already (codes
#: with the -1 marker): the {-1, +1} guess of check_labels is for a user's input.
_CHECKED_CODES = contextvars.ContextVar("skassess_checked_codes", default=False)


@contextlib.contextmanager
def checked_codes():
    """Within this block, labels are class codes skassess made (-1: unlabeled)."""
    token = _CHECKED_CODES.set(True)
    try:
        yield
    finally:
        _CHECKED_CODES.reset(token)


#: The largest count of rows a float64 holds exactly; weights must sum to at most it.
MAX_COUNT = float(2**53)
#: How far a row of class scores may sum from 1, in the API and the command alike.
#: Scores stored as float16 / float32, or written to a text file with a few
#: decimals, sum to 1 only up to rounding (a float32 softmax over 1,000 classes
#: is off by ~1e-4, a CSV with 3 decimals by up to 5e-3 over 10 classes); rows
#: within this tolerance are divided by their sums, rows farther off are refused.
ROW_SUM_TOL = 0.01
#: Rows closer than this to a sum of 1 are left as given (float64 rounding).
_EXACT_SUM = 1e-9
#: Rows checked, and counted by partial_fit, at a time: temporaries stay O(BLOCK).
BLOCK = 1 << 15
#: Probabilities are clipped to ``[EPS, 1 - EPS]`` wherever a logarithm or a
#: Beta parameter needs them inside (0, 1): before the log-odds of a
#: calibration map (log-odds stay within +-6.9, so a saturated score cannot
#: dominate a fit) and for the mean of an informative prior.
EPS = 1e-3


@contextlib.contextmanager
def naming(name):
    """Re-raise a ValueError or TypeError from a library check with the argument's name.

    scikit-learn's ``check_array`` says "Found array with dim 3" without
    saying which argument; inside this block such an error becomes
    ``"X: Found array with dim 3 ..."`` (same type, the original chained).
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        message = str(exc)
        if re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", message):
            raise
        raise type(exc)(f"{name}: {message}") from exc


def as_scalar(value):
    """A numpy scalar as the plain Python value (for error messages)."""
    return value.item() if isinstance(value, np.generic) else value


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
        Rows that sum to 1 within ``ROW_SUM_TOL`` (0.01: float16/float32
        rounding, a few decimals in a text file) are divided by their sums
        (on a copy); rows farther from 1 are refused.

    Examples
    --------
    >>> from skassess.utils import check_scores
    >>> check_scores([0.2, 0.9])
    array([[0.8, 0.2],
           [0.1, 0.9]])
    """
    with naming(input_name):
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
        scores = X
        if _check_range(X, input_name, binary=False):
            # Within ROW_SUM_TOL of 1 but not exactly: divided by their sums, on a copy.
            scores = X / X.sum(axis=1, keepdims=True)
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
    # Returns whether a row sums to 1 only within ROW_SUM_TOL (to be renormalized).
    ones = np.ones(X.shape[1])
    renormalize = False
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
                    f"row {row} is {as_scalar(X[row, 0])!r}."
                )
            continue
        off = np.abs(sums - 1.0)
        bad = off > ROW_SUM_TOL
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"The scores in {input_name} must sum to 1 per row (tolerance "
                f"{ROW_SUM_TOL:g}); row {start + i} sums to {sums[i]:.8g}."
            )
        renormalize = renormalize or bool((off > _EXACT_SUM).any())
    return renormalize


def _fmt(row):
    return np.array2string(np.asarray(row), precision=6, threshold=12)


def _is_nan(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value != value


def _missing_mask(y, missing_label):
    """Rows of ``y`` that are unlabeled: equal to the marker, or missing (NaN, None, NA).

    A missing value always marks an unlabeled row, whatever the marker; with
    ``missing_label=None`` (every row labeled) no row is unlabeled.
    """
    if missing_label is None:
        return np.zeros(len(y), dtype=bool)
    missing = np.asarray(pd.isna(y), dtype=bool)
    if _is_nan(missing_label) or missing_label is pd.NA:
        return missing
    if y.dtype.kind in "iufb" and not isinstance(missing_label, numbers.Number):
        return missing  # a string marker never equals a number
    with np.errstate(invalid="ignore"):
        mask = np.asarray(y == missing_label)
    if mask.shape != y.shape:  # comparison of incompatible types
        return missing
    return mask.astype(bool) | missing


def _as_1d(y, name, n_samples):
    if isinstance(y, pd.Series | pd.DataFrame | pd.Index | pd.Categorical):
        y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    elif isinstance(y, list | tuple):
        y = np.array(y, dtype=object)  # keep markers and labels as given
        try:  # ... but give plain numbers a numeric dtype
            numeric = np.array(y.tolist())
        except (ValueError, TypeError):
            numeric = y
        if numeric.dtype.kind in "iufb":
            y = numeric
    else:
        y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        raise ValueError(
            f"{name} must be 1-D; got shape {y.shape}. Pass {name}.ravel() for a single column."
        )
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {y.shape}.")
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} entries, but X has {n_samples} rows.")
    return y


def check_labels(y, n_samples, n_classes, classes=None, *, missing_label=-1, name="y", rows=None):
    """Validate true labels and return class indices, ``-1`` for unlabeled rows.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
        True labels. Rows equal to ``missing_label``, and missing values
        (NaN, None, ``pd.NA``), are unlabeled. Without
        ``classes`` the labels are class indices ``0..n_classes-1``; with
        ``classes`` they are entries of ``classes``. None means that no row
        is labeled.
    n_samples : int
        Number of rows the labels must have.
    n_classes : int
        Number of classes (score columns).
    classes : array-like of shape (n_classes,), default=None
        The label of each score column.
    missing_label : int, float, str or None, default=-1
        The marker of an unlabeled row, besides a missing value (NaN, None,
        ``pd.NA``), which always marks one; None means that every row must be
        labeled (a missing value is then refused).
    name : str, default="y"
        Name of the argument, used in error messages.
    rows : array-like of int of shape (n_samples,), default=None
        The pool row of each entry of ``y`` (e.g. the ``indices`` of a
        sampler's ``tell``), for error messages: they then name the entry and
        its pool row (``labels[0] (pool row 17)``), and with
        ``missing_label=None`` do not speak of a marker. None: the entries
        are the pool's rows.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype int64
        The class index of each labeled row, ``-1`` for unlabeled rows.

    Raises
    ------
    ValueError
        If a label is neither a class nor the marker, if ``missing_label`` is
        one of ``classes``, or if binary labels look like the {-1, +1}
        encoding, where the default marker -1 would silently turn every
        negative into an unlabeled row.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.utils import check_labels
    >>> check_labels([0, 2, -1], 3, 3)
    array([ 0,  2, -1])
    >>> check_labels([0.0, np.nan, 1.0], 3, 2, missing_label=np.nan)
    array([ 0, -1,  1])
    >>> check_labels(["dog", "cat"], 2, 2, classes=["cat", "dog"], missing_label=None)
    array([1, 0])
    """
    if y is None:
        if missing_label is None:
            raise ValueError(
                f"{name} is None, but missing_label=None says that every row is labeled."
            )
        return np.full(n_samples, -1, dtype=np.int64)
    y = _as_1d(y, name, n_samples)
    where = _Where(name, rows, missing_label)
    row = _first_complex(y)
    if row is not None:
        raise ValueError(
            f"{name} holds a complex number, {as_scalar(y[row])!r} at {where(row)}; labels "
            "are class indices or the entries of classes, never complex."
        )
    missing = _missing_mask(y, missing_label)
    if classes is not None:
        classes = check_classes(classes, n_classes)
        if missing_label is not None and any(
            _same_label(c, missing_label) for c in classes.tolist()
        ):
            raise ValueError(
                f"missing_label={as_scalar(missing_label)!r} is also one of classes="
                f"{classes.tolist()!r}; choose another marker of unlabeled rows (e.g. "
                "missing_label=np.nan)."
            )
        codes = np.full(n_samples, -1, dtype=np.int64)
        codes[~missing] = _map_classes(
            y[~missing], classes, name, missing_label, np.flatnonzero(~missing), where
        )
        return codes
    return _check_indices(y, missing, n_classes, name, missing_label, where)


def _first_complex(y):
    """The first row of ``y`` holding a complex number, or None.

    An object array is scanned row by row only where pandas' type inference
    (one C pass) leaves room for a complex value: all strings, say, cannot.
    """
    if y.dtype.kind == "c":
        return 0 if len(y) else None
    if y.dtype != object:
        return None
    kind = pd.api.types.infer_dtype(y, skipna=True)
    if kind != "complex" and not kind.startswith("mixed"):
        return None
    hits = [isinstance(v, complex | np.complexfloating) for v in y.tolist()]
    return hits.index(True) if any(hits) else None


def _same_label(a, b):
    if _is_nan(a) and _is_nan(b):
        return True
    try:
        return bool(a == b) and isinstance(a, str) == isinstance(b, str)
    except (TypeError, ValueError):
        return False


def _marker_text(missing_label):
    return (
        "nothing else: every row must be labeled (missing_label=None)"
        if (missing_label is None)
        else f"the unlabeled marker {as_scalar(missing_label)!r}"
    )


class _Where:
    """How :func:`check_labels`'s messages name an entry of ``y`` (see its ``rows``)."""

    def __init__(self, name, rows, missing_label):
        self.name, self.rows = name, None if rows is None else np.asarray(rows)
        self.missing_label = missing_label
        # Labels given for chosen rows (a sampler's tell) have no marker to speak of.
        self.markerless = rows is not None and missing_label is None

    def __call__(self, i):
        if self.rows is None:
            return f"row {i}"
        return f"{self.name}[{i}] (pool row {as_scalar(self.rows[i])})"

    def marker(self):
        """`` or <the marker>`` after the classes, or nothing."""
        return "" if self.markerless else f" or {_marker_text(self.missing_label)}"


def _check_indices(y, missing, n_classes, name, missing_label, where):
    labeled = y[~missing]
    rows = np.flatnonzero(~missing)
    if labeled.dtype.kind == "f":
        nan = np.isnan(labeled)
        if nan.any():
            row = int(rows[np.flatnonzero(nan)[0]])
            if where.markerless:
                raise ValueError(
                    f"{name} must hold class indices 0..{n_classes - 1}; {where(row)} is NaN."
                )
            raise ValueError(
                f"{name} contains NaN at {where(row)}, but missing_label=None says that "
                "every row is labeled; pass missing_label=-1 (the default) to take NaN rows "
                "as unlabeled."
            )
        frac = labeled != np.round(labeled)
        if frac.any():
            row = int(rows[np.flatnonzero(frac)[0]])
            raise ValueError(
                f"{name} must hold class indices 0..{n_classes - 1}"
                f"{where.marker()}; {where(row)} is {as_scalar(y[row])!r}."
            )
        labeled = labeled.astype(np.int64)
    elif labeled.dtype.kind in "iub":
        labeled = labeled.astype(np.int64)
    elif labeled.dtype.kind == "O" and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in labeled.tolist()
    ):
        labeled = labeled.astype(np.int64)
    elif labeled.size:
        bad = [not isinstance(v, numbers.Integral) for v in labeled.tolist()]
        row = int(rows[int(np.argmax(bad))]) if any(bad) else int(rows[0])
        raise ValueError(
            f"{name} holds labels that are not class indices 0..{n_classes - 1}"
            f"{where.marker()}, such as {as_scalar(y[row])!r} at {where(row)}; "
            "pass classes=[...] to map labels to score columns."
        )
    else:
        labeled = labeled.astype(np.int64)
    bad = (labeled < 0) | (labeled >= n_classes)
    if bad.any():
        row = int(rows[np.flatnonzero(bad)[0]])
        raise ValueError(
            f"{name} must hold class indices 0..{n_classes - 1}"
            f"{where.marker()}; {where(row)} is {as_scalar(y[row])!r}."
        )
    if (
        n_classes == 2
        and not _CHECKED_CODES.get()
        and signs_marker(missing_label)
        and (missing & ~np.asarray(pd.isna(y), dtype=bool)).any()  # a -1, not only NaN
        and labeled.size
        and (labeled == 1).all()
    ):
        raise signed_labels_error(name)
    out = np.full(len(y), -1, dtype=np.int64)
    out[~missing] = labeled
    return out


def signs_marker(missing_label):
    """Whether ``missing_label`` is -1, which {-1, +1} binary labels would be read as."""
    return isinstance(missing_label, numbers.Integral) and missing_label == -1


def signed_labels_error(name):
    """The error of binary labels that hold only -1 (the marker) and 1."""
    return ValueError(
        f"{name} holds only the values -1 and 1 for binary scores. -1 is the unlabeled "
        "marker (missing_label=-1), so every -1 row would be treated as unlabeled, but "
        "{-1, +1} is also a common encoding of binary labels. If -1 is the negative "
        "class, pass classes=[-1, 1] and mark unlabeled rows with another "
        "missing_label (e.g. np.nan); if the -1 rows are unlabeled and every labeled "
        "row is class 1, pass classes=[0, 1] to say so."
    )


def _map_classes(values, classes, name, missing_label, rows, where):
    """Codes of labels that must be entries of ``classes``."""
    index = {c: i for i, c in enumerate(classes.tolist())}
    inverse, uniques = pd.factorize(values, use_na_sentinel=False)
    codes = np.empty(len(uniques), dtype=np.int64)
    for j, value in enumerate(list(uniques)):
        code = index.get(value)
        if code is None:
            pos = int(np.flatnonzero(inverse == j)[0])
            row, value = int(rows[pos]), values[pos]
            hint = ""
            if missing_label is not None and isinstance(value, str) and value == str(missing_label):
                hint = (
                    f" (the marker is {as_scalar(missing_label)!r}, not the string "
                    f"{str(value)!r}: hold string labels in an object array)"
                )
            marker = (
                ""
                if where.markerless
                else "; every row must be labeled (missing_label=None)"
                if missing_label is None
                else f" and is not the unlabeled marker {as_scalar(missing_label)!r}"
            )
            raise ValueError(
                f"{name} holds the label {as_scalar(value)!r} at {where(row)}, which is not in "
                f"classes={classes.tolist()!r}{marker}{hint}."
            )
        codes[j] = code
    return codes[inverse]


def check_predictions(y_pred, n_samples, n_classes, classes=None, *, name="y_pred"):
    """Validate the black box's predicted labels and return class indices.

    Every row needs a prediction: there is no unlabeled marker.

    Parameters
    ----------
    y_pred : array-like of shape (n_samples,)
        Predicted labels: class indices ``0..n_classes-1``, or entries of
        ``classes``.
    n_samples, n_classes : int
        Rows and classes the predictions must match.
    classes : array-like of shape (n_classes,), default=None
        The label of each score column.
    name : str, default="y_pred"
        Name of the argument, used in error messages.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype intp
    """
    codes = check_labels(y_pred, n_samples, n_classes, classes, missing_label=None, name=name)
    return codes.astype(np.intp, copy=False)


def validate_scores(estimator, X, *, y_pred=None, reset=True):
    """Check scores (and predictions) for an estimator: the one preamble of every method.

    Records ``n_features_in_`` (and ``feature_names_in_``) when ``reset``,
    checks them otherwise (scikit-learn's ``validate_data``); a 1-D ``X`` is
    one feature. The estimator's ``classes`` parameter maps ``y_pred``.

    Parameters
    ----------
    estimator : estimator with a ``classes`` parameter
        After a ``reset`` call it must set ``n_classes_`` itself.
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predictions; None: the argmax of the scores.
    reset : bool, default=True
        True in ``fit``; False afterwards.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
    pred : ndarray of shape (n_samples,)
        Predicted class index of each row.
    confidence : ndarray of shape (n_samples,)
        The score of the predicted class.
    """
    from sklearn.utils.validation import validate_data

    scores = check_scores(X, n_classes=None if reset else estimator.n_classes_)
    if getattr(X, "ndim", None) == 2:  # arrays and DataFrames: names and width
        validate_data(estimator, X, reset=reset, skip_check_array=True)
    elif reset:  # a 1-D X is one feature; a list of rows has its rows' width
        estimator.n_features_in_ = 1 if np.ndim(X) == 1 else scores.shape[1]
    n, K = scores.shape
    pred = None
    if y_pred is not None:
        classes = getattr(estimator, "classes", None)
        classes = None if classes is None else check_classes(classes, K)
        pred = check_predictions(y_pred, n, K, classes)
    pred, conf = top1(scores, pred)
    return scores, pred, conf


def top1(scores, pred=None):
    """Predicted class (the argmax unless given) and its score, per row."""
    pred = scores.argmax(axis=1) if pred is None else pred
    if scores.flags.c_contiguous:  # a flat index: a third of take_along_axis's time
        flat = np.arange(len(pred), dtype=np.intp) * scores.shape[1] + pred
        return pred, scores.reshape(-1)[flat]
    return pred, np.take_along_axis(scores, pred[:, None], axis=1)[:, 0]


def check_classes(classes, n_classes):
    """Validate a ``classes`` parameter against the number of score columns."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.shape[0] != n_classes:
        raise ValueError(
            f"classes must list one label per score column ({n_classes}); got {classes.tolist()!r}."
        )
    if len(set(classes.tolist())) != n_classes:
        raise ValueError(f"classes must not repeat a label; got {classes.tolist()!r}.")
    return classes


def check_design_weight(design_weight, n_samples):
    """Validate per-row design weights: finite and > 0, one number per row."""
    d = np.asarray(design_weight)
    if d.shape != (n_samples,) or not np.issubdtype(d.dtype, np.number):
        raise ValueError(
            f"design_weight must hold one number per row ({n_samples}); got shape {d.shape} "
            f"and dtype {d.dtype}."
        )
    d = d.astype(np.float64)
    bad = ~(np.isfinite(d) & (d > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"design_weight must be finite and > 0; design_weight[{i}] = {float(d[i])!r}."
        )
    return d


def check_sample_weight(sample_weight, n_samples):
    """Validate finite, non-negative per-row weights (None means all ones)."""
    with naming("sample_weight"):
        weight = _check_sample_weight(
            sample_weight, np.empty((n_samples, 0)), dtype=np.float64, ensure_non_negative=True
        )
    with np.errstate(over="ignore"):
        total = weight.sum()
    if not total <= MAX_COUNT:
        raise ValueError(
            f"sample_weight must sum to at most 2**53 = {MAX_COUNT:.4g} (the weights are counts "
            "of rows, and float64 counts beyond it lose whole rows); got weights up to "
            f"{weight.max():.3g} summing to {total:.3g}."
        )
    return weight


def is_sha256(value):
    """Whether ``value`` is a SHA-256 hex digest (64 lower-case hex digits)."""
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX_DIGITS


_HEX_DIGITS = frozenset("0123456789abcdef")

"""Read black-box prediction files in the two formats published with the papers."""

import os
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..utils._params import validate_params
from ..utils._sklearn_compat import Interval
from ..utils._validation import as_scalar, check_scores

TOP1_COLUMNS = ["Index", "Correct", "Predicted", "Confidence"]


@validate_params(
    {
        "path": [str, os.PathLike],
        "class_names": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def read_predictions(path, *, class_names=None):
    """Read a file of black-box predictions.

    Two formats are recognized from the first line:

    * **full probabilities**: whitespace-separated rows ``label p_1 ... p_K``
      with the true label as an integer ``0..K-1``;
    * **top-1 confidence**: a header ``Index Correct Predicted Confidence``
      (whitespace- or comma-separated), then one row per item with the true
      label's name, the predicted label's name and the top-1 confidence.

    With the top-1 format only the predicted class and its confidence are
    known (the ``scores`` entry is None): accuracy, calibration and
    identification tasks work with ``top_label_scores`` (and
    ``y_pred=predicted``); a confusion-matrix or cost estimator on them is
    exact only with ``prior="uniform"`` (see :func:`top_label_scores`).

    Parameters
    ----------
    path : str or path-like
        The file; ``.gz`` and other compressions pandas reads are fine.
    class_names : sequence of str, default=None
        Top-1 format only: every class name, in class-index order. None:
        the sorted names found in the file.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``target`` (n,) int, ``predicted`` (n,) int, ``confidence`` (n,),
        ``class_names``, ``full_probabilities`` (bool), ``scores`` (n, K) or
        None, ``top_label_scores`` (n, K): the top-1 confidence at the
        predicted class, the rest spread evenly over the other classes.

    Examples
    --------
    >>> import io, gzip, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "top1.txt"
    >>> _ = path.write_text("Index Correct Predicted Confidence\\n"
    ...                     "0 cat cat 0.9\\n1 dog cat 0.6\\n2 dog dog 0.8\\n")
    >>> data = read_predictions(path)
    >>> data.class_names, data.target.tolist(), data.full_probabilities
    (['cat', 'dog'], [0, 1, 1], False)
    >>> data.top_label_scores[1].tolist()
    [0.6, 0.4]
    """
    head = pd.read_csv(path, sep=r"[\s,]+", engine="python", header=None, nrows=1)
    if [str(v) for v in head.iloc[0].tolist()] == TOP1_COLUMNS:
        return _read_top1(path, class_names)
    if class_names is not None:
        raise ValueError(
            "class_names applies to the top-1 format only; this file has full probabilities."
        )
    table = pd.read_csv(path, sep=r"\s+", header=None, engine="c").to_numpy(np.float64)
    if table.ndim != 2 or table.shape[1] < 3:
        raise ValueError(
            f"Expected rows 'label p_1 ... p_K' with K >= 2 in {path}; got {table.shape[1]} "
            "columns."
        )
    label = table[:, 0]
    K = table.shape[1] - 1
    if np.any(label != np.round(label)) or label.min() < 0 or label.max() >= K:
        bad = int(np.flatnonzero((label != np.round(label)) | (label < 0) | (label >= K))[0])
        raise ValueError(
            f"Column 0 of {path} must hold class indices 0..{K - 1}; row {bad} has {label[bad]}."
        )
    scores = check_scores(table[:, 1:])
    target = label.astype(np.intp)
    predicted = scores.argmax(axis=1)
    confidence = scores[np.arange(len(scores)), predicted]
    return Bunch(
        scores=scores,
        target=target,
        predicted=predicted,
        confidence=confidence,
        class_names=list(range(K)),
        full_probabilities=True,
        top_label_scores=top_label_scores(predicted, confidence, K),
    )


def _read_top1(path, class_names):
    frame = pd.read_csv(
        path, sep=r"[\s,]+", engine="python", dtype={"Correct": str, "Predicted": str}
    )
    if class_names is None:
        class_names = sorted(set(frame["Correct"]) | set(frame["Predicted"]))
    class_names = [str(c) for c in class_names]
    index = pd.Index(class_names)
    if not index.is_unique:
        raise ValueError(f"class_names must be unique; got {class_names!r}.")
    target = index.get_indexer(frame["Correct"])
    predicted = index.get_indexer(frame["Predicted"])
    for name, codes, column in (
        ("Correct", target, frame["Correct"]),
        ("Predicted", predicted, frame["Predicted"]),
    ):
        if np.any(codes < 0):
            row = int(np.flatnonzero(codes < 0)[0])
            raise ValueError(
                f"Column {name!r} row {row} holds {column.iloc[row]!r}, which is not in "
                f"class_names {class_names!r}."
            )
    confidence = frame["Confidence"].to_numpy(np.float64)
    K = len(class_names)
    return Bunch(
        scores=None,
        target=target.astype(np.intp),
        predicted=predicted.astype(np.intp),
        confidence=confidence,
        class_names=class_names,
        full_probabilities=False,
        top_label_scores=top_label_scores(predicted, confidence, K),
    )


@validate_params(
    {
        "predicted": ["array-like"],
        "confidence": ["array-like"],
        "n_classes": [Interval(Integral, 2, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def top_label_scores(predicted, confidence, n_classes):
    """Class scores that carry only the predicted class and its confidence.

    The predicted class gets ``confidence``; the other ``n_classes - 1``
    classes share ``1 - confidence`` evenly. The argmax (pass ``predicted``
    as ``y_pred`` to be sure with ties at ``1/K``) and the top-1 confidence
    are those given, so accuracy, calibration and identification estimates
    are exact. The other classes' scores are not the model's: a confusion
    matrix or cost estimator on them is exact with ``prior="uniform"``,
    while its informative prior would spread the rest evenly.

    Raises
    ------
    ValueError
        If a confidence is NaN, outside [1/n_classes, 1] (a top-1 probability
        cannot be below 1/K), or a predicted class is not in ``0..K-1``.
    """
    predicted = np.asarray(predicted)
    confidence = np.asarray(confidence, dtype=np.float64)
    bad = ~((confidence >= 1.0 / n_classes) & (confidence <= 1.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"A top-1 confidence must lie in [1/K, 1] = [{1 / n_classes:.4g}, 1]; row {row} "
            f"has {as_scalar(confidence[row])!r}."
        )
    if predicted.size and (predicted.min() < 0 or predicted.max() >= n_classes):
        raise ValueError(f"predicted classes must lie in 0..{n_classes - 1}.")
    rest = (1.0 - confidence) / (n_classes - 1)
    scores = np.repeat(rest[:, None], n_classes, axis=1)
    scores[np.arange(len(scores)), predicted] = confidence
    return scores

"""Several black boxes' scores on the same items, and their agreement patterns.

An item's agreement pattern is which of the models predict the same class as
which others; with the item's true class it tells which models were right.
Items of one pattern are exchangeable for the comparison, so the posterior
needs only the counts per pattern."""

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_array

from ..utils._sklearn_compat import Interval
from ..utils._sklearn_compat import sklearn_validate_params as validate_params
from ..utils._validation import check_scores, naming


@validate_params(
    {
        "X": ["array-like"],
        "n_models": [Interval(Integral, 2, None, closed="left"), None],
        "n_classes": [Interval(Integral, 2, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def check_model_scores(X, n_models=None, n_classes=None):
    """Scores of M models on the same items as an array ``(n_samples, M, K)``.

    ``X`` is an array of that shape, an array ``(n_samples, M)`` of P(class 1)
    of binary models, or a list of M score arrays ``(n_samples, K)`` or
    ``(n_samples,)``.
    """
    if isinstance(X, (list, tuple)):
        parts = [check_scores(s, input_name=f"X[{m}]") for m, s in enumerate(X)]
        if len({p.shape for p in parts}) > 1:
            raise ValueError(
                f"X: the models' score arrays differ in shape: {[p.shape for p in parts]}."
            )
        S = np.stack(parts, axis=1) if parts else np.empty((0, 0, 0))
    else:
        with naming("X"):
            # scikit-learn's messages for complex, empty and non-finite input
            A = check_array(X, dtype=np.float64, allow_nd=True, ensure_2d=False, input_name="X")
        if A.ndim >= 2 and np.any(A < 0):
            raise ValueError(
                "Negative values in data passed to X: scores are probabilities in [0, 1]."
            )
        if A.ndim not in (2, 3):
            raise ValueError(
                f"X must be (n_samples, n_models, n_classes), (n_samples, "
                f"n_models) or a list of score arrays; got shape {A.shape}."
            )
        if A.shape[1]:  # each model's scores checked (binary ones made two columns)
            models = [check_scores(A[:, m], input_name=f"X[:, {m}]") for m in range(A.shape[1])]
            S = np.stack(models, axis=1)
        else:  # no model: refused below with the count
            S = np.empty((A.shape[0], 0, 2)) if A.ndim == 2 else A
    if S.ndim != 3 or S.shape[1] < 2:
        raise ValueError(
            f"X must hold the scores of at least two models; got "
            f"{S.shape[1] if S.ndim == 3 else 0}."
        )
    if S.shape[0] == 0:
        raise ValueError("X has no rows.")
    if n_models is not None and S.shape[1] != n_models:
        raise ValueError(
            f"X has {S.shape[1]} models, but the estimator was fitted with {n_models}."
        )
    if n_classes is not None and S.shape[2] != n_classes:
        raise ValueError(
            f"X has {S.shape[2]} classes, but the estimator was fitted with {n_classes}."
        )
    return S


@validate_params({"predictions": ["array-like"]}, prefer_skip_nested_validation=True)
def agreement_patterns(predictions):
    """Each row's agreement pattern: which models predict the same class.

    Parameters
    ----------
    predictions : ndarray of shape (n_samples, n_models)
        Predicted classes.

    Returns
    -------
    blocks : ndarray of shape (n_samples, n_models)
        Block of each model: models with the same prediction share a block;
        blocks are numbered by first appearance (``[0, 0, 1]``: the first two
        models agree, the third differs), so equal rows mean equal patterns.

    Examples
    --------
    >>> import numpy as np
    >>> agreement_patterns(np.array([[3, 3, 1], [2, 0, 2], [5, 5, 5]]))
    array([[0, 0, 1],
           [0, 1, 0],
           [0, 0, 0]])
    """
    P = np.asarray(predictions)
    if P.ndim != 2:
        raise ValueError(f"predictions must be 2-D (n_samples, n_models); got shape {P.shape}.")
    n, M = P.shape
    blocks = np.zeros((n, M), dtype=np.int64)
    for m in range(1, M):
        # the block of the first earlier model with the same prediction, else a new one
        new = blocks[:, :m].max(axis=1) + 1
        same = P[:, :m] == P[:, [m]]
        first = np.argmax(same, axis=1)
        blocks[:, m] = np.where(same.any(axis=1), blocks[np.arange(n), first], new)
    return blocks

"""The one table of rates: every rate is P(outcome | condition) over labeled rows.

==============  ===============  ===============  ==============================
rate            condition        outcome          also known as
==============  ===============  ===============  ==============================
accuracy        always           y == pred        (any number of classes)
tpr             y == 1           pred == 1        recall, sensitivity
fnr             y == 1           pred == 0        miss rate
tnr             y == 0           pred == 0        specificity
fpr             y == 0           pred == 1        fall-out
ppv             pred == 1        y == 1           precision
npv             pred == 0        y == 0
selection_rate  always           pred == 1        (needs no label)
==============  ===============  ===============  ==============================

All but accuracy are for binary problems with class 1 positive. The model's
own scores give the *expected* condition and outcome of any row by averaging
over ``y ~ Bernoulli(p_1)`` (for accuracy, ``P(y == pred) = p_pred``); the
informative priors and the fairness posteriors use them.
"""

from numbers import Integral

import numpy as np

from ..utils._params import validate_params
from ..utils._sklearn_compat import StrOptions

__all__ = ["RATES", "canonical_rate", "expected_rate_terms", "rate_terms"]


def _one(pred, y):
    return np.ones(np.broadcast(pred, y).shape)


#: rate -> (condition(pred, y), outcome(pred, y)), both 0/1.
_TABLE = {
    "accuracy": (_one, lambda p, y: (y == p) * 1.0),
    "tpr": (lambda p, y: (y == 1) * _one(p, y), lambda p, y: (p == 1) * _one(p, y)),
    "fnr": (lambda p, y: (y == 1) * _one(p, y), lambda p, y: (p == 0) * _one(p, y)),
    "tnr": (lambda p, y: (y == 0) * _one(p, y), lambda p, y: (p == 0) * _one(p, y)),
    "fpr": (lambda p, y: (y == 0) * _one(p, y), lambda p, y: (p == 1) * _one(p, y)),
    "ppv": (lambda p, y: (p == 1) * _one(p, y), lambda p, y: (y == 1) * _one(p, y)),
    "npv": (lambda p, y: (p == 0) * _one(p, y), lambda p, y: (y == 0) * _one(p, y)),
    "selection_rate": (_one, lambda p, y: (p == 1) * _one(p, y)),
}
_ALIASES = {"precision": "ppv", "recall": "tpr"}

#: Every rate name the package accepts (aliases included).
RATES = tuple(_TABLE) + tuple(_ALIASES)
#: Rates whose condition depends on the true label only.
CONDITION_ON_LABEL = ("tpr", "fnr", "tnr", "fpr")
#: Rates whose condition depends on the prediction only.
CONDITION_ON_PREDICTION = ("ppv", "npv")


def canonical_rate(name):
    """The table's name of a rate (``"precision"`` -> ``"ppv"``)."""
    if not isinstance(name, str) or name not in RATES:
        raise ValueError(f"unknown rate {name!r}; rates are {sorted(RATES)}.")
    return _ALIASES.get(name, name)


@validate_params(
    {
        "rate": [StrOptions(set(RATES))],
        "y_pred": [Integral, "array-like"],
        "y_true": [Integral, "array-like"],
    },
    prefer_skip_nested_validation=True,
)
def rate_terms(rate, y_pred, y_true):
    """Condition and outcome (0/1 floats) of rows with prediction ``y_pred`` and label ``y_true``.

    Parameters
    ----------
    rate : str
        A name in :data:`RATES`.
    y_pred, y_true : array-like of int
        Predicted and true class indices (broadcast against each other).

    Returns
    -------
    condition, outcome : ndarray
        The rate is ``sum(condition * outcome) / sum(condition)``.

    Examples
    --------
    >>> from skassess.metrics._rate_table import rate_terms
    >>> cond, out = rate_terms("tpr", [1, 0, 1], [1, 1, 0])
    >>> float((cond * out).sum() / cond.sum())
    0.5
    """
    condition, outcome = _TABLE[canonical_rate(rate)]
    y_pred, y_true = np.asarray(y_pred), np.asarray(y_true)
    return condition(y_pred, y_true), outcome(y_pred, y_true)


@validate_params(
    {
        "rate": [StrOptions(set(RATES))],
        "scores": ["array-like"],
        "y_pred": ["array-like"],
    },
    prefer_skip_nested_validation=True,
)
def expected_rate_terms(rate, scores, y_pred):
    """Expected condition and condition x outcome of each row under its own scores.

    Parameters
    ----------
    rate : str
    scores : ndarray of shape (n, K)
        Class probabilities (K = 2 for every rate but accuracy).
    y_pred : ndarray of shape (n,)
        Predicted class of each row.

    Returns
    -------
    condition, joint : ndarray of shape (n,)
        ``E[condition]`` and ``E[condition * outcome]`` with ``y ~ scores``.
    """
    rate = canonical_rate(rate)
    scores = np.asarray(scores, dtype=np.float64)
    y_pred = np.asarray(y_pred)
    if rate == "accuracy":
        return np.ones(len(y_pred)), np.take_along_axis(scores, y_pred[:, None], axis=1)[:, 0]
    p1 = scores[:, 1]
    cond0, out0 = rate_terms(rate, y_pred, 0)
    cond1, out1 = rate_terms(rate, y_pred, 1)
    return (1 - p1) * cond0 + p1 * cond1, (1 - p1) * cond0 * out0 + p1 * cond1 * out1

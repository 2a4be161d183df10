"""Item-level acquisitions from a surrogate's member probabilities: BALD and ALT-MAS.

``proba`` has shape ``(n_members, n_items, n_classes)``: ``p(y = h | x, omega_m)``.

BALD (Houlsby et al. 2011) is the mutual information between an item's label
and the surrogate's weights, ``H[mean_m p_m] - mean_m H[p_m]``.

The metric-aware acquisition of ALT-MAS (Ha et al., eqs. 4 and 8-11) is the
mutual information between the *value a metric takes* once the item's label
``y_hat`` is known and the weights. That value depends on ``y_hat`` only
through a partition of the classes, so the mutual information is BALD on the
partition's cells. For an item the model under test predicts as ``a``:

=====================  ======================================================
metric                 classes of y_hat that give the metric one value
=====================  ======================================================
accuracy               {a} / the others
precision of class c   {c} / the others when a = c; one cell (no information)
                       otherwise: the item is not among the predicted c
recall, F1 of class c  {c} / the others
macro-F1               every class its own cell (ŷ = j changes F1_j): BALD
=====================  ======================================================

So every per-class term is the binary mutual information of the event
``y_hat = c``, and a metric set's utility is a weighted sum of an
``(n_items, n_classes)`` array: O(members x items x classes) in all.
"""

import numpy as np
from scipy.special import entr

__all__ = ["METRICS", "bald", "binary_information", "metric_utility", "parse_metrics"]

#: Metric names: overall ones and per-class ones (expanded to every class).
METRICS = ("accuracy", "macro_f1", "precision", "recall", "f1")
_PER_CLASS = ("precision", "recall", "f1")


def _entropy(p, axis=-1):
    return entr(p).sum(axis=axis)


def bald(proba):
    """BALD: ``H[mean_m p_m] - mean_m H[p_m]`` per item, shape (n_items,)."""
    proba = np.asarray(proba, dtype=np.float64)
    return np.maximum(_entropy(proba.mean(axis=0)) - _entropy(proba).mean(axis=0), 0.0)


def _binary_entropy(p):
    return entr(p) + entr(1.0 - p)


def binary_information(proba):
    """Mutual information of the event ``y = c`` and the weights, shape (n_items, n_classes)."""
    proba = np.asarray(proba, dtype=np.float64)
    info = _binary_entropy(proba.mean(axis=0)) - _binary_entropy(proba).mean(axis=0)
    return np.maximum(info, 0.0)


def _is_pair(metric):
    # ("recall", 3) is one metric; ("accuracy", "recall") a sequence of names.
    return (
        isinstance(metric, tuple)
        and len(metric) == 2
        and metric[0] in _PER_CLASS
        and metric[1] not in METRICS
    )


def parse_metrics(metrics, classes):
    """``[(name, class index or None), ...]`` from names and ``(name, class)`` pairs.

    A per-class name alone (``"precision"``) means that metric for every class.
    ``metrics`` is one name, one pair, or a list or tuple of them.
    """
    classes = list(classes)
    if isinstance(metrics, str) or _is_pair(metrics):
        metrics = [metrics]
    out = []
    for metric in metrics:
        if isinstance(metric, tuple):
            if len(metric) != 2 or metric[0] not in _PER_CLASS:
                raise ValueError(
                    f"a metric pair must be (name, class) with name in {_PER_CLASS}; got "
                    f"{metric!r}."
                )
            if metric[1] not in classes:
                raise ValueError(
                    f"metric {metric!r} names class {metric[1]!r}, which is not "
                    f"one of the classes {classes}."
                )
            out.append((metric[0], classes.index(metric[1])))
        elif metric in _PER_CLASS:
            out.extend((metric, c) for c in range(len(classes)))
        elif metric in ("accuracy", "macro_f1"):
            out.append((metric, None))
        else:
            raise ValueError(
                f"metrics must hold names in {METRICS} or (name, class) pairs; got {metric!r}."
            )
    if not out:
        raise ValueError("metrics is empty; name at least one metric.")
    return out


def metric_utility(proba, y_pred, metrics):
    """ALT-MAS's utility: the summed mutual information of ``metrics``' values, per item.

    Parameters
    ----------
    proba : array-like of shape (n_members, n_items, n_classes)
        The surrogate members' class probabilities.
    y_pred : array-like of int of shape (n_items,)
        Class index the model under test predicts for each item.
    metrics : list of (name, class index or None)
        As returned by :func:`parse_metrics`.

    Returns
    -------
    utility : ndarray of shape (n_items,)
    """
    proba = np.asarray(proba, dtype=np.float64)
    y_pred = np.asarray(y_pred)
    n_items, n_classes = proba.shape[1:]
    info = binary_information(proba)
    # Weight of each (item, class) binary term, summed over the metrics.
    weight = np.zeros((n_items, n_classes))
    rows = np.arange(n_items)
    utility = np.zeros(n_items)
    for name, c in metrics:
        if name == "accuracy":
            weight[rows, y_pred] += 1.0
        elif name == "precision":
            weight[:, c] += y_pred == c
        elif name in ("recall", "f1"):
            weight[:, c] += 1.0
        else:  # macro_f1
            utility += bald(proba)
    return utility + (weight * info).sum(axis=1)

"""ALT-MAS's augmentation: pool items whose predicted label is taken as true.

Ha et al. (Sec. 3.1, App. B.2) train a binary classifier of "the model under
test is right" on the labeled items, split into a training and a validation
part, with the minority class over-sampled. The probability threshold is the
one of highest precision on the validation part; of the unlabeled items above
it, the ``N_s = precision^2 x |set|`` most probable get their predicted label
as a pseudo-label (Remark B.3 squares the precision to keep the set accurate).
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

__all__ = ["pseudo_labels"]


def pseudo_labels(
    X, y_pred, labeled, labels, *, validation_fraction=0.3, classifier=None, rng=None
):
    """Indices of unlabeled items to pseudo-label with the model's prediction.

    Parameters
    ----------
    X : ndarray of shape (n_pool, n_features)
        Features of every pool item.
    y_pred : ndarray of shape (n_pool,)
        The model's predicted class index of every item.
    labeled : ndarray of int, shape (n_labeled,)
        Indices of the labeled items.
    labels : ndarray of shape (n_labeled,)
        Their true class indices.
    validation_fraction : float, default=0.3
        Share of the labeled items that tunes the threshold.
    classifier : classifier, default=None
        The binary classifier (None: an MLP with two hidden layers of 64).
    rng : numpy.random.Generator, default=None

    Returns
    -------
    indices : ndarray of int
        Unlabeled items whose prediction is used as their label (empty when
        the labels do not hold both right and wrong predictions, or when no
        threshold has a right prediction above it on the validation part).
    """
    rng = np.random.default_rng(rng)
    labeled = np.asarray(labeled)
    correct = (np.asarray(labels) == y_pred[labeled]).astype(int)
    if correct.min() == correct.max() or len(labeled) < 4:
        return np.empty(0, dtype=np.intp)
    order = rng.permutation(len(labeled))
    n_val = max(1, int(round(validation_fraction * len(labeled))))
    val, train = order[:n_val], order[n_val:]
    if np.unique(correct[train]).size < 2:
        return np.empty(0, dtype=np.intp)
    # Over-sample the minority class of the training part to balance it.
    pos, neg = train[correct[train] == 1], train[correct[train] == 0]
    small, big = (pos, neg) if len(pos) < len(neg) else (neg, pos)
    train = np.concatenate([big, rng.choice(small, len(big), replace=True)])
    if classifier is None:
        classifier = MLPClassifier(
            hidden_layer_sizes=(64, 64), max_iter=200, random_state=int(rng.integers(2**31 - 1))
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        classifier.fit(X[labeled[train]], correct[train])
    p_val = classifier.predict_proba(X[labeled[val]])[:, 1]
    # The threshold of highest validation precision (ties: the lowest threshold).
    best, precision = None, 0.0
    for threshold in np.unique(p_val):
        chosen = p_val >= threshold
        prec = correct[val][chosen].mean()
        if prec > precision:
            best, precision = threshold, prec
    if best is None:
        return np.empty(0, dtype=np.intp)
    unlabeled = np.setdiff1d(np.arange(len(y_pred)), labeled)
    p = classifier.predict_proba(X[unlabeled])[:, 1]
    above = np.flatnonzero(p >= best)
    n_s = int(precision**2 * len(above))
    return unlabeled[above[np.argsort(-p[above], kind="stable")[:n_s]]]

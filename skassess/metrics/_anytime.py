"""An anytime-valid interval of the accuracy for labels drawn one by one, with the scores.

A credible interval read after every label, with labeling stopped once it is
narrow enough, does not keep its frequentist level in general. A confidence
*sequence* does: with probability ``level`` it holds the accuracy at every
number of labels at once, so any stopping rule keeps it.

Rows labeled in a uniformly random order (with replacement from the pool;
without replacement is conservative) give, at step ``i``,

    x_i = mean_pool(f) + right_i - f(row_i),

with ``f`` the calibrated prior's posterior-mean probability of being right,
fitted on the labels *before* step ``i`` (predictable), so ``E[x_i | past]``
is the pool's accuracy whatever ``f`` is; ``f`` only narrows the spread of
``x``. The ``x_i`` lie in ``[-1, 2]`` and are mapped to [0, 1]; the interval
is the predictable plug-in empirical-Bernstein confidence sequence of
Waudby-Smith and Ramdas (2024, JRSS-B, eq. 13-15), intersected over the
steps. The formula is short and closed form; the one package that
implements it (``confseq``) ships only as C++ source, so it is written here.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..utils._params import LEVEL, validate_params
from ..utils._sklearn_compat import Interval
from ..utils._validation import check_classes, check_labels, validate_scores
from ._accuracy import BayesianAccuracy

#: The largest bet ``lambda_i`` (Waudby-Smith and Ramdas use 1/2 or 3/4).
MAX_BET = 0.5


@validate_params(
    {
        "X": ["array-like"],
        "rows": ["array-like"],
        "labels": ["array-like"],
        "level": [LEVEL],
        "refit_every": [Interval(Integral, 1, None, closed="left")],
        "y_pred": ["array-like", None],
        "classes": ["array-like", None],
        "missing_label": [Integral, Real, str, None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def anytime_accuracy_interval(
    X,
    rows,
    labels,
    *,
    level=0.95,
    refit_every=20,
    y_pred=None,
    classes=None,
    missing_label=-1,
    random_state=None,
):
    """Anytime-valid confidence sequence of the pool's accuracy, from labels in order.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
        Black-box scores of the whole pool.
    rows : array-like of int, shape (n_labels,)
        The pool rows labeled, in the order they were labeled; they must have
        been chosen uniformly at random.
    labels : array-like of shape (n_labels,)
        Their true labels.
    level : float, default=0.95
        Probability that every interval of the sequence holds the accuracy.
    refit_every : int, default=20
        Labels between refits of the calibration map ``f`` (each refit uses
        only the labels before it).
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predictions; None: the argmax of ``X``.
    classes : array-like of shape (n_classes,), default=None
        Label of each score column, when ``labels`` holds names.
    missing_label : int, float, str or None, default=-1
        Not allowed among ``labels`` (every given row is labeled).
    random_state : int, RandomState instance or None, default=None
        Seed of the calibration map's posterior draws (its mean at each
        score); the sequence is valid whatever it is.

    Returns
    -------
    lower, upper : ndarray of shape (n_labels,)
        The interval after each label (running intersection: never wider
        than the one before).

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import anytime_accuracy_interval
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 5000)
    >>> X = np.column_stack([1 - conf, conf])
    >>> y_true = (rng.uniform(size=5000) < conf).astype(int)  # calibrated scores
    >>> rows = rng.choice(5000, 300, replace=False)
    >>> lower, upper = anytime_accuracy_interval(X, rows, y_true[rows])
    >>> bool(lower[-1] < np.mean(y_true == 1) < upper[-1])
    True
    """
    est = BayesianAccuracy(prior="calibrated", classes=classes, missing_label=missing_label)
    est.fit(X, y_pred=y_pred)
    _, pred, conf = validate_scores(est, X, y_pred=y_pred, reset=False)
    N = conf.size
    rows = np.asarray(rows)
    if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer) or rows.size == 0:
        raise ValueError(f"rows must be a non-empty 1-d array of row indices; got {rows!r}.")
    if rows.min() < 0 or rows.max() >= N:
        bad = rows[(rows < 0) | (rows >= N)][0]
        raise ValueError(f"rows holds {bad}, outside the pool of {N} rows.")
    if len(labels) != rows.size:
        raise ValueError(
            f"labels must hold one label per row: {rows.size} rows and {len(labels)} labels."
        )
    codes = check_labels(
        labels,
        rows.size,
        est.n_classes_,
        None if classes is None else check_classes(classes, est.n_classes_),
        missing_label=None,
        name="labels",
    )
    right = (pred[rows] == codes).astype(np.float64)
    # one seed per refit, drawn before any (the map's draws never see the labels' order)
    seeds = check_random_state(random_state).randint(2**31 - 1, size=rows.size)
    x = np.empty(rows.size)
    f = conf.copy()  # before any label: the scores as they are
    for start in range(0, rows.size, refit_every):
        if start:
            y = np.full(N, -1)
            y[rows[:start]] = codes[:start]
            fitted = BayesianAccuracy(prior="calibrated", random_state=seeds[start])
            fitted.fit(X, y, y_pred=pred)
            f = fitted.predict_proba(X, y_pred=pred)[:, 1]
        block = slice(start, start + refit_every)
        x[block] = f.mean() + right[block] - f[rows[block]]
    # x lies in [m - 1, m + 1] within [-1, 2] whatever f is: one map to [0, 1] for all
    # steps keeps the mean of the mapped values fixed, (accuracy + 1) / 3.
    lower, upper = _prpl_eb((x + 1.0) / 3.0, 1.0 - level)
    lo = np.maximum.accumulate(np.clip(3.0 * lower - 1.0, 0.0, 1.0))
    hi = np.minimum.accumulate(np.clip(3.0 * upper - 1.0, 0.0, 1.0))
    return lo, np.maximum(hi, lo)


def _prpl_eb(y, alpha):
    """Predictable plug-in empirical-Bernstein confidence sequence of the mean of y in [0, 1]."""
    n = y.size
    i = np.arange(1, n + 1)
    mu_hat = (0.5 + np.cumsum(y)) / (i + 1)
    sigma2_hat = (0.25 + np.cumsum((y - mu_hat) ** 2)) / (i + 1)
    prev_sigma2 = np.r_[0.25, sigma2_hat[:-1]]
    prev_mu = np.r_[0.5, mu_hat[:-1]]
    lam = np.minimum(np.sqrt(2 * np.log(2 / alpha) / (prev_sigma2 * i * np.log(1 + i))), MAX_BET)
    v = 4.0 * (y - prev_mu) ** 2
    psi = (-np.log1p(-lam) - lam) / 4.0
    centre = np.cumsum(lam * y) / np.cumsum(lam)
    radius = (np.log(2 / alpha) + np.cumsum(v * psi)) / np.cumsum(lam)
    return centre - radius, centre + radius

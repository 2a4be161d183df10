"""How many labels: the expected width of the overall-accuracy interval at n labels."""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import stats

from ..utils import LEVEL, check_labels, validate_params, validate_scores
from ..utils._sklearn_compat import Interval
from ._accuracy import BayesianAccuracy

#: Budgets shown when none are asked for.
DEFAULT_BUDGETS = (20, 50, 100, 200, 500, 1000, 2000, 5000)


@dataclass
class LabelPlan:
    """The expected interval widths at several budgets and the budget for a target width.

    Read more in the :ref:`User Guide <ug_calibrated_prior>`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per budget ``n_labels`` (labels in all, those already given
        included): ``width`` (the expected width of the calibrated prior's
        overall-accuracy interval) and ``labels_only_width`` (Wilson's, from
        the labels alone).
    n_needed : int or None
        The fewest labels (in all) whose expected width is at most
        ``width``; None when no target was given. At most the pool's size
        (labeling every row gives width 0).
    residual_sd : float
        The standard deviation of ``right - P(right)`` per row that the
        widths assume.
    source : str
        ``"scores"`` (no labels: the scores taken as calibrated) or
        ``"labels"`` (the calibration map fitted to the labels so far).
    """

    table: pd.DataFrame
    n_needed: int | None
    residual_sd: float
    source: str


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like", None],
        "width": [Interval(Real, 0, 1, closed="neither"), None],
        "n_labels": ["array-like", None],
        "level": [LEVEL],
        "y_pred": ["array-like", None],
        "missing_label": [Integral, Real, str, None],
    },
    prefer_skip_nested_validation=True,
)
def plan_labels(X, y=None, *, width=None, n_labels=None, level=0.95, y_pred=None, missing_label=-1):
    """Expected width of the overall-accuracy interval at n random labels, and n for a width.

    The calibrated prior's overall interval narrows like that of the
    regression (difference) estimator it generalises: with ``n`` of the
    pool's ``N`` rows labeled at random, its width is about

    ``2 z sqrt((1 - n / N) s^2 / n)``,

    with ``s^2`` the variance per row of ``right - P(right)`` under the fitted
    calibration map and ``z`` the normal quantile of ``level``. Before any
    label the scores are taken as calibrated, ``s^2 = mean(c (1 - c))`` over
    the pool's top-1 confidences ``c``; once rows are labeled, it is the same
    mean with the posterior mean probability of being right of each row under
    the map fitted to them (``BayesianAccuracy(prior="calibrated")``) in place
    of ``c``. Labels-only (Wilson) widths are shown beside.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
        Black-box scores of the whole pool.
    y : array-like of shape (n_samples,), default=None
        True labels, ``missing_label`` where unknown. None: no label yet.
    width : float in (0, 1), default=None
        Target width of the interval; sets ``n_needed``.
    n_labels : array-like of int, default=None
        Budgets to show; None: 20, 50, ..., 5000 (those below the pool's size).
    level : float, default=0.95
        Credible level of the interval.
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predictions; None: the argmax of ``X``.
    missing_label : int, float, str or None, default=-1
        The value of ``y`` that marks an unlabeled row.

    Returns
    -------
    LabelPlan

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import plan_labels
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 10_000)
    >>> plan = plan_labels(np.column_stack([1 - conf, conf]), width=0.05)
    >>> plan.n_needed
    930
    """
    est = BayesianAccuracy(prior="calibrated", missing_label=missing_label, random_state=0)
    est.fit(X, y, y_pred=y_pred)
    _, pred, conf = validate_scores(est, X, y_pred=y_pred, reset=False)
    N = conf.size
    z = stats.norm.ppf(0.5 + level / 2.0)
    codes = (
        np.full(N, -1)
        if y is None
        else check_labels(y, N, est.n_classes_, None, missing_label=est.missing_label)
    )
    labeled = codes >= 0
    n_have = int(labeled.sum())
    if n_have < 3:
        var = float(np.mean(conf * (1.0 - conf)))
        rate = float(np.mean(conf))
        source = "scores"
    else:
        # The Bernoulli variance the fitted map gives every row of the pool: steadier
        # than the few labeled rows' squared residuals (two errors in 50 labels of
        # a 97 %-accurate model would predict half the width).
        p = est.predict_proba(X, y_pred=y_pred)[:, 1]
        var = float(np.mean(p * (1.0 - p)))
        rate = est.overall_mean()
        source = "labels"
    budgets = np.array(DEFAULT_BUDGETS if n_labels is None else n_labels, dtype=np.int64)
    if n_labels is None:
        budgets = budgets[budgets < N]
    if np.any(budgets < 1) or np.any(budgets > N):
        raise ValueError(
            f"n_labels must be between 1 and the pool's size {N}; got {budgets.tolist()!r}."
        )
    fpc = np.maximum(1.0 - budgets / N, 0.0)
    table = pd.DataFrame(
        {
            "n_labels": budgets,
            "width": 2 * z * np.sqrt(fpc * var / budgets),
            "labels_only_width": [_wilson_width(rate, int(n), z) for n in budgets],
        }
    )
    n_needed = None
    if width is not None:
        n0 = (2 * z) ** 2 * var / width**2
        n_needed = int(min(np.ceil(n0 / (1.0 + n0 / N)), N))
    return LabelPlan(table, n_needed, float(np.sqrt(var)), source)


def _wilson_width(rate, n, z):
    """Width of Wilson's interval for a rate observed on n labels."""
    centre_sd = np.sqrt(rate * (1 - rate) / n + z**2 / (4 * n**2))
    return float(2 * z * centre_sd / (1 + z**2 / n))

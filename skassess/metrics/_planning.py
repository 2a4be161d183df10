"""How many labels: the expected width of the overall interval at n labels."""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import special, stats
from sklearn.utils import check_random_state

from ..utils._params import LEVEL, validate_params
from ..utils._sklearn_compat import Interval, StrOptions
from ..utils._validation import check_labels, validate_scores
from ._accuracy import BayesianAccuracy
from ._calibrated import fit_calibrated_rates
from ._calibrated_model import RATIO_PRIOR_DOF
from ._rate_table import canonical_rate, expected_rate_terms
from ._rates import METRICS

#: Budgets shown when none are asked for.
DEFAULT_BUDGETS = (20, 50, 100, 200, 500, 1000, 2000, 5000)
#: Share of the accuracy plan's band: its ends are these central percentiles of
#: the widths the posterior's draws of the map and of the dispersion give.
BAND = 0.90
#: Posterior draws behind the band.
BAND_DRAWS = 400
#: Probability points of the dispersion's posterior in the width's spread factor.
N_RATIO_POINTS = 100


@dataclass
class LabelPlan:
    """The expected interval widths at several budgets and the budget for a target width.

    Read more in the :ref:`User Guide <ug_calibrated_prior>`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per budget ``n_labels`` (labels in all, those already given
        included): ``width`` (the expected width of the calibrated prior's
        overall interval of the metric), ``width_lower`` and ``width_upper``
        (where the expected width is likely to be, given how uncertain the
        map fitted to the labels so far still is: the 5th and 95th
        percentiles of the widths its posterior draws give; NaN from the
        scores alone and for a binary rate) and ``labels_only_width``
        (Wilson's, from the labels alone; for a binary rate, on the expected
        number of labeled rows its condition holds for).
    n_needed : int or None
        The fewest labels (in all) whose expected width is at most
        ``width``; None when no target was given. At most the pool's size
        (labeling every row gives width 0).
    residual_sd : float or None
        The standard deviation of ``right - P(right)`` per row that the
        widths assume; None for a binary rate (its widths are simulated).
    source : str
        ``"scores"`` (no labels: the scores taken as calibrated) or
        ``"labels"`` (the calibration map fitted to the labels so far).
    metric : str
        The metric planned for.
    n_needed_range : tuple of int or None
        ``(fewest, most)``: the budgets at which ``width_lower`` and
        ``width_upper`` reach ``width``; None without a target, from the
        scores alone and for a binary rate.
    dispersion : float or None
        The labels' dispersion around the fitted map that the band assumes
        (``dispersion_`` of the fit; 1 when the map holds); None from the
        scores alone and for a binary rate.
    """

    table: pd.DataFrame
    n_needed: int | None
    residual_sd: float | None
    source: str
    metric: str = "accuracy"
    n_needed_range: tuple | None = None
    dispersion: float | None = None


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like", None],
        "width": [Interval(Real, 0, 1, closed="neither"), None],
        "n_labels": ["array-like", None],
        "level": [LEVEL],
        "metric": [StrOptions(set(METRICS) - {"selection_rate"})],
        "n_simulations": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "y_pred": ["array-like", None],
        "missing_label": [Integral, Real, str, None],
    },
    prefer_skip_nested_validation=True,
)
def plan_labels(
    X,
    y=None,
    *,
    width=None,
    n_labels=None,
    level=0.95,
    metric="accuracy",
    n_simulations=20,
    random_state=None,
    progress=True,
    y_pred=None,
    missing_label=-1,
):
    """Expected width of the overall interval at n random labels, and n for a width.

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

    From labels, the plan also gives a band, ``width_lower`` to
    ``width_upper``: each of 400 posterior draws of the map (its level, slope
    and group deviations) and of the labels' dispersion ``R`` around it
    (``dispersion_``) gives its own width, widened as the fit's interval is
    where the labels stray from the map (by the spread of ``R``, with its
    degrees of freedom grown in proportion to ``n``), and the band is their
    5th to 95th percentiles. It is wide where the labels have placed the map
    poorly (few labels, or none of them wrong) and narrow where they have
    (how often it holds the realised width: user guide, *How many labels*).

    A binary rate's interval (``metric="tpr"``, ``"ppv"``, ...) narrows with
    how many labeled rows meet its condition and how sure the map is of
    them, which no closed form of the scores follows (the regression
    estimator's width overshot the calibrated prior's realised one by 1.3-5
    times on saturated scores); its widths are simulated instead. Each of
    ``n_simulations`` times, every unlabeled row's class is drawn from the
    probability of the positive class that the scores (taken as calibrated)
    or the rate's map fitted to the labels give it
    (:meth:`~skassess.BayesianAccuracy.predict_positive_proba`), the budget's rows are drawn at
    random (one order per simulation, the labels already given kept), and
    ``BayesianAccuracy(metric=metric)`` is fitted to them; ``width`` is the
    mean width of its overall interval. ``n_needed`` interpolates between the
    simulated budgets on the scale of the regression estimator's width (the
    factor ``sqrt((1 - n / N) / n)``), so give budgets around the target.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
        Black-box scores of the whole pool.
    y : array-like of shape (n_samples,), default=None
        True labels, ``missing_label`` where unknown. None: no label yet.
    width : float in (0, 1), default=None
        Target width of the interval; sets ``n_needed``.
    n_labels : array-like of int, default=None
        Budgets to show; None: 20, 50, ..., 5000 (those below the pool's
        size; for a binary rate, the labels already given and the budgets
        above them).
    level : float, default=0.95
        Credible level of the interval.
    metric : {"accuracy", "tpr", "fnr", "tnr", "fpr", "ppv", "npv"}, default="accuracy"
        The overall metric whose interval is planned; a rate needs binary
        scores (class 1 positive). ``"precision"`` and ``"recall"`` are
        aliases of ``"ppv"`` and ``"tpr"``.
    n_simulations : int, default=20
        Simulated labelings per budget (a binary rate only).
    random_state : int, RandomState instance or None, default=None
        Seed of the simulations (a binary rate) or of the band's draws
        (accuracy, from labels).
    progress : bool, default=True
        A progress bar over the simulations (tqdm, on standard error) when
        they take over 2 s.
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predictions; None: the argmax of ``X``.
    missing_label : int, float, str or None, default=-1
        The value of ``y`` that marks an unlabeled row, besides NaN, None and
        ``pd.NA``, which always mark one.

    Returns
    -------
    LabelPlan

    Raises
    ------
    ValueError
        A budget outside ``[1, n_samples]``; for a binary rate, scores that
        are not binary, or a budget below the labels already given.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import plan_labels
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 10_000)
    >>> plan = plan_labels(np.column_stack([1 - conf, conf]), width=0.05)
    >>> plan.n_needed
    930
    >>> y = np.full(10_000, -1)  # 50 pilot labels, the black box right as often as it says
    >>> y[:50] = (rng.uniform(size=50) < conf[:50]).astype(int)
    >>> plan = plan_labels(np.column_stack([1 - conf, conf]), y, width=0.05, random_state=0)
    >>> lo, hi = plan.n_needed_range
    >>> bool(lo <= plan.n_needed <= hi)
    True
    >>> p1 = rng.uniform(size=10_000)  # a binary model's positive-class scores
    >>> plan = plan_labels(np.column_stack([1 - p1, p1]), metric="tpr", n_labels=[200, 800],
    ...                    n_simulations=5, random_state=0, progress=False)
    >>> bool(plan.table["width"].is_monotonic_decreasing)
    True
    """
    # Fitted for its checks and counts; its calibrated model is fitted only for a rate.
    est = BayesianAccuracy(
        prior="calibrated", missing_label=missing_label, random_state=random_state
    )
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
    metric = canonical_rate(metric)
    if metric != "accuracy" and est.n_classes_ != 2:
        raise ValueError(
            f"metric={metric!r} is a binary rate (class 1 positive); X has "
            f"{est.n_classes_} classes. Plan metric='accuracy' instead."
        )
    source = "scores" if n_have < 3 else "labels"
    budgets = np.array(DEFAULT_BUDGETS if n_labels is None else n_labels, dtype=np.int64)
    if n_labels is None and metric == "accuracy":
        budgets = budgets[budgets < N]
    elif n_labels is None:
        # A rate's plan starts at the labels already given (its width now).
        budgets = budgets[(budgets < N) & (budgets > n_have)]
        budgets = np.r_[[n_have] if n_have > 0 else [], budgets].astype(np.int64)
        if budgets.size == 0:
            budgets = np.array([N])
    if np.any(budgets < 1) or np.any(budgets > N):
        raise ValueError(
            f"n_labels must be between 1 and the pool's size {N}; got {budgets.tolist()!r}."
        )
    if metric != "accuracy":
        if np.any(budgets < n_have):
            raise ValueError(
                f"n_labels for a rate must be at least the {n_have} labels already given; "
                f"got {budgets.tolist()!r}."
            )
        positive = np.where(pred == 1, conf, 1.0 - conf)
        if source == "labels":
            # The rate's own model: a map of the class per predicted class.
            group = np.zeros(N, dtype=np.intp)
            rate_est = BayesianAccuracy(
                metric=metric, grouping="external", random_state=random_state
            )
            rate_est.fit(X, codes, group_by=group, y_pred=pred)
            positive = rate_est.predict_positive_proba(X, group_by=group, y_pred=pred)
        widths = _simulated_widths(
            X, codes, pred, positive, metric, budgets, level, n_simulations, random_state, progress
        )
        condition, joint = expected_rate_terms(
            metric, np.column_stack([1 - positive, positive]), pred
        )
        rate = joint.sum() / max(condition.sum(), 1e-300)
        share = condition.mean()
        table = pd.DataFrame(
            {
                "n_labels": budgets,
                "width": widths,
                "width_lower": np.nan,  # no band for a rate (user guide, How many labels)
                "width_upper": np.nan,
                "labels_only_width": [_wilson_width(rate, max(n * share, 1.0), z) for n in budgets],
            }
        )
        n_needed = None
        if width is not None:
            n_needed = max(_interpolate_budget(budgets, widths, width, N), n_have)
        return LabelPlan(table, n_needed, None, source, metric)
    # The Bernoulli variance the fitted map gives every row of the pool: steadier
    # than the few labeled rows' squared residuals (two errors in 50 labels of
    # a 97 %-accurate model would predict half the width).
    if source == "scores":
        var = float(np.mean(conf * (1.0 - conf)))
        rate = float(np.mean(conf))
        plan = _AccuracyWidths(N, var, z, level, None, n_have)
    else:
        # The calibrated model BayesianAccuracy fits, from its counts: the map at
        # every row's score, the dispersion.
        rng = np.random.default_rng(check_random_state(random_state).randint(2**32))
        rows = est.score_rows_
        model = fit_calibrated_rates(
            rows, est.score_logit_, est.score_labeled_, est.score_success_, random_state=rng
        )
        p = model.cell_proba()
        var = float((rows * p * (1.0 - p)).sum() / rows.sum())
        rate = float(model.moments()[0] @ rows.sum(axis=1) / rows.sum())
        plan = _AccuracyWidths(N, var, z, level, model.ratio_estimate, n_have)
        plan.draw_band(model.variance_draws(BAND_DRAWS, rng), rng)
    lower, upper = zip(*(plan.band(n) for n in budgets), strict=True)
    table = pd.DataFrame(
        {
            "n_labels": budgets,
            "width": [plan.width(n) for n in budgets],
            "width_lower": lower,
            "width_upper": upper,
            "labels_only_width": [_wilson_width(rate, int(n), z) for n in budgets],
        }
    )
    n_needed = n_range = None
    if width is not None:
        n_needed = _first_budget(lambda n: plan.width(n) <= width, N)
        if source == "labels":
            n_range = (
                _first_budget(lambda n: plan.band(n)[0] <= width, N),
                _first_budget(lambda n: plan.band(n)[1] <= width, N),
            )
    dispersion = None if source == "scores" else float(model.dispersion)
    return LabelPlan(table, n_needed, float(np.sqrt(var)), source, metric, n_range, dispersion)


class _AccuracyWidths:
    """Expected widths of the calibrated prior's overall accuracy interval at n labels.

    ``2 z sqrt((1 - n / N) s^2 / n)`` (the regression estimator's), and with
    :meth:`draw_band` a band: each draw's ``s^2`` times the spread factor of
    its dispersion (:func:`_spread_factor`) with the degrees of freedom ``nu``
    grown to ``nu n / n_have``. ``ratio`` is ``(R_hat, nu)`` of the fit or
    None (no dispersion: the scores alone, or too few labels).
    """

    def __init__(self, N, var, z, level, ratio, n_have):
        self.N, self.var, self.z, self.level = N, var, z, level
        self.ratio, self.n_have = ratio, n_have
        self._var_draws = self._ratio_draws = None
        self._bands = {}  # n -> (lower, upper): the budget's search asks for each end

    def _base(self, n, var):
        return 2 * self.z * np.sqrt(max(1.0 - n / self.N, 0.0) * np.asarray(var) / n)

    def _dof(self, n):
        return self.ratio[1] * n / self.n_have

    def width(self, n):
        """The expected width at ``n`` labels (the regression estimator's).

        The dispersion's factor is in the band only, not in the plan itself
        (the plans' errors against the realised widths:
        ``docs/benchmarks/planning.md``).
        """
        return float(self._base(n, self.var))

    def draw_band(self, var_draws, rng):
        """The band's draws: of the map's variance, and of ``R`` from its posterior."""
        self._var_draws = var_draws
        if self.ratio is not None:
            ratio, nu = self.ratio
            if np.isfinite(nu):
                shape = (RATIO_PRIOR_DOF + nu) / 2.0
                scale = (RATIO_PRIOR_DOF + nu * ratio) / 2.0
                self._ratio_draws = scale / rng.gamma(shape, size=var_draws.size)
            else:
                self._ratio_draws = np.full(var_draws.size, ratio)

    def band(self, n):
        """``(lower, upper)`` of the width at ``n`` labels; NaN without the band's draws."""
        if self._var_draws is None:
            return np.nan, np.nan
        if n not in self._bands:
            widths = self._base(n, self._var_draws)
            if self._ratio_draws is not None:
                widths = widths * _spread_factor(self._ratio_draws, self._dof(n), self.level)
            tail = (1.0 - BAND) / 2.0
            lower, upper = np.quantile(widths, [tail, 1.0 - tail])
            self._bands[n] = float(lower), float(upper)
        return self._bands[n]


def _spread_factor(ratio, nu, level):
    """How much the dispersion widens an interval: its width over the unspread one's.

    The calibrated model spreads each draw by ``sqrt(max(R, 1))`` with ``R``
    from its posterior ``IG(1 + nu / 2, 1 + nu R_hat / 2)`` (``R_hat`` the
    labels' ratio): the interval of a normal whose variance is so scaled,
    a scale mixture, over the normal's. ``ratio`` (an array of ``R_hat``)
    shares one ``nu``; an infinite ``nu`` is ``R`` known, a factor of
    ``sqrt(max(R_hat, 1))``. Returns an array of ``ratio``'s shape, at least 1.

    Not a library function: scipy has no quantile of a normal scale mixture.
    The mixture is integrated at ``N_RATIO_POINTS`` probability points of
    ``R``'s posterior and its quantile found by bisection.
    """
    ratio = np.atleast_1d(np.asarray(ratio, dtype=np.float64))
    if not np.isfinite(nu):
        return np.sqrt(np.maximum(ratio, 1.0))
    shape = (RATIO_PRIOR_DOF + nu) / 2.0
    points = (np.arange(N_RATIO_POINTS) + 0.5) / N_RATIO_POINTS
    # R = scale / G with G ~ Gamma(shape): the points of R at one ratio are the
    # scales over the gamma's quantiles (one set for every ratio).
    inverse_gamma = 1.0 / stats.gamma.ppf(points, shape)
    scale = (RATIO_PRIOR_DOF + nu * ratio) / 2.0
    spread = np.sqrt(np.maximum(scale[:, None] * inverse_gamma[None, :], 1.0))
    target = 0.5 + level / 2.0
    z = stats.norm.ppf(target)
    low, high = np.full(ratio.shape, z), z * spread.max(axis=1)
    for _ in range(40):  # the mixture's quantile lies between z and z times the largest spread
        mid = (low + high) / 2.0
        below = special.ndtr(mid[:, None] / spread).mean(axis=1) < target
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    return (low + high) / 2.0 / z


def _first_budget(reached, N):
    """The fewest labels in ``[1, N]`` for which ``reached(n)`` holds (it holds at ``N``)."""
    lo, hi = 1, int(N)
    while lo < hi:
        mid = (lo + hi) // 2
        if reached(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _simulated_widths(
    X, codes, pred, positive, metric, budgets, level, n_simulations, random_state, progress
):
    """A binary rate's mean interval width at each budget, over simulated labelings.

    ``positive`` is each row's probability of the positive class in the
    simulated pools (see :func:`plan_labels`).
    """
    from tqdm.auto import tqdm

    N = codes.size
    rng = np.random.default_rng(check_random_state(random_state).randint(2**32))
    labeled = codes >= 0
    n_have = int(labeled.sum())
    unlabeled = np.flatnonzero(~labeled)
    group = np.zeros(N, dtype=np.intp)
    widths = np.zeros((n_simulations, budgets.size))
    with tqdm(
        total=widths.size,
        desc=f"{metric.upper()} plan, simulated labelings",
        delay=2,
        leave=False,
        disable=not progress,
    ) as bar:
        for s in range(n_simulations):
            drawn = (rng.random(N) < positive).astype(np.intp)
            drawn[labeled] = codes[labeled]
            order = rng.permutation(unlabeled)
            for j, n in enumerate(budgets):
                y = codes.copy()  # -1 where unlabeled
                take = order[: n - n_have]
                y[take] = drawn[take]
                est = BayesianAccuracy(metric=metric, grouping="external", random_state=s)
                est.fit(X, y, group_by=group, y_pred=pred)
                lower, upper = est.overall_interval(level)
                widths[s, j] = upper - lower
                bar.update(1)
    return widths.mean(axis=0)


def _interpolate_budget(budgets, widths, width, N):
    """The budget at which simulated ``widths`` reach ``width``.

    Each budget's width over the regression estimator's factor ``sqrt((1 -
    n / N) / n)`` is a scale ``c(n)`` that changes slowly with ``n``; it is
    interpolated linearly in ``log n`` between the budgets (held at the
    nearest one outside them), and ``c(n) sqrt((1 - n / N) / n) = width``
    solved for ``n`` on the integers.
    """
    order = np.argsort(budgets)
    n = budgets[order].astype(np.float64)
    fpc = np.sqrt(np.maximum(1.0 - n / N, 0.0) / n)
    keep = fpc > 0
    if not keep.any():
        return int(N)
    scale = widths[order][keep] / fpc[keep]
    log_n = np.log(n[keep])
    candidates = np.arange(1, N + 1, dtype=np.float64)
    c = np.interp(np.log(candidates), log_n, scale)
    reached = c * np.sqrt(np.maximum(1.0 - candidates / N, 0.0) / candidates) <= width
    return int(candidates[np.argmax(reached)]) if reached.any() else int(N)


def _wilson_width(rate, n, z):
    """Width of Wilson's interval for a rate observed on n labels."""
    centre_sd = np.sqrt(rate * (1 - rate) / n + z**2 / (4 * n**2))
    return float(2 * z * centre_sd / (1 + z**2 / n))

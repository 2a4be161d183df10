"""Posteriors of per-group metrics and their differences, with unlabeled rows used."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._validation import _py, check_groups, check_labels, check_level, check_scores
from ..metrics._comparison import GroupComparison
from ._hierarchical import HierarchicalBetaCalibrator

METHODS = ("bayesian-calibration", "beta-binomial", "frequentist")

# Each built-in metric is a ratio of row sums, numerator and denominator affine
# in the true label y: (num0, num1, den0, den1) as functions of the prediction
# give num = num0 + (num1 - num0) y, den likewise.
BUILTIN = {
    "accuracy": lambda p: (1 - p, p, 1 + 0 * p, 1 + 0 * p),
    "tpr": lambda p: (0 * p, p, 0 * p, 1 + 0 * p),
    "fpr": lambda p: (p, 0 * p, 1 + 0 * p, 0 * p),
    "tnr": lambda p: (1 - p, 0 * p, 1 + 0 * p, 0 * p),
    "fnr": lambda p: (0 * p, 1 - p, 0 * p, 1 + 0 * p),
    "ppv": lambda p: (0 * p, p, p, p),
    "npv": lambda p: (1 - p, 0 * p, 1 - p, 1 - p),
    "selection_rate": lambda p: (p, p, 1 + 0 * p, 1 + 0 * p),
}


def _metric_coefficients(name, metric, pred):
    """(a_num, b_num, a_den, b_den) with num = a_num + b_num y, per row."""
    if isinstance(metric, str):
        n0, n1, d0, d1 = BUILTIN[metric](pred.astype(np.float64))
    else:
        n0, d0 = (np.asarray(v, dtype=np.float64) for v in metric(pred, np.zeros(len(pred))))
        n1, d1 = (np.asarray(v, dtype=np.float64) for v in metric(pred, np.ones(len(pred))))
        if n0.shape != pred.shape or d0.shape != pred.shape:
            raise ValueError(
                f"metric {name!r} must return (numerator, denominator), one value per row."
            )
    return n0, n1 - n0, d0, d1 - d0


class BayesianGroupMetrics(BaseEstimator):
    """Posteriors of group metrics (accuracy, TPR, FPR, ...) and of their differences.

    For fairness assessment of a binary classifier from its scores on many
    rows, of which few are labeled. Three methods:

    * ``"bayesian-calibration"`` (BC, Ji et al. 2020, eq. 4.3): a
      :class:`HierarchicalBetaCalibrator` is fitted per group on the labeled
      rows; each posterior draw of the calibration maps gives every unlabeled
      row a calibrated P(y = 1), which stands in for its unknown label. A
      metric is a ratio of row sums (TPR = sum of yhat*y over sum of y), so
      per draw its numerator and denominator add the observed terms of the
      labeled rows and the expected terms of the unlabeled rows, and the
      draw's value is their ratio.
    * ``"beta-binomial"`` (BB): a Beta(1, 1) prior per group updated with the
      labeled rows alone (for TPR: the labeled positives).
    * ``"frequentist"``: the labeled rows' empirical rate; no interval.

    Parameters
    ----------
    method : {"bayesian-calibration", "beta-binomial", "frequentist"}, \
default="bayesian-calibration"
    metrics : sequence, default=("accuracy", "tpr", "fpr")
        Names among accuracy, tpr, fpr, tnr, fnr, ppv, npv, selection_rate,
        or ``(name, function)`` pairs: ``function(pred, y)`` returns the
        per-row numerator and denominator of a ratio metric and must be
        affine in ``y`` (it is called with y = 0 and y = 1).
    calibrator : HierarchicalBetaCalibrator, default=None
        For BC; None: ``HierarchicalBetaCalibrator()`` (beta map, thesis
        priors). Its ``random_state`` is set from ours when None.
    privileged : hashable, default=None
        A group compared with all the others pooled (``"rest"``). None: every
        pair of groups is compared.
    threshold : float, default=0.5
        The black box predicts 1 when its score exceeds this.
    rope : float, default=0.05
        Half-width of the region of practical equivalence: a difference with
        ``|Delta| < rope`` is "practically fair".
    n_draws : int, default=2000
        Posterior draws of every metric.
    unlabeled : {"expected", "sampled"}, default="expected"
        BC only. ``"expected"`` (thesis eq. 4.3): an unlabeled row adds its
        calibrated probability. ``"sampled"``: per draw, an unlabeled row adds
        a label drawn from it, so the posterior also carries the label noise
        of the unlabeled rows: the posterior of the metric *of these rows*
        (a finite population) rather than of the rows' expected metric.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    groups_ : pandas.Index
        The reported groups (each group, then ``"rest"`` with ``privileged``
        when there are more than two groups).
    comparisons_ : list of tuple
        The pairs compared by :meth:`differences`.
    calibrator_ : HierarchicalBetaCalibrator or None
        The fitted calibrator (BC only).
    n_labeled_ : pandas.Series
        Labeled rows per reported group.
    n_rows_ : pandas.Series
        All rows per reported group.
    draws_ : dict of pandas.DataFrame
        Posterior draws of each metric, one column per reported group (not
        for ``"frequentist"``); :meth:`sample` returns a copy.
    point_ : dict of ndarray
        Each metric's empirical rate on the labeled rows, per reported group
        (NaN where its denominator is zero); the frequentist estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.calibration import BayesianGroupMetrics
    >>> from skassess.datasets import load_adult_scores
    >>> data = load_adult_scores("sex")
    >>> rng = np.random.default_rng(0)
    >>> y = np.full(len(data.target), -1)
    >>> labeled = rng.choice(len(y), 60, replace=False)
    >>> y[labeled] = data.target.to_numpy()[labeled]
    >>> est = BayesianGroupMetrics(privileged="Male", random_state=0)
    >>> est = est.fit(data.scores["LR"], y, groups=data.sensitive["sex"])
    >>> table = est.differences()
    >>> list(table.columns)[:5]
    ['mean', 'lower', 'upper', 'p_positive', 'p_practically_fair']
    """

    def __init__(
        self,
        method="bayesian-calibration",
        *,
        metrics=("accuracy", "tpr", "fpr"),
        calibrator=None,
        privileged=None,
        threshold=0.5,
        rope=0.05,
        n_draws=2000,
        unlabeled="expected",
        random_state=None,
    ):
        self.method = method
        self.metrics = metrics
        self.calibrator = calibrator
        self.privileged = privileged
        self.threshold = threshold
        self.rope = rope
        self.n_draws = n_draws
        self.unlabeled = unlabeled
        self.random_state = random_state

    def _check_params(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {list(METHODS)}; got {self.method!r}.")
        metrics = [self.metrics] if isinstance(self.metrics, str) else list(self.metrics)
        if not metrics:
            raise ValueError("metrics must name at least one metric.")
        checked = {}
        for m in metrics:
            if isinstance(m, str):
                if m not in BUILTIN:
                    raise ValueError(f"metrics: unknown metric {m!r}; built-in metrics are "
                                     f"{sorted(BUILTIN)}, or pass (name, function).")
                checked[m] = m
            elif isinstance(m, tuple) and len(m) == 2 and callable(m[1]):
                checked[str(m[0])] = m[1]
            else:
                raise ValueError(f"metrics: expected a name or a (name, function) pair; got {m!r}.")
        if not (isinstance(self.threshold, Real) and 0 < self.threshold < 1):
            raise ValueError(f"threshold must be a number in (0, 1); got {self.threshold!r}.")
        if not (isinstance(self.rope, Real) and self.rope >= 0):
            raise ValueError(f"rope must be a number >= 0; got {self.rope!r}.")
        if self.unlabeled not in ("expected", "sampled"):
            raise ValueError(
                f"unlabeled must be 'expected' or 'sampled'; got {self.unlabeled!r}."
            )
        if not (isinstance(self.n_draws, Integral) and self.n_draws >= 1):
            raise ValueError(f"n_draws must be a positive integer; got {self.n_draws!r}.")
        if self.calibrator is not None and not isinstance(
            self.calibrator, HierarchicalBetaCalibrator
        ):
            raise ValueError("calibrator must be a HierarchicalBetaCalibrator or None; got "
                             f"{type(self.calibrator).__name__}.")
        return checked

    def fit(self, X, y, groups):
        """Posterior draws of every metric in every group.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 2)
            The black box's P(y = 1).
        y : array-like of shape (n_samples,)
            True labels 0/1, ``-1`` for unlabeled rows.
        groups : array-like of shape (n_samples,)
            The group (e.g. sensitive attribute) of each row.

        Returns
        -------
        self : BayesianGroupMetrics
        """
        metrics = self._check_params()
        scores = check_scores(X)
        if scores.shape[1] != 2:
            raise ValueError(
                f"X must hold binary scores P(y = 1) (1-D or two columns); got "
                f"{scores.shape[1]} columns."
            )
        s = scores[:, 1]
        n = len(s)
        y = check_labels(y, n, 2)
        groups = check_groups(groups, n)
        index, codes = np.unique(groups, return_inverse=True)
        units = [[j] for j in range(len(index))]
        labels = [_py(v) for v in index]
        if self.privileged is not None:
            if self.privileged not in labels:
                raise ValueError(f"privileged={self.privileged!r} is not a group; groups are "
                                 f"{labels}.")
            p = labels.index(self.privileged)
            others = [j for j in range(len(index)) if j != p]
            if len(others) > 1:
                units.append(others)
                labels.append("rest")
            rest = labels[-1] if len(others) > 1 else labels[others[0]]
            self.comparisons_ = [(self.privileged, rest)]
            if len(others) > 1:
                self.comparisons_ += [(self.privileged, labels[j]) for j in others]
        else:
            self.comparisons_ = [(labels[i], labels[j]) for i in range(len(index))
                                 for j in range(i + 1, len(index))]
        self.groups_ = pd.Index(labels, name="group")
        member = np.zeros((len(index), len(units)))
        for u, members in enumerate(units):
            member[members, u] = 1.0
        onehot = member[codes]  # (n, U)
        labeled = y >= 0
        pred = (s > self.threshold).astype(np.intp)
        self.n_labeled_ = pd.Series(onehot[labeled].sum(axis=0).astype(int), index=self.groups_,
                                    name="n_labeled")
        self.n_rows_ = pd.Series(onehot.sum(axis=0).astype(int), index=self.groups_, name="n")
        rng = check_random_state(self.random_state)
        self.calibrator_ = None
        if self.method == "bayesian-calibration":
            cal = HierarchicalBetaCalibrator() if self.calibrator is None else self.calibrator
            cal = clone(cal)
            if cal.random_state is None:
                cal.set_params(random_state=rng.randint(np.iinfo(np.int32).max))
            self.calibrator_ = cal.fit(s, y, groups=groups)
            unl = ~labeled
            prob = (self.calibrator_.sample(s[unl], groups=groups[unl], n_draws=self.n_draws)
                    if unl.any() else np.zeros((self.n_draws, 0)))
            if self.unlabeled == "sampled":
                prob = (rng.random_sample(prob.shape) < prob).astype(np.float64)
        self.draws_, self.point_ = {}, {}
        for name, metric in metrics.items():
            a_n, b_n, a_d, b_d = _metric_coefficients(name, metric, pred)
            num_l = (a_n + b_n * (y == 1))[labeled] @ onehot[labeled]
            den_l = (a_d + b_d * (y == 1))[labeled] @ onehot[labeled]
            with np.errstate(invalid="ignore", divide="ignore"):
                self.point_[name] = np.where(den_l > 0, num_l / den_l, np.nan)
            if self.method == "frequentist":
                continue
            if self.method == "beta-binomial":
                if np.any(num_l > den_l):
                    raise ValueError(f"metric {name!r}: beta-binomial needs numerators no "
                                     "larger than denominators (0/1 row terms).")
                draws = rng.beta(1.0 + num_l, 1.0 + den_l - num_l,
                                 size=(self.n_draws, len(units)))
            else:
                unl = ~labeled
                oh = onehot[unl]
                num = num_l + (a_n[unl] @ oh) + prob @ (b_n[unl, None] * oh)
                den = den_l + (a_d[unl] @ oh) + prob @ (b_d[unl, None] * oh)
                with np.errstate(invalid="ignore", divide="ignore"):
                    draws = np.where(den > 0, num / den, np.nan)
            self.draws_[name] = pd.DataFrame(draws, columns=self.groups_)
        return self

    # -------------------------------------------------------------- results
    def _check_metric(self, metric):
        check_is_fitted(self, "point_")
        if metric not in self.point_:
            raise ValueError(f"metric={metric!r} was not fitted; metrics are {list(self.point_)}.")

    def sample(self, metric):
        """Posterior draws of ``metric``, one column per reported group (a DataFrame)."""
        self._check_metric(metric)
        if self.method == "frequentist":
            raise ValueError("method='frequentist' has no posterior to sample.")
        return self.draws_[metric].copy()

    def summary(self, level=0.95):
        """Per metric and group: rows, labeled rows, mean and interval."""
        check_is_fitted(self, "point_")
        level = check_level(level)
        frames = []
        for name, point in self.point_.items():
            table = pd.DataFrame({"n": self.n_rows_, "n_labeled": self.n_labeled_})
            if self.method == "frequentist":
                table["mean"], table["lower"], table["upper"] = point, np.nan, np.nan
            else:
                d = self.draws_[name]
                table["mean"] = d.mean()
                table["lower"] = d.quantile((1 - level) / 2)
                table["upper"] = d.quantile((1 + level) / 2)
            table.insert(0, "metric", name)
            frames.append(table.reset_index())
        return pd.concat(frames).set_index(["metric", "group"])

    def differences(self, level=0.95, rope=None):
        """Per metric and comparison ``a - b``: the difference and the ratio ``a / b``.

        Columns: ``mean``, ``lower``, ``upper`` of Delta; ``p_positive`` =
        ``P(Delta > 0)``; ``p_practically_fair`` = ``P(abs(Delta) < rope)``;
        ``ratio_mean``, ``ratio_lower``, ``ratio_upper``. The frequentist
        method fills the means only.
        """
        check_is_fitted(self, "point_")
        level = check_level(level)
        rope = self.rope if rope is None else rope
        if not (isinstance(rope, Real) and rope >= 0):
            raise ValueError(f"rope must be a number >= 0; got {rope!r}.")
        lo, hi = (1 - level) / 2, (1 + level) / 2
        rows, index = [], []
        for name, point in self.point_.items():
            for a, b in self.comparisons_:
                ia, ib = self.groups_.get_loc(a), self.groups_.get_loc(b)
                index.append((name, f"{a} - {b}"))
                if self.method == "frequentist":
                    with np.errstate(invalid="ignore", divide="ignore"):
                        ratio = point[ia] / point[ib]
                    rows.append([point[ia] - point[ib]] + [np.nan] * 4 + [ratio] + [np.nan] * 2)
                    continue
                d = self.draws_[name].to_numpy()
                delta = d[:, ia] - d[:, ib]
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = d[:, ia] / d[:, ib]
                rows.append([
                    np.nanmean(delta), np.nanquantile(delta, lo), np.nanquantile(delta, hi),
                    np.mean(delta > 0), np.mean(np.abs(delta) < rope),
                    np.nanmean(ratio), np.nanquantile(ratio, lo), np.nanquantile(ratio, hi),
                ])
        columns = ["mean", "lower", "upper", "p_positive", "p_practically_fair",
                   "ratio_mean", "ratio_lower", "ratio_upper"]
        return pd.DataFrame(rows, columns=columns,
                            index=pd.MultiIndex.from_tuples(index, names=["metric", "comparison"]))

    def compare(self, metric, group_a=None, group_b=None, rope=None):
        """The posterior of ``metric`` in ``group_a`` minus ``group_b`` as a GroupComparison.

        Defaults: the first comparison (the privileged group against the
        rest). Plot it with ``DifferenceDisplay.from_comparison``.
        """
        from ..metrics import compare_groups

        draws = self.sample(metric)
        if group_a is None and group_b is None:
            group_a, group_b = self.comparisons_[0]
        return compare_groups(draws, group_a, group_b, rope=self.rope if rope is None else rope)


__all__ = ["BayesianGroupMetrics", "GroupComparison"]

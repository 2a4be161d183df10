"""A prior learned from the labels: calibrated prior means, empirical-Bayes strength.

The informative prior of Ji et al. trusts the model's own confidence, which is
biased when the model is miscalibrated. ``CalibratedPrior`` fits, on the
labeled rows, a linear-in-log-odds (LLO) calibration map of the top-1
confidence (the map of :mod:`skassess.calibration`),

    P(correct | c) = sigmoid(a * logit(c) + b),

and sets the prior mean of group g to the average of the calibrated
probabilities of all its rows (labeled or not). The prior strength comes from
the labels too: empirical Bayes, the strength on a grid that maximizes the
beta-binomial marginal likelihood of the groups' labeled outcomes.

Nothing here looks at unlabeled outcomes. The map has a weak Gaussian prior
centred on the identity (a = 1, b = 0), so with no labels it is the
informative prior, and one label cannot swing it.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import betaln, expit
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, MissingValues, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..calibration import fit_llo, log_odds
from ..utils import (
    atomic,
    check_classes,
    check_labels,
    check_sample_weight,
    reset_fitted,
    validate_scores,
    validated,
)

#: Prior strengths tried by empirical Bayes.
STRENGTHS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


class CalibratedPrior(BaseEstimator):
    """An LLO calibration map of the top-1 confidence and the group prior it implies.

    :meth:`fit` fits the map on the labeled rows (the outcome is "the black
    box is right"); :meth:`predict` gives every row's calibrated probability
    of being right; :meth:`prior_for` turns them into Beta pseudo-counts for
    the groups of a fitted accuracy estimator, with an empirical-Bayes
    strength. ``ActiveAssessor(prior_update=CalibratedPrior())`` and
    ``simulate(..., prior_update=CalibratedPrior())`` refit it as labels
    arrive.

    Parameters
    ----------
    strength : float or "auto", default="auto"
        Prior strength (pseudo-count total) of every group; "auto" chooses it
        by empirical Bayes from ``strengths``.
    strengths : tuple of float, default=(1, 2, 5, ..., 1000)
        The grid of empirical Bayes.
    map_scale : float, default=0.5
        Standard deviation of the Gaussian prior of the map's intercept (the
        log-odds shift at the pool's median confidence) around 0.
    slope_scale : float, default=0.25
        Standard deviation of the Gaussian prior of the map's slope around 1.
        Both defaults were chosen on the bundled Fashion-MNIST scores (the
        best of four settings at N = 20, 50, 100), not on the benchmark sets.
    refit_growth : float, default=1.05
        In :func:`simulate`, the map is refitted after every label up to 100
        labels, then each time the number of labels has grown by this factor.
        :class:`ActiveAssessor` refits after every ``tell``.
    n_nodes : int, default=128
        In :func:`simulate`, each group's log-odds are summarized by a
        histogram of this many equal-width cells to average the map over its
        rows.
    classes : array-like of shape (n_classes,), default=None
        Label of each score column, when ``y`` holds labels.
    missing_label : int, float, str or None, default=-1
        The value of ``y`` that marks an unlabeled row.

    Attributes
    ----------
    slope_, intercept_ : float
        The MAP map ``sigmoid(slope_ * (logit(c) - center_) + intercept_)``.
    center_ : float
        Median log-odds of the top-1 confidence of all rows seen in fit.
    n_labeled_ : int
        Labeled rows the map was fitted on.
    n_features_in_ : int
        Number of score columns.

    Examples
    --------
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import ActiveAssessor, CalibratedPrior
    >>> data = load_fashion_mnist_scores()
    >>> assessor = ActiveAssessor(prior_update=CalibratedPrior(), random_state=0)
    >>> assessor = assessor.fit(data.scores).run(data.target, budget=100, progress=False)
    >>> assessor.estimator_.prior_.alpha[:3] + assessor.estimator_.prior_.beta[:3]
    array([20., 20., 20.])
    """

    _parameter_constraints = {
        "strength": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "strengths": ["array-like"],
        "map_scale": [Interval(Real, 0, None, closed="neither")],
        "slope_scale": [Interval(Real, 0, None, closed="neither")],
        "refit_growth": [Interval(Real, 1, None, closed="neither")],
        "n_nodes": [Interval(Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "missing_label": [MissingValues()],
    }

    def __init__(self, *, strength="auto", strengths=STRENGTHS, map_scale=0.5,
                 slope_scale=0.25, refit_growth=1.05, n_nodes=128, classes=None,
                 missing_label=-1):
        self.strength = strength
        self.strengths = strengths
        self.map_scale = map_scale
        self.slope_scale = slope_scale
        self.refit_growth = refit_growth
        self.n_nodes = n_nodes
        self.classes = classes
        self.missing_label = missing_label

    def _grid(self):
        grid = np.asarray(self.strengths, dtype=np.float64)
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or (
            grid <= 0
        ).any():
            raise ValueError(
                f"strengths must be a non-empty 1-D sequence of numbers > 0; got "
                f"{self.strengths!r}."
            )
        return grid

    def _confidence(self, X, y_pred, reset):
        scores, pred, conf = validate_scores(self, X, y_pred=y_pred, reset=reset)
        K = scores.shape[1]
        classes = None if self.classes is None else check_classes(self.classes, K)
        return scores, pred, conf, classes

    @validated
    @atomic(deep=False)
    def fit(self, X, y, *, y_pred=None, sample_weight=None):
        """Fit the map on the labeled rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores of every row (the unlabeled rows set the centre
            of the log-odds).
        y : array-like of shape (n_samples,)
            True labels; ``missing_label`` rows are unlabeled.
        y_pred : array-like of shape (n_samples,), default=None
            The black box's predictions; None: the argmax of ``X``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the labeled rows in the likelihood.

        Returns
        -------
        self : CalibratedPrior
        """
        self._grid()
        reset_fitted(self)
        scores, pred, conf, classes = self._confidence(X, y_pred, reset=True)
        n, K = scores.shape
        codes = check_labels(y, n, K, classes, missing_label=self.missing_label)
        weight = check_sample_weight(sample_weight, n)
        x = log_odds(conf)
        labeled = (codes >= 0) & (weight > 0)
        center = _weighted_median(x, weight)
        self.n_classes_ = K
        self.center_ = center
        self.n_labeled_ = int(labeled.sum())
        if not labeled.any():  # the identity: the informative prior
            self.slope_, self.intercept_ = 1.0, center
            return self
        xs, zs = x[labeled] - center, (pred[labeled] == codes[labeled]).astype(np.float64)
        slope, intercept = fit_llo(
            xs[None], zs[None], intercept_scale=self.map_scale, slope_scale=self.slope_scale,
            intercept_mean=center, sample_weight=weight[labeled][None],
        )
        self.slope_, self.intercept_ = float(slope[0]), float(intercept[0])
        return self

    def predict(self, X, *, y_pred=None):
        """Calibrated probability that the black box is right on each row.

        Returns
        -------
        p : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        _, _, conf, _ = self._confidence(X, y_pred, reset=False)
        return expit(self.slope_ * (log_odds(conf) - self.center_) + self.intercept_)

    def predict_proba(self, X, *, y_pred=None):
        """``[P(wrong), P(right)]`` of each row under the fitted map.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
        """
        p = self.predict(X, y_pred=y_pred)
        return np.column_stack([1.0 - p, p])

    def score(self, X, y, *, y_pred=None, sample_weight=None):
        """Weighted mean log probability of the labeled rows' correctness under the map.

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        scores, pred, conf, classes = self._confidence(X, y_pred, reset=False)
        n = scores.shape[0]
        codes = check_labels(y, n, self.n_classes_, classes, missing_label=self.missing_label)
        weight = check_sample_weight(sample_weight, n)
        labeled = codes >= 0
        if not labeled.any() or weight[labeled].sum() <= 0:
            raise ValueError("score needs at least one labeled row with a positive weight.")
        p = self.predict_proba(scores[labeled], y_pred=pred[labeled])
        right = (pred[labeled] == codes[labeled]).astype(np.intp)
        return float(np.average(np.log(p[np.arange(len(right)), right]),
                                weights=weight[labeled]))

    @validated
    def prior_for(self, estimator, X, *, group_by=None, y_pred=None):
        """Beta pseudo-counts ``(alpha, beta)`` per group of a fitted accuracy estimator.

        The mean of group g is the average calibrated probability of its rows
        in ``X``; the strength is ``strength``, or (``"auto"``) the value of
        ``strengths`` that maximizes the beta-binomial marginal likelihood of
        the estimator's labeled outcomes.

        Parameters
        ----------
        estimator : fitted BayesianAccuracy or BayesianCalibrationError
            Gives the groups (:meth:`apply`) and the labeled outcomes
            (``n_success_``, ``n_labeled_``); its ``metric`` must be accuracy.
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            The rows whose calibrated probabilities set the group means (the
            pool).
        group_by, y_pred : array-like of shape (n_samples,), default=None
            As in the estimator's ``fit``.

        Returns
        -------
        prior : ndarray of shape (n_groups, 2)
            Pass it as the estimator's ``prior``.
        """
        check_is_fitted(self)
        check_is_fitted(estimator)
        if getattr(estimator, "metric", "accuracy") != "accuracy" or not hasattr(
            estimator, "n_success_"
        ) or getattr(estimator, "classwise", False):
            raise ValueError(
                "prior_for needs a fitted per-group accuracy estimator (BayesianAccuracy with "
                "metric='accuracy', or BayesianCalibrationError with classwise=False); got "
                f"{estimator!r}."
            )
        group = estimator.apply(X, group_by=group_by, y_pred=y_pred)
        p = self.predict(X, y_pred=y_pred)
        G = len(estimator.groups_)
        count = np.bincount(group, minlength=G)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, np.bincount(group, weights=p, minlength=G) / count, 0.5)
        mean = np.clip(mean, 1e-12, 1 - 1e-12)[None]
        strength = self._strength(mean, estimator.n_success_[None], estimator.n_labeled_[None])
        return np.column_stack([strength[0] * mean[0], strength[0] * (1 - mean[0])])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _strength(self, mean, successes, trials):
        if self.strength == "auto":
            return eb_strength(mean, successes, trials, self._grid())
        return np.full(len(mean), float(self.strength))

    # --------------------------------------------- the simulation's vectorized path
    def _fit_pool(self, scores, pred, cell, n_groups):
        """Summarize a pool for :func:`simulate`: log-odds and per-group histograms."""
        self._grid()
        conf = np.take_along_axis(scores, pred[:, None], axis=1)[:, 0]
        self.logit_ = log_odds(conf)
        # Centred log-odds: the intercept is the log-odds at the pool's typical
        # confidence, so the slope's uncertainty does not move it.
        self.center_ = float(np.median(self.logit_))
        edges = np.linspace(self.logit_.min(), self.logit_.max() + 1e-9, self.n_nodes + 1)
        node = np.clip(np.searchsorted(edges, self.logit_, side="right") - 1, 0,
                       self.n_nodes - 1)
        key = cell * self.n_nodes + node
        size = n_groups * self.n_nodes
        count = np.bincount(key, minlength=size).reshape(n_groups, self.n_nodes)
        total = np.bincount(key, weights=self.logit_, minlength=size).reshape(
            n_groups, self.n_nodes)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.node_logit_ = np.nan_to_num(total / count)
            self.node_weight_ = np.nan_to_num(count / count.sum(axis=1, keepdims=True))
        return self

    def _due(self, t):
        """Whether :func:`simulate` refits before choosing label ``t`` (``t`` labels so far)."""
        if t < 1:
            return False
        if t <= 100:
            return True
        # After 100 labels, refit when t crosses the next power of refit_growth.
        def step(n):
            return np.floor(np.log(n / 100.0) / np.log(self.refit_growth))

        return step(t) > step(t - 1)

    def _update_state(self, state, rows, correct):
        """The state under the prior refitted from labeled ``rows`` (n_runs, t)."""
        x = self.logit_[rows] - self.center_
        slope, intercept = fit_llo(
            x, correct[rows], intercept_scale=self.map_scale, slope_scale=self.slope_scale,
            intercept_mean=self.center_,
        )
        nodes = self.node_logit_ - self.center_
        mean = (expit(slope[:, None, None] * nodes + intercept[:, None, None])
                * self.node_weight_).sum(axis=2)
        mean = np.clip(mean, 1e-12, 1 - 1e-12)
        strength = self._strength(mean, state.successes, state.trials)
        return state.with_prior(strength[:, None] * mean, strength[:, None] * (1 - mean))


def _weighted_median(x, weight):
    """The median of ``x`` with rows repeated ``weight`` times (np.median for unit weights)."""
    if weight.sum() <= 0:
        return 0.0
    order = np.argsort(x, kind="stable")
    xs, cw = x[order], np.cumsum(weight[order])
    half = cw[-1] / 2.0
    last = len(xs) - 1
    lo = xs[min(np.searchsorted(cw, half, side="left"), last)]
    hi = xs[min(np.searchsorted(cw, half, side="right"), last)]
    return float((lo + hi) / 2.0)


def eb_strength(mean, successes, trials, grid):
    """Strength on ``grid`` maximizing the beta-binomial marginal likelihood, per run."""
    a = grid[None, :, None] * mean[:, None, :]
    b = grid[None, :, None] * (1 - mean[:, None, :])
    s, n = successes[:, None, :], trials[:, None, :]
    loglik = (betaln(a + s, b + n - s) - betaln(a, b)).sum(axis=2)
    return grid[np.argmax(loglik, axis=1)]

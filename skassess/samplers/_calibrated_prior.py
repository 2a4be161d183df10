"""A prior learned from the labels: a calibrated map, group deviations, the finite pool.

Where it fits: ``CalibratedPrior`` is the ``prior_update`` of a sampler whose
estimator has conjugate Beta posteriors (``BayesianAccuracy(prior=
"informative")`` and the like), refitted as labels arrive; it makes
:func:`~skassess.samplers.simulate`'s many runs cheap. It is the conjugate
counterpart of the calibrated default (``BayesianAccuracy()``, whose map,
deviations and the labels' dispersion are integrated on a grid): one Beta per
group that matches a mixture's mean and variance, without the dispersion.

The informative prior of Ji et al. trusts the model's own confidence, which is
biased when the model is miscalibrated. ``CalibratedPrior`` fits, on the
labeled rows, a linear-in-log-odds (LLO) calibration map of the top-1
confidence (the map of :mod:`skassess.calibration`),

    P(correct | c) = sigmoid(a * (logit(c) - center) + b),

and builds each group's Beta prior from it in three steps.

1. *No double use.* Group g's prior comes from the map refitted without g's
   labels (one Newton step from the MAP map, exact for a quadratic log
   posterior), and the map's posterior covariance without them; the prior
   mean is the average calibrated probability of g's *unlabeled* rows.
2. *Groups may differ from the map.* Group g's log-odds may be shifted off
   the common map by ``delta_g ~ N(0, tau^2)``. To first order, the group's
   accuracy then has variance ``J_g Cov J_g' + (dmean_g tau)^2`` (``J_g``:
   the derivative of the group mean in the map's parameters; ``dmean_g``:
   the mean of ``p (1 - p)``), which a Beta of the same mean and variance
   turns into a strength. ``tau`` is not fitted to a point: on the grid
   ``deviations`` (the same prior weight on every point), its posterior
   weights are the beta-binomial marginal likelihoods of all groups'
   labeled outcomes. Each tau gives a conjugate posterior of the group's
   accuracy; the group's posterior is their mixture under tau's weights,
   and the pseudo-counts returned are those whose Beta posterior has the
   mixture's mean and variance (moment-matching the posterior mixture, not
   the prior mixture, whose widest tau would set the variance).
   The groups are random effects in the map's fit too: after a first fit
   that pools the rows, the map is refitted with each labeled row of group
   g weighted by ``1 / (1 + E[tau^2] I_g)`` (``I_g``: the group's
   information about the intercept), what is left of a group's
   information once its shift ``delta_g`` is integrated out. A group
   labeled to exhaustion then counts as a few groups' worth of evidence
   about the common map: an adaptive strategy that labels the worst group
   most cannot drag every other group's prior after it.
3. *The finite pool.* The estimand is the group's accuracy on the pool,
   ``(S + U) / N`` (``S`` successes among ``n`` labeled rows, ``U`` among the
   ``N - n`` unlabeled). With a superpopulation strength ``k`` for the
   unlabeled rows' accuracy, the pool's posterior mean
   ``(S + (N - n) E[p_U | S]) / N`` is exactly the mean of the Beta
   posterior whose prior has the unlabeled rows' mean and strength
   ``k (N - n) / (k + N)``. A fully labeled group has prior strength 0: its
   posterior mean is its observed accuracy, whatever the map.

Nothing here looks at unlabeled outcomes. The map has a weak Gaussian prior
centred on the identity (a = 1, b = 0), so with no labels it is the
informative prior's mean, and one label cannot swing it.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import betaln, expit, logit
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..calibration import fit_llo, log_odds
from ..metrics import BetaPosterior
from ..utils._deprecation import warn_deprecated
from ..utils._params import atomic, reset_fitted, validated
from ..utils._sklearn_compat import Hidden, Interval, MissingValues, StrOptions
from ..utils._validation import check_classes, check_labels, check_sample_weight, validate_scores

#: Grid of tau, the standard deviation of a group's log-odds shift off the
#: common map: the midpoints of 15 equal cells of [0, 3], each with the same
#: prior mass, so the prior on tau is uniform. (A uniform prior on a
#: hierarchical scale is the noninformative choice of Gelman 2006; a
#: log-uniform one piles mass near 0, and with two labels per group the
#: posterior then often settles on a small tau and intervals too narrow.)
DEVIATIONS = tuple(round(0.1 + 0.2 * i, 1) for i in range(15))
#: Bounds of a group's superpopulation prior strength.
MIN_STRENGTH, MAX_STRENGTH = 1e-3, 1e4
#: Gauss-Hermite nodes and weights of the standard normal.
_GAUSS_HERMITE = (lambda n, w: (n, w / w.sum()))(*np.polynomial.hermite_e.hermegauss(16))
#: Pseudo-counts of a group with no unlabeled row (strength 0 in the limit).
EMPTY = 1e-9


class CalibratedPrior(BaseEstimator):
    """An LLO calibration map of the top-1 confidence and the group prior it implies.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    :meth:`fit` fits the map on the labeled rows (the outcome is "the black
    box is right"); :meth:`predict` gives every row's calibrated probability
    of being right; :meth:`prior_for` turns them into Beta pseudo-counts for
    the groups of a fitted accuracy estimator (see the module docstring:
    each group's map leaves its labels out, groups may deviate from the map,
    and the prior shrinks to nothing as a group's pool is labeled).
    ``ActiveAssessor(prior_update=CalibratedPrior())`` and ``simulate(...,
    prior_update=CalibratedPrior())`` refit it as labels arrive.

    Parameters
    ----------
    prior_strength : float or "auto", default="auto"
        Strength (pseudo-count total) of a group's prior before the finite
        pool's correction; "auto": from the map's uncertainty and the group
        deviations ``deviations``, weighted by their marginal likelihood.
    strength : float or "auto"
        Deprecated alias of ``prior_strength``.

        .. deprecated:: 0.1
           ``strength`` will be removed in 0.2; use ``prior_strength``, the
           name every estimator uses.
    deviations : tuple of float, default=(0.1, 0.3, ..., 2.9)
        Grid of the standard deviation of a group's log-odds shift off the
        common map; each point has the same prior weight (the default grid
        is even, so the prior is uniform on [0, 3]).
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
        The value of ``y`` that marks an unlabeled row, besides NaN, None and
        ``pd.NA``, which always mark one.

    Attributes
    ----------
    slope_, intercept_ : float
        The MAP map ``sigmoid(slope_ * (logit(c) - center_) + intercept_)``.
    covariance_ : ndarray of shape (2, 2)
        Laplace covariance of (slope, intercept) at the MAP.
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
    >>> strength = assessor.estimator_.prior_.alpha + assessor.estimator_.prior_.beta
    >>> bool((strength < 1000).all())
    True
    """

    _parameter_constraints = {
        "prior_strength": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "strength": [
            StrOptions({"auto"}),
            Interval(Real, 0, None, closed="neither"),
            Hidden(StrOptions({"deprecated"})),
        ],
        "deviations": ["array-like"],
        "map_scale": [Interval(Real, 0, None, closed="neither")],
        "slope_scale": [Interval(Real, 0, None, closed="neither")],
        "refit_growth": [Interval(Real, 1, None, closed="neither")],
        "n_nodes": [Interval(Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "missing_label": [MissingValues()],
    }

    def __init__(
        self,
        *,
        prior_strength="auto",
        deviations=DEVIATIONS,
        map_scale=0.5,
        slope_scale=0.25,
        refit_growth=1.05,
        n_nodes=128,
        classes=None,
        missing_label=-1,
        strength="deprecated",
    ):
        self.prior_strength = prior_strength
        self.strength = strength
        self.deviations = deviations
        self.map_scale = map_scale
        self.slope_scale = slope_scale
        self.refit_growth = refit_growth
        self.n_nodes = n_nodes
        self.classes = classes
        self.missing_label = missing_label

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
        tau_grid(self)
        warn_if_strength(self)
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
            self.covariance_ = np.diag([self.slope_scale**2, self.map_scale**2])
            return self
        xs, zs = x[labeled] - center, (pred[labeled] == codes[labeled]).astype(np.float64)
        slope, intercept = fit_llo(
            xs[None],
            zs[None],
            intercept_scale=self.map_scale,
            slope_scale=self.slope_scale,
            intercept_mean=center,
            sample_weight=weight[labeled][None],
        )
        self.slope_, self.intercept_ = float(slope[0]), float(intercept[0])
        q = expit(self.slope_ * xs + self.intercept_)
        info = llo_pieces(xs, q, zs, weight[labeled])[1].sum(axis=0)
        self.covariance_ = np.linalg.inv(info + map_precision(self))
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
        return float(np.average(np.log(p[np.arange(len(right)), right]), weights=weight[labeled]))

    @validated
    def prior_for(self, estimator, X, y=None, *, group_by=None, y_pred=None):
        """Beta pseudo-counts ``(alpha, beta)`` per group of a fitted accuracy estimator.

        Group g's prior mean is the average calibrated probability of its
        unlabeled rows in ``X`` under the map refitted without g's labels; its
        strength comes from that map's uncertainty and the group deviations
        (or is ``strength``), times ``(N - n) / (strength + N)`` for a group
        with ``n`` of its ``N`` pool rows labeled (module docstring).

        Parameters
        ----------
        estimator : fitted BayesianAccuracy or BayesianCalibrationError
            Gives the groups (:meth:`apply`) and the labeled outcomes
            (``n_success_``, ``n_labeled_``); its ``metric`` must be accuracy.
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            The pool.
        y : array-like of shape (n_samples,), default=None
            Labels of the pool's rows (``missing_label``: unlabeled), the
            labels this map was fitted on; each group's labeled rows are
            then left out of its map (unit weights). None: every row of ``X``
            is unlabeled and the estimator's labeled rows are other rows.
        group_by, y_pred : array-like of shape (n_samples,), default=None
            As in the estimator's ``fit``.

        Returns
        -------
        prior : ndarray of shape (n_groups, 2)
            Pass it as the estimator's ``prior``.
        """
        check_is_fitted(self)
        check_is_fitted(estimator)
        if (
            getattr(estimator, "metric", "accuracy") != "accuracy"
            or not hasattr(estimator, "n_success_")
            or getattr(estimator, "classwise", False)
        ):
            raise ValueError(
                "prior_for needs a fitted per-group accuracy estimator (BayesianAccuracy with "
                "metric='accuracy', or BayesianCalibrationError with classwise=False); got "
                f"{estimator!r}."
            )
        group = estimator.apply(X, group_by=group_by, y_pred=y_pred)
        scores, pred, conf, classes = self._confidence(X, y_pred, reset=False)
        G = len(estimator.groups_)
        x = log_odds(conf) - self.center_
        labeled = np.zeros(len(x), dtype=bool)
        count = np.bincount(group, minlength=G).astype(np.float64)
        if y is not None:
            codes = check_labels(
                y, len(x), self.n_classes_, classes, missing_label=self.missing_label
            )
            labeled = codes >= 0
            z = (pred[labeled] == codes[labeled]).astype(np.float64)
        unlabeled = np.bincount(group, weights=~labeled, minlength=G)
        theta = np.array([[self.slope_, self.intercept_]])
        weight = np.ones(int(labeled.sum()))

        def mean_of(v, rows=None):
            w = v if rows is None else v * rows
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.bincount(group, weights=w, minlength=G) / (
                    count if rows is None else unlabeled
                )

        for last in map_passes(self) if y is not None else (True,):
            grad_g = np.zeros((1, G, 2))
            info_g = np.zeros((1, G, 2, 2))
            info = np.linalg.inv(self.covariance_)[None]
            if y is not None:
                xl = x[labeled]
                if weight.min() < 1.0:  # the map with groups as random effects
                    theta = np.column_stack(
                        fit_llo(
                            xl[None],
                            z[None],
                            intercept_scale=self.map_scale,
                            slope_scale=self.slope_scale,
                            intercept_mean=self.center_,
                            sample_weight=weight[None],
                        )
                    )
                g_rows, i_rows = llo_pieces(xl, expit(theta[0, 0] * xl + theta[0, 1]), z, weight)
                grad_g[0] = group_sum(g_rows, group[labeled], G)
                info_g[0] = group_sum(i_rows, group[labeled], G)
                info = info_g.sum(axis=1) + map_precision(self)
            slope, intercept, cov = leave_group_out(theta, info, grad_g, info_g)
            q = expit(slope[0, group] * x + intercept[0, group])
            dq = q * (1.0 - q)
            alpha, beta, tau2 = group_prior(
                self,
                mean_all=mean_of(q)[None],
                mean_unlabeled=mean_of(q, ~labeled)[None],
                dmean=mean_of(dq)[None],
                dx=mean_of(dq * x)[None],
                cov=cov,
                n_unlabeled=unlabeled[None] if y is not None else count[None],
                successes=estimator.n_success_[None],
                trials=estimator.n_labeled_[None],
            )
            if not last:
                weight = random_effect_weight(info_g, tau2, group[labeled][None])[0]
        return np.column_stack([alpha[0], beta[0]])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


def random_effect_weight(info_g, tau2, group):
    """Weight of each labeled row when groups are random effects of variance ``tau2``.

    Integrating a group's log-odds shift ``delta_g ~ N(0, tau2)`` out of its
    (quadratic) log-likelihood leaves an intercept information of
    ``I_g / (1 + tau2 I_g)``: a group labeled many times counts as a few
    groups' worth of evidence about the common map, not as that many rows.
    (Pooling the rows instead lets the groups an adaptive strategy labels
    most set the map of all the others.) ``info_g``: ``(n_runs, G, 2, 2)``
    per-group information; ``tau2``: ``(n_runs,)``; ``group``: ``(n_runs, t)``.
    """
    shrink = 1.0 / (1.0 + tau2[:, None] * info_g[..., 1, 1])  # (n_runs, G)
    return np.take_along_axis(shrink, group, axis=1)


def llo_pieces(x, q, z, weight=1.0):
    """Per-row gradient ``(n.., 2)`` and information ``(n.., 2, 2)`` of the LLO log-likelihood."""
    features = np.stack([x, np.ones_like(x)], axis=-1)
    grad = (weight * (z - q))[..., None] * features
    info = (
        (weight * q * (1.0 - q))[..., None, None] * features[..., :, None] * features[..., None, :]
    )
    return grad, info


def group_sum(values, group, n_groups):
    """Sum of the rows of ``values`` ``(n, ...)`` per group, ``(n_groups, ...)``."""
    flat = values.reshape(len(values), -1)
    # one bincount per component: np.add.at is several times slower on this hot path
    out = np.stack([np.bincount(group, weights=col, minlength=n_groups) for col in flat.T], axis=1)
    return out.reshape((n_groups,) + values.shape[1:])


def leave_group_out(theta, info, grad_g, info_g):
    """Each group's map without its labels: ``(slope, intercept, covariance)``.

    One Newton step from the MAP ``theta`` (n_runs, 2) on the log posterior
    without group g: its gradient at the MAP is ``-grad_g``, its information
    ``info - info_g``. (The LLO log posterior is close to quadratic, and the
    step is what approximate leave-one-out cross-validation does.)
    """
    rest = info[:, None] - info_g
    a, b, d = rest[..., 0, 0], rest[..., 0, 1], rest[..., 1, 1]
    det = a * d - b * b
    cov = np.stack([np.stack([d, -b], -1), np.stack([-b, a], -1)], -2) / det[..., None, None]
    step = np.einsum("rgij,rgj->rgi", cov, grad_g)
    return theta[:, None, 0] - step[..., 0], theta[:, None, 1] - step[..., 1], cov


def _logit_normal_moments(eta, s2):
    """Mean and variance of ``sigmoid(eta + e)``, ``e ~ N(0, s2)`` (Gauss-Hermite, 16 nodes)."""
    node, w = _GAUSS_HERMITE
    p = expit(eta[..., None] + np.sqrt(s2)[..., None] * node)
    mean = p @ w
    return mean, np.maximum(p**2 @ w - mean**2, 0.0)


def _prior_of_posterior(mean, var, successes, trials):
    """Pseudo-counts whose conjugate posterior has this ``mean`` and ``var``.

    See :meth:`BetaPosterior.from_moments`; pseudo-counts >= ``EMPTY``, the
    strength within ``[MIN_STRENGTH, MAX_STRENGTH]`` unless the labels need more.
    """
    post = BetaPosterior.from_moments(
        mean,
        var,
        successes,
        trials - successes,
        min_strength=MIN_STRENGTH,
        max_strength=MAX_STRENGTH,
        floor=EMPTY,
    )
    return post.prior_alpha, post.prior_beta


def _strength_of(mean, var):
    """Strength of the Beta with this mean and variance, within the bounds."""
    with np.errstate(divide="ignore"):
        return np.clip(mean * (1.0 - mean) / var - 1.0, MIN_STRENGTH, MAX_STRENGTH)


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


def tau_grid(prior):
    try:
        grid = np.asarray(prior.deviations, dtype=np.float64)
    except (TypeError, ValueError):
        grid = None
    if (
        grid is None
        or grid.ndim != 1
        or grid.size == 0
        or not np.all(np.isfinite(grid))
        or (grid < 0).any()
    ):
        raise ValueError(
            f"deviations must be a non-empty 1-D sequence of numbers >= 0; got "
            f"{prior.deviations!r}."
        )
    return grid


def map_precision(prior):
    """Prior precision of (slope, intercept)."""
    return np.diag([prior.slope_scale**-2.0, prior.map_scale**-2.0])


def group_prior(prior, *, mean_all, mean_unlabeled, dmean, dx, cov, n_unlabeled, successes, trials):
    """Beta pseudo-counts ``(alpha, beta)``, each ``(n_runs, G)`` (module docstring).

    ``mean_all``, ``mean_unlabeled``: average calibrated probability of
    the group's rows and of its unlabeled rows under its own map;
    ``dmean``, ``dx``: averages of ``p (1 - p)`` and ``p (1 - p) x``
    (the mean's derivatives in intercept and slope); ``cov``: that map's
    covariance ``(n_runs, G, 2, 2)``.
    """
    m_all = np.clip(np.nan_to_num(mean_all, nan=0.5), 1e-9, 1 - 1e-9)
    m = np.where(n_unlabeled > 0, np.nan_to_num(mean_unlabeled, nan=0.5), 0.5)
    m = np.clip(m, 1e-9, 1 - 1e-9)
    # the map's uncertainty as a log-odds variance (delta method; it is small)
    var_map = (
        dx**2 * cov[..., 0, 0] + 2.0 * dx * dmean * cov[..., 0, 1] + dmean**2 * cov[..., 1, 1]
    ) / np.maximum(dmean, 1e-12) ** 2
    # A group without rows (a class the model never predicts in the pool) has no
    # averages: its prior is the flat 0.5 above, with no map uncertainty.
    var_map = np.where(np.isfinite(var_map), var_map, 0.0)
    if prior_strength_of(prior) == "auto":
        s2 = var_map[..., None] + tau_grid(prior) ** 2  # (n_runs, G, T)
        mean_t, var_t = _logit_normal_moments(logit(m_all)[..., None], s2)
        k = _strength_of(mean_t, var_t)
        a, b = k * mean_t, k * (1.0 - mean_t)
        s, n = successes[..., None], trials[..., None]
        loglik = (betaln(a + s, b + n - s) - betaln(a, b)).sum(axis=1)  # (n_runs, T)
        weight = np.exp(loglik - loglik.max(axis=1, keepdims=True))
        weight = (weight / weight.sum(axis=1, keepdims=True))[:, None, :]
        # Each tau gives the unlabeled rows' accuracy a Beta prior, shrunk for
        # the finite pool, and a conjugate posterior; the group's posterior is
        # the mixture of those posteriors under tau's posterior weights.
        mean_t, var_t = _logit_normal_moments(logit(m)[..., None], s2)
        pool = (n_unlabeled + trials)[..., None]
        k = _strength_of(mean_t, var_t)
        kappa = np.maximum(k * n_unlabeled[..., None] / (k + pool), EMPTY)
        a, b = kappa * mean_t + s, kappa * (1.0 - mean_t) + (n - s)
        post_mean = a / (a + b)
        post_var = a * b / ((a + b) ** 2 * (a + b + 1.0))
        mean = (weight * post_mean).sum(axis=2)
        var = (weight * (post_var + post_mean**2)).sum(axis=2) - mean**2
        tau2 = weight[:, 0, :] @ tau_grid(prior) ** 2
        alpha, beta = _prior_of_posterior(mean, var, successes, trials)
        return alpha, beta, tau2
    strength = np.full(m.shape, float(prior_strength_of(prior)))
    tau2 = np.zeros(m.shape[0])
    pool = n_unlabeled + trials
    kappa = np.maximum(strength * n_unlabeled / (strength + pool), EMPTY)
    return kappa * m, kappa * (1.0 - m), tau2


def map_passes(prior):
    """``last`` flags of the map fits: groups as random effects needs a second one."""
    return (False, True) if prior_strength_of(prior) == "auto" else (True,)


def prior_strength_of(prior):
    """``prior_strength``, or the deprecated ``strength`` when it was given."""
    return prior.prior_strength if prior.strength == "deprecated" else prior.strength


def warn_if_strength(prior):
    if prior.strength != "deprecated":
        warn_deprecated("CalibratedPrior(strength=...)", "CalibratedPrior(prior_strength=...)")

"""BayesianCalibrationError: posterior of the expected calibration error (ECE).

The ECE ``sum_b p_b |theta_b - s_b|`` is an absolute value: under a plain
Beta posterior per bin, every bin's noise adds to it, so a calibrated model's
posterior sits well above its true ECE and the interval misses it (on
calibrated scores with 50 labels in 10 bins, a posterior mean of ~0.14 for a
true value of ~0.01). Two parts of the model fix this.

*A hierarchical model of the bins* (``ece_model="hierarchical"``). The
bins' accuracies scatter around an LLO map of their mean confidence,

    theta_b ~ Beta(kappa m_b, kappa (1 - m_b)),  m_b = sigmoid(a logit(s_b) + c),

with ``kappa = inf`` meaning ``theta_b = m_b``. With prior probability
``p_calibrated`` the model is calibrated, ``(a, c) = (1, 0)``; otherwise
``log a ~ N(0, 0.5^2)`` and ``c ~ N(0, 1)``; ``kappa`` is uniform on a
log-spaced grid from 2 to 10^4 and infinity. Given ``(a, c, kappa)`` each
bin's posterior is the conjugate Beta (or the point ``m_b``), and the
marginal likelihood of all bins' labels is a product of beta-binomial (or
binomial) terms, so the posterior of ``(a, c, kappa)`` is exact on the grid
(17 x 17 x 13 points and the 13 calibrated ones). A calibrated model's bins
then share one point of mass at ``theta_b = s_b`` instead of each adding
its own noise, and a miscalibrated model's bins borrow the shape of the map
from each other.

*The pool.* The ECE computed from every label is a value on the rows at
hand: a bin's accuracy there is ``(S_b + U_b) / N_b``, with ``U_b`` the
unknown successes among its ``N_b - n_b`` unlabeled rows. With
``unlabeled="sampled"`` each draw adds ``U_b ~ Binomial(N_b - n_b, theta_b)``
(``N_b - n_b`` rounded: row weights are counts here), which is why a
calibrated model's pool ECE is not 0 and the posterior reaches it.

*Why the ECE has a model of its own.* The package's other scores-informed
estimates share one model (:mod:`skassess.metrics._calibrated_model`: a map of
the scores, per-group deviations, the trust in the scores learned from the
labels). This one is of the same kind, a calibration map whose distance from
the scores the labels set, integrated on a grid, with one thing more: a
point of prior mass on the identity map. The ECE is a sum of absolute
values, so every uncertainty left in the bins' accuracies raises it; a
posterior that never puts the bins exactly at their confidences cannot come
down to a calibrated model's small ECE; the point mass lets it (its
coverage: ``benchmarks/bench_ece_coverage.py``,
``docs/benchmarks/coverage.md``).
"""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.special import betaln, expit, logit, xlogy
from sklearn.utils.validation import check_is_fitted

from ..utils._deprecation import warn_deprecated
from ..utils._docstrings import fill_doc
from ..utils._label_noise import NOISE_CONSTRAINTS
from ..utils._params import LEVEL, N_DRAWS, validate_args, validate_params, validated
from ..utils._sklearn_compat import Hidden, Interval, StrOptions
from ._base import DEFAULT_N_DRAWS, DEFAULT_PRIOR_STRENGTH
from ._conjugate import BetaPosterior
from ._design_bins import DesignBinsMixin
from ._grouping import STRATEGIES
from ._noisy_labels import DEFAULT_ANNOTATOR_PRIOR, NoisyRateMixture
from ._rates import _RateAssessor

#: Grids of the hierarchical model's map (slope, intercept) and bin concentration.
_SLOPES = np.exp(np.linspace(np.log(0.25), np.log(4.0), 17))
_INTERCEPTS = np.linspace(-2.0, 2.0, 17)
_KAPPAS = np.append(np.logspace(0.3, 4.0, 12), np.inf)
#: Prior scales of log(slope) and intercept off the identity map.
_SLOPE_SCALE, _INTERCEPT_SCALE = 0.5, 1.0


def _hyper_grid(p_calibrated):
    """(slope, intercept, kappa) of every grid point and its log prior weight."""
    a, b, k = (g.ravel() for g in np.meshgrid(_SLOPES, _INTERCEPTS, _KAPPAS, indexing="ij"))
    log_prior = -0.5 * (np.log(a) / _SLOPE_SCALE) ** 2 - 0.5 * (b / _INTERCEPT_SCALE) ** 2
    log_prior = log_prior - np.logaddexp.reduce(log_prior) + np.log1p(-p_calibrated)
    # The calibrated model: the identity map, every kappa.
    a = np.append(a, np.ones(len(_KAPPAS)))
    b = np.append(b, np.zeros(len(_KAPPAS)))
    k = np.append(k, _KAPPAS)
    log_prior = np.append(log_prior, np.full(len(_KAPPAS), np.log(p_calibrated / len(_KAPPAS))))
    return a, b, k, log_prior


def _map_mean(a, b, conf):
    """``sigmoid(a logit(s) + b)`` per grid point and bin; ``s`` clipped to [1e-3, 1 - 1e-3]
    so that a bin of confidence 1 can still have its accuracy below 1."""
    return expit(a[:, None] * logit(np.clip(conf, 1e-3, 1 - 1e-3)) + b[:, None])


def _bin_posterior(mean, kappa, S, n):
    """Beta parameters of each bin given the grid points (``kappa = inf``: ``mean``)."""
    k = np.where(np.isfinite(kappa), kappa, 1.0)[:, None]
    return k * mean + S, k * (1 - mean) + n - S


def _hyper_posterior(conf, S, n, p_calibrated, block=256):
    """Posterior weights of the grid points and their (slope, intercept, kappa).

    The log likelihood of a grid point is a sum over bins of beta-binomial
    (finite ``kappa``) or binomial (``kappa = inf``) terms; it is computed in
    blocks of grid points, so memory stays ``block x n_bins``.
    """
    a, b, kappa, log_post = _hyper_grid(p_calibrated)
    for start in range(0, len(a), block):
        part = slice(start, start + block)
        mean = _map_mean(a[part], b[part], conf)
        alpha, beta = _bin_posterior(mean, kappa[part], S, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            finite = (betaln(alpha, beta) - betaln(alpha - S, beta - n + S)).sum(axis=1)
        exact = (xlogy(S, mean) + xlogy(n - S, 1 - mean)).sum(axis=1)
        log_post[part] += np.where(np.isfinite(kappa[part]), finite, exact)
    weights = np.exp(log_post - log_post.max())
    return weights / weights.sum(), a, b, kappa


def _hierarchical_draws(conf, S, n, p_calibrated, n_draws, rng):
    """Draws of the bins' accuracies: a grid point, then each bin's Beta given it."""
    weights, a, b, kappa = _hyper_posterior(conf, S, n, p_calibrated)
    h = rng.choice(len(weights), size=n_draws, p=weights)
    mean = _map_mean(a[h], b[h], conf)
    theta = rng.beta(*_bin_posterior(mean, kappa[h], S, n))
    return np.where(np.isfinite(kappa[h])[:, None], theta, mean)


def _expected_gap(conf, S, n, p_calibrated):
    """Posterior mean of ``|theta_b - s_b|`` per bin, exactly given the grid."""
    weights, a, b, kappa = _hyper_posterior(conf, S, n, p_calibrated)
    keep = weights > 1e-12  # grid points of no weight add nothing
    mean = _map_mean(a[keep], b[keep], conf)
    gap = BetaPosterior(*_bin_posterior(mean, kappa[keep], S, n)).expected_abs_deviation(conf)
    gap = np.where(np.isfinite(kappa[keep])[:, None], gap, np.abs(mean - conf))
    return weights[keep] @ gap / weights[keep].sum()


@fill_doc
class BayesianCalibrationError(NoisyRateMixture, DesignBinsMixin, _RateAssessor):
    """Bayesian estimate of the expected calibration error of a black-box classifier.

    Read more in the :ref:`User Guide <ug_calibration_error>`.

    Rows are binned by their top-1 confidence. In bin ``b`` the accuracy
    ``theta_b`` has a Beta posterior, ``s_b`` is the mean top-1 confidence of
    all the bin's rows (labeled or not) and ``p_b`` the bin's share of rows.
    The ECE ``sum_b p_b |theta_b - s_b|`` then has a posterior, drawn by Monte
    Carlo. By default the bins share one model (an LLO map of their
    confidences with bin scatter, the identity map, i.e. a calibrated model,
    with prior probability ``p_calibrated``) and the unlabeled rows' outcomes
    are drawn (the ECE of the rows at hand): see the module docstring and
    the user guide. :meth:`summary` holds the data of a
    Bayesian reliability diagram (the Beta posterior of each bin's accuracy).

    Parameters
    ----------
    n_bins : int, default=10
        Number of confidence bins.
    {{binning}}
    classwise : bool, default=False
        Bin within each predicted class (groups = predicted class x bin), as
        needed for the classwise ECE of :meth:`classwise_ece_samples`.
    grouping : {"score_bins", "external"}, default="score_bins"
        ``"external"``: :meth:`fit` takes ``group_by``, the groups of a design
        that labeled them at unequal rates, each at random (such as a labeling
        session's groups). Each labeled row is weighted by its group's rows
        over its group's labels; a bin's labels enter as their effective
        number with the weighted share of successes (see
        :mod:`skassess.metrics._design_bins`), so the bins, the ECE and
        :meth:`summary` (one row per bin) are not biased towards the groups
        labeled most. ``groups_`` are then the group x bin cells.
    prior : {"uniform", "informative"} or array-like, default="uniform"
        ``"uniform"``: ``Beta(N0/2, N0/2)`` per bin; ``"informative"``:
        ``Beta(N0 s_b, N0 (1 - s_b))``, i.e. the prior belief that the model is
        calibrated; or ``(alpha, beta)`` pseudo-counts of shape (2,) or
        (n_groups, 2).
    prior_strength : float, default=2.0
        ``N0``, the prior's weight in pseudo-labels.
    ece_model : {"hierarchical", "independent"}, default="hierarchical"
        The posterior the ECE is drawn from. ``"hierarchical"``: the bins'
        accuracies scatter (concentration ``kappa``) around an LLO map of
        their confidence, which is the identity (a calibrated model) with
        probability ``p_calibrated``; map and ``kappa`` are integrated over a
        grid (see the user guide). ``"independent"``: each bin's own Beta
        posterior under ``prior`` (Ji et al.), whose ECE is biased upward for
        a well calibrated model.
    p_calibrated : float in (0, 1), default=0.5
        Prior probability that the model is calibrated (``"hierarchical"``).
    unlabeled : {"sampled", "expected"}, default="sampled"
        ``"sampled"``: the ECE of the rows seen, whose unlabeled outcomes are
        drawn in every posterior draw (the value the ECE computed from every
        label takes); ``"expected"``: the ECE of the bins' accuracies
        ``theta_b`` (the model's, on an infinite pool like this one).
    {{classes}}
    {{missing_label}}
    {{label_noise}}
    {{random_state}}

    Attributes
    ----------
    posterior_ : BetaPosterior
        Posterior of the accuracy per bin.
    prior_ : BetaPosterior
        The prior it started from.
    bin_edges_ : ndarray of shape (n_bins_fitted + 1,)
        Confidence bin edges.
    groups_ : pandas.Index
        Label of each bin (or (class, bin) pair).
    group_weights_ : ndarray of shape (n_groups,)
        Share ``p_b`` of each bin among all rows.
    n_labeled_ : ndarray of shape (n_groups,)
        Labeled rows per bin.
    n_rows_ : ndarray of shape (n_groups,)
        All rows per bin.
    {{fitted_rows}}
    {{label_noise_fitted}}

    See Also
    --------
    BayesianAccuracy : Accuracy per group, of which this is the score-bin case.
    skassess.metrics.ReliabilityDisplay : Plots :meth:`summary`.

    Notes
    -----
    ``overall_samples``, ``overall_mean`` and ``overall_interval`` give the
    ECE. The per-group metric (:meth:`groupwise_samples`, :meth:`predict`) is
    a bin's calibration gap ``|theta_b - s_b|``, whose posterior mean is
    exact; :meth:`predict_proba` gives ``[P(wrong), P(right)]`` in the row's
    bin. With ``classwise=True`` they give ``sum_{k,b} p_kb |theta_kb - s_kb|``
    (the ECE with class x bin cells), and :meth:`classwise_ece_samples` gives
    each predicted class's ECE ``sum_b p_{b|k} |theta_kb - s_kb|``.

    References
    ----------
    .. [1] D. Ji, R. L. Logan IV, P. Smyth, M. Steyvers, "Active Bayesian
       Assessment of Black-Box Classifiers", AAAI 2021.
    .. [2] M. P. Naeini, G. Cooper, M. Hauskrecht, "Obtaining Well Calibrated
       Probabilities Using Bayesian Binning", AAAI 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import BayesianCalibrationError
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)  # calibrated scores
    >>> est = BayesianCalibrationError(n_bins=5, random_state=0).fit(p, y)
    >>> lower, upper = est.overall_interval(0.95)
    >>> bool(lower < 0.05)
    True
    """

    _parameter_constraints = {
        **_RateAssessor._parameter_constraints,
        **NOISE_CONSTRAINTS,
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "binning": [StrOptions(set(STRATEGIES))],
        "strategy": [StrOptions(set(STRATEGIES)), Hidden(StrOptions({"deprecated"}))],
        "classwise": ["boolean"],
        "grouping": [StrOptions({"score_bins", "external"})],
        "ece_model": [StrOptions({"hierarchical", "independent"})],
        "p_calibrated": [Interval(Real, 0, 1, closed="neither")],
        "unlabeled": [StrOptions({"sampled", "expected"})],
    }

    def __init__(
        self,
        *,
        n_bins=10,
        binning="uniform",
        strategy="deprecated",
        classwise=False,
        grouping="score_bins",
        prior="uniform",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        ece_model="hierarchical",
        p_calibrated=0.5,
        unlabeled="sampled",
        classes=None,
        missing_label=-1,
        label_noise="auto",
        annotator_prior=DEFAULT_ANNOTATOR_PRIOR,
        slip_evidence="bounds",
        n_imputations=20,
        random_state=None,
    ):
        self.n_bins = n_bins
        self.binning = binning
        self.strategy = strategy
        self.classwise = classwise
        self.grouping = grouping
        self.prior = prior
        self.prior_strength = prior_strength
        self.ece_model = ece_model
        self.p_calibrated = p_calibrated
        self.unlabeled = unlabeled
        self.classes = classes
        self.missing_label = missing_label
        self.label_noise = label_noise
        self.annotator_prior = annotator_prior
        self.slip_evidence = slip_evidence
        self.n_imputations = n_imputations
        self.random_state = random_state

    def _grouping_kind_of(self):
        if self.grouping == "external":
            return "external_bin"
        return "class_bin" if self.classwise else "score_bins"

    def _check_params_vs_input(self, n_classes):
        if self.classwise and self.grouping == "external":
            raise ValueError(
                "classwise=True bins within each predicted class, grouping='external' "
                "within each group of group_by; choose one."
            )
        super()._check_params_vs_input(n_classes)

    @property
    def bin_edges_(self):
        """Confidence bin edges."""
        check_is_fitted(self)
        return self.grouping_.edges

    @property
    def confidence_(self):
        """Mean top-1 confidence ``s_b`` of each bin's rows (NaN for an empty bin)."""
        check_is_fitted(self)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_rows_ > 0, self.expected_success_ / self.n_rows_, np.nan)

    def calibration_error(self, accuracy):
        """The ECE ``sum_b p_b |accuracy_b - s_b|`` for given bin accuracies.

        The one formula of the ECE in the package: the posterior draws, the
        plug-in :func:`expected_calibration_error` and the simulations'
        evaluation all go through it.

        Parameters
        ----------
        accuracy : array-like of shape (..., n_groups)
            Accuracy per bin (or class x bin cell; per bin with
            ``grouping="external"``), e.g. posterior draws.

        Returns
        -------
        ece : ndarray of shape (...)
        """
        check_is_fitted(self)
        if self.grouping != "external":
            return np.abs(np.asarray(accuracy) - np.nan_to_num(self.confidence_)) @ (
                self.group_weights_
            )
        bins = self._design_bins()
        return np.abs(np.asarray(accuracy) - np.nan_to_num(bins.confidence)) @ bins.weights

    def _accuracy_draws(self, n_draws, rng, pool):
        """Draws of each bin's accuracy (of its rows at hand when ``pool``)."""
        if self.grouping == "external":
            return self._design_accuracy_draws(n_draws, rng, pool)
        conf = np.nan_to_num(self.confidence_)
        if self.ece_model == "independent":
            theta = self.posterior_.rvs(n_draws, rng)
        else:
            theta = self._bin_model_draws(conf, self.n_success_, self.n_labeled_, n_draws, rng)
        if not pool:
            return theta
        # Row weights are taken as counts: the unlabeled mass, rounded.
        unlabeled = np.rint(np.maximum(self.n_rows_ - self.n_labeled_, 0.0)).astype(np.int64)
        successes = rng.binomial(unlabeled, theta)
        rows = self.n_labeled_ + unlabeled
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(rows > 0, (self.n_success_ + successes) / rows, conf)

    def _bin_model_draws(self, conf, S, n, n_draws, rng):
        """Draws of bins' accuracies under the hierarchical model, from their labels."""
        return _hierarchical_draws(conf, S, n, self.p_calibrated, n_draws, rng)

    def _gap_draws(self, n_draws, rng, pool):
        """Draws of each bin's calibration gap ``|accuracy_b - s_b|``."""
        return np.abs(self._accuracy_draws(n_draws, rng, pool) - np.nan_to_num(self.confidence_))

    def _overall_prior_pull(self):
        return None  # the ECE is not a weighted mean of the bins' accuracies

    def _groupwise_samples(self, n_draws, rng):
        """Calibration gap ``|theta_b - s_b|`` per bin (per cell, by its own Beta,
        with ``grouping="external"``)."""
        if self.grouping == "external":
            conf = np.nan_to_num(self.confidence_)
            return np.abs(self.posterior_.rvs(n_draws, rng) - conf)
        return self._gap_draws(n_draws, rng, pool=False)

    def _summary_draws(self, n_draws):
        # The summary's rows: each bin's accuracy, its Beta posterior.
        return self.posterior_.rvs(n_draws, self._rng(None))

    def _overall_samples(self, n_draws, rng):
        pool = self.unlabeled == "sampled"
        return self.calibration_error(self._accuracy_draws(n_draws, rng, pool))

    def _overall_exact_mean(self):
        return None  # the ECE is not linear in the bin accuracies

    def _group_metric_mean(self):
        conf = np.nan_to_num(self.confidence_)
        if self.ece_model == "independent" or self.grouping == "external":
            return self.posterior_.expected_abs_deviation(conf)
        return _expected_gap(conf, self.n_success_, self.n_labeled_, self.p_calibrated)

    @validated
    @validate_args(
        {
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def classwise_ece_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior draws of each predicted class's ECE (needs ``classwise=True``).

        Returns
        -------
        samples : pandas.DataFrame of shape (n_draws, n_classes)
            Column ``k`` holds draws of ``sum_b p_{b|k} |theta_kb - s_kb|``.
        """
        check_is_fitted(self)
        if not self.classwise:
            raise ValueError("classwise_ece_samples needs an estimator fitted with classwise=True.")
        gaps = self._gap_draws(n_draws, self._rng(random_state), self.unlabeled == "sampled")
        n_bins = self.grouping_.n_bins_fitted
        rows = self.n_rows_.reshape(self.n_classes_, n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            within = rows / rows.sum(axis=1, keepdims=True)
        within = np.nan_to_num(within)
        ece = (gaps.reshape(n_draws, self.n_classes_, n_bins) * within).sum(axis=2)
        return pd.DataFrame(ece, columns=pd.Index(self.classes_, name="predicted_class"))

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """Posterior per bin: the data of a Bayesian reliability diagram.

        Parameters
        ----------
        level : float, default=0.95
            Credible level of the equal-tailed intervals.

        Returns
        -------
        summary : pandas.DataFrame
            One row per bin with ``bin_lower``, ``bin_upper``, ``confidence``
            (mean top-1 score ``s_b``; NaN for a bin without rows, which has
            none), ``n_labeled``, ``weight`` (``p_b``),
            ``prior_mean``, ``mean``, ``lower`` and ``upper`` of the accuracy.
            With ``grouping="external"`` the rows are the bins, each the Beta
            posterior of its effective labels (also in ``effective_labels``).
        """
        if self.grouping == "external":
            return self._bin_summary(level)
        table = super().summary(level)
        edges = self.bin_edges_
        n_bins = len(edges) - 1
        reps = len(table) // n_bins
        table.insert(0, "confidence", self.confidence_)
        table.insert(0, "bin_upper", np.tile(edges[1:], reps))
        table.insert(0, "bin_lower", np.tile(edges[:-1], reps))
        return table


@validate_params(
    {
        "y_true": ["array-like"],
        "y_score": ["array-like"],
        "n_bins": BayesianCalibrationError._parameter_constraints["n_bins"],
        "binning": BayesianCalibrationError._parameter_constraints["binning"],
        "strategy": BayesianCalibrationError._parameter_constraints["strategy"],
        "y_pred": ["array-like", None],
        "classes": BayesianCalibrationError._parameter_constraints["classes"],
    },
    prefer_skip_nested_validation=False,
)
def expected_calibration_error(
    y_true,
    y_score,
    *,
    n_bins=10,
    binning="uniform",
    y_pred=None,
    classes=None,
    strategy="deprecated",
):
    """The plug-in ECE of fully labeled rows: ``sum_b p_b |acc_b - conf_b|``.

    The same bins and formula as :class:`BayesianCalibrationError`
    (:meth:`~BayesianCalibrationError.calibration_error` at the observed bin
    accuracies): the value the posterior estimates, computed from every
    label.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels of every row.
    y_score : array-like of shape (n_samples, n_classes) or (n_samples,)
        Black-box scores.
    n_bins : int, default=10
    binning : {"uniform", "quantile"}, default="uniform"
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predictions; None: the argmax of ``y_score``.
    classes : array-like of shape (n_classes,), default=None
        Label of each score column, when ``y_true`` holds labels.
    strategy : {"uniform", "quantile"}
        Deprecated alias of ``binning``.

        .. deprecated:: 0.1
           ``strategy`` will be removed in 0.2; use ``binning``.

    Returns
    -------
    ece : float

    Examples
    --------
    >>> from skassess.metrics import expected_calibration_error
    >>> round(expected_calibration_error([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], n_bins=5), 4)
    0.35
    """
    if strategy != "deprecated":
        warn_deprecated("expected_calibration_error(strategy=...)", "binning=...")
        binning = strategy
    est = BayesianCalibrationError(
        n_bins=n_bins, binning=binning, classes=classes, missing_label=None
    ).fit(y_score, y_true, y_pred=y_pred)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.nan_to_num(est.n_success_ / est.n_labeled_)
    return float(est.calibration_error(accuracy))

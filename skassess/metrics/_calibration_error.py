"""BayesianCalibrationError: posterior of the expected calibration error (ECE)."""

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from ..utils import N_DRAWS, validate_args, validated
from ._base import DEFAULT_N_DRAWS, DEFAULT_PRIOR_STRENGTH
from ._grouping import STRATEGIES
from ._rates import _BetaAssessor


class BayesianCalibrationError(_BetaAssessor):
    """Bayesian estimate of the expected calibration error of a black-box classifier.

    Rows are binned by their top-1 confidence. In bin ``b`` the accuracy
    ``theta_b`` has a Beta posterior, ``s_b`` is the mean top-1 confidence of
    all the bin's rows (labeled or not) and ``p_b`` the bin's share of rows.
    The ECE ``sum_b p_b |theta_b - s_b|`` then has a posterior, drawn by Monte
    Carlo. :meth:`summary` holds the data of a Bayesian reliability diagram.

    Parameters
    ----------
    n_bins : int, default=10
        Number of confidence bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Bins of equal width on [0, 1], or with equal numbers of rows (edges
        from the first batch seen), as in
        :func:`sklearn.calibration.calibration_curve`.
    classwise : bool, default=False
        Bin within each predicted class (groups = predicted class x bin), as
        needed for the classwise ECE of :meth:`classwise_ece_samples`.
    prior : {"uniform", "informative"} or array-like, default="uniform"
        ``"uniform"``: ``Beta(N0/2, N0/2)`` per bin; ``"informative"``:
        ``Beta(N0 s_b, N0 (1 - s_b))``, i.e. the prior belief that the model is
        calibrated; or ``(alpha, beta)`` pseudo-counts of shape (2,) or
        (n_groups, 2).
    prior_strength : float, default=2.0
        ``N0``, the prior's weight in pseudo-labels.
    classes : array-like of shape (n_classes,), default=None
        Label of each score column, when ``y`` holds labels rather than
        column indices.
    missing_label : int, float, str or None, default=-1
        The value of ``y`` that marks an unlabeled row; ``np.nan`` for NaN,
        None when every row is labeled.
    random_state : int, RandomState instance or None, default=None
        Seed of the Monte Carlo draws.

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
    classes_ : ndarray of shape (n_classes,)
        Label of each score column.
    n_classes_ : int
        Number of classes.
    n_samples_seen_ : int
        Rows seen by :meth:`fit` and :meth:`partial_fit`.
    n_features_in_ : int
        Number of score columns seen in :meth:`fit`.

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
        **_BetaAssessor._parameter_constraints,
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "strategy": [StrOptions(set(STRATEGIES))],
        "classwise": ["boolean"],
    }

    def __init__(
        self,
        *,
        n_bins=10,
        strategy="uniform",
        classwise=False,
        prior="uniform",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        classes=None,
        missing_label=-1,
        random_state=None,
    ):
        self.n_bins = n_bins
        self.strategy = strategy
        self.classwise = classwise
        self.prior = prior
        self.prior_strength = prior_strength
        self.classes = classes
        self.missing_label = missing_label
        self.random_state = random_state

    def _grouping_kind_of(self):
        return "class_bin" if self.classwise else "score_bins"

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
            Accuracy per bin (or class x bin cell), e.g. posterior draws.

        Returns
        -------
        ece : ndarray of shape (...)
        """
        check_is_fitted(self)
        return np.abs(np.asarray(accuracy) - np.nan_to_num(self.confidence_)) @ (
            self.group_weights_
        )

    def _groupwise_samples(self, n_draws, rng):
        """Calibration gap ``|theta_b - s_b|`` per bin."""
        return np.abs(self.posterior_.rvs(n_draws, rng) - np.nan_to_num(self.confidence_))

    def _overall_samples(self, n_draws, rng):
        return self.calibration_error(self.posterior_.rvs(n_draws, rng))

    def _overall_exact_mean(self):
        return None  # the ECE is not linear in the bin accuracies

    def _group_metric_mean(self):
        return self.posterior_.expected_abs_deviation(np.nan_to_num(self.confidence_))

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
            raise ValueError(
                "classwise_ece_samples needs an estimator fitted with classwise=True."
            )
        gaps = self._groupwise_samples(n_draws, self._rng(random_state))
        n_bins = self.grouping_.n_bins_fitted
        rows = self.n_rows_.reshape(self.n_classes_, n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            within = rows / rows.sum(axis=1, keepdims=True)
        within = np.nan_to_num(within)
        ece = (gaps.reshape(n_draws, self.n_classes_, n_bins) * within).sum(axis=2)
        return pd.DataFrame(ece, columns=pd.Index(self.classes_, name="predicted_class"))

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
        """
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
        "strategy": BayesianCalibrationError._parameter_constraints["strategy"],
        "y_pred": ["array-like", None],
        "classes": BayesianCalibrationError._parameter_constraints["classes"],
    },
    prefer_skip_nested_validation=False,
)
def expected_calibration_error(y_true, y_score, *, n_bins=10, strategy="uniform", y_pred=None,
                               classes=None):
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
    strategy : {"uniform", "quantile"}, default="uniform"
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predictions; None: the argmax of ``y_score``.
    classes : array-like of shape (n_classes,), default=None
        Label of each score column, when ``y_true`` holds labels.

    Returns
    -------
    ece : float

    Examples
    --------
    >>> from skassess.metrics import expected_calibration_error
    >>> round(expected_calibration_error([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], n_bins=5), 4)
    0.35
    """
    est = BayesianCalibrationError(
        n_bins=n_bins, strategy=strategy, classes=classes, missing_label=None
    ).fit(y_score, y_true, y_pred=y_pred)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.nan_to_num(est.n_success_ / est.n_labeled_)
    return float(est.calibration_error(accuracy))

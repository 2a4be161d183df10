"""BayesianConfusionMatrix: a Dirichlet posterior over the true class per predicted class."""

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._label_noise import NOISE_CONSTRAINTS
from ..utils._params import LEVEL, N_DRAWS, validate_args, validated
from ..utils._sklearn_compat import StrOptions
from ._base import (
    DEFAULT_N_DRAWS,
    DEFAULT_PRIOR_STRENGTH,
    DRAW_CHUNK,
    _BaseAssessor,
)
from ._calibrated_model import N_BINS, add_to_cells, score_bin, score_logit
from ._conjugate import MIN_PSEUDO_COUNT, dirichlet_draws
from ._design import DESIGN_ARRAYS, DesignCounts, DesignErrorSplit
from ._error_split import ErrorSplit
from ._hierarchical import HierarchicalBeta
from ._lazy_fit import LazyCalibratedFit
from ._nested_dirichlet import NestedDirichletPosterior
from ._noisy_labels import DEFAULT_ANNOTATOR_PRIOR, NoisyConfusionMixture
from ._prior_checks import prior_pull


@fill_doc
class BayesianConfusionMatrix(
    NoisyConfusionMixture, DesignCounts, DesignErrorSplit, LazyCalibratedFit, _BaseAssessor
):
    """Bayesian estimate of a black-box classifier's confusion matrix.

    Read more in the :ref:`User Guide <ug_confusion>`.

    For each predicted class ``k``, the distribution ``theta_k`` of the true
    class among rows predicted ``k`` has a nested Dirichlet posterior
    (:class:`NestedDirichletPosterior`): the accuracy ``theta_kk`` is Beta,
    exactly as in :class:`BayesianAccuracy`, and the distribution of the true
    class given an error is Dirichlet over the other classes, independent of
    it. With ``p_k`` the share of all rows (labeled or not) predicted ``k``,
    the joint ``P(pred = k, y = j) = p_k theta_kj`` gives the confusion matrix.

    Parameters
    ----------
    prior : {"calibrated", "uniform", "informative", "hierarchical"} or array-like, \
            default="calibrated"
        ``"calibrated"``: each predicted class's accuracy from the calibrated
        model of :class:`BayesianAccuracy` (the scores through a calibration
        map whose trust is learned from the labels; the predicted classes are
        its groups), errors Dirichlet around the ``"informative"`` prior's
        shares, with a concentration learned from the labeled errors (see
        the user guide, *The errors' split under the calibrated prior*).
        ``"uniform"``: accuracy ``Beta(N0/2, N0/2)``, errors
        ``Dirichlet(N0/(K-1), ...)``. ``"informative"``: accuracy
        ``Beta(N0 s_k, N0 (1 - s_k))`` with ``s_k`` the mean of ``p(y = k |
        x)`` over the rows predicted ``k``, errors Dirichlet with ``K - 1``
        pseudo-counts, half spread as the scores spread the errors, half
        evenly (see Notes). ``"hierarchical"``: the accuracies of the
        predicted classes share a hierarchical Beta prior, as in
        :class:`BayesianAccuracy` (drawn jointly), errors as with
        ``"uniform"``. An array of shape (n_classes,) or (n_classes,
        n_classes) (row = predicted class) is a plain ``Dirichlet(alpha_k)``
        per predicted class, and then ``prior_strength`` is not used.
    prior_strength : float, default=2.0
        ``N0``, the accuracy prior's weight in pseudo-labels (the same default
        for every conjugate estimator).
    {{classes}}
    {{missing_label}}
    {{label_noise}}
    {{random_state}}

    Attributes
    ----------
    posterior_ : NestedDirichletPosterior
        Posterior per predicted class (row) over the true class (column).
    dispersion_ : float
        With ``prior="calibrated"`` only: the labels' dispersion around the
        calibration map of being right, as in
        :class:`~skassess.metrics.BayesianAccuracy`.
    prior_ : NestedDirichletPosterior
        The prior it started from.
    counts_ : ndarray of shape (n_classes, n_classes)
        Labeled rows per (predicted class, true class), weighted.
    {{predicted_class_groups}}
    {{fitted_rows}}
    {{label_noise_fitted}}

    See Also
    --------
    BayesianMisclassificationCost : Expected cost from the same posterior.
    BayesianAccuracy : Beta posterior of accuracy per group.

    Notes
    -----
    ``overall_*`` methods give the accuracy ``sum_k p_k theta_kk``, and
    :meth:`groupwise_samples` and :meth:`predict` each predicted class's
    accuracy ``theta_kk``; :meth:`predict_proba` is ``E[theta_k]``, the
    posterior predictive distribution of the true class of a row predicted
    ``k``. With the same ``prior`` and ``prior_strength`` the accuracy of a
    predicted class has the same posterior as in :class:`BayesianAccuracy`
    grouped by predicted class. Matrices follow scikit-learn's orientation:
    rows are true classes, columns predicted classes.

    Why nested: in a plain Dirichlet the accuracy's prior failures are the sum
    of the error cells' pseudo-counts. An informative accuracy prior of a
    confident model (``N0 (1 - s_k)`` failures, often < 0.05) then leaves each
    error cell a spike at 0, and its 95 % interval misses the cell's true
    share until a label falls in it.
    The scores say even less about where the errors go than about how many
    there are, so the informative error prior is weak (``K - 1`` pseudo-counts,
    one per cell on average) and half uniform. The cells' intervals' measured
    coverage: ``docs/benchmarks/coverage.md``.

    References
    ----------
    .. [1] D. Ji, R. L. Logan IV, P. Smyth, M. Steyvers, "Active Bayesian
       Assessment of Black-Box Classifiers", AAAI 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import BayesianConfusionMatrix
    >>> scores = np.array([[0.8, 0.2], [0.7, 0.3], [0.1, 0.9], [0.4, 0.6]])
    >>> est = BayesianConfusionMatrix(random_state=0).fit(scores, [0, 1, 1, -1])
    >>> est.confusion_matrix(normalize="all").round(3)
    predicted_class     0      1
    true_class
    0                0.25  0.126
    1                0.25  0.374
    """

    _parameter_constraints = {
        **_BaseAssessor._parameter_constraints,
        "prior": [
            StrOptions({"uniform", "informative", "hierarchical", "calibrated"}),
            "array-like",
        ],
        **NOISE_CONSTRAINTS,
    }
    _group_arrays = ("n_rows_", "expected_counts_", "counts_")
    _extra_stat_arrays = ("_design_confusion", "_design_confusion_square")
    _LAZY = (*LazyCalibratedFit._LAZY, "_error_split")
    #: The calibrated model's arrays: per predicted class and bin of the top-1 log-odds.
    #: (the design-weighted sums are the likelihood's under an unequal design).
    _score_arrays = (
        "score_rows_",
        "score_logit_",
        "score_labeled_",
        "score_success_",
        *DESIGN_ARRAYS,
    )

    def __init__(
        self,
        *,
        prior="calibrated",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        classes=None,
        missing_label=-1,
        label_noise="auto",
        annotator_prior=DEFAULT_ANNOTATOR_PRIOR,
        slip_evidence="bounds",
        n_imputations=20,
        random_state=None,
    ):
        self.prior = prior
        self.prior_strength = prior_strength
        self.classes = classes
        self.missing_label = missing_label
        self.label_noise = label_noise
        self.annotator_prior = annotator_prior
        self.slip_evidence = slip_evidence
        self.n_imputations = n_imputations
        self.random_state = random_state

    def _init_stats(self, n_groups):
        K = self.n_classes_
        self.n_rows_ = np.zeros(K)
        self.expected_counts_ = np.zeros((K, K))
        self.counts_ = np.zeros((K, K))
        for name in self._score_arrays:
            setattr(self, name, np.zeros((K, N_BINS if self._calibrated() else 0)))
        self._design_confusion = np.zeros((K, K))
        self._design_confusion_square = np.zeros((K, K))

    def _calibrated(self):
        return isinstance(self.prior, str) and self.prior == "calibrated"

    def _accumulate(self, scores, pred, conf, group, y, weight):
        K = self.n_classes_
        self.n_rows_ += np.bincount(pred, weights=weight, minlength=K)
        # Sum of the score rows per predicted class, as (weighted one-hot) @ scores.
        # In CSC form the one-hot matrix has one entry per column and needs no sorting.
        one_hot = sparse.csc_matrix((weight, pred, np.arange(len(pred) + 1)), shape=(K, len(pred)))
        self.expected_counts_ += one_hot @ scores
        if self._calibrated():
            ell = score_logit(conf)
            cell = (pred, score_bin(ell))
            add_to_cells(self.score_rows_, cell, weight)
            add_to_cells(self.score_logit_, cell, weight * ell)
        labeled = y >= 0
        self._count_labels(pred[labeled], pred[labeled], y[labeled], weight[labeled], conf[labeled])

    def _count_labels(self, pred, group, y, weight, conf=None, design_weight=None):
        """Add labeled rows (already counted as rows) to the confusion counts."""
        K = self.n_classes_
        cell = pred * K + y
        self.counts_ += np.bincount(cell, weights=weight, minlength=K * K).reshape(K, K)
        if self._calibrated():
            cell = (pred, score_bin(score_logit(conf)))
            self._start_design_counts()
            np.add.at(self.score_labeled_, cell, weight)
            np.add.at(self.score_success_, cell, weight * (y == pred))
            self._add_design_counts(cell, weight, y == pred, design_weight)
            self._add_design_confusion(pred * K + y, weight, design_weight)

    def _prior(self):
        K = self.n_classes_
        n0 = self.prior_strength
        off = ~np.eye(K, dtype=bool)
        if isinstance(self.prior, str) and self.prior == "uniform":
            alpha = np.where(off, n0 / (K - 1), n0 / 2.0)
            return NestedDirichletPosterior(alpha, np.full(K, n0 / 2.0))
        if isinstance(self.prior, str) and self.prior in ("hierarchical", "calibrated"):
            # The accuracy's prior: a new predicted class's, given the others' labels
            # (see BayesianAccuracy); the posterior's pseudo-counts are set apart.
            # The calibrated prior's errors spread as the informative one's.
            acc = self._hierarchy.predictive()
            errors = n0 / (K - 1) if self.prior == "hierarchical" else self._informative_errors()
            return NestedDirichletPosterior(
                np.where(off, errors, np.diag(acc.prior_alpha)), acc.prior_beta
            )
        if isinstance(self.prior, str):  # informative
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = self.expected_counts_ / self.n_rows_[:, None]
            mean = np.where(self.n_rows_[:, None] > 0, mean, 1.0 / K)
            hit = np.clip(np.diagonal(mean), 0.0, 1.0)
            alpha = np.where(
                off, self._informative_errors(), np.maximum(n0 * hit, MIN_PSEUDO_COUNT)
            )
            return NestedDirichletPosterior(alpha, np.maximum(n0 * (1.0 - hit), MIN_PSEUDO_COUNT))
        prior = np.asarray(self.prior, dtype=np.float64)
        if prior.shape not in {(K,), (K, K)}:
            raise ValueError(
                f"prior as an array must have shape (n_classes,) or (n_classes, n_classes)"
                f" = ({K}, {K}); got shape {prior.shape}."
            )
        if not np.all(np.isfinite(prior)) or np.any(prior <= 0):
            raise ValueError(f"prior pseudo-counts must be finite and > 0; got {prior!r}.")
        return NestedDirichletPosterior.from_dirichlet(np.broadcast_to(prior, (K, K)))

    def _informative_errors(self):
        """Error pseudo-counts: ``K - 1`` per predicted class, half as the scores spread them."""
        K = self.n_classes_
        off = ~np.eye(K, dtype=bool)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.expected_counts_ / self.n_rows_[:, None]
        mean = np.where(self.n_rows_[:, None] > 0, mean, 1.0 / K)
        errors = np.where(off, mean, 0.0)
        total = errors.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            spread = np.where(total > 0, errors / total, 1.0 / (K - 1))
        return (K - 1) * (0.5 * spread + 0.5 / (K - 1))

    def _fit_calibrated(self):
        """The calibrated model of each predicted class's accuracy (BayesianAccuracy's)."""
        self._hierarchy = self._calibrated_model()
        self.dispersion_ = self._hierarchy.dispersion
        self._set_hierarchical_posterior()
        self._calibrated_stale = False

    def _update_posterior(self):
        if self._calibrated():
            self._mark_calibrated_stale()
            return
        self._hierarchy = None
        if isinstance(self.prior, str) and self.prior == "hierarchical":
            self._hierarchy = HierarchicalBeta(
                np.diagonal(self.counts_).copy(), self.counts_.sum(axis=1)
            )
        if self._hierarchy is None:
            self.prior_ = self._prior()
            self.posterior_ = self.prior_.update(self.counts_)
        else:
            self._set_hierarchical_posterior()

    def _set_hierarchical_posterior(self):
        # The accuracy's pseudo-counts are those whose Beta posterior has the
        # model's (hierarchical mixture's, calibrated model's) mean and variance.
        self.prior_ = self._prior()
        K = self.n_classes_
        acc = self._hierarchy.posterior()
        off = ~np.eye(K, dtype=bool)
        errors = self.prior_.prior_alpha
        counts, failures = self.counts_, acc.prior_beta
        self._error_split = None
        if self._calibrated() and K > 2:
            # The errors' split: its concentration (and the cost's tilt) learned
            # from the labeled errors (design-weighted under a design), the
            # posterior's pseudo-counts taken whole; the failures (the accuracy's) kept.
            split = self._design_error_split()
            split = np.where(off, self.counts_ if split is None else split, 0.0)
            shares, cost = self._informative_errors(), self._split_cost()
            self._error_split = ErrorSplit(split, shares, cost)
            errors = self._error_split.alpha()
            # the prior's split is the same mixture before any label
            key = (shares.tobytes(), None if cost is None else cost.tobytes())
            if getattr(self, "_prior_split", (None, None))[0] != key:
                self._prior_split = (key, ErrorSplit(np.zeros((K, K)), shares, cost).alpha())
            self.prior_ = NestedDirichletPosterior(
                np.where(off, self._prior_split[1], self.prior_.prior_alpha),
                self.prior_.prior_failures,
            )
            counts = np.where(off, 0.0, self.counts_)
            failures = failures + np.where(off, self.counts_, 0.0).sum(axis=1)
        self.posterior_ = NestedDirichletPosterior(
            np.where(off, errors, np.diag(acc.prior_alpha)), failures, counts
        )

    def _accuracy_samples(self, n_draws, rng):
        """Draws of each predicted class's accuracy ``theta_kk``, shape (n_draws, K)."""
        if getattr(self, "_hierarchy", None) is not None:
            return self._hierarchy.rvs(n_draws, rng)
        return self.posterior_.diagonal().rvs(n_draws, rng)

    def _theta_samples(self, n_draws, rng):
        """Draws of every row ``theta_k``, the accuracies drawn as above."""
        if getattr(self, "_hierarchy", None) is None:
            return self.posterior_.rvs(n_draws, rng)
        K = self.n_classes_
        hit = self._accuracy_samples(n_draws, rng)
        errors = dirichlet_draws(self._error_alpha_draws(n_draws, rng), rng)
        return errors * (1.0 - hit)[..., None] + hit[..., None] * np.eye(K)

    def _split_cost(self):
        """The cost whose direction the error split's prior may tilt along (None)."""
        return None

    def _error_alpha_draws(self, n_draws, rng):
        """The error split's Dirichlet pseudo-counts for each of ``n_draws`` draws."""
        # (an estimator pickled before the learned split has none: its posterior's)
        split = getattr(self, "_error_split", None) if self._calibrated() else None
        if split is None:
            K = self.n_classes_
            return np.broadcast_to(self.posterior_.error_alpha, (n_draws, K, K))
        return split.alpha_draws(n_draws, rng)

    # ------------------------------------------------------------ contract hooks
    def _observed_outcomes(self, pred, y):
        return np.ones(len(y), dtype=bool), y

    def _outcome_proba(self):
        return self.posterior_.mean()

    def _group_metric_mean(self):
        return np.diagonal(self.posterior_.mean())

    # ---------------------------------------------------------------- outputs
    def _class_index(self, name):
        return pd.Index(self.classes_, name=name)

    @validated
    @validate_args(
        {
            "level": [LEVEL],
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def summary(self, level=0.95, n_draws=4000, random_state=None):
        """Posterior of each cell ``theta_kj = P(y = j | pred = k)`` as a DataFrame.

        Parameters
        ----------
        level : float, default=0.95
            Credible level of the equal-tailed intervals.
        n_draws : int, default=4000
            Monte Carlo draws for the bounds of the off-diagonal cells (the
            diagonal's are exact); see :meth:`NestedDirichletPosterior.interval`.
        random_state : int, RandomState instance or None, default=None
            Seed of those draws; None uses the estimator's ``random_state``,
            and 0 when that is None too, so that the same posterior always
            prints the same table.

        Returns
        -------
        summary : pandas.DataFrame
            Indexed by (predicted_class, true_class), with ``n_labeled``
            (labeled rows predicted ``k``), ``count`` (of them, with true class
            ``j``), ``weight`` (``p_k``), ``prior_mean``, ``mean``, ``lower``
            and ``upper``.
        """
        check_is_fitted(self)
        if random_state is None:
            random_state = self.random_state  # None: fresh draws, as everywhere
        lower, upper = self.posterior_.interval(level, n_draws, check_random_state(random_state))
        K = self.n_classes_
        if getattr(self, "_hierarchy", None) is not None:
            # The accuracies' own (mixture) intervals on the diagonal.
            acc_lower, acc_upper = self._hierarchy.interval(level)
            lower[np.arange(K), np.arange(K)] = acc_lower
            upper[np.arange(K), np.arange(K)] = acc_upper
        index = pd.MultiIndex.from_product(
            [self.classes_, self.classes_], names=["predicted_class", "true_class"]
        )
        return pd.DataFrame(
            {
                "n_labeled": np.repeat(self.counts_.sum(axis=1), K),
                "count": self.counts_.ravel(),
                "weight": np.repeat(self.group_weights_, K),
                "prior_mean": self.prior_.mean().ravel(),
                "mean": self.posterior_.mean().ravel(),
                "lower": lower.ravel(),
                "upper": upper.ravel(),
            },
            index=index,
        )

    @validated
    @validate_args(
        {
            "n_draws": [N_DRAWS],
            "normalize": [StrOptions({"all", "true", "pred"}), None],
            "random_state": ["random_state"],
        },
    )
    def confusion_matrix_samples(self, n_draws=DEFAULT_N_DRAWS, normalize="all", random_state=None):
        """Posterior draws of the confusion matrix (rows true, columns predicted).

        Parameters
        ----------
        n_draws : int, default=4000
            Number of draws.
        normalize : {"all", "true", "pred"} or None, default="all"
            ``"all"``: joint ``P(y = i, pred = j)``; ``"true"``:
            ``P(pred = j | y = i)``; ``"pred"``: ``P(y = i | pred = j)``;
            None: expected counts among all rows seen.
        random_state : int, RandomState instance or None, default=None
            Seed; None uses the estimator's ``random_state``.

        Returns
        -------
        samples : ndarray of shape (n_draws, n_classes, n_classes)
        """
        check_is_fitted(self)
        theta = self._theta_samples(n_draws, self._rng(random_state))
        return _normalize(theta, self.group_weights_, normalize, self.n_rows_.sum())

    @validate_args(
        {
            "n_draws": [N_DRAWS],
            "normalize": [StrOptions({"all", "true", "pred"}), None],
            "random_state": ["random_state"],
        },
    )
    def confusion_matrix(self, normalize="all", n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior mean confusion matrix as a DataFrame (rows true, columns predicted).

        Exact for ``normalize`` in ``("all", "pred", None)``; a Monte Carlo
        mean for ``"true"``. See :meth:`confusion_matrix_samples`.
        """
        check_is_fitted(self)
        if normalize == "true":
            # A Monte Carlo mean, drawn a chunk at a time: memory O(chunk x K^2), not
            # O(n_draws x K^2).
            rng = self._rng(random_state)
            K = self.n_classes_
            chunk = max(1, DRAW_CHUNK // (K * K))
            matrix = np.zeros((K, K))
            for start in range(0, n_draws, chunk):
                theta = self._theta_samples(min(chunk, n_draws - start), rng)
                matrix += _normalize(theta, self.group_weights_, "true", 0.0).sum(axis=0)
            matrix /= n_draws
        else:
            matrix = _normalize(
                self.posterior_.mean()[None], self.group_weights_, normalize, self.n_rows_.sum()
            )[0]
        return pd.DataFrame(
            matrix,
            index=self._class_index("true_class"),
            columns=self._class_index("predicted_class"),
        )

    def _groupwise_samples(self, n_draws, rng):
        # The accuracy of predicted class k is Beta; the rows are independent,
        # so these draws are exact with O(n_draws x K) numbers, not K^2.
        return self._accuracy_samples(n_draws, rng)

    def _overall_samples(self, n_draws, rng):
        return self._groupwise_samples(n_draws, rng) @ self.group_weights_

    def _overall_exact_mean(self):
        return float(np.diagonal(self.posterior_.mean()) @ self.group_weights_)

    def _overall_prior_pull(self):
        if not (isinstance(self.prior, str) and self.prior == "uniform"):
            return None
        mean, var = self._group_metric_moments()
        return prior_pull(
            self.group_weights_, mean, var, self.counts_.sum(axis=1), self._observed_group_sums()
        )

    def _group_metric_moments(self):
        """Posterior mean and variance of each predicted class's metric (accuracy)."""
        diagonal = self.posterior_.diagonal()
        return diagonal.mean(), diagonal.var()

    def _observed_group_sums(self):
        """Sum of the metric over each predicted class's labeled rows (right ones)."""
        return np.diagonal(self.counts_).copy()


def _normalize(theta, p, normalize, n_total):
    """theta[s, k, j] = P(y=j | pred=k) -> matrices [s, true, pred]."""
    if normalize == "pred":
        return np.swapaxes(theta, 1, 2)
    joint = np.swapaxes(theta * p[None, :, None], 1, 2)
    if normalize == "all":
        return joint
    if normalize is None:
        return joint * n_total
    total = joint.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = joint / total
    empty = ~(total > 0)
    if empty.any():
        # A true class with no mass in a draw (only when tiny pseudo-counts make the
        # Dirichlet draws one-hot): P(pred | y = i) is undefined there; the draw takes
        # the row of the draws' mean joint (uniform if that is empty too).
        mean = joint.mean(axis=0)
        rows = mean.sum(axis=1, keepdims=True)
        K = joint.shape[2]
        with np.errstate(invalid="ignore", divide="ignore"):
            fallback = np.where(rows > 0, mean / rows, 1.0 / K)
        out = np.where(empty, fallback[None], out)
    return out

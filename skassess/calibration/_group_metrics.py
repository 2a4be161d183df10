"""Posteriors of per-group metrics and their differences, with unlabeled rows used."""

from collections.abc import Hashable
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..exceptions import SkassessWarning
from ..metrics import RATES, GroupComparison, compare_groups, rope_probabilities
from ..utils._dask import check_signed_labels, is_dask_collection
from ..utils._deprecation import warn_deprecated
from ..utils._docstrings import fill_doc
from ..utils._groups import GroupEncoder
from ..utils._label_noise import NOISE_CONSTRAINTS
from ..utils._params import LEVEL, ROPE, atomic, reset_fitted, validate_args, validated
from ..utils._random import check_generator
from ..utils._sklearn_compat import Hidden, Interval, MissingValues, StrOptions
from ..utils._validation import as_scalar
from ..utils._warnings import warn
from ._group_methods import GROUP_METHODS, GroupRows, group_method
from ._group_partitions import PartitionedRows
from ._group_totals import GroupTotals, calibrated_models, checked_rows, fit_partitions_totals
from ._hierarchical import HierarchicalBetaCalibrator
from ._noisy_group_metrics import NoisyGroupMetrics


@fill_doc
class BayesianGroupMetrics(NoisyGroupMetrics, BaseEstimator):
    """Posteriors of group metrics (accuracy, TPR, FPR, ...) and of their differences.

    Read more in the :ref:`User Guide <ug_fairness>`.

    For fairness assessment of a binary classifier from its scores on many
    rows, of which few are labeled. Four methods:

    * ``"calibrated"`` (the default): the calibrated model of
      :class:`~skassess.metrics.BayesianAccuracy` with the groups as
      ``group_by``. The scores enter through one calibration map per
      predicted class (for accuracy, one map of being right) shared by the
      groups; each group departs from it by a deviation whose spread is
      learned from the labels, and the map's shift and slope are learned
      too, all integrated. Groups calibrated alike borrow each other's
      labels; a group whose labels depart gets its own level, as far as its
      labels and the spread allow. Every metric is the ratio of the group's
      counts on the file (labeled rows as labeled, the others' classes
      drawn), so a fully labeled group gives its observed rate. A group may
      also be *free* (its scores mean nothing for it; ``p_pooled``), which
      its labels' Bayes factor weighs. A draw in which a group's condition
      holds on no row (TPR without positives) takes the file's rate of that
      draw. No MCMC.
    * ``"bayesian_calibration"`` (BC, Ji et al. 2020, eq. 4.3): a
      :class:`HierarchicalBetaCalibrator` is fitted per group on the labeled
      rows; each posterior draw of the calibration maps gives every unlabeled
      row a calibrated P(y = 1), which stands in for its unknown label. A
      metric is a ratio of row sums (TPR = sum of yhat*y over sum of y), so
      per draw its numerator and denominator add the observed terms of the
      labeled rows and the terms of the unlabeled rows (their labels drawn,
      or their expected terms), and the draw's value is their ratio. A
      group whose labels contradict the pooled calibration falls back, by
      Bayesian model averaging, on its own labels (``p_pooled``).
    * ``"beta_binomial"`` (BB): a Beta(1, 1) prior per group updated with the
      labeled rows alone (for TPR: the labeled positives).
    * ``"frequentist"``: the labeled rows' empirical rate; no interval.

    Parameters
    ----------
    method : {"calibrated", "bayesian_calibration", "beta_binomial", "frequentist"}, \
default="calibrated"
    metrics : sequence, default=("accuracy", "tpr", "fpr")
        Names from the rate table (``RATES``: accuracy,
        tpr, fpr, tnr, fnr, ppv, npv, selection_rate, and the aliases
        precision and recall), or ``(name, function)`` pairs: ``function(pred, y)`` returns the
        per-row numerator and denominator of a ratio metric and must be
        affine in ``y`` (it is called with y = 0 and y = 1). With
        ``method="calibrated"`` its slope in ``y`` must depend on the
        prediction only (as every rate's does): the model draws each group's
        positives per predicted class.
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
        ``|Delta| <= rope`` is "practically fair"
        (:func:`~skassess.metrics.rope_probabilities`).
    n_draws : int, default=2000
        Posterior draws of every metric.
    unlabeled : {"sampled", "expected"}, default="sampled"
        BC only. ``"sampled"``: per draw, an unlabeled row adds a label
        drawn from its calibrated probability, so the posterior also carries
        the label noise of the unlabeled rows: the posterior of the metric
        *of these rows* (a finite population), the value every label would
        give. Time grows with ``n_draws x rows``. ``"expected"`` (thesis eq.
        4.3): an unlabeled row adds its calibrated probability, the
        posterior of the rows' expected metric; the rows are added up a
        block at a time by :meth:`HierarchicalBetaCalibrator.sample_sums`,
        so memory grows with ``n_draws x groups``, not with ``n_draws x
        rows`` (10 million rows take about 0.5 GB). On files of millions of
        rows the two differ only in small groups; on small files
        ``"expected"`` is too narrow for the file's value.
    p_pooled : float in (0, 1] or "auto", default="auto"
        Prior probability that a group's labels follow the pooled
        calibration model; otherwise the group is *free*: its rows are right
        with an unknown rate, whatever their scores (the beta-binomial
        model, Beta(1, 1) prior; with ``method="calibrated"``, for every
        metric but accuracy, its rows predicted 1 and those predicted 0 are
        positive with a rate each: the group's labels alone for TPR, PPV,
        ...). Each group's posterior probability of the
        pooled model (``label_check_["p_pooled"]``) comes from the Bayes
        factor of its labels: their leave-group-out predictive density
        under the pooled fit against their beta-binomial marginal. The
        metric draws of a group come from the pooled model with that
        probability, else from the free model (Bayesian model averaging), so
        a group whose few labels contradict the others' calibration gets an
        interval as wide as its labels allow rather than a narrow, biased
        one. ``"auto"`` is 0.5 with ``method="calibrated"`` (even prior
        odds: the labels' Bayes factor alone decides) and 0.2 with BC.

        With ``method="calibrated"`` the pooled model's predictive density
        of a group's labels is the ratio of the model's evidence with and
        without them, one fit per labeled group and model; its groups
        already depart from the map by learned deviations, and the free
        alternative guards a group whose scores mean nothing for it. Lower
        values cover the difference of a group whose labels ignore its
        scores; higher ones have smaller errors where the groups are
        calibrated alike (both measured: user guide, *Fairness*).

        With BC, groups below 1/2 are refitted out of the pooled model so
        that they do not pull the other groups' maps (one extra fit).
        ``1.0`` is the thesis's BC: every group pooled. 0.2 puts coverage
        first, at the price of larger errors where the groups are in fact
        calibrated alike (there, with outside evidence, raise it: 0.97 keeps
        the thesis's errors).
    classes : array-like of shape (2,), default=None
        The negative and the positive class as ``y`` holds them (e.g.
        ``["no", "yes"]`` or ``[-1, 1]``); None: 0 and 1.
    missing_label : int, float, str or None, default=-1
        The value of ``y`` that marks an unlabeled row, besides NaN, None and
        ``pd.NA``, which always mark one.
    {{label_noise}}
        Under ``label_noise`` the true classes are drawn with the sensitive
        groups crossed with the predicted class as the noise model's groups,
        and each of the ``n_imputations`` fits makes ``n_draws /
        n_imputations`` of the draws.
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
    label_check_ : pandas.DataFrame or None
        With ``method="calibrated"`` and ``p_pooled < 1``: one row per
        model and labeled group (index ``(model, group)``; the model is
        ``"accuracy"``, of being right, or ``"class"``, of the positive
        class, behind every other metric) with ``n_labeled``, ``right``, the
        ``log_bayes_factor`` of the pooled against the free model and the
        posterior probability ``p_pooled`` of the pooled model.
        With BC, one row per group with labels: the posterior predictive
        check of its labeled rows (``n_labeled``, ``right``,
        ``expected_right`` under the calibrated scores, one-sided ``p_value``
        of so few right rows; a p-value below 0.01 / groups raises a
        SkassessWarning), the ``log_bayes_factor`` of the pooled against the
        free model and the posterior probability ``p_pooled`` of the pooled
        model (see the parameter ``p_pooled``).
    n_labeled_ : pandas.Series
        Labeled rows per reported group.
    n_rows_ : pandas.Series
        All rows per reported group.
    draws_ : dict of pandas.DataFrame
        Posterior draws of each metric, one column per reported group (not
        for ``"frequentist"``); :meth:`sample` returns a copy.
    point_ : dict of ndarray
        Each metric's empirical rate on the labeled rows, per reported group
        (NaN where its denominator is zero); the frequentist estimate. Under
        ``label_noise``, its mean over the draws of the true labels.
    annotators_ : BayesianAccuracy
        Under ``label_noise``: the noise model, whose ``imputed_labels_`` are
        the draws of the true labels; :meth:`annotator_summary` and
        :meth:`annotator_agreement` read it.

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
    >>> est = est.fit(data.scores["LR"], y, group_by=data.sensitive["sex"])
    >>> table = est.differences()
    >>> list(table.columns)[:6]
    ['mean', 'median', 'lower', 'upper', 'p_positive', 'p_practically_fair']
    """

    def __init__(
        self,
        method="calibrated",
        *,
        metrics=("accuracy", "tpr", "fpr"),
        calibrator=None,
        privileged=None,
        threshold=0.5,
        rope=0.05,
        n_draws=2000,
        unlabeled="sampled",
        p_pooled="auto",
        classes=None,
        missing_label=-1,
        label_noise="auto",
        annotator_prior=(0.85, 0.999),
        slip_evidence="bounds",
        n_imputations=20,
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
        self.p_pooled = p_pooled
        self.classes = classes
        self.missing_label = missing_label
        self.label_noise = label_noise
        self.annotator_prior = annotator_prior
        self.slip_evidence = slip_evidence
        self.n_imputations = n_imputations
        self.random_state = random_state

    _parameter_constraints = {
        "method": [
            StrOptions(set(GROUP_METHODS)),
            Hidden(StrOptions({"bayesian-calibration", "beta-binomial"})),
        ],
        "metrics": [str, list, tuple],
        "calibrator": [HierarchicalBetaCalibrator, None],
        "privileged": "no_validation",
        "threshold": [Interval(Real, 0, 1, closed="neither")],
        "rope": [Interval(Real, 0, None, closed="left")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "unlabeled": [StrOptions({"expected", "sampled"})],
        "p_pooled": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
        "classes": ["array-like", None],
        "missing_label": [MissingValues()],
        **NOISE_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def _method(self):
        """``method`` with the deprecated hyphenated spellings read as the new ones."""
        return self.method.replace("-", "_")

    def _strategy(self):
        """The strategy object of ``method``, with this estimator's parameters."""
        return group_method(
            self._method(),
            threshold=self.threshold,
            n_draws=self.n_draws,
            p_pooled=self.p_pooled,
            unlabeled=self.unlabeled,
            calibrator=self.calibrator,
        )

    def _checked_metrics(self):
        metrics = [self.metrics] if isinstance(self.metrics, str) else list(self.metrics)
        if not metrics:
            raise ValueError("metrics must name at least one metric.")
        checked = {}
        for m in metrics:
            if isinstance(m, str):
                if m not in RATES:
                    raise ValueError(
                        f"metrics: unknown metric {m!r}; built-in metrics are "
                        f"{sorted(RATES)}, or pass (name, function)."
                    )
                checked[m] = m
            elif isinstance(m, tuple) and len(m) == 2 and callable(m[1]):
                checked[str(m[0])] = m[1]
            else:
                raise ValueError(f"metrics: expected a name or a (name, function) pair; got {m!r}.")
        return checked

    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, group_by=None, sensitive_features=None, annotator=None):
        """Posterior draws of every metric in every group.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 2)
            The black box's P(y = 1); or a Dask Array, DataFrame or Series,
            with ``y`` and ``group_by`` partitioned alike: each partition's
            per-group sums are computed where it lives and merged, and the
            fit is the in-memory one up to summation order. BC takes them with
            ``unlabeled="expected"`` (its labeled rows and each group's first
            row are collected for the maps; a second pass adds the unlabeled
            rows' sums under the maps' fixed draws).
        y : array-like of shape (n_samples,) or (n_samples, n_annotators)
            True labels (0/1, or the two ``classes``), ``missing_label`` for
            unlabeled rows. Required. Two-dimensional: one column per
            annotator (a DataFrame's column names name them), the labels of
            annotators who may slip (``label_noise``).
        group_by : array-like of shape (n_samples,)
            The group (sensitive attribute) of each row. Required (or as
            ``sensitive_features``).
        sensitive_features : array-like of shape (n_samples,)
            Alias of ``group_by``, as fairlearn names it.
        annotator : array-like of shape (n_samples,), default=None
            With one-dimensional ``y``: who gave each row's label
            (``label_noise``).

        Returns
        -------
        self : BayesianGroupMetrics
        """
        reset_fitted(self)
        if "-" in self.method:
            warn_deprecated(
                f"BayesianGroupMetrics(method={self.method!r})",
                f"method={self._method()!r}",
            )
        metrics = self._checked_metrics()
        if y is None:
            raise ValueError(
                "BayesianGroupMetrics requires y to be passed, but the target y is None; "
                "mark the rows without a label with missing_label."
            )
        if group_by is not None and sensitive_features is not None:
            raise ValueError(
                "Pass group_by or its alias sensitive_features, not both: they name the "
                "same argument."
            )
        name = "group_by" if sensitive_features is None else "sensitive_features"
        group_by = group_by if sensitive_features is None else sensitive_features
        if self._noisy(X, y, annotator):
            return self._fit_noisy(X, y, group_by, name, annotator)
        method = self._strategy()
        if any(is_dask_collection(v) for v in (X, y, group_by)):
            if method.needs_rows and self.unlabeled == "sampled":
                raise ValueError(
                    f"method={self.method!r} with unlabeled='sampled' draws every unlabeled "
                    "row's label in turn; on Dask collections use unlabeled='expected' (sums "
                    "that add over partitions), or method='calibrated'."
                )
            check_signed_labels(y, 2, self.classes, self.missing_label)
            if method.needs_rows:
                data = PartitionedRows(self, X, y, group_by, name)
            else:
                data = fit_partitions_totals(self, X, y, group_by, metrics, name)
            labels = data.labels
        else:
            s, y, groups = checked_rows(X, y, group_by, name, self.classes, self.missing_label)
            data = (
                GroupRows(s, y, None, groups, None)
                if method.needs_rows
                else GroupTotals.of_rows(
                    metrics,
                    s,
                    y,
                    groups,
                    threshold=self.threshold,
                    models=calibrated_models(metrics),
                )
            )
            labels = pd.unique(pd.Series(groups, dtype=object)).tolist()
        encoder = GroupEncoder("group").fit(labels)
        index = encoder.categories_
        if isinstance(data, PartitionedRows):
            n_rows = np.array([data.n_rows[g] for g in index], dtype=np.float64)
            labeled_rows = data.key_rows(index)
        elif method.needs_rows:
            data = GroupRows(data.s, data.y, encoder.transform(data.groups), data.groups, index)
            n_rows, labeled_rows = np.bincount(data.codes, minlength=len(index)), data
        else:
            n_rows, labeled_rows = data.in_order(index)[0], GroupRows.labeled_of(data, index)
        labels = [as_scalar(v) for v in index]
        if len(index) < 2:
            raise ValueError(
                f"{name} must hold at least two groups to compare; got only "
                f"{labels!r}. For one group's metrics use BayesianAccuracy."
            )
        units = [[j] for j in range(len(index))]
        if self.privileged is not None:
            if self.privileged not in labels:
                raise ValueError(
                    f"privileged={self.privileged!r} is not a group; groups are {labels}."
                )
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
            self.comparisons_ = [
                (labels[i], labels[j]) for i in range(len(index)) for j in range(i + 1, len(index))
            ]
        self.groups_ = pd.Index(labels, name="group")
        member = np.zeros((len(index), len(units)))
        for u, members in enumerate(units):
            member[members, u] = 1.0
        labeled = labeled_rows.labeled
        self.n_labeled_ = pd.Series(
            (np.bincount(labeled_rows.codes[labeled], minlength=len(index)) @ member).astype(int),
            index=self.groups_,
            name="n_labeled",
        )
        self.n_rows_ = pd.Series(
            (n_rows @ member).astype(int),
            index=self.groups_,
            name="n",
        )
        rng = check_generator(self.random_state)
        sums = method.sums(metrics, data, rng, index)
        self.calibrator_, self.label_check_ = method.calibrator_, method.label_check_
        self.draws_, self.point_ = {}, {}
        for name, metric_sums in sums.items():
            num_l, den_l = metric_sums[0] @ member, metric_sums[1] @ member
            with np.errstate(invalid="ignore", divide="ignore"):
                self.point_[name] = np.where(den_l > 0, num_l / den_l, np.nan)
            draws = method.draws(name, metric_sums, member, rng)
            if draws is not None:
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
        if not self._strategy().has_posterior:
            raise ValueError(f"method={self.method!r} has no posterior to sample.")
        return self.draws_[metric].copy()

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """Per metric and group: rows, labeled rows, mean, median and interval.

        The frequentist method gives the labeled rows' rate as ``mean`` and
        ``median`` and no interval (``lower``, ``upper`` NaN); where a group
        has no labeled row the metric is defined on (no labels; for TPR no
        labeled positive), its rate is NaN and a SkassessWarning names it.
        """
        check_is_fitted(self, "point_")
        frames, undefined = [], []
        for name, point in self.point_.items():
            table = pd.DataFrame({"n": self.n_rows_, "n_labeled": self.n_labeled_})
            if name not in self.draws_:  # no posterior (frequentist)
                undefined += [f"{name} of {g}" for g in self.groups_[np.isnan(point)]]
                table["mean"], table["median"] = point, point
                table["lower"], table["upper"] = np.nan, np.nan
            else:
                d = self.draws_[name]
                table["mean"] = d.mean()
                table["median"] = d.median()
                table["lower"] = d.quantile((1 - level) / 2)
                table["upper"] = d.quantile((1 + level) / 2)
            table.insert(0, "metric", name)
            frames.append(table.reset_index())
        if undefined:
            warn(
                f"The frequentist estimate is NaN for the {', '.join(undefined)}: no labeled "
                "row there is one the rate is defined on. method='calibrated' estimates it "
                "from the scores as well."
            )
        return pd.concat(frames).set_index(["metric", "group"])

    @validate_args({"level": [LEVEL], "rope": [ROPE, None]})
    def differences(self, level=0.95, rope=None):
        """Per metric and comparison ``a - b``: the difference and the ratio ``a / b``.

        Columns: ``mean``, ``median``, ``lower``, ``upper`` of Delta (the
        median is the estimate of least expected absolute error; with
        ``p_pooled < 1`` the posterior can have two modes, and the median
        stays on the heavier); ``p_positive`` =
        ``P(Delta > 0)``; ``p_practically_fair`` = ``P(|Delta| <= rope)``
        (:func:`~skassess.metrics.rope_probabilities`); ``ratio_mean``,
        ``ratio_lower``, ``ratio_upper``. The frequentist method fills the
        means only. A comparison whose draws hold NaN (a group where the
        metric is undefined, e.g. TPR without positives) gets NaN
        probabilities and a SkassessWarning.
        """
        check_is_fitted(self, "point_")
        rope = self.rope if rope is None else rope
        lo, hi = (1 - level) / 2, (1 + level) / 2
        rows, index = [], []
        for name, point in self.point_.items():
            for a, b in self.comparisons_:
                ia, ib = self.groups_.get_loc(a), self.groups_.get_loc(b)
                index.append((name, f"{a} - {b}"))
                if name not in self.draws_:  # no posterior (frequentist)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        ratio = point[ia] / point[ib]
                    rows.append([point[ia] - point[ib]] * 2 + [np.nan] * 4 + [ratio] + [np.nan] * 2)
                    continue
                d = self.draws_[name].to_numpy()
                delta = d[:, ia] - d[:, ib]
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = d[:, ia] / d[:, ib]
                if np.isnan(delta).any():
                    warn(
                        f"{name} is undefined in some draws of {a!r} or {b!r} (no rows meet "
                        "its condition); its probabilities are NaN.",
                        SkassessWarning,
                    )
                    p_positive = p_fair = np.nan
                else:
                    p_positive = float(np.mean(delta > 0))
                    p_fair = float(rope_probabilities(delta, rope)[1])
                with np.errstate(invalid="ignore"):  # a ratio over a zero rate is inf
                    ratios = [
                        np.nanmean(ratio),
                        np.nanquantile(ratio, lo),
                        np.nanquantile(ratio, hi),
                    ]
                rows.append(
                    [
                        np.nanmean(delta),
                        np.nanmedian(delta),
                        np.nanquantile(delta, lo),
                        np.nanquantile(delta, hi),
                        p_positive,
                        p_fair,
                        *ratios,
                    ]
                )
        columns = [
            "mean",
            "median",
            "lower",
            "upper",
            "p_positive",
            "p_practically_fair",
            "ratio_mean",
            "ratio_lower",
            "ratio_upper",
        ]
        return pd.DataFrame(
            rows,
            columns=columns,
            index=pd.MultiIndex.from_tuples(index, names=["metric", "comparison"]),
        )

    @validate_args(
        {
            "metric": [str],
            "group_a": [Hashable, None],
            "group_b": [Hashable, None],
            "rope": [ROPE, None],
        },
    )
    def compare(self, metric, group_a=None, group_b=None, rope=None):
        """The posterior of ``metric`` in ``group_a`` minus ``group_b`` as a GroupComparison.

        Defaults: the first comparison (the privileged group against the
        rest). Plot it with ``DifferenceDisplay.from_comparison``.
        """
        draws = self.sample(metric)
        if group_a is None and group_b is None:
            group_a, group_b = self.comparisons_[0]
        return compare_groups(draws, group_a, group_b, rope=self.rope if rope is None else rope)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.target_tags.required = True
        return tags


__all__ = ["BayesianGroupMetrics", "GroupComparison"]

"""``PerformanceIntervalRegressor``: predicted accuracy on a batch, with a learned interval."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ..utils._dask import is_dask_collection
from ..utils._deprecation import warn_deprecated
from ..utils._params import atomic, reset_fitted, validated
from ..utils._random import seed_int
from ..utils._sklearn_compat import HasMethods, Hidden, Interval, StrOptions
from ..utils._threads import single_threaded
from ..utils._validation import check_labels
from ._batch_partitions import summarize_partitions
from ._batch_summary import ReferenceFrame, summarize
from ._error_levels import check_levels, error_quantiles
from ._predictor import PerformancePredictor, meta_model_part
from ._pretrained import load_pretrained
from ._quantile_model import (
    DRIFT_STRENGTH,
    LEVELS,
    QuantileEnsemble,
    calibrate_quantiles,
    drift_strength,
    error_unit,
    fit_scales,
    fit_stratum_factors,
    interval_cost,
)
from ._reference_drift import simulate_reference_drift
from ._scenarios import fit_peers
from ._um_features import UM_FEATURES, summary_features

__all__ = ["PerformanceIntervalRegressor", "beta_prior_from"]

#: The UM level whose half-width sets the Beta prior's spread (see ``beta_prior``).
PRIOR_LEVEL = 0.8

#: Prior probability that the label-free prediction holds, in ``bayesian_accuracy``'s
#: robust mixture: the weight Schmidli et al. (2014) use for the informative part
#: (0.1 on the vague one), chosen before any run of this library's benchmark.
PRIOR_WEIGHT = 0.9


class PerformanceIntervalRegressor(BaseEstimator):
    """A performance predictor with prediction intervals learned from simulated drift.

    Read more in the :ref:`User Guide <ug_unlabeled_data>`.

    Elder et al.'s uncertainty model (UM): a regressor of how far the
    predictor's accuracy estimate is from the truth, trained on drift
    scenarios, from features of the batch that say how it differs from the
    reference (distances between histograms of the scores, proxy models'
    confidences, the most important feature and the first principal
    component; how well a classifier tells the batch from the reference; the
    spread and the sampling noise of the per-row predictions; the
    predictor's own uncertainty; how far its prediction is from those of
    other predictors). An ensemble of ``n_models`` xgboost
    quantile regressors predicts the error's quantiles at the levels 0.50,
    0.55, ..., 0.95, in units of ``error_unit`` (the batch's binomial
    standard error with a floor for drift, so that one model serves batches
    of any size); each level's scale is calibrated on held-out scenarios so
    that the interval ``accuracy +- u`` covers the truth at that rate. The
    shipped UM has one scale per level and per tercile of the drift strength
    (the larger of the two drift classifiers' balanced accuracies, in the
    features and in the scores; no label needed), so that its intervals hold
    where the batch looks like the reference and where it drifted, not only
    on average.

    With ``uncertainty_model="pretrained"`` (the default), the UM shipped
    with skassess is used: trained on linear-skew scenarios of a library of
    real tabular data sets with logistic-regression and random-forest base
    models. Its scales are fitted on batches the boosters never saw
    (``pretrained_info_`` says which): for ``"combined"`` and
    ``"meta_model"`` (whose boosters it shares, with scales of its own), the batches a
    monitor sees on the library's data sets, chunks drawn at random and
    nearest-neighbour scenarios, with four black-box families, once for a
    predictor that sees the black box's features and once for one that sees
    its scores alone (as ``skassess monitor`` does): without the features'
    drift classifier and proxies, the boosters' quantiles are wider than
    the errors, and that case has its own scales. So
    :meth:`fit` only fits the predictor, in seconds. It exists for the
    ``"combined"``, ``"meta_model"`` and ``"confidence"`` predictors. With
    ``uncertainty_model="fit"``, :meth:`fit` simulates linear-skew drift
    inside the labeled reference set (the black box fixed, the predictor
    refitted on each scenario's reference part, skewed along the two
    features a random-forest proxy ranks first, or along the black box's
    confidence and entropy when only scores are given), trains the UM on 80 %
    of the scenarios and calibrates it on the other 20 % (the paper's
    target-data calibration). With ``uncertainty_model="recalibrated"``, the
    shipped UM is kept and its scales are multiplied by a factor per drift
    stratum, fitted on the same simulated scenarios (all of them) to
    minimize the interval cost summed over the levels: how much wider or
    narrower than on the library the errors are for this black box on this
    data. A stratum's factor is its scenarios' one averaged on the log scale
    with all scenarios' one, which weighs as much as 20 scenarios (a
    reference often simulates little strong drift): a deployment whose
    black box errs less off its reference than the library's gets narrower
    intervals, one whose black box errs more gets wider ones.

    A batch may be held in Dask collections (:meth:`predict`,
    :meth:`predict_batch`, :meth:`beta_prior`, :meth:`score`): each
    partition's histograms, sums and drift-classifier rows are computed
    where it lives and merged, so the features and
    the interval are the in-memory batch's up to the order of summation. The
    partitions are read twice: for their row counts (which fix the at most
    1,500 rows the drift classifiers read), then for their summaries.

    Parameters
    ----------
    predictor : PerformancePredictor, default=None
        The (unfitted) predictor whose error is modelled; None means
        ``PerformancePredictor(method="combined")``. It carries the black
        box (``estimator``) if one is used.
    level : float in (0, 1), default=0.95
        The intervals' target coverage (and the level of :meth:`score`).
    coverage : float in [0.5, 0.95]
        Deprecated alias of ``level``.

        .. deprecated:: 0.1
           ``coverage`` will be removed in 0.2; use ``level``.
    uncertainty_model : {"pretrained", "recalibrated", "fit"}, default="pretrained"
        Where the UM comes from: shipped with skassess; shipped, its scales
        refitted on the reference set's own drift scenarios; or trained on
        them. The scenarios need something to skew along: where the features
        (or, with scores alone, the confidence and entropy) are constant in
        the reference, as with hard 0/1 scores, :meth:`fit` raises
        ``ValueError`` for ``"recalibrated"`` and ``"fit"``.
    n_scenarios : int, default=60
        Drift scenarios simulated by :meth:`fit` (``"recalibrated"`` and
        ``"fit"``).
    n_models : int, default=10
        Quantile regressors in the ensemble (``"fit"`` only).
    random_state : int or None, default=None
        Seed of the scenarios, the predictors and the regressors.
    n_jobs : int, default=None
        Processes that simulate the scenarios (joblib; ``-1``: one per core;
        ``"recalibrated"`` and ``"fit"``). Every fit runs each native thread pool (OpenMP of
        the gradient boosters, BLAS) at one thread, so the total never
        exceeds ``n_jobs`` threads: many threads on a few busy cores made
        the fit up to 20 times slower.
    progress : bool, default=True
        A progress bar over the scenarios (tqdm, on standard error) when
        they take over 2 s.

    Attributes
    ----------
    predictor_ : PerformancePredictor
        The predictor fitted on the whole reference set.
    uncertainty_model_ : QuantileEnsemble
        The fitted quantile regressors.
    scales_ : ndarray of shape (n_strata, 10)
        Calibration factor of each level, one row per drift stratum (the
        shipped scales of a predictor with features, or of one that sees
        the scores alone).
    drift_edges_ : ndarray of shape (n_strata - 1,)
        The drift strengths that separate the strata (the larger of the two
        drift classifiers' balanced accuracies, label-free); empty for one
        stratum.
    peers_ : dict
        The predictors whose accuracies the UM compares with the predictor's
        (calibrated confidence, ATC, DoC, the meta-model), fitted on the
        reference rows.
    pretrained_info_ : dict
        How the shipped UM was trained (``"pretrained"`` and
        ``"recalibrated"``): data sets, base models, drift, number of
        scenarios, ensemble size.
    recalibration_factor_ : ndarray of shape (n_strata,)
        The factor applied to the shipped scales of each drift stratum
        (``"recalibrated"`` only).
    scenarios_ : DataFrame
        The simulated scenarios (``"recalibrated"`` and ``"fit"``): true and
        predicted accuracy, error, and the UM's inputs; column ``split`` says
        which trained and which calibrated.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = LogisticRegression(max_iter=5000).fit(X[:200], y[:200])
    >>> pir = PerformanceIntervalRegressor(
    ...     PerformancePredictor(model, method="confidence"), uncertainty_model="fit",
    ...     n_scenarios=15, n_models=2, random_state=0).fit(X[200:450], y[200:450])
    >>> out = pir.predict(X[450:])
    >>> list(out.index)
    ['accuracy', 'lower', 'upper', 'level']
    >>> bool(out["lower"] <= out["accuracy"] <= out["upper"])
    True
    """

    _parameter_constraints = {
        "predictor": [HasMethods(["fit", "predict"]), None],
        "level": [Interval(Real, 0, 1, closed="neither")],
        "coverage": [
            Interval(Real, LEVELS[0], LEVELS[-1], closed="both"),
            Hidden(StrOptions({"deprecated"})),
        ],
        "uncertainty_model": [StrOptions({"pretrained", "recalibrated", "fit"})],
        "n_scenarios": [Interval(Integral, 10, None, closed="left")],
        "n_models": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, 2**31 - 1, closed="left"), None],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        predictor=None,
        *,
        level=0.95,
        coverage="deprecated",
        uncertainty_model="pretrained",
        n_scenarios=60,
        n_models=10,
        random_state=None,
        n_jobs=None,
        progress=True,
    ):
        self.predictor = predictor
        self.level = level
        self.coverage = coverage
        self.uncertainty_model = uncertainty_model
        self.n_scenarios = n_scenarios
        self.n_models = n_models
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    def _base_predictor(self):
        if self.predictor is None:
            pp = PerformancePredictor(method="combined")
        else:  # a fresh predictor around the same (fitted) black box, which is not cloned
            pp = clone(self.predictor).set_params(estimator=self.predictor.estimator)
        if self.random_state is not None and pp.get_params().get("random_state") is None:
            pp.set_params(random_state=self.random_state)
        if not self.progress:  # no bar of any part
            pp.set_params(progress=False)
        return pp

    @validated
    @atomic(deep=False)
    @single_threaded
    def fit(self, X, y, *, scores=None):
        """Fit the predictor on the reference rows and the UM on their drift scenarios.

        Parameters
        ----------
        X, y, scores
            As in :meth:`PerformancePredictor.fit`.

        Returns
        -------
        self : PerformanceIntervalRegressor
        """
        reset_fitted(self)  # a failure puts the previous fit back (atomic)
        # one seed per fit, kept for predict: the same features for the same batch
        self._seed = seed = seed_int(self.random_state)
        pp = self._base_predictor().fit(X, y, scores=scores)
        self.predictor_ = pp
        # the UM's inputs always come from the meta-model's row features (with proxies)
        if pp.method == "meta_model" and pp.proxies:
            self.shared_ = pp
        elif pp.method == "combined" and pp.proxies:
            self.shared_ = meta_model_part(pp)
        else:
            self.shared_ = PerformancePredictor(
                pp.estimator,
                method="meta_model",
                classes=pp.classes,
                random_state=seed,
                progress=self.progress,
            ).fit(X, y, scores=scores)
        S = pp.predict_rows(X, scores=scores).scores
        classes = pp.estimator.classes_ if pp.estimator is not None else pp.classes
        codes = check_labels(y, S.shape[0], S.shape[1], classes, missing_label=None)
        self.peers_ = fit_peers(self.shared_, codes, S, seed)
        if self.uncertainty_model != "fit":
            (
                self.uncertainty_model_,
                self.scales_,
                self.drift_edges_,
                self.pretrained_info_,
            ) = load_pretrained(
                pp.method,
                inputs="scores" if self.shared_.reference_rows_["F"] is None else "features",
            )
        if self.uncertainty_model == "pretrained":
            return self
        Fenc = self.shared_.reference_rows_["F"]
        self.scenarios_ = sc = simulate_reference_drift(
            self.shared_,
            Fenc,
            codes,
            S,
            method=pp.method,
            n_scenarios=self.n_scenarios,
            held_out=self.uncertainty_model == "recalibrated",
            seed=seed,
            n_jobs=self.n_jobs,
            progress=self.progress,
        )
        inputs = sc.loc[:, list(UM_FEATURES)].to_numpy(dtype=np.float64)
        target = sc["error"].abs().to_numpy()
        unit = error_unit(sc["prediction"], sc["n_batch"])
        if self.uncertainty_model == "recalibrated":
            # every scenario calibrates: the shipped quantiles of each, then a factor per stratum
            raw = self.uncertainty_model_.predict(inputs) * unit[:, None]
            drift = sc.loc[:, list(DRIFT_STRENGTH)].to_dict("records")
            strength = [drift_strength(f) for f in drift]
            q = np.array(
                [
                    calibrate_quantiles(r, g, self.scales_, self.drift_edges_)
                    for r, g in zip(raw, strength, strict=True)
                ]
            )
            sc["split"] = "calibration"
            self.recalibration_factor_ = fit_stratum_factors(target, q, strength, self.drift_edges_)
            self.scales_ = self.scales_ * self.recalibration_factor_[:, None]
            return self
        train = sc["split"].to_numpy() == "train"
        self.uncertainty_model_ = QuantileEnsemble(n_models=self.n_models, random_state=seed).fit(
            inputs[train], target[train] / unit[train]
        )
        q = self.uncertainty_model_.predict(inputs[~train]) * unit[~train, None]
        self.scales_ = fit_scales(target[~train], q)[None, :]
        self.drift_edges_ = np.empty(0)
        return self

    def _models(self):
        """``(predictor, shared, peers)`` as :func:`summarize` takes them: ``shared`` None
        where the UM reads the predictor's own rows (a combined predictor's meta-model's
        rows are among them)."""
        part = getattr(self.predictor_.method_, "meta_model_", None)
        own = self.shared_ is self.predictor_ or self.shared_.method_ is part
        shared = None if own else self.shared_
        return self.predictor_, shared, self.peers_

    def _batch(self, X, scores):
        """The batch's predicted accuracy, the predictor's rows (``p`` and
        ``pred`` lazy for a batch in Dask collections), the calibrated error
        quantiles and the UM's inputs."""
        check_is_fitted(self, "uncertainty_model_")
        ref = self.shared_.reference_rows_
        imp = (
            self.shared_.features_.models_[1].feature_importances_
            if self.shared_.features_.use_proxies_
            else None
        )
        frame = ReferenceFrame(ref, imp, self._seed)
        if is_dask_collection(X) or is_dask_collection(scores):
            summary, rows = summarize_partitions(
                self._models(), X, scores, frame=frame, seed=self._seed
            )
        else:
            rows, summary = summarize(self._models(), X, scores, frame=frame, seed=self._seed)
        feats = summary_features(
            ref,
            summary,
            self.predictor_.reference_accuracy_,
            frame=frame,
            seed=self._seed,
            peers={m: summary.mean(f"peer_{m}") for m in self.peers_},
        )
        accuracy = float(summary.mean("p"))
        q = self.uncertainty_model_.predict(np.array([[feats[k] for k in UM_FEATURES]]))[0]
        q = q * error_unit(accuracy, summary.n)
        q = calibrate_quantiles(q, drift_strength(feats), self.scales_, self.drift_edges_)
        return accuracy, rows, q, feats

    def predict_batch(self, X, *, scores=None):
        """Everything the batch's prediction rests on, computed once for every level.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`predict` (Dask collections too).

        Returns
        -------
        Bunch
            ``accuracy`` (the predicted accuracy), ``error_quantiles`` (the
            calibrated quantiles of its absolute error at ``LEVELS``),
            ``features`` (the uncertainty model's inputs, by name),
            ``correctness`` (each row's predicted probability that the black
            box is right) and ``y_pred`` (its predicted class index per row);
            for a batch in Dask collections these two are lazy Dask Arrays.
        """
        accuracy, rows, q, feats = self._batch(X, scores)
        return Bunch(
            accuracy=accuracy,
            error_quantiles=q,
            features=feats,
            correctness=rows["p"],
            y_pred=rows["pred"],
        )

    def _half_width(self, q, level):
        return float(error_quantiles(q, level))

    def _level(self):
        """``level``, or the deprecated ``coverage`` when it was given."""
        if isinstance(self.coverage, str):
            return self.level
        warn_deprecated(
            "PerformanceIntervalRegressor(coverage=...)",
            "PerformanceIntervalRegressor(level=...)",
        )
        return self.coverage

    def predict(self, X, *, scores=None, level=None, coverage="deprecated"):
        """The predicted accuracy on the batch and its interval, at one level or several.

        The batch's features are computed once, whatever the number of levels.
        Levels outside the uncertainty model's [0.5, 0.95] extend its quantiles
        by the shape of a normal (below 0.5) or by a tail at least as heavy as
        a normal's, fitted to the batch's 0.80 and 0.95 quantiles (above 0.95).

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`PerformancePredictor.predict`.
        level : float in (0, 1) or sequence of floats, default=None
            The interval's target coverage; None uses the estimator's ``level``.
        coverage : float in [0.5, 0.95]
            Deprecated alias of ``level``.

            .. deprecated:: 0.1
               ``coverage`` will be removed in 0.2; use ``level``.

        Returns
        -------
        Series or DataFrame
            ``accuracy``, ``lower``, ``upper`` (clipped to [0, 1]) and ``level``;
            for a sequence of levels, a DataFrame with one row per level.
        """
        if not isinstance(coverage, str):
            warn_deprecated(
                "PerformanceIntervalRegressor.predict(coverage=...)",
                "predict(level=...)",
            )
            if level is None:
                level = coverage
        level = self._level() if level is None else level
        levels = check_levels(level)
        acc, _, q, _ = self._batch(X, scores)
        u = error_quantiles(q, levels)
        out = pd.DataFrame(
            {
                "accuracy": acc,
                "lower": np.maximum(0.0, acc - u),
                "upper": np.minimum(1.0, acc + u),
                "level": levels,
            }
        )
        if isinstance(level, Real):
            return out.iloc[0].rename(None)
        return out

    def beta_prior(self, X, *, scores=None, level=PRIOR_LEVEL):
        """A Beta prior for the batch accuracy: the prediction its mean, the interval its spread.

        The mean is the predicted accuracy ``m``; the standard deviation is the
        UM's half-width at ``level`` over the normal quantile of that level,
        ``sd = u / z``, and the strength ``n0 = m (1 - m) / sd^2 - 1`` (bounded to
        [2, 10 000]). The default level, 0.8, had the lowest error with 93.6-95.5 %
        coverage of the posterior's 95 % interval after 10-50 labels in the
        leave-one-data-set-out benchmark (``benchmarks/bench_meta.py``, which
        compares 0.5, 0.8 and 0.95).

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`predict` (Dask collections too).
        level : float in [0.5, 0.95], default=0.8
            The UM level whose half-width sets the spread.

        Returns
        -------
        ndarray of shape (2,)
            ``(alpha, beta)``.
        """
        if not (isinstance(level, Real) and LEVELS[0] <= level <= LEVELS[-1]):
            raise ValueError(f"level must be in [{LEVELS[0]}, {LEVELS[-1]}]; got {level!r}.")
        accuracy, _, q, _ = self._batch(X, scores)
        return beta_prior_from(accuracy, q, level)

    def bayesian_accuracy(
        self, X, y, *, scores=None, level=PRIOR_LEVEL, prior_weight=PRIOR_WEIGHT, **params
    ):
        """The batch's accuracy from a few labels, with the label-free prediction as the prior.

        A :class:`~skassess.BayesianAccuracy` with one group (the batch). Its
        prior is a robust mixture: with probability ``prior_weight`` the Beta
        of :meth:`beta_prior` (the predicted accuracy and the UM's spread),
        otherwise ``Beta(1, 1)``. The labels learn how far to trust the
        prediction: each part's weight is updated by how well it predicted
        them, so labels that contradict the prediction move the estimate to
        the labels alone instead of being outweighed by a confident prior
        (Schmidli et al., 2014). The posterior mixture is given as the Beta
        of its mean and variance.

        Parameters
        ----------
        X, scores
            The batch.
        y : array-like of shape (n_samples,)
            Labels of the rows labeled so far; ``-1`` marks an unlabeled row.
        level : float, default=0.8
            As in :meth:`beta_prior`.
        prior_weight : float in [0, 1], default=0.9
            Prior probability that the label-free prediction holds; 1 uses
            :meth:`beta_prior` alone, 0 the labels alone.
        **params
            More parameters of ``BayesianAccuracy`` (e.g. ``random_state``).

        Returns
        -------
        BayesianAccuracy
            Fitted; its ``summary()`` has the posterior mean and interval,
            and ``prior_weight_`` the posterior probability that the
            label-free prediction holds. Its prior is the mixture's after these
            labels: call this method again with every label, instead of
            ``add_labels``, when more arrive.
        """
        from ..metrics import BayesianAccuracy, robust_mixture_posterior

        if not (isinstance(prior_weight, Real) and 0.0 <= prior_weight <= 1.0):
            raise ValueError(f"prior_weight must be a number in [0, 1]; got {prior_weight!r}.")
        if is_dask_collection(X) or is_dask_collection(scores):
            raise TypeError(
                "bayesian_accuracy takes a batch in memory (its labeled rows are few); for a "
                "batch in Dask collections, pass its labeled rows, or compute beta_prior(X) "
                "on the partitions and fit BayesianAccuracy(prior=...) on the labeled rows."
            )
        prior = self.beta_prior(X, scores=scores, level=level)
        pp = self.predictor_
        S = pp.predict_rows(X, scores=scores).scores
        classes = pp.estimator.classes_ if pp.estimator is not None else pp.classes
        batch = np.full(S.shape[0], "batch", dtype=object)
        est = BayesianAccuracy(grouping="external", prior=prior, classes=classes, **params)
        counts = est.fit(S, y, group_by=batch).posterior_
        post, weight = robust_mixture_posterior(
            prior[0], prior[1], counts.successes, counts.failures, prior_weight=prior_weight
        )
        est.set_params(prior=np.array([post.prior_alpha[0], post.prior_beta[0]]))
        est.fit(S, y, group_by=batch)
        est.prior_weight_ = float(weight[0])
        return est

    def score(self, X, y, *, scores=None):
        """Minus the interval cost C_alpha on a labeled batch (alpha = ``level``).

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`predict` (Dask collections too).
        y : array-like of shape (n_samples,)
            Its true labels (a Dask collection partitioned as the batch, for one).

        Returns
        -------
        score : float
            ``-C_alpha(|predicted - true accuracy|, half-width)``; higher is better.
        """
        accuracy, _, q, _ = self._batch(X, scores)
        truth = self.predictor_.true_accuracy(X, y, scores=scores)
        error = accuracy - truth
        level = self._level()
        return -interval_cost(error, self._half_width(q, level), level)


def beta_prior_from(accuracy, q, level=PRIOR_LEVEL):
    """``(alpha, beta)``: mean ``accuracy``, sd the UM's half-width at ``level`` over its z."""
    from scipy.stats import norm

    m = float(np.clip(accuracy, 1e-3, 1 - 1e-3))
    sd = max(float(error_quantiles(q, level)), 1e-4) / norm.ppf((1 + level) / 2)
    n0 = float(np.clip(m * (1 - m) / sd**2 - 1.0, 2.0, 1e4))
    return np.array([m * n0, (1 - m) * n0])

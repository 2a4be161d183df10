"""``PerformancePredictor``: a black box's accuracy on an unlabeled batch."""

import copy
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..utils._dask import is_dask_collection, partition_mean
from ..utils._params import atomic, reset_fitted, validated
from ..utils._random import seed_int
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions
from ..utils._threads import single_threaded
from ..utils._validation import check_labels, check_scores
from ..utils._warnings import warn
from ._atc import ATCMethod
from ._calibrated_scores import CalibratedScoresMethod, CombinedMethod
from ._confidence import ConfidenceMethod
from ._crossval import CrossvalMethod
from ._doc import DoCMethod
from ._dropout import DropoutMethod
from ._meta_model import MetaModelMethod
from ._row_features import FeatureEncoder, RowFeatures

__all__ = ["METHODS", "PerformancePredictor", "meta_model_part"]

#: The predictors, by name.
METHODS = {
    "confidence": ConfidenceMethod,
    "meta_model": MetaModelMethod,
    "crossval": CrossvalMethod,
    "dropout": DropoutMethod,
    "atc": ATCMethod,
    "doc": DoCMethod,
    "calibrated_scores": CalibratedScoresMethod,
    "combined": CombinedMethod,
}


def _can_partial_fit(self):
    return METHODS[self.method].can_partial_fit


class PerformancePredictor(BaseEstimator):
    """Predict a black box's accuracy on an unlabeled batch from a labeled reference set.

    Read more in the :ref:`User Guide <ug_unlabeled_data>`.

    Every method turns each row of the batch into a predicted probability that
    the black box is right on it; the batch's predicted accuracy is their mean.

    - ``"confidence"``: the top confidence, recalibrated by histogram binning
      on the reference rows (Elder et al.'s Confidence predictor, CBPE's idea).
    - ``"meta_model"``: gradient boosting + logistic regression predicting
      "right or wrong" from per-row features (the black box's scores, three
      proxy classifiers' scores, the distance to the reference rows),
      isotonic-calibrated (Elder et al.'s best predictor).
    - ``"crossval"``: ten random forests on cross-validation folds; their
      spread is an intrinsic uncertainty.
    - ``"dropout"``: xgboost's DART booster with dropout at inference (ten
      passes); needs ``skassess[meta]``.
    - ``"atc"``: average thresholded confidence (Garg et al. 2022).
    - ``"doc"``: difference of confidences (Guillory et al. 2021).
    - ``"calibrated_scores"``: each class's score recalibrated one against
      the rest by isotonic regression on the reference rows, the predicted
      class's calibrated score (the estimate of NannyML's CBPE).
    - ``"combined"`` (the default): per row, the mean of ``"meta_model"``
      and ``"calibrated_scores"``: two estimates from different evidence
      (the features and proxies; the black box's own scores), averaged.

    The black box is given as a fitted ``estimator`` (its ``predict_proba``
    gives the scores), or its scores are passed as ``scores=`` beside the
    features, or -- with neither -- ``X`` itself is the scores, as in the
    rest of skassess (the score-only methods need nothing else; the
    meta-model methods then learn from the scores alone).

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba``, default=None
        The black box. Its ``classes_`` map ``y``.
    method : {"meta_model", "combined", "calibrated_scores", "confidence", "crossval", \
            "dropout", "atc", "doc"}, default="combined"
        The predictor.
    classes : array-like of shape (n_classes,), default=None
        The label of each score column, when ``y`` holds labels rather than
        column indices and no ``estimator`` is given.
    proxies : bool, default=True
        Give the meta-model methods the proxy classifiers' confidences and the
        neighbour distance (only when features are available).
    n_bins : int, default=10
        Bins of ``"confidence"`` (equal width on the top confidence).
    atc_score : {"negative_entropy", "max_confidence"}, default="negative_entropy"
        The per-row score that ``"atc"`` thresholds.
    random_state : int or None, default=None
        Seed of the meta-models.
    progress : bool, default=True
        A progress bar (tqdm, on standard error) when :meth:`fit` takes over
        2 s. Fits run each native thread pool at one thread (see
        :class:`PerformanceIntervalRegressor`).

    Attributes
    ----------
    reference_accuracy_ : float
        The black box's accuracy on the reference rows.
    n_reference_ : int
        Number of reference rows seen.
    n_classes_ : int
        Number of score columns.
    n_features_in_ : int
        Number of columns of ``X`` at fit.
    feature_names_in_ : ndarray of str
        The column names, when ``X`` was a DataFrame.
    constant_ : float or None
        When every reference row but at most one was right (or wrong) the
        meta-model methods cannot learn and predict this smoothed rate,
        ``(k + 1) / (n + 2)``, for every row (with a warning).
    reference_rows_ : dict
        The reference rows as :meth:`fit` saw them: ``"F"`` their encoded
        features (None without features), ``"Z"`` their row features (the
        meta-models' inputs), ``"scores"`` the black box's scores, ``"pred"``
        its prediction and
        ``"correct"`` whether it was right. Models built on the predictor
        (:class:`PerformanceIntervalRegressor`) read them.

    Notes
    -----
    Batches: a DataFrame batch is matched to the reference columns by name
    (reordered columns are put back in order; a missing or unexpected column
    is an error). A batch of one row gets a prediction (the probability that
    the black box is right on that row). Missing feature values (NaN) go to
    the black box as they are -- its own handling decides -- and the
    meta-models handle them (boosting natively, the linear models by mean
    imputation). Scores must be finite.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from skassess.meta import PerformancePredictor
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X_tr, X_ref, y_tr, y_ref = train_test_split(X, y, random_state=0)
    >>> model = LogisticRegression(max_iter=5000).fit(X_tr, y_tr)
    >>> pp = PerformancePredictor(model, method="confidence").fit(X_ref, y_ref)
    >>> round(pp.predict(X_ref[:50]), 3)  # predicted accuracy on a batch
    0.952
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["predict_proba"]), None],
        "method": [StrOptions(set(METHODS))],
        "classes": ["array-like", None],
        "proxies": ["boolean"],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
        "atc_score": [StrOptions({"negative_entropy", "max_confidence"})],
        "random_state": [Interval(Integral, 0, 2**31 - 1, closed="left"), None],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        estimator=None,
        method="combined",
        *,
        classes=None,
        proxies=True,
        n_bins=10,
        atc_score="negative_entropy",
        random_state=None,
        progress=True,
    ):
        self.estimator = estimator
        self.method = method
        self.classes = classes
        self.proxies = proxies
        self.n_bins = n_bins
        self.atc_score = atc_score
        self.random_state = random_state
        self.progress = progress

    # -- inputs -------------------------------------------------------------------------------

    def _make_method(self):
        seed = self.random_state
        kwargs = {"confidence": {"n_bins": self.n_bins}, "atc": {"score": self.atc_score}}
        return METHODS[self.method](**kwargs.get(self.method, {}), random_state=seed)

    def _check_columns(self, X, reset):
        """Record (reset) or check the columns of X; return X in the fit order."""
        if X is None:
            if reset:
                self.n_features_in_ = 0
            elif self.n_features_in_:
                raise ValueError("X is None, but the predictor was fitted with features.")
            return None
        if isinstance(X, pd.DataFrame):
            names = np.asarray(X.columns, dtype=object)
            if reset:
                self.feature_names_in_ = names
                self.n_features_in_ = names.size
                return X
            if hasattr(self, "feature_names_in_"):
                seen = list(self.feature_names_in_)
                missing = [c for c in seen if c not in set(names)]
                extra = [c for c in names if c not in set(seen)]
                if missing or extra:
                    raise ValueError(
                        "X must have the columns seen in fit"
                        + (f"; missing: {missing!r}" if missing else "")
                        + (f"; unexpected: {extra!r}" if extra else "")
                        + "."
                    )
                return X[seen]  # reordered columns are matched by name
        width = np.shape(X)[1] if np.ndim(X) == 2 else 1
        if np.ndim(X) == 0 or np.shape(X)[0] == 0:
            raise ValueError(f"X must have at least one row; got shape {np.shape(X)}.")
        if reset:
            self.n_features_in_ = width
            self.__dict__.pop("feature_names_in_", None)
        elif width != self.n_features_in_:
            raise ValueError(
                f"X has {width} columns, but the predictor was fitted with {self.n_features_in_}."
            )
        return X

    def _inputs(self, X, scores, reset):
        """(features or None, scores) for the rows of X."""
        X = self._check_columns(X, reset)
        K = None if reset else self.n_classes_
        if scores is not None:
            S = check_scores(scores, n_classes=K, input_name="scores")
            F = X
        elif self.estimator is not None:
            if X is None:
                raise ValueError("X is None; the estimator needs features to score.")
            check_is_fitted(self.estimator)
            S = check_scores(
                self.estimator.predict_proba(X),
                n_classes=K,
                input_name="estimator.predict_proba(X)",
            )
            F = X
        else:
            if X is None:
                raise ValueError("X is None and no scores were given.")
            S, F = check_scores(X, n_classes=K), None
        if not np.isfinite(S).all():
            raise ValueError(
                "The scores contain NaN or infinity; a row's scores must be finite probabilities."
            )
        if F is not None and np.shape(F)[0] != S.shape[0]:
            raise ValueError(f"X has {np.shape(F)[0]} rows but scores has {S.shape[0]}.")
        return F, S

    # -- fit ----------------------------------------------------------------------------------

    @validated
    @atomic(deep=False)
    @single_threaded
    def fit(self, X, y, *, scores=None, row_features_from=None):
        """Learn from the labeled reference rows.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features) or None
            The reference rows' features (the black box's input); the scores
            themselves when neither ``estimator`` nor ``scores`` is given;
            None with ``scores`` for a score-only method.
        y : array-like of shape (n_samples,)
            True labels of every reference row.
        scores : array-like of shape (n_samples, n_classes), default=None
            The black box's scores on the rows, when it is not given as
            ``estimator``.
        row_features_from : fitted PerformancePredictor, default=None
            A predictor fitted on the same reference rows whose features
            encoder and row features (the proxies' fit, the costly part) this
            one reuses, to compare methods on one reference set; ``X`` may
            then be None. Its rows must be these rows (their number and the
            black box's predictions are checked).

        Returns
        -------
        self : PerformancePredictor
        """
        reset_fitted(self)  # a failure puts the previous fit back (atomic)
        shared = row_features_from
        if shared is not None:
            if not isinstance(shared, PerformancePredictor):
                raise ValueError(
                    "row_features_from must be a fitted PerformancePredictor; got "
                    f"{type(shared).__name__}."
                )
            check_is_fitted(shared, "reference_rows_")
            if scores is None and X is None:
                raise ValueError("row_features_from needs the reference rows' scores.")
            S = check_scores(
                X if scores is None else scores,
                n_classes=shared.n_classes_,
                input_name="X" if scores is None else "scores",
            )
            if not np.array_equal(S.argmax(axis=1), shared.reference_rows_["pred"]):
                raise ValueError(
                    "row_features_from was fitted on other reference rows: the scores' "
                    f"{S.shape[0]} rows and its {shared.reference_rows_['pred'].size} rows "
                    "differ in number or in the black box's predictions."
                )
            F = None
        else:
            F, S = self._inputs(X, scores, reset=True)
        self.n_classes_ = S.shape[1]
        classes = self.estimator.classes_ if self.estimator is not None else self.classes
        codes = check_labels(y, S.shape[0], S.shape[1], classes, missing_label=None)
        if np.unique(codes).size < 2:
            raise ValueError(
                f"y has a single class ({np.unique(np.asarray(y)).tolist()!r}); a "
                "reference set needs rows of at least two classes to show how the model "
                "errs."
            )
        from tqdm.auto import tqdm

        # shown only when the fit takes over 2 s (the row features' proxies, the method)
        with tqdm(
            total=2,
            desc=f"PerformancePredictor.fit ({self.method})",
            delay=2,
            leave=False,
            disable=not self.progress,
        ) as bar:
            self._fit_core(F, codes, S, shared=shared, bar=bar)
        return self

    def _fit_core(self, F, codes, S, shared=None, bar=None):
        """Fit the method on checked inputs; ``shared`` reuses another predictor's row features."""
        pred = S.argmax(axis=1)
        correct = pred == codes
        self.method_ = self._make_method()
        if shared is None:
            self.encoder_ = None
            Fenc = None
            if F is not None and self.method_.uses_features:
                self.encoder_ = FeatureEncoder().fit(F)
                Fenc = self.encoder_.transform(F)
            self.features_ = RowFeatures(
                bool(self.proxies), random_state=seed_int(self.random_state)
            )
            Z = self.features_.fit_transform(Fenc, codes, S, pred)
        else:  # the same reference rows: take the input contract and row features as they are
            self.n_features_in_, self.n_classes_ = shared.n_features_in_, shared.n_classes_
            if hasattr(shared, "feature_names_in_"):
                self.feature_names_in_ = shared.feature_names_in_
            self.encoder_, self.features_ = shared.encoder_, shared.features_
            Fenc, Z = shared.reference_rows_["F"], shared.reference_rows_["Z"]
        self.reference_rows_ = {
            "F": Fenc,
            "Z": Z,
            "scores": S,
            "pred": pred,
            "correct": correct,
        }
        if bar is not None:
            bar.update(1)
        self.constant_ = None
        n_wrong = int(correct.size - correct.sum())
        n_rare = min(n_wrong, correct.size - n_wrong)
        if self.method_.uses_features and n_rare < 2:
            # one row of an outcome cannot be both learned from and held out to calibrate
            self.constant_ = (correct.sum() + 1.0) / (correct.size + 2.0)
            warn(
                f"The black box is {'right' if n_wrong <= 1 else 'wrong'} on every "
                f"reference row{' but one' if n_rare else ''}; method {self.method!r} "
                f"cannot learn where it errs and predicts the smoothed rate "
                f"{self.constant_:.3f} for every row."
            )
        elif getattr(self.method_, "uses_scores", False):
            self.method_.fit(Z, correct, scores=S, codes=codes)
        else:
            self.method_.fit(Z, correct)
        if bar is not None:
            bar.update(1)
        self.n_reference_ = int(correct.size)
        self.n_correct_ = int(correct.sum())
        self.reference_accuracy_ = self.n_correct_ / self.n_reference_
        return self

    @available_if(_can_partial_fit)
    @validated
    def partial_fit(self, X, y, *, scores=None):
        """Add labeled reference rows (``"confidence"`` and ``"doc"``: their counts add up).

        Parameters
        ----------
        X, y, scores
            As in :meth:`fit`.

        Returns
        -------
        self : PerformancePredictor
        """
        if not hasattr(self, "method_"):
            return self.fit(X, y, scores=scores)
        F, S = self._inputs(X, scores, reset=False)
        classes = self.estimator.classes_ if self.estimator is not None else self.classes
        codes = check_labels(y, S.shape[0], S.shape[1], classes, missing_label=None)
        pred = S.argmax(axis=1)
        correct = pred == codes
        Z = self.features_.transform(None, S, pred)
        self.method_.partial_fit(Z, correct)
        self.n_reference_ += int(correct.size)
        self.n_correct_ += int(correct.sum())
        self.reference_accuracy_ = self.n_correct_ / self.n_reference_
        return self

    # -- predict ------------------------------------------------------------------------------

    def predict_rows(self, X=None, *, scores=None, row_features=None):
        """Everything the method says about each row of a batch.

        For models built on the predictor (:class:`PerformanceIntervalRegressor`
        reads it); :meth:`predict_correctness` is its ``"p"``.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`fit` (without labels).
        row_features : ndarray of shape (n_samples, n_row_features), default=None
            The batch's row features (``"Z"`` of this method, or of a
            predictor this one was fitted with ``row_features_from``) in place
            of ``X``: only the method's outputs are returned. The methods that
            read the black box's scores (``"calibrated_scores"``,
            ``"combined"``) need ``scores`` beside them.

        Returns
        -------
        rows : Bunch
            ``p`` the probability that the black box is right on each row,
            ``u`` the method's per-row spread (None for the methods without
            one), ``raw`` its uncalibrated per-row output (``"combined"``:
            also ``p_parts``, each part's ``p`` by method); from ``X`` and
            ``scores`` also ``Z`` the row features, ``scores``, ``pred`` the
            black box's prediction and ``features`` the encoded features
            (None without features).
        """
        check_is_fitted(self, "method_")
        if row_features is not None:
            if X is not None:
                raise ValueError("Pass row_features or X, not both.")
            Z = np.asarray(row_features, dtype=np.float64)
            ref = self.reference_rows_["Z"]
            if Z.ndim != 2 or Z.shape[1] != ref.shape[1]:
                raise ValueError(
                    f"row_features must have shape (n_samples, {ref.shape[1]}); got {Z.shape}."
                )
            S = None
            if scores is not None:
                S = check_scores(scores, n_classes=self.n_classes_, input_name="scores")
                if S.shape[0] != Z.shape[0]:
                    raise ValueError(
                        f"row_features has {Z.shape[0]} rows but scores has {S.shape[0]}."
                    )
            elif getattr(self.method_, "uses_scores", False) and self.constant_ is None:
                raise ValueError(
                    f"method {self.method!r} reads the black box's scores; pass scores= "
                    "beside row_features."
                )
            return Bunch(**self._method_rows(Z, S))
        F, S = self._inputs(X, scores, reset=False)
        pred = S.argmax(axis=1)
        Fenc = None if self.encoder_ is None else self.encoder_.transform(F)
        Z = self.features_.transform(Fenc, S, pred)
        return Bunch(**self._method_rows(Z, S), Z=Z, scores=S, pred=pred, features=Fenc)

    def _method_rows(self, Z, S=None):
        if self.constant_ is not None:
            return {"p": np.full(Z.shape[0], self.constant_), "u": None, "raw": Z[:, 0]}
        if getattr(self.method_, "uses_scores", False):
            return dict(self.method_.rows(Z, scores=S))
        return dict(self.method_.rows(Z))

    def predict_correctness(self, X, *, scores=None):
        """The predicted probability that the black box is right on each row.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`fit` (without labels).

        Returns
        -------
        p : ndarray of shape (n_samples,)
        """
        return self.predict_rows(X, scores=scores)["p"]

    def predict(self, X, *, scores=None):
        """The predicted accuracy of the black box on the batch.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`fit` (without labels); or Dask collections
            partitioned alike (a Dask DataFrame of the features, a Dask Array
            of the scores): each partition's rows are predicted where they
            live and only their sums travel.

        Returns
        -------
        accuracy : float
        """
        return self._row_mean("p", X, scores)

    def _row_mean(self, key, X, scores):
        """The batch's mean of the per-row output ``key``; a batch in Dask
        collections is summed partition by partition where it lives."""
        if is_dask_collection(X) or is_dask_collection(scores):
            check_is_fitted(self, "method_")
            if X is None:
                return partition_mean(self._rows_of_scores(key), scores, {})
            return partition_mean(self._rows_of(key), X, {"scores": scores})
        return float(np.mean(self.predict_rows(X, scores=scores)[key]))

    def _rows_of(self, key):
        def rows(X, scores):
            return self.predict_rows(X, scores=scores)[key]

        return rows

    def _rows_of_scores(self, key):
        def rows(scores):
            return self.predict_rows(None, scores=scores)[key]

        return rows

    def intrinsic_uncertainty(self, X, *, scores=None):
        """The method's own uncertainty of its prediction: the mean of its per-row spreads.

        ``"confidence"``: the bins' binomial standard errors; ``"crossval"``
        and ``"dropout"``: the members' standard deviation. Elder et al. use
        it (scaled) as an interval half-width baseline.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`predict` (Dask collections too).

        Returns
        -------
        uncertainty : float

        Raises
        ------
        ValueError
            For the methods that have none (``"combined"``, ``"meta_model"``,
            ``"calibrated_scores"``, ``"atc"``, ``"doc"``).
        """
        check_is_fitted(self, "method_")
        ref = self.reference_rows_
        if self._method_rows(ref["Z"][:1], ref["scores"][:1])["u"] is None:
            raise ValueError(
                f"method {self.method!r} has no intrinsic uncertainty; "
                "'confidence', 'crossval' and 'dropout' have one."
            )
        return self._row_mean("u", X, scores)

    def score(self, X, y, *, scores=None):
        """Minus the absolute error of the predicted accuracy on a labeled batch.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`predict` (Dask collections too).
        y : array-like of shape (n_samples,)
            Its true labels (a Dask collection partitioned as the batch, for one).

        Returns
        -------
        score : float
            ``-|predicted accuracy - true accuracy|`` (higher is better).
        """
        if is_dask_collection(X) or is_dask_collection(scores):
            return -abs(self.predict(X, scores=scores) - self.true_accuracy(X, y, scores=scores))
        rows = self.predict_rows(X, scores=scores)  # one pass for both
        truth = float(np.mean(rows["pred"] == self._codes(y, rows)))
        return -abs(float(np.mean(rows["p"])) - truth)

    def _codes(self, y, rows):
        classes = self.estimator.classes_ if self.estimator is not None else self.classes
        return check_labels(
            y, rows["scores"].shape[0], self.n_classes_, classes, missing_label=None
        )

    def true_accuracy(self, X, y, *, scores=None):
        """The black box's accuracy on a labeled batch: the truth :meth:`predict` estimates.

        Parameters
        ----------
        X, scores
            The batch, as in :meth:`predict` (Dask collections too).
        y : array-like of shape (n_samples,)
            Its true labels (a Dask collection partitioned as the batch, for one).

        Returns
        -------
        accuracy : float
        """
        check_is_fitted(self, "method_")
        if is_dask_collection(X) or is_dask_collection(scores):
            if X is None:
                return partition_mean(self._correct_of_scores, scores, {"y": y})
            return partition_mean(self._correct, X, {"scores": scores, "y": y})
        rows = self.predict_rows(X, scores=scores)
        return float(np.mean(rows["pred"] == self._codes(y, rows)))

    def _correct(self, X, scores, y):
        rows = self.predict_rows(X, scores=scores)
        return rows["pred"] == self._codes(y, rows)

    def _correct_of_scores(self, scores, y):
        return self._correct(None, scores, y)


def meta_model_part(predictor):
    """The ``"meta_model"`` inside a fitted ``"combined"`` predictor, as a predictor.

    It shares the combined predictor's row features (the proxies) and
    reference rows, so nothing is fitted twice.
    """
    check_is_fitted(predictor, "method_")
    if predictor.method != "combined":
        raise ValueError(f"predictor.method is {predictor.method!r}, not 'combined'.")
    part = copy.copy(predictor)
    part.method = "meta_model"
    part.method_ = predictor.method_.meta_model_
    return part

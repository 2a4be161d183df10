"""Rank fitted scikit-learn classifiers on the same items from their scores and a few labels."""

from numbers import Real

import numpy as np
from scipy.special import expit, softmax
from sklearn.utils.validation import check_is_fitted

from ..utils._params import N_DRAWS, validate_params
from ..utils._sklearn_compat import Interval, MissingValues, StrOptions
from ._base import DEFAULT_N_DRAWS
from ._model_comparison import BayesianModelComparison
from ._rate_table import RATES

__all__ = ["compare_models"]


def _named(estimators):
    """``(names, estimators)`` from a dict, a list of (name, estimator) pairs or a list."""
    if isinstance(estimators, dict):
        pairs = list(estimators.items())
    else:
        estimators = list(estimators)
        if all(isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str) for e in estimators):
            pairs = estimators
        else:
            pairs = [(f"{type(e).__name__}", e) for e in estimators]
            names = [n for n, _ in pairs]
            if len(set(names)) < len(names):  # two of a kind: number them
                pairs = [(f"{n} {i}", e) for i, (n, e) in enumerate(pairs)]
    names = [str(n) for n, _ in pairs]
    if len(set(names)) < len(names):
        raise ValueError(f"estimators: the names must differ; got {names!r}.")
    if len(pairs) < 2:
        raise ValueError(f"estimators must hold at least two models; got {len(pairs)}.")
    return names, [e for _, e in pairs]


def _scores(estimator, X, n_classes, response_method):
    """Class scores ``(n_samples, n_classes)`` of one fitted classifier."""
    method = response_method
    if method == "auto":
        method = next(
            (m for m in ("predict_proba", "decision_function", "predict") if hasattr(estimator, m)),
            None,
        )
    if method is None or not hasattr(estimator, method):
        raise ValueError(
            f"estimators: {type(estimator).__name__} has no {method or 'predict'} method."
        )
    out = np.asarray(getattr(estimator, method)(X))
    if method == "predict_proba":
        return out.astype(np.float64)
    if method == "decision_function":
        out = out.astype(np.float64)
        if out.ndim == 1:  # binary: the positive class's margin
            p = expit(out)
            return np.stack([1 - p, p], axis=1)
        return softmax(out, axis=1)
    # predict: the predicted class gets all the score
    codes = np.searchsorted(estimator.classes_, out)
    scores = np.zeros((len(out), n_classes))
    scores[np.arange(len(out)), codes] = 1.0
    return scores


@validate_params(
    {
        "estimators": [list, dict],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like", None],
        "missing_label": [MissingValues()],
        "response_method": [StrOptions({"auto", "predict_proba", "decision_function", "predict"})],
        "metric": [StrOptions(set(RATES) - {"selection_rate"})],
        "prior": [StrOptions({"informative", "uniform"})],
        "prior_strength": [Interval(Real, 0, None, closed="neither")],
        "tie_prior": [Interval(Real, 0, 1, closed="left")],
        "rope": [Interval(Real, 0, None, closed="left")],
        "n_draws": [N_DRAWS],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def compare_models(
    estimators,
    X,
    y=None,
    *,
    missing_label=-1,
    response_method="auto",
    metric="accuracy",
    prior="informative",
    prior_strength=2.0,
    tie_prior=0.5,
    rope=0.01,
    n_draws=DEFAULT_N_DRAWS,
    random_state=None,
):
    """Which of several fitted classifiers is the most accurate on these items?

    Scores the items ``X`` with every estimator and fits a
    :class:`BayesianModelComparison` on the scores and the labels known
    (``y``, with ``missing_label`` for unlabeled items; None: no labels yet).
    Use its ``summary()`` (posterior accuracy and P(best) per model),
    ``pairwise()`` (Δ accuracy with ROPE probabilities), or hand it to
    :class:`~skassess.samplers.ActiveModelSelector` to choose the items to
    label.

    Parameters
    ----------
    estimators : list or dict
        Fitted classifiers with the same ``classes_``: a list, a list of
        ``(name, estimator)`` pairs, or a dict name -> estimator.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The items, as the estimators take them.
    y : array-like of shape (n_samples,), default=None
        True labels (the estimators' classes); ``missing_label`` marks an
        unlabeled item.
    missing_label : int, float, str or None, default=-1
        The marker of an unlabeled item, besides NaN, None and ``pd.NA``,
        which always mark one.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}, default="auto"
        How an estimator scores the items; "auto" takes the first it has.
        Margins go through a logistic (binary) or softmax; ``predict`` gives
        the predicted class all the score (the informative prior then only
        knows the predictions).
    metric, prior, prior_strength, tie_prior, rope, n_draws, random_state
        As in :class:`BayesianModelComparison`.

    Returns
    -------
    comparison : BayesianModelComparison
        Fitted; ``model_names`` are the estimators' names and ``classes``
        their ``classes_``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skassess.metrics import compare_models
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X_tr, X_pool, y_tr, y_pool = train_test_split(X, y, random_state=0)
    >>> models = {"lr": make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr),
    ...           "nb": GaussianNB().fit(X_tr, y_tr)}
    >>> labels = y_pool.copy()
    >>> labels[40:] = -1                      # only the first 40 items are labeled
    >>> comp = compare_models(models, X_pool, labels, random_state=0)
    >>> comp.summary().round(2)  # all labels: 0.96 and 0.94  # doctest: +NORMALIZE_WHITESPACE
           mean  lower  upper  p_best
    model
    lr     0.96   0.90   0.99    0.84
    nb     0.91   0.86   0.96    0.16
    """
    names, models = _named(estimators)
    classes = None
    for name, model in zip(names, models, strict=True):
        check_is_fitted(model)
        if not hasattr(model, "classes_"):
            raise ValueError(f"estimators: {name!r} has no classes_; pass fitted classifiers.")
        if classes is None:
            classes = np.asarray(model.classes_)
        elif not np.array_equal(np.asarray(model.classes_), classes):
            raise ValueError(
                f"estimators: {name!r} has classes {list(model.classes_)!r}, "
                f"but {names[0]!r} has {classes.tolist()!r}."
            )
    S = np.stack([_scores(m, X, len(classes), response_method) for m in models], axis=1)
    comparison = BayesianModelComparison(
        prior,
        metric=metric,
        prior_strength=prior_strength,
        tie_prior=tie_prior,
        model_names=names,
        classes=classes,
        missing_label=missing_label,
        rope=rope,
        n_draws=n_draws,
        random_state=random_state,
    )
    return comparison.fit(S, y)

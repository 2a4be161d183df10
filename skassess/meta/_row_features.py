"""Per-row inputs of the meta-model predictors (Elder et al., App. 8.1, "Features").

From the black box's scores: the top confidence, the margin between the top
two, the entropy, and how frequent the predicted class is in the reference
set. With features: the same top confidence and margin from three proxy
classifiers (logistic regression, random forest, gradient boosting) trained on
the reference rows, and the mean distance to the nearest reference rows, which
stands in for the paper's one-class SVM and UMAP density (a k-nearest-neighbour
distance needs no extra dependency and plays the same role: how far a row is
from the data the black box was checked on). For the reference rows
themselves the proxy scores and distances are cross-fitted (each row scored by
models that did not see it), so the meta-model learns from the values it will
meet on new rows.
"""

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import NearestNeighbors
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler

__all__ = ["FeatureEncoder", "RowFeatures", "score_features"]

_N_FOLDS = 3
_K_NEIGHBORS = 10


def score_features(scores, pred, class_freq):
    """Top confidence, top-minus-second, entropy and predicted-class frequency, per row."""
    part = np.partition(scores, scores.shape[1] - 2, axis=1)
    top, second = part[:, -1], part[:, -2]
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.sum(np.where(scores > 0, scores * np.log(scores), 0.0), axis=1)
    return np.column_stack([top, top - second, ent, class_freq[pred]])


SCORE_FEATURES = ("top", "margin", "entropy", "class_frequency")


class FeatureEncoder:
    """The user's features as a float matrix: numeric columns as they are, others ordinal.

    NaN stays NaN (the models downstream handle it); an unseen category
    becomes -1.
    """

    def fit(self, X):
        if isinstance(X, pd.DataFrame):
            cat = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
            num = [c for c in X.columns if c not in cat]
            self.ct_ = ColumnTransformer(
                [
                    ("num", "passthrough", num),
                    (
                        "cat",
                        OrdinalEncoder(
                            handle_unknown="use_encoded_value",
                            unknown_value=-1,
                            encoded_missing_value=np.nan,
                        ),
                        cat,
                    ),
                ],
                sparse_threshold=0.0,
            ).fit(X)
        else:
            self.ct_ = None
        return self

    def transform(self, X):
        if self.ct_ is not None:
            return np.asarray(self.ct_.transform(X), dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        return X[:, None] if X.ndim == 1 else X


def _proxies(random_state):
    return [
        make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(max_iter=500)),
        RandomForestClassifier(
            n_estimators=50, min_samples_leaf=3, n_jobs=1, random_state=random_state
        ),
        HistGradientBoostingClassifier(
            max_iter=100, max_leaf_nodes=15, early_stopping=False, random_state=random_state
        ),
    ]


def _top_margin(proba):
    part = np.sort(proba, axis=1)
    return part[:, -1], part[:, -1] - (part[:, -2] if proba.shape[1] > 1 else 0.0)


class RowFeatures:
    """Fit on the reference rows; give the meta-model's input for any rows.

    Parameters
    ----------
    proxies : bool
        Add the proxy classifiers' confidences and the neighbour distance
        (needs features).
    random_state : int
        Seed of the proxies and the cross-fitting folds.
    """

    def __init__(self, proxies=True, *, random_state):
        self.proxies = proxies
        self.random_state = random_state

    def fit_transform(self, F, y, scores, pred):
        """Fit on the reference rows and return their (cross-fitted) features."""
        K = scores.shape[1]
        self.class_freq_ = np.bincount(pred, minlength=K) / pred.size
        base = score_features(scores, pred, self.class_freq_)
        self.names_ = list(SCORE_FEATURES)
        self.use_proxies_ = bool(self.proxies and F is not None and F.shape[1] > 0)
        if not self.use_proxies_:
            return base
        self.imputer_ = make_pipeline(SimpleImputer(), StandardScaler()).fit(F)
        G = self.imputer_.transform(F)
        self.models_ = [m.fit(F, y) for m in _proxies(self.random_state)]
        k = min(_K_NEIGHBORS, F.shape[0] - 1)
        self.nn_ = NearestNeighbors(n_neighbors=k).fit(G)
        extra = np.empty((F.shape[0], 2 * len(self.models_) + 1))
        counts = np.bincount(y, minlength=K)
        n_folds = int(min(_N_FOLDS, counts[counts > 0].min())) if (counts > 0).sum() > 1 else 0
        if n_folds >= 2:
            folds = StratifiedKFold(n_folds, shuffle=True, random_state=self.random_state)
            for train, test in folds.split(F, y):
                for j, model in enumerate(_proxies(self.random_state)):
                    fitted = clone(model).fit(F[train], y[train])
                    top, margin = _top_margin(fitted.predict_proba(F[test]))
                    extra[test, 2 * j] = top
                    extra[test, 2 * j + 1] = margin
        else:  # too few rows of a class to cross-fit: in-sample proxies
            extra[:, :-1] = self._proxy_columns(F)
        dist, _ = self.nn_.kneighbors(G, n_neighbors=k + 1)
        extra[:, -1] = dist[:, 1:].mean(axis=1)  # leave the row itself out
        self.names_ += [f"{p}_{s}" for p in ("lr", "rf", "gbm") for s in ("top", "margin")]
        self.names_ += ["neighbor_distance"]
        return np.column_stack([base, extra])

    def _proxy_columns(self, F):
        return np.column_stack([c for m in self.models_ for c in _top_margin(m.predict_proba(F))])

    def transform(self, F, scores, pred):
        """The features of new rows."""
        base = score_features(scores, pred, self.class_freq_)
        if not self.use_proxies_:
            return base
        dist, _ = self.nn_.kneighbors(self.imputer_.transform(F))
        return np.column_stack([base, self._proxy_columns(F), dist.mean(axis=1)])

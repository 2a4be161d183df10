"""clone, pickling, Pipelines on raw features, metadata routing, GridSearchCV over priors."""

import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, RepeatedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skassess import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.datasets import load_adult_scores

ALL = [
    BayesianAccuracy(prior="informative", random_state=0),
    BayesianCalibrationError(classwise=True, random_state=0),
    BayesianConfusionMatrix(prior="informative", random_state=0),
    BayesianMisclassificationCost(random_state=0),
]


@pytest.fixture(scope="module")
def digits_black_box():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    model = LogisticRegression(max_iter=2000).fit(X_train, y_train)
    return model, X_test, y_test


@pytest.mark.parametrize("est", ALL, ids=lambda e: type(e).__name__)
def test_clone_and_pickle_round_trip(est, digits_black_box):
    model, X, y_true = digits_black_box
    scores = model.predict_proba(X)
    y = np.where(np.arange(len(y_true)) % 4 == 0, y_true, -1)
    fitted = clone(est).fit(scores, y)
    assert clone(est).get_params() == est.get_params()
    restored = pickle.loads(pickle.dumps(fitted))
    pd.testing.assert_frame_equal(restored.summary(), fitted.summary())
    np.testing.assert_array_equal(restored.overall_samples(50), fitted.overall_samples(50))
    np.testing.assert_array_equal(restored.predict(scores), fitted.predict(scores))
    # A restored estimator keeps learning where it stopped.
    restored.partial_fit(scores, y_true)
    assert restored.n_rows_.sum() == 2 * len(y_true)


def test_pipeline_on_raw_features(digits_black_box):
    model, X, y_true = digits_black_box
    y = np.where(np.arange(len(y_true)) % 5 == 0, y_true, -1)
    pipe = make_pipeline(FunctionTransformer(model.predict_proba), BayesianAccuracy(random_state=0))
    pipe.fit(X, y)
    direct = BayesianAccuracy(random_state=0).fit(model.predict_proba(X), y)
    np.testing.assert_allclose(pipe.predict(X), direct.predict(model.predict_proba(X)))
    assert pipe.score(X, y_true) == pytest.approx(direct.score(model.predict_proba(X), y_true))
    assert pipe[-1].summary()["n_labeled"].sum() == (y >= 0).sum()


def test_groups_routed_through_pipeline():
    data = load_adult_scores("sex")
    scores = data.scores["LR"].to_numpy()
    groups = data.sensitive["sex"].to_numpy()
    with sklearn.config_context(enable_metadata_routing=True):
        est = BayesianAccuracy(grouping="external").set_fit_request(group_by=True)
        est.set_score_request(group_by=True).set_predict_request(group_by=True)
        pipe = make_pipeline(FunctionTransformer(), est)
        pipe.fit(scores, data.target, group_by=groups)
        assert list(pipe[-1].groups_) == ["Female", "Male"]
        assert pipe.predict(scores[:3], group_by=groups[:3]).shape == (3,)


def _grid_search(model_name, seed=0):
    data = load_adult_scores("race")
    scores, target = data.scores[model_name].to_numpy(), data.target.to_numpy()
    y = np.full(len(target), -1)
    labeled = np.random.default_rng(seed).choice(len(target), 300, replace=False)
    y[labeled] = target[labeled]
    search = GridSearchCV(
        BayesianAccuracy(grouping="score_bins", n_bins=10),
        {"prior": ["uniform", "informative"], "prior_strength": [2, 10, 50, 200]},
        cv=RepeatedKFold(n_splits=5, n_repeats=2, random_state=0),
    )
    return search.fit(scores, y)


def test_grid_search_prior_follows_calibration():
    """Real Adult scores, 300 labels, 10 score bins.

    LR is well calibrated (mean confidence 0.818, accuracy 0.824): the search
    trusts its scores (informative prior, strength 200). GaussianNB and the
    decision tree are over-confident (0.94 and 0.98 vs 0.82): the search
    keeps the prior weak (strength <= 10).
    """
    calibrated = _grid_search("LR")
    assert calibrated.best_params_["prior"] == "informative"
    assert calibrated.best_params_["prior_strength"] >= 50
    for name in ("GaussianNB", "DecisionTree"):
        overconfident = _grid_search(name)
        assert overconfident.best_params_["prior_strength"] <= 10, name

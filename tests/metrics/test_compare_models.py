import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skassess.metrics import BayesianModelComparison, ModelComparisonDisplay, compare_models
from skassess.samplers import ActiveModelSelector


def _models(n_classes=2, names=("no", "yes")):
    X, y = make_classification(600, 8, n_informative=5, n_classes=n_classes, random_state=0)
    y = np.asarray(names)[y]
    fit = dict(
        lr=LogisticRegression(max_iter=1000),
        nb=GaussianNB(),
        tree=DecisionTreeClassifier(max_depth=3, random_state=0),
    )
    for model in fit.values():
        model.fit(X[:300], y[:300])
    return fit, X[300:], y[300:]


def test_labels_in_the_estimators_classes_and_every_input_shape():
    models, X, y = _models()
    labels = y.astype(object)
    labels[50:] = None
    comp = compare_models(models, X, labels, missing_label=np.nan, random_state=0)
    assert list(comp.groups_) == ["lr", "nb", "tree"]
    assert list(comp.classes) == ["no", "yes"]
    assert comp.counts_.sum() == 50 and comp.n_samples_ == 300
    # the same posterior from the scores by hand
    S = np.stack([m.predict_proba(X) for m in models.values()], axis=1)
    codes = np.where(np.arange(300) < 50, (y == "yes").astype(int), -1)
    by_hand = BayesianModelComparison(random_state=0).fit(S, codes)
    np.testing.assert_allclose(comp.mean_accuracy(), by_hand.mean_accuracy())
    # a list of pairs and a plain list (names from the classes, numbered when repeated)
    pairs = compare_models(list(models.items()), X)
    assert list(pairs.groups_) == ["lr", "nb", "tree"]
    plain = compare_models([models["lr"], models["nb"], GaussianNB().fit(X, y)], X)
    assert list(plain.groups_) == ["LogisticRegression 0", "GaussianNB 1", "GaussianNB 2"]
    # a rate: the TPR of class "yes"
    tpr = compare_models(models, X, y, metric="tpr")
    truth = [np.mean(m.predict(X)[y == "yes"] == "yes") for m in models.values()]
    np.testing.assert_allclose(tpr.summary()["mean"], truth)
    # every label: the exact accuracies
    full = compare_models(models, X, y)
    truth = [np.mean(m.predict(X) == y) for m in models.values()]
    np.testing.assert_allclose(full.mean_accuracy(), truth)


def test_margins_and_predictions_give_the_same_patterns():
    models, X, y = _models(3, names=(0, 1, 2))
    svc = LinearSVC(random_state=0).fit(X, y)  # decision_function only
    comp = compare_models({"svc": svc, "lr": models["lr"]}, X, y)
    assert comp.mean_accuracy()[0] == pytest.approx(np.mean(svc.predict(X) == y))
    hard = compare_models({"svc": svc, "lr": models["lr"]}, X, y, response_method="predict")
    np.testing.assert_array_equal(hard.pattern_, comp.pattern_)


def test_the_selector_takes_the_comparisons_classes():
    models, X, y = _models()
    comp = compare_models(models, X)
    S = np.stack([m.predict_proba(X) for m in models.values()], axis=1)
    sel = ActiveModelSelector(comp, random_state=0).fit(S)
    i = sel.query(2)
    sel.tell(i, y[i])  # labels as the classes' names
    assert sel.n_labeled_ == 2
    with pytest.raises(ValueError, match="labels"):
        sel.tell(sel.query(1), [7])


def test_errors():
    models, X, y = _models()
    other = GaussianNB().fit(X, np.where(y == "yes", "a", "b"))
    with pytest.raises(ValueError, match="'other' has classes"):
        compare_models({"lr": models["lr"], "other": other}, X)
    with pytest.raises(ValueError, match="at least two models"):
        compare_models({"lr": models["lr"]}, X)
    with pytest.raises(ValueError, match="names must differ"):
        compare_models([("a", models["lr"]), ("a", models["nb"])], X)
    with pytest.raises(ValueError, match="has no decision_function"):
        compare_models(models, X, response_method="decision_function")
    with pytest.raises(ValueError, match="The 'estimators' parameter"):
        compare_models("lr", X)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        compare_models([models["lr"], GaussianNB()], X)


def test_display():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    models, X, y = _models()
    labels = np.where(np.arange(300) < 100, y, "?")
    comp = compare_models(models, X, labels, missing_label="?", random_state=0)
    disp = ModelComparisonDisplay.from_estimator(comp, random_state=0)
    p = comp.best_probabilities(4000, random_state=0)
    assert [t.get_text() for t in disp.texts_] == [f"P(best) {v:.2f}" for v in p]
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == list(comp.groups_)
    assert isinstance(comp.summary(), pd.DataFrame)
    with pytest.raises(ValueError, match="The 'estimator' parameter"):
        ModelComparisonDisplay.from_estimator(object())

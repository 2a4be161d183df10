import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from skassess.exceptions import SkassessWarning
from skassess.meta import PerformancePredictor
from skassess.meta._predictor import METHODS


@pytest.fixture(scope="module")
def task():
    X, y = make_classification(4000, n_features=8, n_informative=4, flip_y=0.1, random_state=0)
    model = LogisticRegression(max_iter=1000).fit(X[:1000], y[:1000])
    return X, y, model


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_each_method_predicts_the_accuracy_without_drift(task, method):
    X, y, model = task
    ref, batch = slice(1000, 2500), slice(2500, 4000)
    pp = PerformancePredictor(model, method=method, random_state=0).fit(X[ref], y[ref])
    truth = (model.predict(X[batch]) == y[batch]).mean()
    pred = pp.predict(X[batch])
    assert abs(pred - truth) < 0.04  # 1500 rows: sampling SE ~0.011
    assert pp.score(X[batch], y[batch]) == pytest.approx(-abs(pred - truth))
    p = pp.predict_correctness(X[batch])
    assert p.shape == (1500,) and np.all((p >= 0) & (p <= 1.0 + 1e-12) | (method == "doc"))


def test_confidence_is_unbiased_on_calibrated_scores():
    # labels drawn from the scores: the binned map is unbiased; seeded, 3-SE tolerance
    rng = np.random.default_rng(1)
    errors = []
    for _ in range(200):
        top = rng.beta(5, 2, size=600)
        S = np.column_stack([1 - top, top])
        y = (rng.random(600) < top).astype(int)
        pp = PerformancePredictor(method="confidence").fit(S[:300], y[:300])
        errors.append(pp.predict(S[300:]) - (S[300:].argmax(1) == y[300:]).mean())
    errors = np.asarray(errors)
    assert abs(errors.mean()) < 3 * errors.std() / np.sqrt(errors.size)


def test_three_ways_to_give_the_black_box_agree(task):
    X, y, model = task
    S = model.predict_proba(X)
    a = PerformancePredictor(model, method="confidence").fit(X[:500], y[:500]).predict(X[500:900])
    b = (
        PerformancePredictor(method="confidence")
        .fit(X[:500], y[:500], scores=S[:500])
        .predict(X[500:900], scores=S[500:900])
    )
    c = PerformancePredictor(method="confidence").fit(S[:500], y[:500]).predict(S[500:900])
    d = (
        PerformancePredictor(method="confidence")
        .fit(None, y[:500], scores=S[:500])
        .predict(None, scores=S[500:900])
    )
    assert a == b == c == d


@pytest.mark.parametrize("method", ["confidence", "doc"])
def test_partial_fit_equals_fit(task, method):
    X, y, model = task
    full = PerformancePredictor(model, method=method).fit(X[:900], y[:900])
    part = PerformancePredictor(model, method=method).partial_fit(X[:300], y[:300])
    part.partial_fit(X[300:900], y[300:900])
    assert part.predict(X[1000:]) == pytest.approx(full.predict(X[1000:]), abs=1e-12)
    assert part.n_reference_ == 900


def test_partial_fit_only_where_the_method_allows():
    assert not hasattr(PerformancePredictor(method="meta_model"), "partial_fit")
    assert hasattr(PerformancePredictor(method="doc"), "partial_fit")


@pytest.mark.slow
def test_intrinsic_uncertainty(task):
    X, y, model = task
    for method in ("confidence", "crossval", "dropout"):
        pp = PerformancePredictor(model, method=method, random_state=0).fit(X[:800], y[:800])
        assert pp.intrinsic_uncertainty(X[1000:1400]) > 0
    pp = PerformancePredictor(model, method="meta_model", random_state=0).fit(X[:800], y[:800])
    with pytest.raises(ValueError, match="no intrinsic uncertainty"):
        pp.intrinsic_uncertainty(X[1000:1400])


def test_dataframe_batches_are_matched_by_name(task):
    X, y, _ = task
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(8)])
    model = LogisticRegression(max_iter=1000).fit(df[:1000], y[:1000])
    pp = PerformancePredictor(model, random_state=0).fit(df[1000:2000], y[1000:2000])
    batch = df[2000:2400]
    expected = pp.predict(batch)
    assert pp.predict(batch[batch.columns[::-1]]) == pytest.approx(expected)
    with pytest.raises(ValueError, match=r"missing: \['f3'\]"):
        pp.predict(batch.drop(columns="f3"))
    with pytest.raises(ValueError, match=r"unexpected: \['extra'\]"):
        pp.predict(batch.assign(extra=1.0))
    with pytest.raises(ValueError, match="7 columns"):
        pp.predict(X[2000:2400, :7])


def test_one_row_batch(task):
    X, y, model = task
    pp = PerformancePredictor(model, random_state=0).fit(X[1000:2000], y[1000:2000])
    assert 0 <= pp.predict(X[2000:2001]) <= 1


@pytest.mark.slow
def test_nan_features_are_the_black_boxs_business(task):
    X, y, _ = task
    X = X.copy()
    X[::7, 2] = np.nan
    model = HistGradientBoostingClassifier(max_iter=30).fit(X[:1000], y[:1000])
    for method in ("meta_model", "crossval", "dropout", "confidence"):
        pp = PerformancePredictor(model, method=method, random_state=0).fit(
            X[1000:2000], y[1000:2000]
        )
        assert np.isfinite(pp.predict(X[2000:2500]))
    lr = LogisticRegression().fit(np.nan_to_num(X[:1000]), y[:1000])
    with pytest.raises(ValueError, match="NaN"):  # the black box's own error
        PerformancePredictor(lr).fit(X[1000:2000], y[1000:2000])


def test_bad_scores_and_labels(task):
    X, y, model = task
    S = model.predict_proba(X[:100])
    S_nan = S.copy()
    S_nan[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        PerformancePredictor(method="confidence").fit(S_nan, y[:100])
    with pytest.raises(ValueError, match="single class"):
        PerformancePredictor(model).fit(X[:100], np.ones(100, dtype=int))
    with pytest.raises(ValueError, match="rows"):
        PerformancePredictor().fit(X[:100], y[:100], scores=S[:50])
    with pytest.raises(ValueError, match="no scores"):
        PerformancePredictor().fit(None, y[:100])
    with pytest.raises(ValueError, match="predict_proba"):
        PerformancePredictor(SVC().fit(X[:200], y[:200])).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="method"):
        PerformancePredictor(method="magic").fit(S, y[:100])


def test_a_reference_without_errors_falls_back_to_a_smoothed_rate():
    rng = np.random.default_rng(0)
    S = np.column_stack([np.zeros(50), np.ones(50)])
    S[:25] = S[:25, ::-1]
    y = S.argmax(axis=1)
    with pytest.warns(SkassessWarning, match="right on every reference row"):
        pp = PerformancePredictor(method="meta_model").fit(rng.normal(size=(50, 2)), y, scores=S)
    assert pp.constant_ == pytest.approx(51 / 52)
    assert pp.predict(rng.normal(size=(5, 2)), scores=S[:5]) == pytest.approx(51 / 52)
    # the score-only methods need no fallback
    assert PerformancePredictor(method="confidence").fit(S, y).predict(S) == 1.0
    # one wrong row can be learned from or held out for calibration, not both
    y1 = y.copy()
    y1[0] = 1 - y1[0]
    with pytest.warns(SkassessWarning, match="right on every reference row but one"):
        pp = PerformancePredictor(method="meta_model").fit(rng.normal(size=(50, 2)), y1, scores=S)
    assert pp.constant_ == pytest.approx(50 / 52)


def test_pickle_clone_and_grid_search(task):
    import pickle

    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    X, y, model = task
    S = model.predict_proba(X)
    pp = PerformancePredictor(method="meta_model", random_state=0).fit(
        X[:800], y[:800], scores=S[:800]
    )
    again = pickle.loads(pickle.dumps(pp))
    assert again.predict(X[900:1300], scores=S[900:1300]) == pp.predict(
        X[900:1300], scores=S[900:1300]
    )
    assert clone(pp).get_params() == pp.get_params()
    # users can choose a score-only method by cross-validation (X = scores)
    search = GridSearchCV(
        PerformancePredictor(), {"method": ["confidence", "doc", "atc"]}, cv=3
    ).fit(S[1000:2500], y[1000:2500])
    assert search.best_params_["method"] in {"confidence", "doc", "atc"}
    assert search.best_score_ <= 0


@pytest.mark.parametrize("method", ["confidence", "meta_model"])
def test_predict_on_dask_partitions_is_the_in_memory_prediction(method):
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X_tr, X_ref, y_tr, y_ref = train_test_split(X, y, random_state=0)
    model = LogisticRegression(max_iter=5000).fit(X_tr, y_tr)
    pp = PerformancePredictor(model, method=method, random_state=0).fit(X_ref, y_ref)
    parts = dd.from_pandas(X_tr, npartitions=4)
    with dask.config.set(scheduler="sync"):
        assert pp.predict(parts) == pytest.approx(pp.predict(X_tr), rel=1e-12)
        if method == "confidence":
            assert pp.intrinsic_uncertainty(parts) == pytest.approx(
                pp.intrinsic_uncertainty(X_tr), rel=1e-12
            )
        else:
            with pytest.raises(ValueError, match="has no intrinsic uncertainty"):
                pp.intrinsic_uncertainty(parts)


def test_empty_partitions_of_a_filtered_frame_add_nothing():
    """frame[frame.label.isna()] leaves empty partitions: predict and score skip them."""
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = LogisticRegression(max_iter=5000).fit(X[:200], y[:200])
    pp = PerformancePredictor(model, method="confidence", random_state=0).fit(
        X[200:350], y[200:350]
    )
    frame = X[350:].assign(label=y[350:].astype(float))
    frame.loc[frame.index[:60], "label"] = np.nan  # the first partition: all unlabeled
    parts = dd.from_pandas(frame, npartitions=4)
    kept = parts[~parts.label.isna()]
    assert (kept.map_partitions(len).compute() == 0).any()
    features = kept.drop(columns="label")
    memory = frame[frame.label.notna()]
    with dask.config.set(scheduler="sync"):
        got = pp.predict(features)
        assert got == pytest.approx(pp.predict(memory.drop(columns="label")), rel=1e-12)
        expected = pp.score(memory.drop(columns="label"), memory.label.astype(int))
        assert pp.score(features, kept.label.astype(int)) == pytest.approx(expected, rel=1e-12)

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor
from skassess.meta._calibrated_scores import CalibratedScoresMethod
from skassess.meta._predictor import meta_model_part


@pytest.fixture(scope="module")
def task():
    X, y = make_classification(
        3000, n_features=8, n_informative=5, n_classes=3, flip_y=0.05, random_state=0
    )
    model = LogisticRegression(max_iter=2000).fit(X[:1000], y[:1000])
    return X, y, model


def test_calibrated_scores_is_unbiased_under_a_shift_in_the_scores():
    # labels drawn from the scores, the batch drawn toward the least sure rows: the
    # scores' chance of being right is unchanged, so the mean calibrated score is unbiased;
    # seeded, 3-SE tolerance
    rng = np.random.default_rng(2)
    errors = []
    for _ in range(100):
        p1 = rng.beta(2, 2, size=3000)
        S = np.column_stack([1 - p1, p1])
        y = (rng.random(3000) < p1).astype(int)
        top = S.max(axis=1)
        w = np.exp(-6 * top)
        batch = 1000 + rng.choice(2000, 500, replace=False, p=w[1000:] / w[1000:].sum())
        pp = PerformancePredictor(method="calibrated_scores").fit(S[:1000], y[:1000])
        errors.append(pp.predict(S[batch]) - (S[batch].argmax(1) == y[batch]).mean())
    errors = np.asarray(errors)
    assert abs(errors.mean()) < 3 * errors.std() / np.sqrt(errors.size)


def test_a_binary_black_box_keeps_each_predictions_calibration():
    # class-1 predictions are right 90 % of the time, class-0 ones 60 %, at the same top
    # score: one map of the top score cannot tell them apart, the class-1 score's map does
    rng = np.random.default_rng(0)
    n = 4000
    pred1 = rng.random(n) < 0.5
    S = np.where(pred1[:, None], [0.25, 0.75], [0.75, 0.25])
    right = rng.random(n) < np.where(pred1, 0.9, 0.6)
    y = np.where(right, S.argmax(1), 1 - S.argmax(1))
    pp = PerformancePredictor(method="calibrated_scores").fit(S, y)
    p = pp.predict_correctness(S[:2])
    expected = [right[~pred1].mean() if not pred1[i] else right[pred1].mean() for i in range(2)]
    np.testing.assert_allclose(p, expected, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    n_classes=st.integers(3, 6),
    seed=st.integers(0, 2**16),
)
def test_calibrated_class_probabilities_are_a_distribution(n_classes, seed):
    rng = np.random.default_rng(seed)
    S = rng.dirichlet(np.ones(n_classes), size=200)
    y = rng.integers(0, n_classes - 1, size=200)  # the last class never occurs
    method = CalibratedScoresMethod().fit(None, None, scores=S, codes=y)
    C = method.calibrated(rng.dirichlet(np.ones(n_classes), size=50))
    assert np.all(C >= 0) and np.allclose(C.sum(axis=1), 1.0)
    p = method.rows(None, scores=S)["p"]
    assert np.all((p >= 0) & (p <= 1))


def test_combined_is_the_row_mean_of_its_two_predictors(task):
    X, y, model = task
    ref, batch = slice(1000, 2000), slice(2000, 2400)
    fit = {
        m: PerformancePredictor(model, method=m, random_state=3, progress=False).fit(X[ref], y[ref])
        for m in ("combined", "meta_model", "calibrated_scores")
    }
    p = {m: pp.predict_correctness(X[batch]) for m, pp in fit.items()}
    np.testing.assert_allclose(
        p["combined"], 0.5 * (p["meta_model"] + p["calibrated_scores"]), atol=1e-12
    )
    # its meta-model, taken out, is the meta-model
    part = meta_model_part(fit["combined"])
    np.testing.assert_allclose(part.predict_correctness(X[batch]), p["meta_model"], atol=1e-12)
    assert fit["combined"].method == "combined"  # the part is a copy


def test_row_features_of_a_method_that_reads_scores_need_the_scores(task):
    X, y, model = task
    pp = PerformancePredictor(model, random_state=0, progress=False).fit(X[1000:2000], y[1000:2000])
    assert pp.method == "combined"  # the default
    rows = pp.predict_rows(X[2000:2100])
    with pytest.raises(ValueError, match="method 'combined' reads the black box's scores"):
        pp.predict_rows(row_features=rows.Z)
    again = pp.predict_rows(row_features=rows.Z, scores=rows.scores)
    np.testing.assert_array_equal(again.p, rows.p)
    with pytest.raises(ValueError, match="row_features has 100 rows but scores has 99"):
        pp.predict_rows(row_features=rows.Z, scores=rows.scores[:99])
    with pytest.raises(ValueError, match="Pass row_features or X, not both"):
        pp.predict_rows(X[2000:2100], row_features=rows.Z)


def test_meta_model_part_needs_a_combined_predictor(task):
    X, y, model = task
    pp = PerformancePredictor(model, method="confidence").fit(X[1000:2000], y[1000:2000])
    with pytest.raises(ValueError, match="predictor.method is 'confidence', not 'combined'"):
        meta_model_part(pp)


def test_the_regressor_reads_the_uncertainty_inputs_from_the_combined_meta_model(task):
    X, y, model = task
    ref, batch = slice(1000, 2000), slice(2000, 2500)
    pirs = {
        m: PerformanceIntervalRegressor(
            PerformancePredictor(model, method=m), random_state=0, progress=False
        ).fit(X[ref], y[ref])
        for m in ("combined", "meta_model")
    }
    assert pirs["combined"].shared_.method == "meta_model"
    assert pirs["combined"].shared_.features_ is pirs["combined"].predictor_.features_
    # what the batch summary is given (also on Dask workers, where each object of the
    # tuple is serialized on its own): the UM reads the combined predictor's own rows
    assert pirs["combined"]._models()[1] is None
    got = {m: pir.predict_batch(X[batch]) for m, pir in pirs.items()}
    assert got["combined"].accuracy == pytest.approx(
        pirs["combined"].predictor_.predict(X[batch]), abs=1e-12
    )
    # the inputs that do not read the predictor's own rows are the meta-model's; its
    # meta-model is a peer like the others
    own = {
        "predicted_change",
        "predicted_accuracy",
        "prediction_sd",
        "prediction_entropy",
        "prediction_halfwidth",
        "intrinsic",
        "calibration_change",
        "calibration_change_abs",
        "drift_x_iw_gap",
        "drift_z_iw_gap",
    }
    c, m = got["combined"].features, got["meta_model"].features
    for k in m:
        if k not in own and k not in ("peer_confidence", "peer_atc", "peer_doc", "peer_meta_model"):
            assert c[k] == pytest.approx(m[k]), k
    for peer in ("confidence", "atc", "doc", "meta_model"):
        assert c[f"peer_{peer}"] - m[f"peer_{peer}"] == pytest.approx(
            got["combined"].accuracy - got["meta_model"].accuracy
        )

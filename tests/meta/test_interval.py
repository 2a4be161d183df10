import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skassess.meta import (
    PerformanceIntervalRegressor,
    PerformancePredictor,
    interval_cost,
)
from skassess.meta._quantile_model import (
    LEVELS,
    QuantileEnsemble,
    calibrate_quantiles,
    drift_strength,
    fit_common_scale,
    fit_scales,
    fit_stratified_scales,
    fit_stratum_factors,
)
from skassess.meta._um_features import SHARED_FEATURES, UM_FEATURES, batch_features


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-0.5, 0.5), min_size=5, max_size=60), st.floats(0.5, 0.95))
def test_the_cost_is_minimized_at_the_error_quantile(errors, alpha):
    d = np.abs(np.asarray(errors))
    grid = np.linspace(0, 0.6, 601)
    costs = np.array([interval_cost(d, u, alpha) for u in grid])
    best = grid[costs.argmin()]
    # the pinball loss is minimized by an alpha-quantile of |e|: no grid point does better
    cost_q = interval_cost(d, np.quantile(d, alpha, method="inverted_cdf"), alpha)
    assert cost_q <= costs.min() + 1e-12
    assert costs.min() <= interval_cost(d, best + 0.01, alpha)


def test_fit_scales_reaches_the_coverage():
    rng = np.random.default_rng(0)
    sd = rng.uniform(0.01, 0.05, size=4000)
    err = rng.normal(0, sd)
    s = fit_scales(err, np.column_stack([sd] * len(LEVELS)))
    for a, k in zip(LEVELS, s, strict=True):
        cover = np.mean(np.abs(err) <= k * sd)
        assert abs(cover - a) < 0.03  # 4000 draws: binomial SE <= 0.008


@pytest.mark.parametrize("truth", [0.4, 1.0, 2.5])
def test_common_scale_undoes_a_too_wide_or_too_narrow_model(truth):
    # calibrated quantiles of a normal error whose sd is `truth` times the assumed one:
    # one factor over every level finds `truth` back, and the coverage follows
    from scipy.stats import norm

    rng = np.random.default_rng(1)
    sd = rng.uniform(0.01, 0.05, size=3000)
    err = rng.normal(0, truth * sd)
    Q = sd[:, None] * norm.ppf((1 + np.asarray(LEVELS)) / 2)[None, :]
    s = fit_common_scale(err, Q)
    assert abs(s / truth - 1) < 0.08  # 3000 draws: the pooled quantiles' SE is about 3 %
    for j in (0, 6, 9):
        cover = np.mean(np.abs(err) <= s * Q[:, j])
        assert abs(cover - LEVELS[j]) < 0.03


def test_stratum_factors_shrink_to_the_common_one_where_scenarios_are_few():
    # errors twice as wide as assumed in the high stratum, as assumed elsewhere; the
    # middle stratum has no scenario and takes the factor of all scenarios
    from scipy.stats import norm

    rng = np.random.default_rng(2)
    edges = np.array([0.6, 0.8])
    strength = np.r_[rng.uniform(0.5, 0.6, 3000), rng.uniform(0.8, 1.0, 3000)]
    sd = rng.uniform(0.01, 0.05, size=strength.size)
    err = rng.normal(0, sd * np.where(strength > 0.8, 2.0, 1.0))
    Q = sd[:, None] * norm.ppf((1 + np.asarray(LEVELS)) / 2)[None, :]
    f = fit_stratum_factors(err, Q, strength, edges)
    common = fit_common_scale(err, Q)
    assert f.shape == (3,)
    assert f[1] == pytest.approx(common)
    # 3000 scenarios against a prior of 20: each stratum's own factor, within 8 %
    assert abs(f[0] - 1) < 0.08 and abs(f[2] / 2 - 1) < 0.08
    # a handful of scenarios moves a stratum only part of the way from the common factor
    few = np.r_[np.flatnonzero(strength <= 0.6), np.flatnonzero(strength > 0.8)[:5]]
    g = fit_stratum_factors(err[few], Q[few], strength[few], edges)
    own = fit_common_scale(err[few][-5:], Q[few][-5:])
    low, high = sorted((fit_common_scale(err[few], Q[few]), own))
    assert low < g[2] < high


def test_stratified_scales_reach_the_coverage_in_every_stratum():
    # the model's half-width is right on average but too wide where drift is weak and too
    # narrow where it is strong: one scale per level cannot fix both, one per stratum does
    rng = np.random.default_rng(0)
    strength = rng.uniform(0.5, 1.0, size=6000)
    sd = rng.uniform(0.01, 0.05, size=strength.size)
    err = rng.normal(0, sd * (0.5 + 2 * (strength - 0.5)))
    U = np.column_stack([sd] * len(LEVELS))
    edges, scales = fit_stratified_scales(err, U, strength, n_strata=3)
    assert scales.shape == (3, len(LEVELS)) and edges.shape == (2,)
    np.testing.assert_allclose(edges, [2 / 3, 5 / 6], atol=0.02)  # terciles of U(0.5, 1)
    assert np.all(scales[0] < scales[1]) and np.all(scales[1] < scales[2])
    j = LEVELS.index(0.9)
    q = np.array(
        [calibrate_quantiles(u, s, scales, edges) for u, s in zip(U, strength, strict=True)]
    )
    stratum = np.searchsorted(edges, strength, side="right")
    for s in range(3):  # 2000 draws a stratum: binomial SE <= 0.007
        assert abs(np.mean(np.abs(err[stratum == s]) <= q[stratum == s, j]) - 0.9) < 0.03
    # a single scale over all strata misses in the outer ones
    single = fit_scales(err, U)
    assert np.mean(np.abs(err[stratum == 2]) <= single[j] * sd[stratum == 2]) < 0.85


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.0, 0.2), min_size=10, max_size=10),
    st.floats(0.4, 1.0),
    st.lists(st.floats(0.1, 10.0), min_size=30, max_size=30),
)
def test_calibrated_quantiles_are_non_decreasing_and_pick_the_stratum(q, strength, flat):
    scales = np.reshape(flat, (3, 10))
    edges = np.array([0.6, 0.8])
    out = calibrate_quantiles(q, strength, scales, edges)
    assert np.all(np.diff(out) >= 0)
    s = 0 if strength < 0.6 else 1 if strength < 0.8 else 2
    np.testing.assert_allclose(out, np.maximum.accumulate(np.asarray(q) * scales[s]))
    # one stratum: no edges
    np.testing.assert_allclose(
        calibrate_quantiles(q, strength, scales[:1]),
        np.maximum.accumulate(np.asarray(q) * scales[0]),
    )


def test_drift_strength_is_the_larger_drift_accuracy():
    assert drift_strength({"drift_x_accuracy": 0.7, "drift_z_accuracy": 0.55}) == 0.7
    assert drift_strength({"drift_x_accuracy": np.nan, "drift_z_accuracy": 0.55}) == 0.55
    assert drift_strength({"drift_x_accuracy": np.nan, "drift_z_accuracy": np.nan}) == 0.5
    assert drift_strength({}) == 0.5


def test_quantile_ensemble_learns_heteroscedastic_quantiles_and_round_trips():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, size=(3000, 2))
    target = np.abs(rng.normal(0, 0.01 + 0.1 * x[:, 0]))
    qe = QuantileEnsemble(n_models=2, n_estimators=100, random_state=0).fit(x, target)
    q = qe.predict(x)
    assert np.all(np.diff(q, axis=1) >= 0) and np.all(q >= 0)
    j = LEVELS.index(0.9)
    hi, lo = x[:, 0] > 0.8, x[:, 0] < 0.2
    assert q[hi, j].mean() > 3 * q[lo, j].mean()  # the width follows the noise
    cover = np.mean(target <= q[:, j])
    assert 0.85 < cover < 0.95
    again = QuantileEnsemble.from_dict(qe.to_dict())
    np.testing.assert_allclose(again.predict(x[:50]), q[:50], rtol=1e-6)


def test_feature_names_match_what_is_computed():
    rng = np.random.default_rng(0)
    d = {"Z": rng.random((40, 10)), "pred": rng.integers(0, 3, 40), "F": rng.random((40, 4))}
    rows = {
        "p": rng.random(40),
        "u": rng.random(40),
        "raw": rng.random(40),
        "members": rng.random((3, 40)),
    }
    feats = batch_features(d, d, rows, 0.7, importances=np.array([0.1, 0.5, 0.2, 0.2]), seed=0)
    assert set(feats) == set(UM_FEATURES)
    assert set(SHARED_FEATURES) < set(UM_FEATURES)
    # no features, no proxies: those inputs are NaN, the others finite
    d0 = {"Z": rng.random((40, 4)), "pred": rng.integers(0, 3, 40), "F": None}
    feats = batch_features(d0, d0, rows, 0.7, seed=0)
    assert np.isnan(feats["pca_ks"]) and np.isnan(feats["lr_top_ks"])
    assert np.isfinite(feats["base_top_ks"]) and feats["base_top_ks"] == 0.0


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(3000, n_features=6, n_informative=4, flip_y=0.05, random_state=0)
    model = LogisticRegression(max_iter=1000).fit(X[:800], y[:800])
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(model, method="confidence"),
        uncertainty_model="fit",
        n_scenarios=20,
        n_models=2,
        random_state=0,
    )
    return pir.fit(X[800:2000], y[800:2000]), X, y, model


@pytest.mark.slow
def test_interval_regressor_predicts_an_interval(fitted):
    pir, X, y, model = fitted
    out = pir.predict(X[2000:2400])
    assert isinstance(out, pd.Series)
    assert out["lower"] <= out["accuracy"] <= out["upper"]
    wide = pir.predict(X[2000:2400], level=0.95)
    narrow = pir.predict(X[2000:2400], level=0.5)
    assert narrow["upper"] - narrow["lower"] <= wide["upper"] - wide["lower"]
    assert pir.score(X[2000:2400], y[2000:2400]) <= 0
    assert len(pir.scenarios_) >= 10
    assert set(pir.scenarios_["split"]) == {"train", "calibration"}
    # the black box given to the predictor is used as is, not refitted
    assert pir.predictor_.estimator is model


@pytest.mark.slow
def test_interval_regressor_on_scores_only():
    rng = np.random.default_rng(0)
    top = rng.beta(6, 2, size=1500)
    S = np.column_stack([1 - top, top])
    y = (rng.random(1500) < top).astype(int)
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(method="doc"),
        uncertainty_model="fit",
        n_scenarios=15,
        n_models=1,
        random_state=0,
    ).fit(S[:1000], y[:1000])
    out = pir.predict(S[1000:])
    assert 0 <= out["lower"] <= out["upper"] <= 1


@pytest.mark.slow
def test_beta_prior_matches_the_interval(fitted):
    from scipy.stats import beta as beta_dist

    pir, X, _, _ = fitted
    for level in (0.5, 0.8, 0.95):
        a, b = pir.beta_prior(X[2000:2400], level=level)
        out = pir.predict(X[2000:2400], level=level)
        assert a / (a + b) == pytest.approx(out["accuracy"], abs=1e-3)
        lo, hi = beta_dist.interval(level, a, b)
        half = (out["upper"] - out["lower"]) / 2
        assert (hi - lo) / 2 == pytest.approx(half, rel=0.25)  # a Beta is nearly normal here
    with pytest.raises(ValueError, match="level"):
        pir.beta_prior(X[2000:2400], level=0.99)


@pytest.mark.slow
def test_bayesian_accuracy_on_top(fitted):
    pir, X, y, model = fitted
    batch = slice(2000, 2600)
    labels = np.full(600, -1)
    labels[:30] = y[batch][:30]
    a, b = pir.beta_prior(X[batch])
    right = (model.predict(X[batch])[:30] == y[batch][:30]).sum()
    # prior_weight=1: the Beta prior alone, a conjugate update
    est = pir.bayesian_accuracy(X[batch], labels, prior_weight=1.0)
    summary = est.summary()
    assert summary["n_labeled"].iloc[0] == 30
    assert summary["mean"].iloc[0] == pytest.approx((a + right) / (a + b + 30))
    assert est.prior_weight_ == 1.0
    # the default mixture: labels that agree with the prediction keep most of its weight,
    # and the posterior mean is the mixture's
    est = pir.bayesian_accuracy(X[batch], labels)
    assert 0.5 < est.prior_weight_ <= 1.0
    w = est.prior_weight_
    mixture_mean = w * (a + right) / (a + b + 30) + (1 - w) * (1 + right) / (2 + 30)
    assert est.summary()["mean"].iloc[0] == pytest.approx(mixture_mean)
    assert est.summary()["n_labeled"].iloc[0] == 30


@pytest.mark.slow
def test_bayesian_accuracy_falls_back_to_the_labels(fitted):
    # labels that contradict the label-free prediction (every labeled row wrong) move the
    # estimate to the labels alone instead of being outweighed by the prior
    pir, X, y, model = fitted
    batch = slice(2000, 2600)
    pred = model.predict(X[batch])
    labels = np.full(600, -1)
    labels[:40] = 1 - pred[:40]
    a, b = pir.beta_prior(X[batch])
    assert a / (a + b) > 0.6
    est = pir.bayesian_accuracy(X[batch], labels)
    assert est.prior_weight_ < 1e-6
    assert est.summary()["mean"].iloc[0] == pytest.approx(1 / 42, abs=1e-4)  # Beta(1, 41)
    fixed = pir.bayesian_accuracy(X[batch], labels, prior_weight=1.0)
    assert fixed.summary()["mean"].iloc[0] > 0.15  # the prior alone holds it far above


@pytest.mark.slow
@pytest.mark.parametrize("weight", [-0.1, 1.5, "high", None])
def test_bayesian_accuracy_rejects_a_bad_prior_weight(fitted, weight):
    pir, X, _, _ = fitted
    with pytest.raises(ValueError, match=r"prior_weight must be a number in \[0, 1\]"):
        pir.bayesian_accuracy(X[2000:2100], np.full(100, -1), prior_weight=weight)


@pytest.mark.slow
def test_no_pretrained_model_for_a_method(fitted):
    _, X, y, model = fitted
    pir = PerformanceIntervalRegressor(PerformancePredictor(model, method="atc"))
    with pytest.raises(ValueError, match="no pretrained uncertainty model for method 'atc'"):
        pir.fit(X[800:1200], y[800:1200])


@pytest.mark.slow
def test_many_levels_in_one_call(fitted):
    pir, X, _, _ = fitted
    levels = [0.3, 0.5, 0.8, 0.95, 0.99, 0.997]
    out = pir.predict(X[2000:2400], level=levels)
    assert list(out["level"]) == levels
    width = (out["upper"] - out["lower"]).to_numpy()
    assert np.all(np.diff(width) >= 0) and width[-1] > width[3]
    batch = pir.predict_batch(X[2000:2400])
    assert batch.accuracy == pytest.approx(out["accuracy"].iloc[0])
    assert batch.correctness.shape == batch.y_pred.shape == (400,)
    assert batch.error_quantiles.shape == (10,) and "drift_z_accuracy" in batch.features
    for level in (0.5, 0.95, 0.99):  # one level: the same row as in the table
        one = pir.predict(X[2000:2400], level=level)
        row = out.loc[out["level"] == level].iloc[0]
        assert one["lower"] == pytest.approx(row["lower"])
        assert one["upper"] == pytest.approx(row["upper"])


@pytest.mark.slow
def test_one_row_batch_gets_an_interval(fitted):
    pir, X, _, _ = fitted
    out = pir.predict(X[2000:2001])
    assert 0 <= out["lower"] <= out["accuracy"] <= out["upper"] <= 1


@pytest.mark.slow
def test_interval_regressor_bad_input(fitted):
    pir, X, y, _ = fitted
    for bad in (1.0, 0.0, [0.8, 1.2], [], "0.9", ["0.9"], True, [[0.9]]):
        with pytest.raises(ValueError, match="level must be a number in \\(0, 1\\)"):
            pir.predict(X[2000:2100], level=bad)
    with pytest.raises(ValueError, match="'level' parameter"):
        PerformanceIntervalRegressor(level=1.0).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="5 columns"):
        pir.predict(X[2000:2100, :5])


@pytest.mark.slow
@pytest.mark.parametrize("method", ["meta_model", "confidence"])
def test_pretrained_uncertainty_model(method):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    model = LogisticRegression(max_iter=5000).fit(X[:250], y[:250])
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(model, method=method), random_state=0
    ).fit(X[250:450], y[250:450])
    assert len(pir.pretrained_info_["datasets"]) >= 10
    assert not hasattr(pir, "scenarios_")
    out = pir.predict(X[450:])
    assert 0 <= out["lower"] <= out["accuracy"] <= out["upper"] <= 1
    q = pir.predict_batch(X[450:]).error_quantiles
    assert np.all(np.diff(q) >= 0) and q[0] > 0


@pytest.mark.slow
def test_recalibrated_scales_the_shipped_model():
    from sklearn.datasets import load_breast_cancer

    from skassess.meta._pretrained import load_pretrained

    X, y = load_breast_cancer(return_X_y=True)
    model = LogisticRegression(max_iter=5000).fit(X[:200], y[:200])
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(model, method="confidence"),
        uncertainty_model="recalibrated",
        n_scenarios=12,
        random_state=0,
        progress=False,
    ).fit(X[200:450], y[200:450])
    _, scales, edges, _ = load_pretrained("confidence")
    f = pir.recalibration_factor_
    assert f.shape == (len(edges) + 1,) and np.all((0.1 <= f) & (f <= 10))
    np.testing.assert_allclose(pir.scales_, scales * f[:, None])
    np.testing.assert_array_equal(pir.drift_edges_, edges)
    assert set(pir.scenarios_["split"]) == {"calibration"} and len(pir.scenarios_) >= 10
    # each scenario's reference is half the rows; its batch comes from the other half
    assert pir.scenarios_["n_reference"].max() <= 125
    shipped = PerformanceIntervalRegressor(
        PerformancePredictor(model, method="confidence"), random_state=0
    ).fit(X[200:450], y[200:450])
    a, b = pir.predict(X[450:], level=0.9), shipped.predict(X[450:], level=0.9)
    assert a["accuracy"] == b["accuracy"]
    assert 0 < min(a["lower"], b["lower"])  # the lower ends are not clipped
    # the batch's half-width is the shipped one times the factor of its drift stratum
    ratio = (a["accuracy"] - a["lower"]) / (b["accuracy"] - b["lower"])
    assert np.isclose(ratio, f, rtol=1e-9).sum() >= 1


@pytest.mark.slow
def test_recalibrated_skips_scenarios_where_the_black_box_never_errs():
    # 4 wrong predictions among 300 rows: many scenario references (random halves) hold none,
    # and the meta-model cannot learn from them; those scenarios are skipped, not fatal
    rng = np.random.default_rng(3)
    top = rng.uniform(0.9, 1.0, size=300)
    y = np.ones(300, dtype=int)
    y[:4] = 0
    S = np.column_stack([1 - top, top])
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(method="confidence"),
        uncertainty_model="recalibrated",
        n_scenarios=40,
        random_state=0,
        progress=False,
    ).fit(S, y)
    assert 10 <= len(pir.scenarios_) < 40


def test_recalibrated_refuses_scores_that_never_vary():
    # hard 0/1 scores: the confidence and entropy the drift is skewed along are constant
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    hard = np.where(rng.uniform(size=300) < 0.8, y, 1 - y).astype(float)
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(method="confidence"),
        uncertainty_model="recalibrated",
        n_scenarios=12,
        random_state=0,
        progress=False,
    )
    with pytest.raises(ValueError, match=r"uncertainty_model='recalibrated'.*constant"):
        pir.fit(np.column_stack([1 - hard, hard]), y)


def test_missing_xgboost_names_the_extra(monkeypatch):
    import sys

    from skassess.meta._xgboost import import_xgboost

    monkeypatch.setitem(sys.modules, "xgboost", None)  # makes "import xgboost" fail
    with pytest.raises(ImportError, match=r"skassess\[meta\]"):
        import_xgboost()


def test_pretrained_models_check_their_reference_predictions(monkeypatch):
    """Each shipped model reproduces its stored predictions; a changed one is refused."""
    import copy

    import xgboost

    from skassess.meta import _pretrained

    for method in _pretrained.pretrained_methods():
        model, scales, edges, info = _pretrained.load_pretrained(method)  # runs the check
        assert scales.shape == (edges.size + 1, 10)
        payload = _pretrained._read(method)
        if "boosters_from" in payload:  # checked with the file whose boosters it shares
            continue
        assert len(payload["check"]["inputs"]) == 64
        got = model.predict(np.asarray(payload["check"]["inputs"]))
        np.testing.assert_allclose(
            got,
            payload["check"]["predictions"],
            rtol=_pretrained.CHECK_RTOL,
            atol=_pretrained.CHECK_ATOL,
        )
        # what an xgboost that predicts other quantiles would give
        broken = copy.deepcopy(payload)
        broken["check"]["predictions"] = (np.asarray(got) * 0.5).tolist()
        monkeypatch.setattr(_pretrained, "_read", lambda m, b=broken: b)
        with pytest.raises(
            _pretrained.PretrainedModelError,
            match=rf"under xgboost {xgboost.__version__} .*xgboost >= 3.1",
        ):
            _pretrained.load_pretrained(method)
        monkeypatch.undo()


@pytest.mark.slow
def test_coverage_is_a_deprecated_alias_of_level(fitted):
    pir, X, _, _ = fitted
    with pytest.warns(FutureWarning, match=r"predict\(coverage=\.\.\.\) is deprecated"):
        old = pir.predict(X[2000:2400], coverage=0.8)
    pd.testing.assert_series_equal(old, pir.predict(X[2000:2400], level=0.8))
    renamed = clone(pir).set_params(coverage=0.8)
    with pytest.warns(FutureWarning, match=r"PerformanceIntervalRegressor\(coverage=\.\.\.\)"):
        assert renamed._level() == 0.8


def test_a_predictor_of_the_scores_alone_gets_the_shipped_scales_of_that_case():
    from sklearn.datasets import load_breast_cancer

    from skassess.meta import _pretrained

    payload = _pretrained._read(PerformancePredictor().method)  # the default's scales
    assert "scales_scores" in payload  # written by benchmarks/fit_um_scales.py --inputs scores
    X, y = load_breast_cancer(return_X_y=True)
    model = LogisticRegression(max_iter=5000).fit(X[:250], y[:250])
    with_features = PerformanceIntervalRegressor(
        PerformancePredictor(model), random_state=0, progress=False
    ).fit(X[250:450], y[250:450])
    scores_alone = PerformanceIntervalRegressor(random_state=0, progress=False).fit(
        model.predict_proba(X[250:450]), y[250:450]
    )
    np.testing.assert_array_equal(with_features.scales_, payload["scales"])
    np.testing.assert_array_equal(with_features.drift_edges_, payload["drift_edges"])
    np.testing.assert_array_equal(scores_alone.scales_, payload["scales_scores"])
    np.testing.assert_array_equal(scores_alone.drift_edges_, payload["drift_edges_scores"])
    # the same boosters; a file without scores' scales gives the features' ones
    assert scores_alone.uncertainty_model_ is not None
    _, scales, edges, _ = _pretrained.load_pretrained("confidence", inputs="scores")
    conf = _pretrained._read("confidence")
    np.testing.assert_array_equal(scales, conf.get("scales_scores", np.atleast_2d(conf["scales"])))


def test_combined_shares_the_meta_models_boosters_with_its_own_scales():
    from skassess.meta import _pretrained

    assert {"combined", "meta_model"} <= set(_pretrained.pretrained_methods())
    for inputs in ("features", "scores"):
        combined = _pretrained.load_pretrained("combined", inputs)
        meta = _pretrained.load_pretrained("meta_model", inputs)
        x = np.asarray(_pretrained._read("meta_model")["check"]["inputs"])
        np.testing.assert_array_equal(combined[0].predict(x), meta[0].predict(x))
        assert combined[1].shape == (combined[2].size + 1, 10)
        assert combined[3]["xgboost"] == meta[3]["xgboost"]  # what the boosters were made with

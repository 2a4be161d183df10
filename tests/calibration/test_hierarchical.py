"""HierarchicalBetaCalibrator: recovery, diagnostics, transform contract, bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from skassess import BayesianAccuracy
from skassess.calibration import EmceeSampler, HierarchicalBetaCalibrator, NUTSSampler
from skassess.exceptions import ConvergenceWarning, SkassessWarning

TRUE = {"A": (2.0, 1.5, -0.5), "B": (1.2, 0.8, 0.4)}


def _simulate(n_per_group=600, seed=0):
    rng = np.random.default_rng(seed)
    s, y, g = [], [], []
    for group, (a, b, c) in TRUE.items():
        si = rng.uniform(0.02, 0.98, n_per_group)
        p = expit(c + a * np.log(si) - b * np.log1p(-si))
        s.append(si)
        y.append((rng.uniform(size=n_per_group) < p).astype(int))
        g.append(np.full(n_per_group, group))
    return np.concatenate(s), np.concatenate(y), np.concatenate(g)


@pytest.fixture(scope="module")
def fitted():
    s, y, g = _simulate()
    return HierarchicalBetaCalibrator(random_state=0).fit(s, y, group_by=g), (s, y, g)


@pytest.mark.slow
def test_recovers_known_parameters_within_credible_intervals(fitted):
    cal, _ = fitted
    table = cal.summary(level=0.99)
    for group, values in TRUE.items():
        for name, value in zip("abc", values, strict=True):
            row = table.loc[f"{name}[{group}]"]
            assert row["lower"] <= value <= row["upper"], (group, name, row.to_dict())


def test_diagnostics_meet_the_defaults(fitted):
    cal, _ = fitted
    assert cal.rhat_.max() <= 1.01
    assert cal.ess_.min() >= 400
    assert set(cal.rhat_.index) >= {"a[A]", "c[B]", "mu_a", "mu_c"}
    assert "sigma_c" in cal.hyper_draws_.columns
    assert list(cal.groups_) == ["A", "B"]
    np.testing.assert_array_equal(cal.n_labeled_, [600, 600])


@pytest.mark.slow
def test_draws_kept_across_checks_are_those_of_the_whole_chain(monkeypatch):
    """Each convergence check after more steps computes only the new steps' draws; the
    joined draws are those of the whole chain, in its order, and each mu draw belongs
    to its sample (mu given the groups' c is centred near their mean)."""
    s, y, g = _simulate(n_per_group=40)
    seen = []
    constrained = HierarchicalBetaCalibrator._constrained

    def spy(self, chain, rng):
        seen.append(chain.shape[1])
        return constrained(self, chain, rng)

    monkeypatch.setattr(HierarchicalBetaCalibrator, "_constrained", spy)
    sampler = EmceeSampler(n_burn=50, n_steps=40, max_steps=400, target_ess=10**6, progress=False)
    cal = HierarchicalBetaCalibrator(sampler=sampler, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cal.fit(s, y, group_by=g)
    assert seen == [40, 20, 30, 45, 67, 101, 97]  # 40 steps, then each check's new ones
    monkeypatch.undo()
    # the same fit with every check on the whole chain (no chain seen is a prefix)
    whole = HierarchicalBetaCalibrator(sampler=sampler, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monkeypatch.setattr(np, "array_equal", lambda a, b: False)
        whole.fit(s, y, group_by=g)
    monkeypatch.undo()
    np.testing.assert_array_equal(cal.draws_, whole.draws_)
    assert len(cal.hyper_draws_) == len(cal.draws_)
    c_mean = cal.draws_[:, :, 2].mean(axis=1)
    assert np.corrcoef(cal.hyper_draws_["mu_c"], c_mean)[0, 1] > 0.5


def test_transform_and_sample_shapes(fitted):
    cal, (s, y, g) = fitted
    out = cal.transform(s[:50], group_by=g[:50])
    assert type(out) is np.ndarray and out.shape == (50, 1)
    assert list(cal.get_feature_names_out()) == ["proba_1"]
    p = out[:, 0]
    with pytest.raises(
        ValueError, match="X has 2 features, but HierarchicalBetaCalibrator is expecting 1"
    ):
        cal.transform(np.column_stack([1 - s[:50], s[:50]]), group_by=g[:50])
    draws = cal.sample(s[:50], group_by=g[:50], n_draws=200)
    assert draws.shape == (200, 50)
    np.testing.assert_allclose(cal.sample(s[:50], group_by=g[:50]).mean(axis=0), p)
    # Posterior-mean calibrated probabilities are close to the true map.
    a, b, c = TRUE["A"]
    truth = expit(c + a * np.log(s[:50]) - b * np.log1p(-s[:50]))
    assert np.abs(p - truth).max() < 0.08


@pytest.mark.slow
def test_restricted_maps_are_the_stated_restrictions():
    s, y, g = _simulate(300)
    llo = HierarchicalBetaCalibrator("llo", random_state=0).fit(s, y, group_by=g)
    np.testing.assert_array_equal(llo.draws_[..., 0], llo.draws_[..., 1])
    temp = HierarchicalBetaCalibrator("temperature", random_state=0).fit(s, y, group_by=g)
    np.testing.assert_array_equal(temp.draws_[..., 0], temp.draws_[..., 1])
    assert np.all(temp.draws_[..., 2] == 0)
    assert "c[A]" not in temp.rhat_.index and "b[A]" not in llo.rhat_.index


@pytest.mark.slow
def test_a_group_without_labels_takes_the_population_level():
    s, y, g = _simulate(400)
    s = np.concatenate([s, np.linspace(0.05, 0.95, 50)])
    g = np.concatenate([g, np.full(50, "C")])
    y = np.concatenate([y, np.full(50, -1)])
    cal = HierarchicalBetaCalibrator(random_state=0).fit(s, y, group_by=g)
    assert cal.n_labeled_.tolist() == [400, 400, 0]
    c_new = cal.draws_[:, 2, 2]
    mu_c = cal.hyper_draws_["mu_c"].to_numpy()
    # c_C = mu_c + sigma_c z with z ~ N(0, 1) a priori: same mean, wider spread.
    assert abs(c_new.mean() - mu_c.mean()) < 0.1
    assert c_new.std() > mu_c.std()


def _top_label_data():
    rng = np.random.default_rng(1)
    X = rng.dirichlet(np.full(3, 0.4), size=600)
    pred = X.argmax(axis=1)
    correct = rng.uniform(size=600) < X.max(axis=1) ** 3  # over-confident
    y = np.where(correct, pred, (pred + 1) % 3)
    y_obs = np.where(np.arange(600) < 200, y, -1)
    return X, pred, y_obs


@pytest.mark.slow
def test_top_label_output_is_explicit_and_the_prediction_travels_as_y_pred():
    X, pred, y_obs = _top_label_data()
    cal = HierarchicalBetaCalibrator(random_state=0)
    Xt = cal.fit_transform(X, y_obs)
    assert cal.target_ == "top_label" and list(cal.groups_) == [0, 1, 2]
    assert type(Xt) is np.ndarray  # no hidden data: what np.asarray sees is all there is
    assert list(cal.get_feature_names_out()) == ["proba_0", "proba_1", "proba_2"]
    np.testing.assert_allclose(Xt.sum(axis=1), 1.0)
    conf = Xt[np.arange(600), pred]
    assert conf.mean() < X.max(axis=1).mean() - 0.05  # the map lowers the confidence
    # The assessment judges the black box's predictions, passed explicitly.
    est = BayesianAccuracy(prior="informative").fit(Xt, y_obs, y_pred=pred)
    expected = [conf[pred == k].mean() for k in range(3)]
    np.testing.assert_allclose(est.prior_.mean(), expected, rtol=1e-6)
    raw = BayesianAccuracy(prior="informative").fit(X, y_obs)
    np.testing.assert_array_equal(est.n_success_, raw.n_success_)
    np.testing.assert_array_equal(est.n_rows_, raw.n_rows_)
    # np.asarray changes nothing; y_pred (not the argmax) decides what is assessed.
    again = BayesianAccuracy(prior="informative").fit(np.asarray(Xt), y_obs, y_pred=pred)
    pd.testing.assert_frame_equal(again.summary(), est.summary())


def test_set_output_pandas_names_the_columns():
    X, pred, y_obs = _top_label_data()
    cal = HierarchicalBetaCalibrator(
        random_state=0, sampler=EmceeSampler(n_burn=100, n_steps=100, target_ess=100)
    )
    frame = cal.set_output(transform="pandas").fit_transform(X, y_obs)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["proba_0", "proba_1", "proba_2"]
    np.testing.assert_allclose(frame.to_numpy(), cal.set_output(transform="default").transform(X))


def test_pipeline_routes_the_black_box_prediction():
    import sklearn
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(2)
    features = rng.normal(size=(800, 2))
    target = (features[:, 0] + rng.normal(scale=1.5, size=800) > 0).astype(int)
    model = LogisticRegression(C=100).fit(features[:400] * 5, target[:400])  # over-confident
    y = np.where(np.arange(800) < 500, -1, target)
    with sklearn.config_context(enable_metadata_routing=True):
        cal = HierarchicalBetaCalibrator(random_state=0).set_fit_request(y_pred=True)
        cal.set_transform_request(y_pred=True)
        pipe = make_pipeline(
            FunctionTransformer(model.predict_proba),
            cal,
            BayesianAccuracy(prior="informative").set_fit_request(y_pred=True),
        ).fit(features, y, y_pred=model.predict(features))
    est = pipe[-1]
    raw = BayesianAccuracy(prior="informative").fit(model.predict_proba(features), y)
    truth = np.mean(model.predict(features) == target)
    assert abs(est.overall_mean() - truth) <= abs(raw.overall_mean() - truth) + 0.01
    np.testing.assert_array_equal(est.n_rows_, raw.n_rows_)  # the black box's predictions
    np.testing.assert_array_equal(est.n_success_, raw.n_success_)


def test_warnings_for_one_class_and_for_no_labels():
    s = np.linspace(0.05, 0.95, 100)
    y = np.where(np.arange(100) < 20, 1, -1)
    with pytest.warns(SkassessWarning, match="weakly identified"):
        HierarchicalBetaCalibrator(classes=[0, 1], random_state=0).fit(s, y)
    with pytest.warns(SkassessWarning, match="prior predictive"):
        cal = HierarchicalBetaCalibrator(random_state=0).fit(s, np.full(100, -1))
    assert cal.transform(s).shape == (100, 1)


def test_convergence_warning_when_the_chains_are_too_short():
    s, y, g = _simulate(100)
    with pytest.warns(ConvergenceWarning, match="may not have converged"):
        HierarchicalBetaCalibrator(
            random_state=0, sampler=EmceeSampler(n_burn=0, n_steps=4, max_steps=4, n_walkers=16)
        ).fit(s, y, group_by=g)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([0.2, 1.3, 0.5]), "must lie in \\[0, 1\\]"),
        (np.array([0.2, np.nan, 0.5]), "NaN"),
        (np.array([0.2, -0.1, 0.5]), "Negative values"),
    ],
)
def test_bad_scores(X, match):
    with pytest.raises(ValueError, match=match):
        HierarchicalBetaCalibrator().fit(X, np.array([0, 1, 0]))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"map": "platt"}, "The 'map' parameter of HierarchicalBetaCalibrator"),
        ({"target": "multi"}, "The 'target' parameter of HierarchicalBetaCalibrator"),
        ({"prior_scale": 0}, "The 'prior_scale' parameter of HierarchicalBetaCalibrator"),
        ({"n_steps": 0}, "The 'n_steps' parameter of HierarchicalBetaCalibrator"),
        ({"n_burn": -1}, "The 'n_burn' parameter of HierarchicalBetaCalibrator"),
        ({"n_chains": 1}, "The 'n_chains' parameter of HierarchicalBetaCalibrator"),
        ({"target": "binary"}, "target='binary' needs P\\(y = 1\\)"),
    ],
)
def test_bad_parameters(params, match):
    X = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match=match):
        HierarchicalBetaCalibrator(**params).fit(X, np.array([0, 1, 2, 0]))


def test_missing_y():
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        HierarchicalBetaCalibrator().fit(np.array([0.2, 0.7]), None)


def test_bad_groups(fitted):
    cal, (s, y, g) = fitted
    with pytest.raises(ValueError, match="group_by has 3 entries, but X has 4 rows"):
        HierarchicalBetaCalibrator().fit(s[:4], y[:4], group_by=g[:3])
    with pytest.raises(ValueError, match="missing value at row 1"):
        HierarchicalBetaCalibrator().fit(s[:3], y[:3], group_by=pd.Series(["A", None, "B"]))
    with pytest.raises(ValueError, match="group_by holds 'Z' at row 1, a group not seen in fit"):
        cal.transform(s[:2], group_by=["A", "Z"])


@pytest.mark.slow
def test_grid_search_over_the_calibrator_in_a_pipeline():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(3)
    X = rng.dirichlet(np.full(3, 0.5), size=300)
    pred = X.argmax(axis=1)
    y = np.where(rng.uniform(size=300) < X.max(axis=1) ** 2, pred, (pred + 1) % 3)
    pipe = make_pipeline(
        HierarchicalBetaCalibrator(random_state=0), BayesianAccuracy(prior="informative")
    )
    assert clone(pipe).get_params()["hierarchicalbetacalibrator__map"] == "beta"
    search = GridSearchCV(
        pipe,
        {"hierarchicalbetacalibrator__map": ["beta", "temperature"]},
        cv=KFold(2, shuffle=True, random_state=0),
    ).fit(X, y)
    assert search.best_params_["hierarchicalbetacalibrator__map"] in {"beta", "temperature"}
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


# ------------------------------------------------------------------ NUTS (mici)
@pytest.mark.parametrize("map_", ["beta", "llo", "temperature"])
@pytest.mark.parametrize("hierarchical", [True, False])
def test_nuts_gradient_matches_finite_differences(map_, hierarchical):
    s, y, g = _simulate(n_per_group=40)
    cal = HierarchicalBetaCalibrator(map_, hierarchical=hierarchical, sampler=NUTSSampler())
    cal._scores(s, None, reset=True)
    from skassess.calibration._maps import log_features

    codes = cal._group_codes(g, None, len(s), reset=True)
    keep = codes != 1  # a group without labeled rows, in the middle of the order
    model = cal._nuts_model(codes[keep], *log_features(s[keep], cal.eps), y[keep].astype(float))
    q = np.random.default_rng(0).normal(0.0, 0.3, model.n_dim)
    value, grad = model.log_prob_grad(q)
    h = 1e-6
    numeric = [
        (model.log_prob_grad(q + h * e)[0] - model.log_prob_grad(q - h * e)[0]) / (2 * h)
        for e in np.eye(len(q))
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)
    assert np.isfinite(value)


@pytest.mark.slow
def test_nuts_agrees_with_emcee_and_is_reproducible():
    pytest.importorskip("mici")
    s, y, g = _simulate(n_per_group=150, seed=2)
    cal = HierarchicalBetaCalibrator(random_state=0).fit(s, y, group_by=g)
    nuts = HierarchicalBetaCalibrator(random_state=0, sampler=NUTSSampler()).fit(s, y, group_by=g)
    assert nuts.rhat_.max() <= 1.01 and nuts.ess_.min() >= 400
    assert {"sigma_a", "mu_c"} <= set(nuts.rhat_.index)  # the population is monitored
    # the same posterior as emcee's: calibrated probabilities within 0.01
    np.testing.assert_allclose(
        nuts.transform(s, group_by=g), cal.transform(s, group_by=g), atol=0.01
    )
    short = {"random_state": 3, "sampler": NUTSSampler(n_burn=40, n_steps=20, max_steps=20)}
    with pytest.warns(ConvergenceWarning):
        first = HierarchicalBetaCalibrator(**short).fit(s, y, group_by=g)
    with pytest.warns(ConvergenceWarning):
        again = HierarchicalBetaCalibrator(**short).fit(s, y, group_by=g)
    np.testing.assert_array_equal(again.draws_, first.draws_)


def test_nuts_without_mici_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mici", None)
    s, y, g = _simulate(n_per_group=20)
    cal = HierarchicalBetaCalibrator(sampler=NUTSSampler())
    with pytest.raises(ImportError, match=r"pip install 'skassess\[nuts\]'"):
        cal.fit(s, y, group_by=g)
    assert not hasattr(cal, "draws_")


def test_unconverged_emcee_with_many_groups_points_to_nuts():
    rng = np.random.default_rng(0)
    s = rng.uniform(0.05, 0.95, 220)
    y = (rng.random(220) < s).astype(int)
    short = {"sampler": EmceeSampler(n_burn=5, n_steps=5, max_steps=5), "random_state": 0}
    with pytest.warns(ConvergenceWarning, match=r"sampler=NUTSSampler\(\)"):
        HierarchicalBetaCalibrator(**short).fit(s, y, group_by=np.arange(220) % 11)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        HierarchicalBetaCalibrator(**short).fit(s, y, group_by=np.arange(220) % 2)
    messages = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert messages and not any("nuts" in m for m in messages)


def test_a_one_step_run_at_40_groups_does_not_pass_the_gate():
    rng = np.random.default_rng(0)
    s = rng.uniform(0.05, 0.95, 800)
    y = (rng.random(800) < s).astype(int)
    with pytest.warns(ConvergenceWarning, match="may not have converged"):
        cal = HierarchicalBetaCalibrator(
            random_state=0, sampler=EmceeSampler(n_burn=0, n_steps=1, max_steps=1)
        ).fit(s, y, group_by=np.arange(800) % 40)
    assert cal.ess_.max() < 100


def test_the_sampler_is_a_parameter_object_and_the_old_knobs_are_deprecated():
    rng = np.random.default_rng(5)
    s = rng.uniform(0.05, 0.95, 200)
    y = (rng.random(200) < s).astype(int)
    g = np.repeat(["a", "b"], 100)
    fast = {"n_burn": 60, "n_steps": 60, "max_steps": 60, "target_ess": 10, "progress": False}

    def fit(cal):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # short chains, on purpose
            return cal.fit(s, y, group_by=g)

    new = fit(HierarchicalBetaCalibrator(random_state=0, sampler=EmceeSampler(**fast)))
    assert new.get_params()["sampler__n_steps"] == 60
    with pytest.warns(FutureWarning, match=r"HierarchicalBetaCalibrator\(n_burn=60.*EmceeSampler"):
        old = fit(HierarchicalBetaCalibrator(random_state=0, **fast))
    np.testing.assert_array_equal(old.draws_, new.draws_)
    with pytest.warns(FutureWarning) as record:  # the string and the knobs, each
        fit(HierarchicalBetaCalibrator(random_state=0, sampler="emcee", **fast))
    assert any("sampler='emcee'" in str(w.message) for w in record)
    # through scikit-learn's set_output wrapper of fit_transform: the warning points here
    with pytest.warns(FutureWarning) as record:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            HierarchicalBetaCalibrator(random_state=0, **fast).fit_transform(s, y, group_by=g)
    assert {w.filename for w in record if issubclass(w.category, FutureWarning)} == {__file__}


def test_too_few_walkers_name_the_samplers_parameter():
    s = np.linspace(0.1, 0.9, 40)
    y = np.tile([0, 1], 20)
    g = np.repeat(["a", "b"], 20)
    with pytest.raises(ValueError, match=r"n_walkers=6 is too few for 6 parameters"):
        HierarchicalBetaCalibrator(sampler=EmceeSampler(n_walkers=6)).fit(s, y, group_by=g)
    with pytest.raises(ValueError, match="The 'n_walkers' parameter of EmceeSampler"):
        HierarchicalBetaCalibrator(sampler=EmceeSampler(n_walkers=2)).fit(s, y, group_by=g)

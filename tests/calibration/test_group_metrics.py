"""BayesianGroupMetrics: the four methods, differences, bad input."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from skassess.calibration import BayesianGroupMetrics, EmceeSampler, HierarchicalBetaCalibrator
from skassess.exceptions import SkassessWarning
from skassess.metrics import GroupComparison

#: The hierarchical-calibrator method (Ji et al. 2020): the tests of its own machinery.
BC = "bayesian_calibration"


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    groups = rng.choice(np.array(["A", "B", "C"]), size=n, p=[0.5, 0.3, 0.2])
    s = rng.uniform(0.02, 0.98, n)
    shift = pd.Series(groups).map({"A": 0.0, "B": -0.7, "C": 0.5}).to_numpy()
    y = (rng.uniform(size=n) < expit(np.log(s / (1 - s)) + shift)).astype(int)
    return s, y, groups


def _rates(s, y, mask):
    pred = s > 0.5
    return {
        "accuracy": np.mean(pred[mask] == y[mask]),
        "tpr": np.mean(pred[mask][y[mask] == 1]),
        "fpr": np.mean(pred[mask][y[mask] == 0]),
    }


def test_frequentist_is_the_labeled_rate():
    s, y, g = _data()
    y_obs = np.where(np.arange(len(y)) % 3 == 0, y, -1)
    est = BayesianGroupMetrics("frequentist").fit(s, y_obs, sensitive_features=g)
    lab = y_obs >= 0
    table = est.summary()
    for group in "ABC":
        expected = _rates(s[lab], y[lab], g[lab] == group)
        for metric, value in expected.items():
            assert table.loc[(metric, group), "mean"] == pytest.approx(value)
    assert table["lower"].isna().all()
    diff = est.differences()
    assert diff.loc[("accuracy", "A - B"), "mean"] == pytest.approx(
        table.loc[("accuracy", "A"), "mean"] - table.loc[("accuracy", "B"), "mean"]
    )
    with pytest.raises(ValueError, match="no posterior to sample"):
        est.sample("accuracy")


def test_beta_binomial_is_beta_one_one_on_the_labeled_rows():
    s, y, g = _data()
    y_obs = np.where(np.arange(len(y)) < 60, y, -1)
    est = BayesianGroupMetrics("beta_binomial", n_draws=40000, random_state=0).fit(
        s, y_obs, sensitive_features=g
    )
    lab = y_obs >= 0
    pred = s > 0.5
    for group in "ABC":
        m = lab & (g == group)
        pos = m & (y == 1)
        for metric, (k, n) in {
            "accuracy": ((pred == y)[m].sum(), m.sum()),
            "tpr": (pred[pos].sum(), pos.sum()),
        }.items():
            draws = est.sample(metric)[group]
            assert draws.mean() == pytest.approx((1 + k) / (2 + n), abs=0.005)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["calibrated", BC])
def test_every_row_labeled_is_the_observed_value(method):
    s, y, g = _data(n=300)
    est = BayesianGroupMetrics(method, random_state=0).fit(s, y, sensitive_features=g)
    for metric in ("accuracy", "tpr", "fpr"):
        draws = est.sample(metric)
        for group in "ABC":
            np.testing.assert_allclose(draws[group], _rates(s, y, g == group)[metric])


@pytest.mark.slow
def test_bayesian_calibration_beats_the_labeled_rows_alone():
    """With 30 labels, BC's accuracy gap is closer to the truth than BB's (seeded)."""
    s, y, g = _data(n=3000, seed=1)
    g2 = np.where(g == "A", "A", "other")
    true = _rates(s, y, g2 == "A")["accuracy"] - _rates(s, y, g2 == "other")["accuracy"]
    errors = {"bayesian_calibration": [], "beta_binomial": []}
    for seed in range(3):
        rows = np.random.default_rng(seed).choice(len(y), 30, replace=False)
        y_obs = np.full(len(y), -1)
        y_obs[rows] = y[rows]
        for method in errors:
            est = BayesianGroupMetrics(
                method, metrics=("accuracy",), privileged="A", random_state=seed
            ).fit(s, y_obs, sensitive_features=g2)
            errors[method].append(abs(est.differences().iloc[0]["mean"] - true))
    assert np.mean(errors["bayesian_calibration"]) < np.mean(errors["beta_binomial"])


def test_ratio_metrics_per_draw_and_custom_metrics():
    s, y, g = _data(n=300)
    y_obs = np.where(np.arange(len(y)) < 100, y, -1)

    def my_tpr(pred, y):
        return pred * y, y

    cal = HierarchicalBetaCalibrator(random_state=3)
    est = BayesianGroupMetrics(
        BC,
        metrics=("tpr", ("my_tpr", my_tpr)),
        calibrator=cal,
        n_draws=300,
        p_pooled=1.0,
        unlabeled="expected",
    ).fit(s, y_obs, sensitive_features=g)
    pd.testing.assert_frame_equal(est.sample("tpr"), est.sample("my_tpr"))
    # Per draw: (labeled hits + sum of calibrated p over predicted-positive unlabeled rows)
    # / (labeled positives + sum of calibrated p over unlabeled rows).
    unl = y_obs < 0
    p = est.calibrator_.sample(s[unl], group_by=g[unl], n_draws=300)
    m, lm = g[unl] == "B", (g == "B") & ~unl
    pred = s > 0.5
    num = (pred & (y == 1))[lm].sum() + p[:, m] @ pred[unl][m]
    den = (y == 1)[lm].sum() + p[:, m].sum(axis=1)
    np.testing.assert_allclose(est.sample("tpr")["B"], num / den)


def test_privileged_against_the_rest_and_each_group():
    s, y, g = _data()
    y_obs = np.where(np.arange(len(y)) % 2 == 0, y, -1)
    est = BayesianGroupMetrics("beta_binomial", privileged="A", random_state=0).fit(
        s, y_obs, sensitive_features=g
    )
    assert list(est.groups_) == ["A", "B", "C", "rest"]
    assert est.comparisons_ == [("A", "rest"), ("A", "B"), ("A", "C")]
    assert est.n_labeled_["rest"] == est.n_labeled_["B"] + est.n_labeled_["C"]
    table = est.differences(rope=0.1)
    assert table.shape == (9, 9)
    row = table.loc[("accuracy", "A - rest")]
    d = est.sample("accuracy")
    delta = d["A"] - d["rest"]
    assert row["p_positive"] == pytest.approx(np.mean(delta > 0))
    assert row["p_practically_fair"] == pytest.approx(np.mean(np.abs(delta) < 0.1))
    comparison = est.compare("accuracy")
    assert isinstance(comparison, GroupComparison)
    assert (comparison.group_a, comparison.group_b) == ("A", "rest")
    pairs = BayesianGroupMetrics("frequentist").fit(s, y_obs, sensitive_features=g).comparisons_
    assert pairs == [("A", "B"), ("A", "C"), ("B", "C")]


def test_difference_display_draws_the_comparison():
    import matplotlib

    matplotlib.use("Agg")
    from skassess.metrics import DifferenceDisplay

    s, y, g = _data()
    est = BayesianGroupMetrics("beta_binomial", privileged="A", random_state=0).fit(
        s, y, sensitive_features=g
    )
    disp = DifferenceDisplay.from_comparison(est.compare("fpr", "A", "B"))
    assert disp.ax_.get_xlabel() == "A - B"


@pytest.mark.parametrize(
    "params, match",
    [
        ({"method": "bayes"}, "The 'method' parameter of BayesianGroupMetrics"),
        ({"metrics": ("accuracy", "f1")}, "unknown metric 'f1'"),
        ({"metrics": ()}, "at least one metric"),
        ({"metrics": (3,)}, "a name or a \\(name, function\\) pair"),
        ({"privileged": "Z"}, "privileged='Z' is not a group"),
        ({"threshold": 1.5}, "The 'threshold' parameter"),
        ({"rope": -1}, "The 'rope' parameter"),
        ({"n_draws": 0}, "The 'n_draws' parameter"),
        ({"unlabeled": "mean"}, "The 'unlabeled' parameter"),
        ({"p_pooled": 0.0}, "The 'p_pooled' parameter"),
        ({"p_pooled": 1.5}, "The 'p_pooled' parameter"),
        ({"calibrator": "beta"}, "The 'calibrator' parameter"),
        ({"metrics": 3}, "The 'metrics' parameter"),
    ],
)
def test_bad_parameters(params, match):
    s, y, g = _data(n=50)
    with pytest.raises(ValueError, match=match):
        BayesianGroupMetrics(
            "frequentist" if "method" not in params else params.pop("method"), **params
        ).fit(s, y, sensitive_features=g)


def test_bad_input():
    s, y, g = _data(n=50)
    est = BayesianGroupMetrics("frequentist")
    with pytest.raises(ValueError, match="binary scores P\\(y = 1\\)"):
        est.fit(np.full((50, 3), 1 / 3), y, sensitive_features=g)
    with pytest.raises(ValueError, match="sensitive_features has 49 entries, but X has 50 rows"):
        est.fit(s, y, sensitive_features=g[:49])
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\]"):
        est.fit(s + 1, y, sensitive_features=g)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(np.where(np.arange(50) == 3, np.nan, s), y, sensitive_features=g)
    with pytest.raises(ValueError, match="group_by is required"):
        est.fit(s, y)
    with pytest.raises(ValueError, match="group_by or its alias sensitive_features, not both"):
        est.fit(s, y, group_by=g, sensitive_features=g)
    with pytest.raises(ValueError, match="group_by has 49 entries"):
        est.fit(s, y, group_by=g[:49])
    est.fit(s, y, sensitive_features=g)
    with pytest.raises(ValueError, match="metric='ppv' was not fitted"):
        est.sample("ppv")


@pytest.mark.slow
def test_sampled_unlabeled_outcomes_widen_the_posterior():
    s, y, g = _data(n=400)
    y_obs = np.where(np.arange(len(y)) < 80, y, -1)
    fits = {
        how: BayesianGroupMetrics(
            BC,
            metrics=("accuracy",),
            unlabeled=how,
            random_state=0,
            calibrator=HierarchicalBetaCalibrator(random_state=1),
        )
        .fit(s, y_obs, sensitive_features=g)
        .sample("accuracy")
        for how in ("expected", "sampled")
    }
    np.testing.assert_allclose(fits["sampled"].mean(), fits["expected"].mean(), atol=0.01)
    assert np.all(fits["sampled"].std() > fits["expected"].std())


@pytest.mark.slow
def test_many_rows_are_summed_without_a_draw_per_row():
    """BC on 40,000 rows (the node path of sample_sums) gives the metric draws of the
    row-by-row formula, within the stated interpolation bound; the calibrator sees
    only the labeled rows and one row per group, with the same posterior."""
    s, y, g = _data(n=40_000, seed=3)
    y_obs = np.where(np.arange(len(y)) < 300, y, -1)
    cal = HierarchicalBetaCalibrator(
        random_state=1, n_draws=100, sampler=EmceeSampler(n_steps=200, n_burn=200)
    )
    est = BayesianGroupMetrics(
        BC,
        metrics=("accuracy", "tpr"),
        calibrator=cal,
        n_draws=100,
        p_pooled=1.0,
        unlabeled="expected",
        random_state=0,
    ).fit(s, y_obs, sensitive_features=g)
    # the same calibrator fitted on every row
    full = HierarchicalBetaCalibrator(
        random_state=1, n_draws=100, sampler=EmceeSampler(n_steps=200, n_burn=200)
    ).fit(s, y_obs, group_by=g)
    np.testing.assert_array_equal(est.calibrator_.draws_, full.draws_)
    unl = y_obs < 0
    p = full.sample(s[unl], group_by=g[unl], n_draws=100)  # (draws, rows)
    pred = s > 0.5
    for name in ["A", "B", "C"]:
        lab_j, unl_j = (~unl) & (g == name), g[unl] == name
        correct_l = (pred[lab_j] == y_obs[lab_j]).sum()
        # an unlabeled row is right with probability p (predicted 1) or 1 - p
        right = np.where(pred[unl][unl_j], p[:, unl_j], 1.0 - p[:, unl_j]).sum(axis=1)
        expected = (correct_l + right) / (g == name).sum()
        np.testing.assert_allclose(est.sample("accuracy")[name], expected, atol=1e-6)
        tp = ((pred & (y_obs == 1))[lab_j]).sum() + (p[:, unl_j] * pred[unl][unl_j]).sum(1)
        pos = (y_obs[lab_j] == 1).sum() + p[:, unl_j].sum(axis=1)
        np.testing.assert_allclose(est.sample("tpr")[name], tp / pos, atol=1e-6)


@pytest.mark.slow
def test_sample_sums_nodes_agree_with_rows_and_refuse_bad_weights():
    s, y, g = _data(n=30_000, seed=4)
    y_obs = np.where(np.arange(len(s)) < 300, y, -1)
    cal = HierarchicalBetaCalibrator(
        random_state=0, n_draws=50, sampler=EmceeSampler(n_steps=100, n_burn=100)
    ).fit(s, y_obs, group_by=g)
    w = np.column_stack([np.ones_like(s), s])
    nodes = cal.sample_sums(s, w, group_by=g)  # 30,000 rows > 8192 nodes x 3 groups
    rows = cal.sample_sums(s[:5000], w[:5000], group_by=g[:5000])  # row by row
    p = cal.sample(s, group_by=g)
    onehot = (g[:, None] == cal.groups_.to_numpy()[None, :]).astype(float)
    np.testing.assert_allclose(nodes, np.einsum("dr,rg,rj->dgj", p, onehot, w), atol=1e-6)
    np.testing.assert_allclose(
        rows, np.einsum("dr,rg,rj->dgj", p[:, :5000], onehot[:5000], w[:5000]), rtol=1e-12
    )
    with pytest.raises(ValueError, match=r"weights must be a finite array of shape"):
        cal.sample_sums(s, w[:10], group_by=g)
    with pytest.raises(ValueError, match=r"weights must be a finite array"):
        cal.sample_sums(s, np.full_like(w, np.nan), group_by=g)


def _labeled(y, n_labeled, seed):
    out = np.full(len(y), -1)
    rows = np.random.default_rng(seed).choice(len(y), n_labeled, replace=False)
    out[rows] = y[rows]
    return out


@pytest.mark.slow
def test_flipped_scores_fail_the_posterior_predictive_check():
    s, y, groups = _data(n=400, seed=3)
    y_obs = _labeled(y, 60, 3)
    with pytest.warns(SkassessWarning, match="contradict the calibrated scores"):
        est = BayesianGroupMetrics(BC, metrics=("accuracy",), n_draws=500, random_state=0).fit(
            1 - s, y_obs, sensitive_features=groups
        )
    check = est.label_check_
    assert list(check.columns) == [
        "n_labeled",
        "right",
        "expected_right",
        "p_value",
        "log_bayes_factor",
        "p_pooled",
    ]
    assert check["n_labeled"].sum() == 60
    assert (check["right"] < check["expected_right"]).all()
    # the labels favour the free model (most in the groups with most labels), whose
    # draws then carry the estimate: every group's interval holds its true accuracy
    assert (check["p_pooled"][["A", "B"]] < 0.01).all() and check["p_pooled"]["C"] < 0.5
    right = (1 - s > 0.5) == y
    table = est.summary().loc["accuracy"]
    for g in "ABC":
        assert table.loc[g, "lower"] <= right[groups == g].mean() <= table.loc[g, "upper"]


@pytest.mark.slow
def test_scores_that_fit_their_labels_pass_the_posterior_predictive_check():
    s, y, groups = _data(n=400, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SkassessWarning)
        est = BayesianGroupMetrics(BC, metrics=("accuracy",), n_draws=500, random_state=0).fit(
            s, _labeled(y, 60, 4), sensitive_features=groups
        )
    assert (est.label_check_["p_value"] > 0.01 / 3).all()
    assert (
        BayesianGroupMetrics("beta_binomial")
        .fit(s, _labeled(y, 60, 4), sensitive_features=groups)
        .label_check_
        is None
    )


def _contradicting_group(seed=0):
    """Group A calibrated (400 rows); group B (100 rows) with labels independent of
    its confident scores."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.array(["A", "B"]), [400, 100])
    s = rng.beta(0.5, 0.5, 500).clip(0.01, 0.99)
    y = (rng.random(500) < np.where(groups == "A", s, 0.5)).astype(int)
    return s, y, groups


@pytest.mark.slow
def test_a_contradicting_group_falls_back_on_its_own_labels():
    """B's labels contradict the calibration A's labels imply: B's pooled weight
    is tiny, B is left out of the pooled fit, its Bayes factor is the predictive
    of the refitted pooled model against the beta-binomial marginal, and its
    accuracy draws are the free model's; A stays pooled."""
    from scipy.special import betaln, logsumexp

    s, y, groups = _contradicting_group(seed=1)
    y_obs = np.full(len(y), -1)
    rows = np.r_[np.arange(0, 400, 10), np.arange(400, 500, 2)]  # 40 + 50 labels
    y_obs[rows] = y[rows]
    est = BayesianGroupMetrics(
        BC, metrics=("accuracy",), n_draws=2000, unlabeled="expected", random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkassessWarning)
        est.fit(s, y_obs, sensitive_features=groups)
    check = est.label_check_
    assert check.loc["B", "p_pooled"] < 1e-3 < 0.9 < check.loc["A", "p_pooled"]
    # B was fitted out: its pooled predictive is the plain mean of its likelihood
    lab_b = rows[rows >= 400]
    p = est.calibrator_.sample(s[lab_b], group_by=groups[lab_b], n_draws=2000)
    loglik = np.log(np.where(y[lab_b] == 1, p, 1 - p)).sum(axis=1)
    right = int(((s[lab_b] > 0.5) == y[lab_b]).sum())
    expected_bf = logsumexp(loglik) - np.log(2000) - betaln(1 + right, 1 + 50 - right)
    assert check.loc["B", "log_bayes_factor"] == pytest.approx(expected_bf, rel=1e-9)
    # B's accuracy: labeled rows plus Beta(1 + right, 1 + wrong) for the 50 others
    draws = est.sample("accuracy")["B"]
    mean = (right + 50 * (1 + right) / 52) / 100
    assert draws.mean() == pytest.approx(mean, abs=0.01)
    true_b = ((s > 0.5) == y)[groups == "B"].mean()
    true_a = ((s > 0.5) == y)[groups == "A"].mean()
    table = est.summary().loc["accuracy"]
    assert table.loc["B", "lower"] <= true_b <= table.loc["B", "upper"]
    assert table.loc["A", "lower"] <= true_a <= table.loc["A", "upper"]
    # the thesis's BC (every group pooled) is confidently wrong about B
    pooled = BayesianGroupMetrics(
        BC, metrics=("accuracy",), n_draws=2000, unlabeled="expected", p_pooled=1.0, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkassessWarning)
        pooled.fit(s, y_obs, sensitive_features=groups)
    assert pooled.summary().loc[("accuracy", "B"), "lower"] > true_b


@pytest.mark.slow
def test_pooled_weight_is_the_prior_without_labels_and_one_at_p_pooled_one():
    """A group without labels keeps the prior weight; p_pooled=1 draws BC alone."""
    s, y, g = _data(n=300, seed=2)
    y_obs = np.where((np.arange(len(y)) < 150) & (g != "C"), y, -1)
    est = BayesianGroupMetrics(
        BC, metrics=("accuracy",), p_pooled=1.0, n_draws=400, random_state=0
    ).fit(s, y_obs, sensitive_features=g)
    assert list(est.label_check_.index) == ["A", "B"]
    assert (est.label_check_["p_pooled"] == 1.0).all()
    mixed = BayesianGroupMetrics(
        BC, metrics=("accuracy",), p_pooled=0.3, n_draws=4000, unlabeled="expected", random_state=0
    )
    mixed.fit(s, y_obs, sensitive_features=g)
    # C has no label: P(pooled) stays 0.3, so 70 % of its draws are the free model's
    # Beta(1, 1) accuracy, whose mean is 1/2
    pooled_mean = est.sample("accuracy")["C"].mean()
    assert mixed.sample("accuracy")["C"].mean() == pytest.approx(
        0.3 * pooled_mean + 0.7 * 0.5, abs=0.02
    )


# ------------------------------------------------------------ method="calibrated"
def _labels(y, n_labeled, seed):
    """``n_labeled`` random labels, NaN elsewhere (so a draw of only positives is valid)."""
    rows = np.random.default_rng(seed).choice(len(y), n_labeled, replace=False)
    y_obs = np.full(len(y), np.nan)
    y_obs[rows] = y[rows]
    return y_obs


def _shared_calibration(n, seed):
    """Two groups with different score mixes and one calibration (the scores are right)."""
    rng = np.random.default_rng(seed)
    g = np.where(rng.uniform(size=n) < 0.7, "A", "B")
    s = expit(rng.normal(np.where(g == "A", 1.5, 0.3), 1.5))
    return s, (rng.uniform(size=n) < s).astype(int), g


def _scores_mean_nothing_in_b(n, seed):
    """Group A calibrated and sharp; group B's labels ignore its scores (accuracy 1/2)."""
    rng = np.random.default_rng(seed)
    g = np.where(rng.uniform(size=n) < 0.8, "A", "B")
    s = expit(rng.normal(0.0, 3.0, n))
    y = np.where(g == "A", rng.uniform(size=n) < s, rng.uniform(size=n) < 0.5)
    return s, y.astype(int), g


def _accuracy_gap_runs(make, n_labeled, fits, runs=40):
    """Per fit: MAE of the posterior median of Delta accuracy (A - B), and coverage."""
    s, y, g = make(1000, 0)
    right = (s > 0.5) == y
    truth = right[g == "A"].mean() - right[g == "B"].mean()
    out = {name: [] for name in fits}
    for run in range(runs):
        y_obs = _labels(y, n_labeled, run)
        for name, params in fits.items():
            est = BayesianGroupMetrics(
                metrics=("accuracy",),
                n_draws=1000,
                random_state=run,
                missing_label=np.nan,
                **params,
            )
            row = est.fit(s, y_obs, sensitive_features=g).differences().iloc[0]
            out[name].append((abs(row["median"] - truth), row["lower"] <= truth <= row["upper"]))
    return {name: np.mean(v, axis=0) for name, v in out.items()}


@pytest.mark.slow
def test_calibrated_gains_where_the_groups_share_a_calibration():
    """40 seeded runs of 20 labels (measured: MAE 0.63 x BB's, coverage 0.975).

    Tolerance: MAE below 0.75 x BB's; coverage at least 0.85, which a 95 % interval
    falls below in 40 runs with probability about 0.01.
    """
    result = _accuracy_gap_runs(
        _shared_calibration, 20, {"calibrated": {}, "BB": {"method": "beta_binomial"}}
    )
    assert result["calibrated"][0] < 0.75 * result["BB"][0]
    assert result["calibrated"][1] >= 0.85


@pytest.mark.slow
def test_calibrated_covers_a_group_whose_labels_ignore_its_scores():
    """The free alternative (``p_pooled``) keeps the interval honest with 10 labels.

    Measured over 40 seeded runs: coverage 0.975 with the default (0.5), 0.625 with
    every group pooled (``p_pooled=1``); the default's MAE is about BB's.
    """
    result = _accuracy_gap_runs(
        _scores_mean_nothing_in_b,
        10,
        {"calibrated": {}, "pooled": {"p_pooled": 1.0}, "BB": {"method": "beta_binomial"}},
    )
    assert result["calibrated"][1] >= 0.85
    assert result["pooled"][1] < 0.8
    assert result["calibrated"][0] < 1.25 * result["BB"][0]


def test_calibrated_metrics_share_one_model_of_the_class():
    """Every metric but accuracy comes from the same draws of the positives."""
    s, y, g = _data(n=400)
    y_obs = np.where(np.arange(len(y)) < 60, y, -1)

    def my_tpr(pred, y):
        return pred * y, y

    est = BayesianGroupMetrics(
        metrics=("tpr", "fnr", ("my_tpr", my_tpr), "selection_rate"), n_draws=300, random_state=0
    ).fit(s, y_obs, sensitive_features=g)
    np.testing.assert_array_equal(est.sample("tpr"), est.sample("my_tpr"))
    np.testing.assert_allclose(est.sample("tpr") + est.sample("fnr"), 1.0)
    # the selection rate needs no label: exact in every draw
    for group in "ABC":
        assert (est.sample("selection_rate")[group] == np.mean(s[g == group] > 0.5)).all()


@pytest.mark.slow
def test_calibrated_refuses_a_metric_whose_slope_differs_within_a_predicted_class():
    s, y, g = _data(n=200)
    weights = np.linspace(1.0, 2.0, len(y))

    def weighted_tpr(pred, y):
        return weights * pred * y, weights * y

    with pytest.raises(ValueError, match="'weighted_tpr' has a slope in y that differs"):
        BayesianGroupMetrics(metrics=(("weighted_tpr", weighted_tpr),)).fit(
            s, np.where(np.arange(len(y)) < 60, y, -1), sensitive_features=g
        )
    # the hierarchical calibrator takes it
    BayesianGroupMetrics(
        BC,
        metrics=(("weighted_tpr", weighted_tpr),),
        n_draws=50,
        calibrator=HierarchicalBetaCalibrator(
            random_state=0, n_draws=50, sampler=EmceeSampler(n_steps=100, n_burn=100)
        ),
    ).fit(s, np.where(np.arange(len(y)) < 60, y, -1), sensitive_features=g)


def test_calibrated_rest_is_the_ratio_of_the_summed_counts():
    s, y, g = _data(n=300)
    est = BayesianGroupMetrics(privileged="A", random_state=0).fit(s, y, sensitive_features=g)
    assert list(est.groups_) == ["A", "B", "C", "rest"]
    rest = g != "A"
    for metric, value in _rates(s, y, rest).items():
        np.testing.assert_allclose(est.sample(metric)["rest"], value)


def test_calibrated_label_check_reports_each_models_pooled_weight():
    s, y, g = _data(n=600, seed=2)
    y_obs = np.where(np.arange(len(y)) < 80, y, -1)
    est = BayesianGroupMetrics(metrics=("accuracy", "tpr"), n_draws=200, random_state=0)
    check = est.fit(s, y_obs, sensitive_features=g).label_check_
    assert check.index.names == ["model", "group"]
    assert set(check.index.get_level_values("model")) == {"accuracy", "class"}
    lab = y_obs >= 0
    assert check.loc[("accuracy", "A"), "n_labeled"] == np.sum(lab & (g == "A"))
    assert ((check["p_pooled"] > 0) & (check["p_pooled"] < 1)).all()
    # p_pooled=1: every group pooled, nothing to check
    est.set_params(p_pooled=1.0).fit(s, y_obs, sensitive_features=g)
    assert est.label_check_ is None


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_labeled=st.integers(0, 40),
    share=st.floats(0.05, 0.95),
    slope=st.floats(-2.0, 3.0),
)
def test_calibrated_draws_are_rates_and_labeled_groups_are_exact(seed, n_labeled, share, slope):
    """Any pool and labels: every draw is a rate in [0, 1] (NaN only where the rate's
    condition holds on no row of the draw), and a fully labeled group is exact."""
    rng = np.random.default_rng(seed)
    n = 120
    g = np.where(rng.uniform(size=n) < share, "A", "B")
    g[:2] = ["A", "B"]  # both groups present
    s = rng.uniform(0.01, 0.99, n)
    y = (rng.uniform(size=n) < expit(slope * np.log(s / (1 - s)))).astype(int)
    y_obs = np.full(n, np.nan)
    rows = rng.choice(n, n_labeled, replace=False)
    y_obs[rows] = y[rows]
    y_obs[g == "B"] = y[g == "B"]  # group B fully labeled
    est = BayesianGroupMetrics(
        metrics=("accuracy", "tpr", "ppv"), n_draws=200, random_state=seed, missing_label=np.nan
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkassessWarning)
        est.fit(s, y_obs, sensitive_features=g)
    for metric in ("accuracy", "tpr", "ppv"):
        draws = est.sample(metric).to_numpy()
        finite = draws[~np.isnan(draws)]
        assert ((finite >= 0) & (finite <= 1)).all()
    b, pred = g == "B", s > 0.5
    assert np.allclose(est.sample("accuracy")["B"], np.mean(pred[b] == y[b]))
    if y[b].sum():
        assert np.allclose(est.sample("tpr")["B"], pred[b][y[b] == 1].mean())
    if pred[b].sum():
        assert np.allclose(est.sample("ppv")["B"], y[b][pred[b]].mean())


def test_calibrated_undefined_rate_takes_the_files_rate_of_the_draw():
    """PPV in a group with no row predicted positive: the file's PPV, draw by draw."""
    s, y, g = _data(n=400, seed=5)
    s = np.where(g == "C", np.minimum(s, 0.45), s)  # group C: nothing predicted positive
    y_obs = np.where(np.arange(len(y)) < 80, y, -1)
    est = BayesianGroupMetrics(metrics=("ppv",), n_draws=300, random_state=0, p_pooled=1.0)
    draws = est.fit(s, y_obs, sensitive_features=g).sample("ppv")
    assert not draws.isna().any().any()
    # the file's PPV is a weighted mean of A's and B's (C has no predicted positive)
    low, high = draws[["A", "B"]].min(axis=1), draws[["A", "B"]].max(axis=1)
    assert ((draws["C"] >= low - 1e-12) & (draws["C"] <= high + 1e-12)).all()
    comparison = est.compare("ppv", "A", "C")  # no NaN to refuse
    assert np.isfinite(comparison.samples).all()


def test_classes_name_the_negative_and_positive_labels():
    """-1/1 or string labels give the same posterior as 0/1 labels with ``classes``."""
    s, y, g = _data(n=300)
    y_obs = np.where(np.arange(len(y)) % 4 == 0, y, -1)
    ref = (
        BayesianGroupMetrics(metrics="accuracy", random_state=0)
        .fit(s, y_obs, sensitive_features=g)
        .summary()
    )
    signed = np.where(y_obs < 0, np.nan, 2 * y_obs - 1)
    got = (
        BayesianGroupMetrics(
            metrics="accuracy", classes=[-1, 1], missing_label=np.nan, random_state=0
        )
        .fit(s, signed, sensitive_features=g)
        .summary()
    )
    pd.testing.assert_frame_equal(ref, got)
    words = np.array(["", "no", "yes"], dtype=object)[y_obs + 1]
    got = (
        BayesianGroupMetrics(
            metrics="accuracy", classes=["no", "yes"], missing_label="", random_state=0
        )
        .fit(s, words, sensitive_features=g)
        .summary()
    )
    pd.testing.assert_frame_equal(ref, got)


@pytest.mark.parametrize(
    "classes, message", [([0, 1, 2], "one label per score column"), ([1, 1], "must not repeat")]
)
def test_bad_classes_are_refused(classes, message):
    s, y, g = _data(n=50)
    with pytest.raises(ValueError, match=message):
        BayesianGroupMetrics(classes=classes).fit(s, y, sensitive_features=g)


def test_a_label_outside_classes_names_its_row():
    s, y, g = _data(n=50)
    with pytest.raises(ValueError, match=r"label 1 at row \d+, which is not in classes"):
        BayesianGroupMetrics(classes=["no", "yes"]).fit(s, y, sensitive_features=g)


def test_group_by_and_its_alias_give_one_fit():
    rng = np.random.default_rng(3)
    s = rng.uniform(0.05, 0.95, 300)
    y = (rng.random(300) < s).astype(int)
    g = np.repeat(["a", "b", "c"], 100)
    kw = dict(method="beta_binomial", n_draws=200, random_state=0)
    one = BayesianGroupMetrics(**kw).fit(s, y, group_by=g).summary()
    two = BayesianGroupMetrics(**kw).fit(s, y, sensitive_features=g).summary()
    pd.testing.assert_frame_equal(one, two)


def test_hyphenated_methods_are_deprecated_spellings():
    rng = np.random.default_rng(4)
    s = rng.uniform(0.05, 0.95, 200)
    y = (rng.random(200) < s).astype(int)
    g = np.repeat(["a", "b"], 100)
    new = BayesianGroupMetrics(method="beta_binomial", n_draws=200, random_state=0)
    old = BayesianGroupMetrics(method="beta-binomial", n_draws=200, random_state=0)
    with pytest.warns(FutureWarning, match="method='beta-binomial'.*method='beta_binomial'"):
        old.fit(s, y, group_by=g)
    pd.testing.assert_frame_equal(old.summary(), new.fit(s, y, group_by=g).summary())


def test_each_method_is_a_strategy_object_with_its_own_auto_prior():
    """The methods are small strategy objects, one per option of ``method``; ``"auto"``
    resolves per method, and only the frequentist one lacks a posterior."""
    from skassess.calibration._group_methods import GROUP_METHODS, group_method

    options = BayesianGroupMetrics._parameter_constraints["method"][0].options
    assert set(GROUP_METHODS) == options
    common = dict(threshold=0.5, n_draws=10, p_pooled="auto")
    resolved = {name: group_method(name, **common).p_pooled for name in GROUP_METHODS}
    assert resolved == {
        "calibrated": 0.5,
        "bayesian_calibration": 0.2,
        "beta_binomial": 1.0,
        "frequentist": 1.0,
    }
    assert group_method("calibrated", **{**common, "p_pooled": 0.7}).p_pooled == 0.7
    posterior = {name: cls.has_posterior for name, cls in GROUP_METHODS.items()}
    assert posterior == {name: name != "frequentist" for name in GROUP_METHODS}


def test_labeled_sums_are_each_groups_rate_terms():
    """A group's labeled numerator and denominator are the sums of its labeled rows'
    terms (TPR: predicted-1 positives over positives); unlabeled rows add nothing."""
    from skassess.calibration._group_methods import GroupRows, labeled_sums

    s = np.array([0.9, 0.8, 0.2, 0.7, 0.1, 0.6])
    y = np.array([1, 0, 1, -1, 1, 1])
    codes = np.array([0, 0, 0, 1, 1, 1])
    rows = GroupRows(s, y, codes, np.array(list("aaabbb")), pd.Index(["a", "b"]))
    sums = labeled_sums({"tpr": "tpr", "accuracy": "accuracy"}, rows, 0.5)
    np.testing.assert_array_equal(sums["tpr"][0], [1, 1])
    np.testing.assert_array_equal(sums["tpr"][1], [2, 2])
    np.testing.assert_array_equal(sums["accuracy"][0], [1, 1])
    np.testing.assert_array_equal(sums["accuracy"][1], [3, 2])


def test_calibrated_free_alternative_of_the_class_is_each_predicted_classs_labels():
    """A free group's PPV and NPV are its own labels', not its accuracy.

    Group B's rows are positive with probability 0.1 whatever their scores: its
    predicted positives are mostly wrong (PPV about 0.1) and its predicted
    negatives mostly right (NPV about 0.9), accuracy about 0.5. Its labels alone
    explain its classes better than the shared maps do (the Bayes factor of the
    class model is below 1; one rate of being right for both predicted classes
    put it at e^25 for the maps). With the free model all but certain
    (``p_pooled`` tiny), each posterior mean is the labels' Beta(1, 1) posterior
    mean on the unlabeled rows plus the labeled rows as they are. Monte Carlo
    error of the means with 4000 draws: below 0.005.
    """
    rng = np.random.default_rng(0)
    n = 2000
    g = np.where(rng.uniform(size=n) < 0.7, "A", "B")
    s = expit(rng.normal(0.0, 2.0, n))
    y = np.where(g == "A", rng.uniform(size=n) < s, rng.uniform(size=n) < 0.1).astype(int)
    y_obs = np.where(rng.uniform(size=n) < 0.15, y, -1)
    est = BayesianGroupMetrics(
        metrics=("ppv", "npv"), n_draws=4000, p_pooled=1e-6, random_state=0
    ).fit(s, y_obs, sensitive_features=g)
    assert est.label_check_.loc[("class", "B"), "log_bayes_factor"] < 0
    b, pred, lab = g == "B", (s > 0.5).astype(int), y_obs >= 0
    for metric, k, hit in (("ppv", 1, 1), ("npv", 0, 0)):
        rows = b & (pred == k)
        hits, labeled = np.sum(rows & lab & (y == hit)), np.sum(rows & lab)
        expected = (hits + np.sum(rows & ~lab) * (1 + hits) / (2 + labeled)) / rows.sum()
        assert abs(est.sample(metric)["B"].mean() - expected) < 0.02
    assert est.sample("ppv")["B"].mean() < 0.25
    assert est.sample("npv")["B"].mean() > 0.75


@pytest.mark.slow
@pytest.mark.parametrize("method", ["calibrated", "beta_binomial", "bayesian_calibration"])
def test_groups_with_only_labeled_or_only_unlabeled_rows_fit(method):
    """Many groups, four of them all labeled and four without a label: a valid fit."""
    n_groups = 100 if method == "beta_binomial" else 16  # a fit per group: fewer
    rng = np.random.default_rng(0)
    s = rng.uniform(0.05, 0.95, 3 * n_groups)
    g = np.repeat(np.arange(n_groups), 3)
    y = np.where(np.arange(s.size) % 3 == 0, (rng.uniform(size=s.size) < s).astype(int), -1)
    y[:12] = (rng.uniform(size=12) < s[:12]).astype(int)  # groups 0-3: every row labeled
    y[12:24] = -1  # groups 4-7: no label
    kw = {}
    if method == "bayesian_calibration":
        fast = {"n_burn": 40, "n_steps": 40, "max_steps": 40, "target_ess": 5, "progress": False}
        kw["calibrator"] = HierarchicalBetaCalibrator(sampler=EmceeSampler(**fast), random_state=0)
    est = BayesianGroupMetrics(method=method, n_draws=50, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(s, y, group_by=g)
    assert est.n_labeled_.loc[0] == 3 and est.n_labeled_.loc[4] == 0
    assert len(est.summary()) > 0


def _two_fits_apart(n=800, seed=3, share=0.6):
    """Group A calibrated, group B's labels mostly wrong where its scores say right."""
    rng = np.random.default_rng(seed)
    g = np.where(rng.uniform(size=n) < share, "A", np.where(rng.uniform(size=n) < 0.5, "B", "C"))
    s = expit(rng.normal(1.0, 1.5, n))
    p = np.where(g == "B", 1.0 - s, s)
    return s, (rng.uniform(size=n) < p).astype(int), g


def test_calibrated_pooled_probabilities_are_the_configurations_posterior():
    """The label check's ``p_pooled`` is each labeled group's marginal under the
    posterior over configurations (which groups are pooled), found here by
    brute force: every configuration's pooled fit on the pooled groups' labels,
    its free groups' Beta(1, 1) evidence and the prior ``p_pooled`` each."""
    from scipy.special import betaln, logsumexp

    from skassess import BayesianAccuracy

    s, y, g = _two_fits_apart()
    y_obs = np.where(np.arange(len(y)) < 60, y, -1)
    p = 0.5
    est = BayesianGroupMetrics(metrics=("accuracy",), n_draws=400, p_pooled=p, random_state=0)
    check = est.fit(s, y_obs, sensitive_features=g).label_check_.loc["accuracy"]
    pred = (s > 0.5).astype(int)
    X = np.column_stack([1 - s, s])
    names = ["A", "B", "C"]
    log_post, configs = [], []
    for bits in itertools.product((True, False), repeat=3):
        free = [k for k, b in zip(names, bits, strict=True) if not b]
        y_fit = np.where(np.isin(g, free), -1, y_obs)
        fit = BayesianAccuracy(grouping="external", classes=[0, 1]).fit(
            X, y_fit, group_by=g, y_pred=pred
        )
        lp = fit.log_marginal_likelihood() + sum(bits) * np.log(p) + (3 - sum(bits)) * np.log(p)
        for k in free:
            rows = (g == k) & (y_obs >= 0)
            right = int(np.sum(pred[rows] == y_obs[rows]))
            lp += betaln(1 + right, 1 + rows.sum() - right)
        log_post.append(lp)
        configs.append(bits)
    post = np.exp(np.array(log_post) - logsumexp(log_post))
    marginal = post @ np.array(configs, dtype=float)
    np.testing.assert_allclose(check.loc[names, "p_pooled"], marginal, atol=1e-6)


def test_calibrated_draws_take_the_pooled_model_without_a_free_groups_labels():
    """A group whose labels contradict the map is free in every draw, and the
    other groups' draws come from the map fitted without its labels: their mean
    is that fit's (within Monte-Carlo error), not the fit on every label."""
    from skassess import BayesianAccuracy

    s, y, g = _two_fits_apart(share=0.5)
    y_obs = np.where(np.arange(len(y)) < 300, y, -1)
    est = BayesianGroupMetrics(metrics=("accuracy",), n_draws=4000, random_state=0)
    est.fit(s, y_obs, sensitive_features=g)
    assert est.label_check_.loc[("accuracy", "B"), "p_pooled"] < 1e-3
    pred = (s > 0.5).astype(int)
    X = np.column_stack([1 - s, s])

    def mean_of_a(y_fit):
        fit = BayesianAccuracy(grouping="external", classes=[0, 1], random_state=0)
        fit.fit(X, y_fit, group_by=g, y_pred=pred)
        num, den = fit.groupwise_counts(4000)
        a = list(fit.groups_).index("A")
        return (num[:, a] / den[:, a]).mean(), (num[:, a] / den[:, a]).std()

    without_b, sd = mean_of_a(np.where(g == "B", -1, y_obs))
    with_b, _ = mean_of_a(y_obs)
    assert abs(without_b - with_b) > 6 * sd / np.sqrt(4000)  # the two fits differ
    drawn = est.sample("accuracy")["A"]
    assert abs(drawn.mean() - without_b) < 4 * sd / np.sqrt(4000) + 1e-3


@pytest.mark.slow
def test_bayesian_calibration_draws_each_configuration_from_its_posterior():
    """A draw's configuration (each group pooled or free) is a draw of its factorized
    posterior: each group pooled with its posterior probability, the groups' choices
    independent, and every metric of a draw under the same configuration."""
    from scipy.special import logit

    from skassess.calibration._group_methods import GroupRows, group_method

    s, y, g = _data(n=300, seed=1)
    y_obs = np.where(np.arange(len(y)) % 5 == 0, y, -1)
    codes, index = pd.factorize(g, sort=True)
    rows = GroupRows(s, y_obs, codes, g, pd.Index(index))
    metrics = {"accuracy": "accuracy", "tpr": "tpr"}
    n_draws = 4000
    method = group_method(BC, threshold=0.5, n_draws=n_draws, p_pooled=0.5, unlabeled="expected")
    method.sums(metrics, rows, np.random.default_rng(0), rows.index)
    posterior = np.array([0.3, 0.6, 0.85])  # P(z_g = pooled | y); prior odds 1 at p_pooled 0.5

    def run(log_bf):  # the same stream of random numbers whatever the Bayes factors
        return method.unlabeled_sums(metrics, rows, rows, log_bf, np.random.default_rng(7))

    mixed, pooled, free = run(logit(posterior)), run(np.full(3, 60.0)), run(np.full(3, -60.0))
    chosen = {}
    for name in metrics:
        for j in (2, 3):  # the numerator's and the denominator's draws
            a, p, f = mixed[name][j], pooled[name][j], free[name][j]
            assert np.all((a == p) | (a == f)), "a draw mixes the two models within a group"
            distinct = p != f
            picks = np.where(distinct, a == p, np.nan)
            chosen.setdefault("pooled", picks if name == "accuracy" and j == 2 else None)
            agree = distinct & ~np.isnan(chosen["pooled"])
            assert np.array_equal(picks[agree], chosen["pooled"][agree]), "metrics disagree"
    z = chosen["pooled"]
    assert not np.isnan(z).any()
    se = np.sqrt(posterior * (1 - posterior) / n_draws)
    np.testing.assert_array_less(np.abs(z.mean(axis=0) - posterior), 4 * se)
    for i, j in itertools.combinations(range(3), 2):  # independent across groups
        joint = np.mean(z[:, i] * z[:, j])
        product = posterior[i] * posterior[j]
        assert abs(joint - product) < 4 * np.sqrt(product * (1 - product) / n_draws)

"""The one-coin noise model of annotators, and BayesianAccuracy fitted through it."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.metrics._annotators import OneCoinAnnotators, beta_from_interval, label_patterns


def pool(n=3000, K=5, seed=0, labeled=600):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, K)) * 2.0
    X = np.exp(logits)
    X /= X.sum(1, keepdims=True)
    y = np.array([rng.choice(K, p=p) for p in X])
    rows = rng.choice(n, labeled, replace=False)
    return X, y, rows, rng


def two_annotators(seed, first=0.05, second=0.05, repeats=300):
    """A pool, its labeled rows, and their labels: all by the first annotator, the
    first ``repeats`` rows by the second too."""
    X, y, rows, rng = pool(seed=seed)
    K = X.shape[1]
    labels = np.full((y.size, 2), -1)
    labels[rows, 0] = slipped(y[rows], first, rng, K)
    labels[rows[:repeats], 1] = slipped(y[rows[:repeats]], second, rng, K)
    return X, y, rows, labels


def slipped(y, eps, rng, K):
    slip = rng.random(y.size) < eps
    return np.where(slip, (y + rng.integers(1, K, y.size)) % K, y)


def test_label_patterns_codes_classes_by_first_appearance():
    pred = np.array([0, 1, 2])
    labels = np.array([[0, 3, -1], [2, 2, 1], [4, 5, 4]])
    codes, others = label_patterns(pred, labels)
    np.testing.assert_array_equal(codes, [[0, 1, -1], [1, 1, 0], [1, 2, 1]])
    np.testing.assert_array_equal(others[:, :2], [[3, -1], [2, -1], [4, 5]])


def test_beta_from_interval_holds_its_quantiles():
    from scipy import stats

    a, b = beta_from_interval(0.85, 0.999)
    np.testing.assert_allclose(stats.beta.ppf([0.025, 0.975], a, b), [0.85, 0.999], atol=1e-6)


def test_without_annotators_the_fit_is_the_plain_one():
    X, y, rows, _ = pool()
    labels = np.full(y.size, -1)
    labels[rows] = y[rows]
    auto = BayesianAccuracy(random_state=0).fit(X, labels)
    plain = BayesianAccuracy(label_noise="none", random_state=0).fit(X, labels)
    assert not hasattr(auto, "imputations_")
    pd.testing.assert_frame_equal(auto.summary(), plain.summary())
    assert auto.overall_interval() == plain.overall_interval()


def test_a_gold_annotator_leaves_the_labels_as_they_are():
    X, y, rows, _ = pool()
    labels = np.full(y.size, -1)
    labels[rows] = y[rows]
    gold = BayesianAccuracy(
        annotator_prior=1.0, label_noise="one_coin", n_imputations=3, random_state=0
    ).fit(X, labels)
    plain = BayesianAccuracy(random_state=0).fit(X, labels)
    # The same labels in every draw: the plain fit, to the Monte Carlo error of its draws.
    assert gold.overall_mean() == pytest.approx(plain.overall_mean(), abs=0.005)
    summary = gold.annotator_summary()
    assert summary.loc["annotator", "mean"] == 1.0


def test_repeats_recover_the_slip_rates_and_the_accuracy():
    X, y, rows, rng = pool(n=6000, labeled=3000, seed=1)
    K = X.shape[1]
    twice = rows[: rows.size // 3]
    first, second = rows[: rows.size // 2], rows[rows.size // 2 :]
    labels = np.full((y.size, 2), -1)
    labels[first, 0] = slipped(y[first], 0.04, rng, K)
    labels[second, 1] = slipped(y[second], 0.12, rng, K)
    labels[twice, 1] = slipped(y[twice], 0.12, rng, K)
    frame = pd.DataFrame(labels, columns=["ann", "bob"])
    est = BayesianAccuracy(random_state=0).fit(X, frame)
    truth = np.mean(X.argmax(1) == y)
    lo, hi = est.overall_interval()
    assert lo <= truth <= hi
    acc = est.annotator_summary()
    assert acc.loc["ann", "lower"] <= 0.96 <= acc.loc["ann", "upper"]
    assert acc.loc["bob", "lower"] <= 0.88 <= acc.loc["bob", "upper"]
    assert acc.loc["ann", "n_repeated"] == twice.size
    # Labels taken as the truth miss: the slips read as the black box's errors.
    first_label = np.where(labels[:, 0] >= 0, labels[:, 0], labels[:, 1])
    naive = BayesianAccuracy(random_state=0).fit(X, first_label).overall_interval()
    assert naive[1] < truth


def test_one_annotator_without_repeats_spans_its_prior():
    X, y, rows, rng = pool(seed=2)
    labels = np.full(y.size, -1)
    labels[rows] = slipped(y[rows], 0.05, rng, X.shape[1])
    wide = BayesianAccuracy(annotator_prior=(0.7, 0.999), label_noise="one_coin", random_state=0)
    narrow = BayesianAccuracy(annotator_prior=(0.94, 0.96), label_noise="one_coin", random_state=0)
    w = np.diff(wide.fit(X, labels).overall_interval())[0]
    n = np.diff(narrow.fit(X, labels).overall_interval())[0]
    plain = np.diff(BayesianAccuracy(random_state=0).fit(X, labels).overall_interval())[0]
    assert w > n > 0.8 * plain


def test_without_repeats_the_slip_rate_keeps_its_prior_under_repeats():
    """One annotator and no repeats, ``slip_evidence="repeats"``: its accuracy's draws
    follow its prior (checked by a Kolmogorov-Smirnov test), where the joint posterior
    reads it from how often the labels agree with the black box."""
    from scipy import stats

    X, y, rows, rng = pool(seed=4)
    labels = np.full(y.size, -1)
    labels[rows] = slipped(y[rows], 0.05, rng, X.shape[1])
    est = BayesianAccuracy(label_noise="one_coin", slip_evidence="repeats", random_state=0)
    est.fit(X, labels)
    a, b = beta_from_interval(0.85, 0.999)
    model = est._annotators
    assert np.ptp(model.slip_weights_) == 0
    assert stats.kstest(1 - model.slip_draws_[:, 0], stats.beta(a, b).cdf).pvalue > 0.01
    mean = est.annotator_summary().iloc[0]["mean"]
    assert mean == pytest.approx(a / (a + b), abs=0.01)
    joint = BayesianAccuracy(label_noise="one_coin", slip_evidence="all", random_state=0)
    assert joint.fit(X, labels).annotator_summary().iloc[0]["mean"] != pytest.approx(mean)


def test_bounds_without_repeats_draws_each_end_of_the_allowed_range_alike():
    """slip_evidence="bounds", one annotator and no repeats: the slip rate is drawn at the
    prior's low end or at the largest slip rate the labels do not reject, half the time
    each; the interval spans both ends' posteriors."""
    from scipy import stats

    X, y, rows, rng = pool(seed=4)
    labels = np.full(y.size, -1)
    labels[rows] = slipped(y[rows], 0.05, rng, X.shape[1])
    est = BayesianAccuracy(label_noise="one_coin", slip_evidence="bounds", random_state=0)
    est.fit(X, labels)
    a, b = beta_from_interval(0.85, 0.999)
    low, high = est._annotators._ends
    assert low[0] == pytest.approx(1 - stats.beta.ppf(0.975, a, b))
    assert low[0] < high[0] <= 1 - stats.beta.ppf(0.025, a, b) + 1e-12
    draws = est._annotators.slip_draws_[:, 0]
    assert set(np.round(draws, 12)) == {round(low[0], 12), round(high[0], 12)}
    assert np.mean(draws == low[0]) == pytest.approx(0.5, abs=0.01)
    ends = [
        BayesianAccuracy(annotator_prior=1 - e, label_noise="one_coin", random_state=0)
        .fit(X, labels)
        .overall_interval()
        for e in (low[0], high[0])
    ]
    lo, hi = est.overall_interval()
    assert ends[0][0] - 0.01 <= lo < ends[0][1] and ends[1][0] < hi <= ends[1][1] + 0.01


def test_bounds_caps_the_slip_rate_where_labels_agree_with_the_black_box():
    """A black box right on every row and labels that agree with it 97 % of the time: the
    allowed range's high end is near 3 %, far below the prior's 15 %."""
    rng = np.random.default_rng(0)
    n, K = 2000, 4
    y = rng.integers(0, K, n)
    X = np.full((n, K), 0.02)
    X[np.arange(n), y] = 0.94
    labels = slipped(y, 0.03, rng, K)
    est = BayesianAccuracy(label_noise="one_coin", slip_evidence="bounds", random_state=0)
    model = est.fit(X, labels)._annotators
    _, high = model._ends
    assert 0.02 < high[0] < 0.06
    # beyond the cap the likelihood ratio rejects the slip rate at 5 %
    from scipy import stats

    grid = np.linspace(0.001, 0.15, 300)[:, None]
    ev = model.log_evidence(grid)
    assert (
        model.log_evidence(np.array([[high[0] + 0.01]]))[0] < ev.max() - stats.chi2.ppf(0.95, 1) / 2
    )


@pytest.mark.slow
def test_bounds_covers_averaged_over_the_prior():
    """One annotator, 1,000 rows labeled once, its slip rate drawn from the default prior:
    the 95 % interval under slip_evidence="bounds" holds the pool's accuracy in at least
    53 of 60 runs (below that has probability 0.6 % at 95 %)."""
    a, b = beta_from_interval(0.85, 0.999)
    hits = 0
    for seed in range(60):
        X, y, rows, rng = pool(seed=seed, labeled=1000)
        labels = np.full(y.size, -1)
        labels[rows] = slipped(y[rows], 1 - rng.beta(a, b), rng, X.shape[1])
        lo, hi = (
            BayesianAccuracy(slip_evidence="bounds", n_imputations=10, random_state=seed)
            .fit(X, pd.DataFrame({"a": labels}))
            .overall_interval()
        )
        hits += lo <= np.mean(X.argmax(1) == y) <= hi
    assert hits >= 53


def test_bounds_with_repeats_is_repeats():
    X, y, rows, labels = two_annotators(seed=6)
    frame = pd.DataFrame(labels, columns=["a", "b"])
    fits = [
        BayesianAccuracy(slip_evidence=e, n_imputations=4, random_state=0).fit(X, frame)
        for e in ("repeats", "bounds")
    ]
    assert fits[1]._annotators._ends is None
    np.testing.assert_array_equal(fits[0].imputed_labels_, fits[1].imputed_labels_)
    assert fits[0].overall_interval() == fits[1].overall_interval()


def test_the_slip_rates_read_the_labels_beyond_the_first_given_the_first():
    """The evidence on the slip rates is p(labels) / p(each item's first label), the
    first in the order of the columns; every label's under slip_evidence="all"."""
    X, y, rows, labels = two_annotators(seed=6)
    pred = group = X.argmax(axis=1)[rows]
    prior = [beta_from_interval(0.85, 0.999)] * 2
    rng = np.random.default_rng(0)
    eps = np.array([[0.02, 0.05], [0.1, 0.1]])
    first = labels[rows].copy()
    first[first[:, 0] >= 0, 1] = -1
    whole, once = (
        OneCoinAnnotators(pred, group, v, 5, prior, rng, slip_evidence="all")
        for v in (labels[rows], first)
    )
    cut = OneCoinAnnotators(pred, group, labels[rows], 5, prior, rng)
    np.testing.assert_allclose(
        cut._slip_evidence(eps), whole.log_evidence(eps) - once.log_evidence(eps)
    )
    np.testing.assert_allclose(whole._slip_evidence(eps), whole.log_evidence(eps))


def test_annotator_per_row_equals_one_column_each():
    X, y, rows, rng = pool(seed=3)
    labels = np.full(y.size, -1)
    labels[rows] = slipped(y[rows], 0.05, rng, X.shape[1])
    who = np.where(np.arange(y.size) % 2, "x", "y").astype(object)
    wide = np.full((y.size, 2), -1)
    wide[(labels >= 0) & (who == "y"), 0] = labels[(labels >= 0) & (who == "y")]
    wide[(labels >= 0) & (who == "x"), 1] = labels[(labels >= 0) & (who == "x")]
    a = BayesianAccuracy(random_state=0, n_imputations=4).fit(X, labels, annotator=who)
    b = BayesianAccuracy(random_state=0, n_imputations=4).fit(
        X, pd.DataFrame(wide, columns=["y", "x"])
    )
    assert a.overall_mean() == pytest.approx(b.overall_mean())
    assert list(a.annotator_names_) == ["y", "x"]


@pytest.mark.parametrize(
    ("kwargs", "fit", "match"),
    [
        ({"label_noise": "none"}, {"annotator": "two"}, "label_noise='none'"),
        ({"label_noise": "none"}, {"y": "wide"}, "label_noise='none'"),
        ({}, {"y": "wide", "annotator": "one"}, "annotator is for one-dimensional y"),
        ({"annotator_prior": {"zed": 0.9}}, {"y": "wide"}, "zed"),
        ({"annotator_prior": (0.99, 0.9)}, {"y": "wide"}, "0 < low < high < 1"),
        ({"annotator_prior": (0.5, "x")}, {"y": "wide"}, "central 95 % interval"),
        ({"annotator_prior": 1.0}, {"y": "clash"}, "disagree on labeled item"),
        ({}, {"annotator": "gap"}, r"annotator\[0\] is missing"),
        ({"slip_evidence": "some"}, {"y": "wide"}, "'slip_evidence' parameter"),
    ],
)
def test_bad_annotator_input_is_refused(kwargs, fit, match):
    X = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.1, 0.9]])
    y = np.array([0, 1, 1, -1])
    wide = pd.DataFrame({"a": [0, 1, -1, -1], "b": [1, -1, 0, -1]})
    args = {"y": y}
    if fit.get("y") == "wide":
        args["y"] = wide
    if fit.get("y") == "clash":
        args["y"] = wide
    if fit.get("annotator") == "two":
        args["annotator"] = ["a", "b", "a", "b"]
    if fit.get("annotator") == "one":
        args["annotator"] = ["a"] * 4
    if fit.get("annotator") == "gap":
        args["annotator"] = [None, "b", "a", "b"]
    with pytest.raises(ValueError, match=match):
        BayesianAccuracy(random_state=0, n_imputations=2, **kwargs).fit(X, **args)


def test_partial_fit_after_a_noisy_fit_is_refused():
    X, y, rows, _ = pool()
    labels = np.full(y.size, -1)
    labels[rows] = y[rows]
    est = BayesianAccuracy(label_noise="one_coin", n_imputations=2, random_state=0).fit(X, labels)
    with pytest.raises(ValueError, match="needs every label at once"):
        est.partial_fit(X, labels)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(1, 3),
    st.integers(0, 2**31 - 1),
)
def test_drawn_true_labels_are_classes_and_respect_a_gold_standard(K, A, seed):
    rng = np.random.default_rng(seed)
    n = 60
    pred = rng.integers(0, K, n)
    labels = np.where(rng.random((n, A)) < 0.6, rng.integers(0, K, (n, A)), -1)
    labels[:, 0] = np.where(labels[:, 0] < 0, rng.integers(0, K, n), labels[:, 0])
    prior = [1.0] + [beta_from_interval(0.8, 0.99)] * (A - 1)  # the first is gold
    model = OneCoinAnnotators(pred, rng.integers(0, 3, n), labels, K, prior, rng)
    eps, drawn = model.draw(5)
    assert drawn.shape == (5, n)
    assert ((drawn >= 0) & (drawn < K)).all()
    np.testing.assert_array_equal(drawn, np.broadcast_to(labels[:, 0], drawn.shape))
    assert (eps[:, 0] == 0).all() and ((eps >= 0) & (eps < 1)).all()


@pytest.mark.slow
def test_coverage_with_two_annotators_and_repeats():
    """Seeded: 40 pools, slips of 2.5 % and 7.5 %, 30 % of 1,500 items labeled twice.

    The 95 % interval of the overall accuracy holds the truth in at least 34
    of 40 (a binomial 95 % lower bound at 0.95 is 35; one less for Monte Carlo
    error); taking the labels as the truth, in at most half.
    """
    hits, naive_hits = 0, 0
    for seed in range(40):
        X, y, rows, rng = pool(n=5000, labeled=1500, seed=100 + seed)
        K = X.shape[1]
        labels = np.full((y.size, 2), -1)
        first = rng.integers(0, 2, rows.size)
        for a, eps in enumerate((0.025, 0.075)):
            mine = rows[first == a]
            labels[mine, a] = slipped(y[mine], eps, rng, K)
        again = rows[rng.random(rows.size) < 0.3]
        for i in again:
            a = 1 - int(labels[i, 0] >= 0)
            labels[i, a] = slipped(y[[i]], (0.025, 0.075)[a], rng, K)[0]
        truth = np.mean(X.argmax(1) == y)
        lo, hi = BayesianAccuracy(random_state=seed).fit(X, labels).overall_interval()
        hits += lo <= truth <= hi
        first_label = np.where(labels[:, 0] >= 0, labels[:, 0], labels[:, 1])
        lo, hi = BayesianAccuracy(random_state=seed).fit(X, first_label).overall_interval()
        naive_hits += lo <= truth <= hi
    assert hits >= 34, hits
    assert naive_hits <= 20, naive_hits


@pytest.mark.parametrize(
    "cls", [BayesianConfusionMatrix, BayesianMisclassificationCost, BayesianCalibrationError]
)
def test_every_label_estimator_takes_annotators(cls):
    X, y, rows, rng = pool(seed=4)
    K = X.shape[1]
    labels = np.full((y.size, 2), -1)
    labels[rows[:400], 0] = slipped(y[rows[:400]], 0.02, rng, K)
    labels[rows[200:], 1] = slipped(y[rows[200:]], 0.1, rng, K)
    est = cls(random_state=0, n_imputations=4).fit(X, labels)
    plain = cls(random_state=0).fit(X, np.where(labels[:, 0] >= 0, labels[:, 0], labels[:, 1]))
    assert len(est.imputations_) == 3
    mixed, single = est.summary(), plain.summary()
    assert mixed.index.equals(single.index)
    assert (mixed["lower"] <= mixed["mean"]).all() and (mixed["mean"] <= mixed["upper"]).all()
    lo, hi = est.overall_interval()
    assert lo < est.overall_mean() < hi
    assert est.overall_samples(1000).shape == (1000,)
    assert list(est.annotator_summary().index) == ["0", "1"]
    # A gold standard: the labels as they are, to the Monte Carlo error of the draws.
    gold = cls(random_state=0, n_imputations=2, annotator_prior=1.0, label_noise="one_coin")
    gold.fit(X, labels[:, :1])
    alone = cls(random_state=0).fit(X, labels[:, 0])
    assert gold.overall_mean() == pytest.approx(alone.overall_mean(), abs=0.01)


def test_the_confusion_matrix_mixes_its_draws():
    X, y, rows, labels = two_annotators(seed=5, repeats=200)
    est = BayesianConfusionMatrix(random_state=0, n_imputations=3).fit(X, labels)
    draws = est.confusion_matrix_samples(300)
    assert draws.shape == (300, X.shape[1], X.shape[1])
    np.testing.assert_allclose(draws.sum(axis=(1, 2)), 1.0)
    np.testing.assert_allclose(est.confusion_matrix().to_numpy().sum(), 1.0)


def test_fleiss_kappa_of_two_raters_is_scotts_pi():
    from skassess.metrics._annotator_reports import fleiss_kappa

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 200)
    b = np.where(rng.random(200) < 0.7, a, rng.integers(0, 3, 200))
    observed = np.mean(a == b)
    share = np.bincount(np.concatenate([a, b]), minlength=3) / 400
    pi = (observed - share @ share) / (1 - share @ share)
    labels = np.column_stack([a, b, np.full(200, -1)])
    assert fleiss_kappa(labels) == pytest.approx(pi)
    assert np.isnan(fleiss_kappa(np.column_stack([a, np.full(200, -1)])))


def test_agreement_and_repeat_utilities():
    X, y, rows, labels = two_annotators(seed=6)
    est = BayesianAccuracy(random_state=0, n_imputations=6).fit(
        X, pd.DataFrame(labels, columns=["a", "b"])
    )
    agreement = est.annotator_agreement()
    from sklearn.metrics import cohen_kappa_score

    common = rows[:300]
    assert agreement.loc[("a", "b"), "n_common"] == 300
    assert agreement.loc[("a", "b"), "kappa"] == pytest.approx(
        cohen_kappa_score(labels[common, 0], labels[common, 1])
    )
    doubt = est.repeat_utilities()
    assert set(doubt.index) == set(rows)
    assert doubt.is_monotonic_decreasing and ((doubt >= 0) & (doubt <= 0.25)).all()
    # Where the annotator and the black box disagree, the doubt is largest.
    once = rows[300:]
    disagree = once[labels[once, 0] != X[once].argmax(1)]
    agree = once[labels[once, 0] == X[once].argmax(1)]
    assert doubt[disagree].mean() > 5 * doubt[agree].mean()


def test_no_labels_under_label_noise():
    X, y, _, _ = pool()
    est = BayesianAccuracy(label_noise="one_coin", random_state=0).fit(X)
    assert not hasattr(est, "imputations_")  # nothing to model: the prior
    with pytest.raises(ValueError, match="no annotator labeled any row"):
        BayesianAccuracy(random_state=0).fit(X, np.full((y.size, 2), -1))


def test_dask_collections_are_refused_under_label_noise():
    da = pytest.importorskip("dask.array")
    X, y, rows, _ = pool()
    labels = np.full(y.size, -1)
    labels[rows] = y[rows]
    with pytest.raises(ValueError, match="not on Dask collections"):
        BayesianAccuracy(label_noise="one_coin").fit(da.from_array(X, chunks=1000), labels)


def test_add_annotations_after_a_fit_in_parts_equals_the_fit():
    X, y, rows, labels = two_annotators(seed=7, second=0.1, repeats=150)
    frame = pd.DataFrame(labels, columns=["a", "b"])
    whole = BayesianAccuracy(random_state=0, n_imputations=5).fit(X, frame)
    parts = BayesianAccuracy(random_state=0, n_imputations=5)
    parts.partial_fit(X[:1000]).partial_fit(X[1000:])
    order = np.sort(rows)
    parts.add_annotations(X[order], frame.iloc[order], rows=order)
    assert parts.overall_mean() == pytest.approx(whole.overall_mean(), abs=1e-12)
    pd.testing.assert_frame_equal(parts.annotator_summary(), whole.annotator_summary())
    assert set(parts.repeat_utilities().index) == set(rows)
    with pytest.raises(ValueError, match="holds labels already"):
        parts.add_annotations(X[order], frame.iloc[order])
    plain = BayesianAccuracy().fit(X, labels[:, 0])
    with pytest.raises(ValueError, match="holds labels already"):
        plain.add_annotations(X[order], frame.iloc[order])
    with pytest.raises(ValueError, match="one column per annotator"):
        BayesianAccuracy().fit(X).add_annotations(X[order], labels[order, 0])


def test_a_column_vector_is_not_an_annotator():
    X, y, rows, _ = pool()
    labels = np.full(y.size, -1)
    labels[rows] = y[rows]
    with pytest.raises(ValueError, match="y must be 1-D"):
        BayesianAccuracy().fit(X, labels[:, None])
    one = BayesianAccuracy(n_imputations=2, random_state=0)
    assert one.fit(X, pd.DataFrame({"ana": labels})).annotator_names_.tolist() == ["ana"]
    explicit = BayesianAccuracy(label_noise="one_coin", n_imputations=2, random_state=0)
    assert explicit.fit(X, labels[:, None]).annotator_names_.tolist() == ["0"]


def test_add_annotations_after_a_fit_on_dask_equals_the_fit():
    da = pytest.importorskip("dask.array")
    import dask

    X, y, rows, labels = two_annotators(seed=8, repeats=100)
    order = np.sort(rows)
    frame = pd.DataFrame(labels, columns=["a", "b"])
    with dask.config.set(scheduler="synchronous"):
        parts = BayesianAccuracy(random_state=0, n_imputations=4).fit(da.from_array(X, chunks=1000))
    parts.add_annotations(X[order], frame.iloc[order], rows=order)
    whole = BayesianAccuracy(random_state=0, n_imputations=4).fit(X, frame)
    assert parts.overall_mean() == pytest.approx(whole.overall_mean(), abs=1e-12)

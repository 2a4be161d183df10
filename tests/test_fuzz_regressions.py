"""One test per defect the fuzzing found: each is fixed and stays fixed."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skassess import ActiveAssessor, BayesianAccuracy, BayesianConfusionMatrix
from skassess.metrics import BayesianModelComparison, compare_groups, top_m_groups
from skassess.samplers import ActiveModelSelector, ActiveTester, CalibratedPrior
from skassess.session import LabelingSession

rng = np.random.default_rng(0)
MODELS = np.stack([rng.dirichlet(np.ones(3), 40), rng.dirichlet(np.ones(3), 40)], axis=1)
TRUTH = rng.integers(0, 3, 40)


def test_model_selector_should_stop_before_fit_is_not_fitted():
    with pytest.raises(NotFittedError):
        ActiveModelSelector().should_stop(0.9)


@pytest.mark.parametrize("bad", [1.5, -0.1, 0.0, True])
def test_model_selector_checks_stop_probability(bad):
    selector = ActiveModelSelector(random_state=0).fit(MODELS)
    with pytest.raises(ValueError, match="'stop_probability' parameter"):
        selector.should_stop(bad)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ActiveModelSelector(random_state=0).fit(MODELS),
        lambda: ActiveTester(random_state=0).fit(MODELS[:, 0]),
        lambda: ActiveAssessor(random_state=0).fit(MODELS[:, 0]),
    ],
)
@pytest.mark.parametrize("n", [0, -1, True])
def test_query_needs_a_positive_n(make, n):
    sampler = make()
    with pytest.raises(ValueError, match="'n' parameter"):
        sampler.query(n)


def test_a_failed_query_on_a_labeled_pool_draws_nothing():
    selector = ActiveModelSelector(random_state=0).fit(MODELS, TRUTH)
    state = selector._rng.bit_generator.state
    with pytest.raises(ValueError, match="pool is exhausted"):
        selector.query()
    assert selector._rng.bit_generator.state == state


@pytest.mark.parametrize("n_draws", [-3, 0, True])
def test_best_probabilities_checks_n_draws(n_draws):
    selector = ActiveModelSelector(random_state=0).fit(MODELS)
    with pytest.raises(ValueError, match="'n_draws' parameter"):
        selector.best_probabilities(n_draws)
    with pytest.raises(ValueError, match="'n_draws' parameter"):
        selector.estimator_.best_probabilities(n_draws)


def test_model_selector_seed_reaches_its_comparison():
    runs = []
    for _ in range(2):
        selector = ActiveModelSelector(random_state=3).fit(MODELS)
        selector.run(TRUTH, budget=10, progress=False)
        runs.append((selector.summary(), selector.best_probabilities()))
    assert runs[0][0].equals(runs[1][0]) and runs[0][1].equals(runs[1][1])
    assert selector.estimator_.random_state == 3


def test_calibrated_prior_with_a_class_the_pool_never_predicts():
    """A 10-row pool where one class is never predicted: it was refused with an internal name."""
    found = 0
    for seed in range(40):
        r = np.random.default_rng(seed)
        S = r.dirichlet(np.ones(4) * 0.3, 10)
        if np.bincount(S.argmax(axis=1), minlength=4).min() > 0:
            continue
        found += 1
        assessor = ActiveAssessor(prior_update=CalibratedPrior(), random_state=0).fit(S)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assessor.run(r.integers(0, 4, 10), budget=10, progress=False)
        assert np.isfinite(assessor.summary()[["mean", "lower", "upper"]].to_numpy()).all()
    assert found >= 5


def test_calibrated_prior_on_binary_labels_that_are_all_one_so_far():
    S = np.column_stack([np.linspace(0.05, 0.45, 12), 1 - np.linspace(0.05, 0.45, 12)])
    assessor = ActiveAssessor(prior_update=CalibratedPrior(), random_state=0).fit(S)
    assessor.tell([0, 1, 2], [1, 1, 1])  # the {-1, +1} guess is for a user's y only
    assert assessor.n_labeled_ == 3


def test_confusion_matrix_true_with_a_tiny_prior_is_finite():
    cm = BayesianConfusionMatrix(prior_strength=1e-9, random_state=0).fit(MODELS[:, 0])
    matrix = cm.confusion_matrix(normalize="true").to_numpy()
    assert np.isfinite(matrix).all()
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
    assert np.isfinite(cm.confusion_matrix_samples(50, normalize="true")).all()


def test_compare_groups_checks_the_groups_before_drawing(monkeypatch):
    est = BayesianAccuracy(random_state=0).fit(MODELS[:, 0], TRUTH)

    def no_draws(*args, **kwargs):
        raise AssertionError("drew samples before checking the groups")

    monkeypatch.setattr(est, "groupwise_samples", no_draws)
    with pytest.raises(ValueError, match="group_b=7 is not a group"):
        compare_groups(est, 0, 7)
    with pytest.raises(ValueError, match="must differ"):
        compare_groups(est, 1, 1)


def test_failed_refit_of_the_model_comparison_keeps_its_fit():
    comparison = BayesianModelComparison(random_state=0).fit(MODELS, TRUTH)
    before = comparison.summary()
    with pytest.raises(ValueError):
        comparison.fit(MODELS, TRUTH[:5])
    assert comparison.summary().equals(before)


def test_bools_are_not_numbers():
    est = BayesianAccuracy(random_state=0).fit(MODELS[:, 0], TRUTH)
    with pytest.raises(ValueError, match="'n_draws' parameter .* not a bool"):
        est.overall_samples(True)
    with pytest.raises(ValueError, match="'m' parameter .* not a bool"):
        top_m_groups(est, True)
    with pytest.raises(ValueError, match="'prior_strength' parameter .* not a bool"):
        BayesianAccuracy(prior_strength=True).fit(MODELS[:, 0])


def test_a_failing_oracle_batch_leaves_no_trace():
    selector = ActiveModelSelector(random_state=0).fit(MODELS)
    state = selector._rng.bit_generator.state
    with pytest.raises(ValueError, match="labels"):
        selector.run(np.array(["a"] * 40), budget=3, progress=False)
    assert selector._rng.bit_generator.state == state and selector.n_labeled_ == 0


def test_labeling_session_names_a_bad_pool(tmp_path):
    with pytest.raises((ValueError, TypeError), match="^X: "):
        LabelingSession(tmp_path / "s.sqlite", None, assessor=ActiveAssessor(random_state=0))


def test_draws_that_cannot_fit_are_refused_up_front(monkeypatch, tmp_path, capsys):
    """K x n_draws beyond the memory available: refused with the size, before any draw."""
    from skassess.cli import main
    from skassess.exceptions import DrawMemoryError
    from skassess.utils import _memory

    S = np.random.default_rng(0).dirichlet(np.ones(500), 10)
    est = BayesianAccuracy(random_state=0).fit(S)
    monkeypatch.setattr(_memory, "available_memory", lambda: 10_000_000)  # 10 MB

    def no_draws(*args, **kwargs):
        raise AssertionError("drew before checking the size")

    monkeypatch.setattr(est, "_groupwise_samples", no_draws)
    with pytest.raises(
        DrawMemoryError,
        match=r"4,000 draws of 500 groups need about 48 MB, "
        r"more than the 10 MB.*n_draws=833",
    ):
        est.groupwise_samples()
    assert isinstance(DrawMemoryError("x"), MemoryError)
    # the command says the same in one line
    import pandas as pd

    frame = pd.DataFrame(S, columns=[f"score_c{k}" for k in range(500)])
    frame.to_csv(tmp_path / "wide.csv", index_label="id")
    assert main(["assess", str(tmp_path / "wide.csv"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "draws of 500 groups need" in err and err.count("\n") == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda: ActiveModelSelector(random_state=0).fit(MODELS),
        lambda: ActiveTester(random_state=0).fit(MODELS[:, 0]),
        lambda: ActiveAssessor(random_state=0).fit(MODELS[:, 0]),
    ],
)
def test_a_refused_query_of_an_exhausted_pool_changes_nothing(make):
    """query(n=2) with one item left raises and leaves the sampler as it was (it
    had recorded the next step's generator first)."""
    import pickle

    sampler = make()
    for _ in range(len(TRUTH) - 1):
        idx = sampler.query()
        sampler.tell(idx, TRUTH[idx])
    before = pickle.dumps(sampler)
    with pytest.raises(ValueError, match="The pool is exhausted: 1 unlabeled"):
        sampler.query(2)
    assert pickle.dumps(sampler) == before


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_draws_are_refused_like_nan(value):
    import pandas as pd

    from skassess.metrics import worst_group

    draws = pd.DataFrame({"a": [0.9, value, 0.8], "b": [0.7, 0.6, 0.65]})
    for call in (lambda: worst_group(draws), lambda: top_m_groups(draws, 1)):
        with pytest.raises(ValueError, match="the draws of group 'a' hold an infinite value"):
            call()


def test_frequentist_summary_names_a_group_without_labels():
    from skassess.calibration import BayesianGroupMetrics
    from skassess.exceptions import SkassessWarning

    p = rng.random(200)
    y = (rng.random(200) < p).astype(int)
    y[20:] = -1
    groups = np.where(np.arange(200) < 100, "a", "b")
    est = BayesianGroupMetrics(method="frequentist", random_state=0).fit(p, y, group_by=groups)
    message = r"frequentist estimate is NaN for the accuracy of b, tpr of b"
    with pytest.warns(SkassessWarning, match=message):
        table = est.summary()
    assert np.isnan(table.loc[("accuracy", "b"), "median"])
    assert np.isfinite(table.loc[("accuracy", "a"), "median"])


@pytest.mark.parametrize("classes", [None, [0, 1]])
def test_complex_labels_are_refused_not_cast(classes):
    from skassess.calibration import HierarchicalBetaCalibrator

    p = rng.random(40)
    y = (rng.random(40) < p).astype(complex)
    for fit in (
        lambda: HierarchicalBetaCalibrator(classes=classes).fit(p, y, group_by=np.arange(40) % 2),
        lambda: BayesianAccuracy(classes=classes).fit(p, y),
        lambda: BayesianAccuracy(classes=classes).fit(p, y.astype(object)),
    ):
        with pytest.raises(ValueError, match=r"y holds a complex number, .*j\)? at row 0"):
            fit()

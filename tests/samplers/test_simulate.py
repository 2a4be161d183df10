"""The many-run simulation engine and the calibrated prior."""

import numpy as np
import pytest

from skassess import BayesianAccuracy, BayesianConfusionMatrix
from skassess.calibration._maps import fit_llo
from skassess.datasets import load_fashion_mnist_scores
from skassess.samplers import CalibratedPrior, simulate


@pytest.fixture(scope="module")
def fm():
    data = load_fashion_mnist_scores()
    return data.scores, data.target


@pytest.mark.slow
def test_results_do_not_depend_on_n_jobs(fm):
    X, y = fm
    one = simulate(X, y, budget=30, n_runs=150, random_state=0)
    two = simulate(X, y, budget=30, n_runs=150, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(one.by_run, two.by_run)
    assert one.by_run.shape == (150, 3)
    np.testing.assert_array_equal(one.n_labels, [10, 20, 30])


def test_runs_spread_over_a_dask_cluster_give_the_same_results(fm, dask_client):
    joblib = pytest.importorskip("joblib")
    X, y = fm
    one = simulate(X, y, budget=20, n_runs=60, random_state=0)
    with joblib.parallel_config(backend="dask"):
        cluster = simulate(X, y, budget=20, n_runs=60, random_state=0, n_jobs=-1)
    np.testing.assert_array_equal(one.by_run, cluster.by_run)


def test_informative_thompson_beats_frequentist_random(fm):
    X, y = fm
    freq = simulate(
        X,
        y,
        estimator=BayesianAccuracy(prior=np.array([5e-7, 5e-7])),
        strategy="random",
        budget=50,
        n_runs=200,
        random_state=0,
    )
    ts = simulate(
        X, y, estimator=BayesianAccuracy(prior="informative"), budget=50, n_runs=200, random_state=0
    )
    assert ts.mean[-1] < freq.mean[-1]


def test_error_shrinks_to_zero_with_the_whole_pool():
    rng = np.random.default_rng(0)
    X = rng.dirichlet(np.ones(3), size=300)
    y = X.argmax(1)
    y[::4] = (y[::4] + 1) % 3
    res = simulate(
        X, y, estimator=BayesianAccuracy(prior=np.array([1e-9, 1e-9])), n_runs=5, random_state=0
    )
    assert res.n_labels[-1] == 300 and np.allclose(res.by_run[:, -1], 0, atol=1e-6)
    conf = simulate(
        X, y, estimator=BayesianConfusionMatrix(prior=np.full(3, 1e-9)), n_runs=3, random_state=0
    )
    assert conf.metric == "confusion_rmse" and np.allclose(conf.by_run[:, -1], 0, atol=1e-6)


def test_identification_mrr_reaches_one():
    rng = np.random.default_rng(0)
    n, K = 2000, 4
    pred = rng.integers(0, K, n)
    correct = rng.random(n) < np.array([0.5, 0.9, 0.95, 0.99])[pred]
    y = np.where(correct, pred, (pred + 1) % K)
    X = np.full((n, K), 0.1 / (K - 1))
    X[np.arange(n), pred] = 0.9
    res = simulate(X, y, task="least_accurate", budget=300, n_runs=50, random_state=0)
    assert res.metric == "mrr" and res.truth.tolist() == [0]
    assert res.mean[-1] > 0.99


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(budget=10**6), r"budget must be at most the rows the task can label \(10000\)"),
        (dict(budget=0), "The 'budget' parameter of simulate must be an int in the range"),
        (dict(n_runs=0), "The 'n_runs' parameter of simulate must be"),
        (dict(log_every=0), "The 'log_every' parameter of simulate must be"),
        (dict(evaluate="accuracy"), "The 'evaluate' parameter of simulate must be a str among"),
        (dict(strategy="nope"), "The 'strategy' parameter of simulate must be a str among"),
        (dict(rope=-0.1), "The 'rope' parameter of simulate must be"),
        (dict(estimator=object()), "The 'estimator' parameter of simulate must be"),
        (
            dict(
                task="least_accurate",
                evaluate="rmse",
                estimator=BayesianConfusionMatrix(prior="uniform"),
            ),
            "needs BayesianAccuracy",
        ),
        # The default prior of BayesianAccuracy is the calibrated one, which each run
        # would otherwise keep at its unlabeled-pool state, silently.
        (
            dict(estimator=BayesianAccuracy()),
            r"not refit the calibrated prior .* prior='auto' is not supported here \(it is the "
            r"calibrated prior\)",
        ),
        (dict(estimator=BayesianAccuracy(prior="calibrated")), "not refit the calibrated prior"),
        (
            dict(estimator=BayesianAccuracy(prior="hierarchical")),
            "not refit the hierarchical prior",
        ),
    ],
)
def test_simulate_rejects_bad_input(fm, kwargs, match):
    X, y = fm
    with pytest.raises(ValueError, match=match):
        simulate(X, y, **{"budget": 10, "n_runs": 2, **kwargs})


def test_simulate_needs_every_label(fm):
    X, y = fm
    y = y.copy()
    y[3] = -1
    with pytest.raises(ValueError, match="needs the true label of every row; y has 1"):
        simulate(X, y, budget=10, n_runs=2)


def test_calibrated_prior_beats_the_raw_informative_prior_when_miscalibrated():
    # An over-confident model: true accuracy is a shrunk confidence.
    rng = np.random.default_rng(1)
    n, K = 5000, 5
    pred = rng.integers(0, K, n)
    conf = rng.uniform(0.7, 0.999, n)
    correct = rng.random(n) < 0.5 + 0.7 * (conf - 0.5)
    y = np.where(correct, pred, (pred + 1) % K)
    X = np.full((n, K), 0.0) + ((1 - conf) / (K - 1))[:, None]
    X[np.arange(n), pred] = conf
    est = BayesianAccuracy(prior="informative")
    raw = simulate(X, y, estimator=est, budget=50, n_runs=100, random_state=0)
    cal = simulate(
        X, y, estimator=est, budget=50, n_runs=100, random_state=0, prior_update=CalibratedPrior()
    )
    # Measured ratio 0.72 (0.55 with the earlier log-uniform prior on the group
    # deviations, which the coverage rule replaced by a uniform one: with
    # five groups that agree, the deviations are barely identified and the prior
    # stays wider; see docs/benchmarks.md, the frontier).
    assert cal.mean[-1] < 0.8 * raw.mean[-1]


def test_fit_llo_recovers_known_parameters():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 2, size=(200, 4000))
    a, b = 0.6, -0.4
    z = (rng.random(x.shape) < 1 / (1 + np.exp(-(a * x + b)))).astype(float)
    slope, intercept = fit_llo(x, z, intercept_scale=10.0, slope_scale=10.0)
    # The sampling sd of the slope is about 0.02: 95 % of fits within 2 sd.
    assert np.mean(np.abs(slope - a) < 2 * slope.std()) > 0.9
    assert abs(slope.mean() - a) < 0.01 and abs(intercept.mean() - b) < 0.01


@pytest.mark.parametrize(
    "task, prior_update",
    [("least_accurate", None), ("estimate", None), ("least_accurate", "calibrated")],
)
def test_simulate_equals_active_assessor_on_the_same_labels(task, prior_update):
    # simulate's vectorized loop and ActiveAssessor's ask/tell loop are two
    # implementations of one labeling loop. A greedy strategy (epsilon=0) on
    # groups whose priors differ chooses the same group at every step in both;
    # every row of a group has the same confidence and outcome, so which row of
    # the group is labeled does not matter, and the posteriors must agree after
    # each label (with the calibrated prior refitted after each, too).
    from skassess.samplers import ActiveAssessor, EpsilonGreedy

    K, per = 4, 40
    pred = np.repeat(np.arange(K), per)
    conf = np.repeat([0.55, 0.7, 0.8, 0.9], per)
    X = np.full((K * per, K), 0.0)
    X[np.arange(K * per), pred] = conf
    X[np.arange(K * per), (pred + 1) % K] = 1.0 - conf
    right = np.repeat([True, False, True, False], per)
    y = np.where(right, pred, (pred + 1) % K)
    budget = 25
    update = None if prior_update is None else CalibratedPrior()

    def group_mean(g):
        def evaluate(state):
            return state.mean()[:, g]

        return evaluate

    simulated = np.column_stack(
        [
            simulate(
                X,
                y,
                task=task,
                strategy=EpsilonGreedy(epsilon=0.0),
                estimator=BayesianAccuracy(prior="informative"),
                prior_update=update,
                budget=budget,
                n_runs=2,
                log_every=1,
                evaluate=group_mean(g),
                random_state=0,
            ).by_run[0]
            for g in range(K)
        ]
    )
    assessor = ActiveAssessor(
        task=task,
        strategy=EpsilonGreedy(epsilon=0.0),
        estimator=BayesianAccuracy(prior="informative"),
        prior_update=update,
        random_state=1,
    ).fit(X)
    stepped = []
    for _ in range(budget):
        i = assessor.query()
        assessor.tell(i, y[i])
        stepped.append(assessor.estimator_.posterior_.mean())
    np.testing.assert_allclose(simulated, np.array(stepped), rtol=1e-9, atol=1e-12)

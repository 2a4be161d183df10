"""plan_labels: the expected width of the overall interval and the budget for a width."""

import numpy as np
import pytest
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.metrics import plan_labels


def _pool(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.beta(5.0, 1.5, n).clip(0.51, 1 - 1e-6)
    right = rng.random(n) < expit(logit(conf) - 0.5)
    y_true = np.where(right, 1, 0)  # binary: the prediction is class 1 when conf > 1/2
    return np.column_stack([1 - conf, conf]), y_true


def test_from_scores_alone():
    X, _ = _pool()
    plan = plan_labels(X, width=0.04)
    conf = X.max(axis=1)
    var = np.mean(conf * (1 - conf))
    assert plan.source == "scores"
    assert plan.residual_sd == pytest.approx(np.sqrt(var))
    n0 = (2 * 1.959964) ** 2 * var / 0.04**2
    assert plan.n_needed == int(np.ceil(n0 / (1 + n0 / len(conf))))
    assert plan.table["width"].is_monotonic_decreasing


def test_predicted_width_is_within_a_fifth_of_the_realised_one():
    """From 50 pilot labels, the width at 300 labels against 30 realised intervals."""
    X, y_true = _pool(seed=1)
    rng = np.random.default_rng(2)
    pilot = rng.choice(len(y_true), 50, replace=False)
    y = np.full(len(y_true), -1)
    y[pilot] = y_true[pilot]
    predicted = plan_labels(X, y, n_labels=[300]).table["width"].iloc[0]
    widths = []
    for r in range(30):
        rows = rng.choice(len(y_true), 300, replace=False)
        y = np.full(len(y_true), -1)
        y[rows] = y_true[rows]
        lo, hi = BayesianAccuracy(random_state=r).fit(X, y).overall_interval()
        widths.append(hi - lo)
    assert predicted == pytest.approx(np.mean(widths), rel=0.2)


def test_budgets_outside_the_pool_are_refused():
    X, _ = _pool(n=500)
    with pytest.raises(
        ValueError,
        match="n_labels must be between 1 and the pool's size 500; "
        r"got \[10, 600\]",
    ):
        plan_labels(X, n_labels=[10, 600])


def test_width_out_of_range_is_refused():
    X, _ = _pool(n=500)
    with pytest.raises(ValueError, match="width"):
        plan_labels(X, width=1.5)

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skassess import BayesianAccuracy, BayesianCalibrationError  # noqa: E402
from skassess.metrics import (  # noqa: E402
    DifferenceDisplay,
    PosteriorDisplay,
    ReliabilityDisplay,
    compare_groups,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    scores = rng.dirichlet([0.5, 0.5, 0.5], size=600)
    y = np.array([rng.choice(3, p=p) for p in scores])
    return scores, y


def test_reliability_display(data):
    scores, y = data
    est = BayesianCalibrationError(n_bins=5, random_state=0).fit(scores, y)
    disp = ReliabilityDisplay.from_estimator(est)
    assert disp.ax_.get_xlabel() == "confidence (top-1 score)"
    assert disp.figure_ is disp.ax_.figure
    assert "ECE" in disp.ax_.get_legend().get_texts()[1].get_text()
    fig, ax = plt.subplots()
    disp2 = ReliabilityDisplay.from_predictions(y, scores, n_bins=5, ax=ax, show_histogram=False)
    assert disp2.ax_ is ax
    with pytest.raises(ValueError, match="classwise=False"):
        ReliabilityDisplay.from_estimator(BayesianAccuracy().fit(scores, y))
    plt.close("all")


def test_reliability_display_draws_no_point_for_a_bin_without_labels(data):
    scores, y = data
    y = np.where(scores.max(axis=1) < 0.7, -1, y)  # only the confident bins labeled
    est = BayesianCalibrationError(n_bins=10, random_state=0).fit(scores, y)
    table = est.summary()
    labeled = table["n_labeled"] > 0
    assert (~labeled & (table["weight"] > 0)).any()  # bins of rows without labels
    disp = ReliabilityDisplay.from_estimator(est)
    drawn = np.asarray(disp.line_.get_xdata(), dtype=float)
    np.testing.assert_allclose(drawn, table.loc[labeled, "confidence"].to_numpy(dtype=float))
    plt.close("all")


def test_posterior_display(data):
    scores, y = data
    acc = BayesianAccuracy(random_state=0).fit(scores, y)
    disp = PosteriorDisplay.from_estimator(acc)
    assert len(disp.mean) == 3
    assert np.all(disp.lower <= disp.mean) and np.all(disp.mean <= disp.upper)
    ece = BayesianCalibrationError(classwise=True, n_bins=3, random_state=0).fit(scores, y)
    both = PosteriorDisplay.from_estimator(acc, ece)
    assert both.ax_.get_ylabel() == "BayesianCalibrationError"
    with pytest.raises(ValueError, match="same groups"):
        PosteriorDisplay.from_estimator(acc, BayesianCalibrationError().fit(scores, y))
    PosteriorDisplay.from_predictions(y, scores)
    plt.close("all")


def test_difference_display(data):
    scores, y = data
    acc = BayesianAccuracy(random_state=0).fit(scores, y)
    disp = DifferenceDisplay.from_estimator(acc, 0, 1, rope=0.1)
    assert "P(ROPE)" in disp.ax_.get_title()
    DifferenceDisplay.from_comparison(compare_groups(acc, 0, 2))
    with pytest.raises(TypeError, match="GroupComparison"):
        DifferenceDisplay.from_comparison(acc)
    DifferenceDisplay.from_predictions(y, scores, group_a=1, group_b=2)
    plt.close("all")

"""Fit, update and summarize the metric estimators (asv)."""

import numpy as np

from skassess import BayesianAccuracy, BayesianConfusionMatrix


def pool(n, k, n_labeled, seed=0):
    """Scores of ``n`` rows over ``k`` classes, ``n_labeled`` of them labeled."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 3.0
    scores = np.exp(logits - logits.max(axis=1, keepdims=True))
    scores /= scores.sum(axis=1, keepdims=True)
    y = np.full(n, -1)
    rows = rng.choice(n, n_labeled, replace=False)
    y[rows] = rng.integers(0, k, n_labeled)
    return scores, y


class CalibratedAccuracy:
    """``BayesianAccuracy()`` (the calibrated prior): fit and summary."""

    params = ([10_000, 100_000], [100, 1000])
    param_names = ["n_rows", "n_labeled"]

    def setup(self, n_rows, n_labeled):
        self.X, self.y = pool(n_rows, 10, n_labeled)
        self.fitted = BayesianAccuracy(random_state=0).fit(self.X, self.y)

    def time_fit(self, n_rows, n_labeled):
        BayesianAccuracy(random_state=0).fit(self.X, self.y)

    def time_summary(self, n_rows, n_labeled):
        self.fitted.summary()

    def peakmem_fit(self, n_rows, n_labeled):
        BayesianAccuracy(random_state=0).fit(self.X, self.y)


class ConjugateUpdates:
    """The conjugate estimators' ``partial_fit``: labeled rows per second."""

    params = [100_000, 1_000_000]
    param_names = ["n_rows"]

    def setup(self, n_rows):
        self.X, _ = pool(n_rows, 10, 0)
        self.y = np.random.default_rng(1).integers(0, 10, n_rows)

    def time_accuracy_informative(self, n_rows):
        BayesianAccuracy(prior="informative").fit(self.X, self.y)

    def time_confusion_matrix(self, n_rows):
        BayesianConfusionMatrix(prior="informative").fit(self.X, self.y)

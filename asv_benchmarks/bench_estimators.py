"""Fit, update and summarize the metric estimators (asv)."""

import numpy as np

from skassess import BayesianAccuracy, BayesianConfusionMatrix
from skassess.metrics import BayesianMisclassificationCost, plan_labels


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


class CalibratedManyGroups:
    """The calibrated prior over many external groups: fit (with the summary) and memory."""

    params = [100, 300]
    param_names = ["n_groups"]
    timeout = 300

    def setup(self, n_groups):
        rng = np.random.default_rng(0)
        p1 = rng.random(100_000)
        self.X = np.column_stack([1 - p1, p1])
        self.groups = rng.integers(0, n_groups, 100_000)
        self.y = np.full(100_000, -1)
        rows = rng.choice(100_000, 1000, replace=False)
        self.y[rows] = rng.random(1000) < p1[rows]

    def time_fit(self, n_groups):
        self._fit()

    def peakmem_fit(self, n_groups):
        self._fit()

    def _fit(self):
        # the model is fitted when first asked for (the summary)
        est = BayesianAccuracy(grouping="external", random_state=0)
        est.fit(self.X, self.y, group_by=self.groups).summary()


class CalibratedCost:
    """The calibrated cost of 100 classes: the first fit learns the errors' split."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.X = rng.dirichlet(np.full(100, 0.3), 10_000)
        target = self.X.argmax(axis=1)
        flip = rng.random(10_000) < 0.3
        target[flip] = rng.integers(0, 100, flip.sum())
        self.y = np.full(10_000, -1)
        rows = rng.choice(10_000, 500, replace=False)
        self.y[rows] = target[rows]
        self.cost = rng.uniform(0, 10, (100, 100))
        np.fill_diagonal(self.cost, 0.0)

    def time_fit(self):
        est = BayesianMisclassificationCost(cost_matrix=self.cost, random_state=0)
        est.fit(self.X, self.y).overall_mean()


class PlanLabels:
    """``plan_labels`` for accuracy from a pilot of labels: the plan and its band."""

    params = [10_000, 100_000]
    param_names = ["n_rows"]

    def setup(self, n_rows):
        self.X, self.y = pool(n_rows, 10, 50)

    def time_plan(self, n_rows):
        plan_labels(self.X, self.y, width=0.05, random_state=0)


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

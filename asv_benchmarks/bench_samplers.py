"""One labeling step of each sampler, and many simulated runs (asv)."""

import numpy as np

from skassess import BayesianAccuracy
from skassess.samplers import ActiveAssessor, ActiveTester, simulate

from .bench_estimators import pool


class AssessorStep:
    """``ActiveAssessor``: query one row and tell its label."""

    params = ["thompson", "variance"]
    param_names = ["strategy"]

    def setup(self, strategy):
        self.X, _ = pool(5_000, 10, 0)
        self.truth = np.random.default_rng(2).integers(0, 10, len(self.X))
        self.assessor = ActiveAssessor(
            BayesianAccuracy(random_state=0), strategy=strategy, random_state=0
        ).fit(self.X)
        self.assessor.run(self.truth, budget=20, progress=False)

    def time_query_and_tell(self, strategy):
        i = self.assessor.query()
        self.assessor.tell(i, self.truth[i])


class TesterStep:
    """``ActiveTester``: a batch of 10 draws and their labels."""

    def setup(self):
        self.X, _ = pool(2_000, 5, 0)
        self.truth = np.random.default_rng(3).integers(0, 5, len(self.X))
        self.tester = ActiveTester(random_state=0).fit(self.X)

    def time_query_and_tell(self):
        rows = self.tester.query(10)
        self.tester.tell(rows, self.truth[rows])


class Simulate:
    """``simulate``: many Thompson-sampling runs at once."""

    params = [100, 1000]
    param_names = ["n_runs"]

    def setup(self, n_runs):
        self.X, _ = pool(10_000, 10, 0)
        self.y = np.random.default_rng(4).integers(0, 10, len(self.X))

    def time_thompson(self, n_runs):
        simulate(
            self.X,
            self.y,
            budget=200,
            n_runs=n_runs,
            strategy="thompson",
            estimator=BayesianAccuracy(prior="informative"),
            random_state=0,
        )

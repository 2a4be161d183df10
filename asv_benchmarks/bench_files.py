"""Read a scores file and commit labels to a session (asv)."""

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.session import LabelingSession, ScoresFile

from .bench_estimators import pool


class ReadScoresFile:
    """``ScoresFile.read`` of a CSV with 10 classes."""

    params = [10_000, 100_000]
    param_names = ["n_rows"]

    def setup(self, n_rows):
        self.dir = tempfile.TemporaryDirectory()
        X, y = pool(n_rows, 10, n_rows // 100)
        frame = pd.DataFrame(X, columns=[f"score_{k}" for k in range(10)])
        frame.insert(0, "id", [f"item-{i}" for i in range(n_rows)])
        frame["label"] = np.where(y >= 0, y.astype(str), "")
        self.path = Path(self.dir.name) / "scores.csv"
        frame.to_csv(self.path, index=False)

    def teardown(self, n_rows):
        self.dir.cleanup()

    def time_read(self, n_rows):
        ScoresFile(self.path).read()


class SessionLabels:
    """``LabelingSession.tell``: one label committed to the session file."""

    def setup(self):
        self.dir = tempfile.TemporaryDirectory()
        self.X, _ = pool(2_000, 10, 0)
        self.truth = np.random.default_rng(5).integers(0, 10, len(self.X))
        self.session = LabelingSession(
            Path(self.dir.name) / "s.sqlite",
            self.X,
            assessor=ActiveAssessor(BayesianAccuracy(random_state=0), random_state=0),
        )

    def teardown(self):
        self.session.close()
        self.dir.cleanup()

    def time_query_and_tell(self):
        row = self.session.query()
        self.session.tell(row, int(self.truth[row]))

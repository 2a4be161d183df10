"""The "atc" predictor: average thresholded confidence (Garg et al., ICLR 2022).

A threshold ``t`` on a per-row score is set on the reference rows so that
the share of rows scoring above it equals the reference accuracy; the
predicted accuracy of a batch is its share of rows above ``t``. The score is
the negative entropy of the scores (``"negative_entropy"``, the paper's
better variant) or the top confidence (``"max_confidence"``).
"""

import numpy as np

__all__ = ["ATCMethod"]


class ATCMethod:
    uses_features = False
    can_partial_fit = False

    def __init__(self, score="negative_entropy", random_state=None):
        self.score = score

    def _s(self, Z):
        return -Z[:, 2] if self.score == "negative_entropy" else Z[:, 0]

    def fit(self, Z, correct):
        s = self._s(Z)
        acc = float(np.mean(correct))
        # the (1 - acc) quantile: a share acc of the reference scores lies above it
        self.threshold_ = (
            float(np.quantile(s, 1.0 - acc, method="inverted_cdf")) if acc < 1 else -np.inf
        )
        return self

    def rows(self, Z):
        return {"p": (self._s(Z) > self.threshold_).astype(np.float64), "u": None, "raw": Z[:, 0]}

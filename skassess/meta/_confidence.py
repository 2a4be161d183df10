"""The "confidence" predictor: histogram-binned top-label confidence (Elder et al. Sec. 3.1).

The reference rows' top confidences fall into ``n_bins`` equal-width bins;
a row's predicted correctness is its bin's observed accuracy (Zadrozny and
Elkan's histogram binning), so the predicted accuracy of a batch is the
average over its rows: CBPE's idea with a binned map. The intrinsic
uncertainty of a row is its bin's binomial standard error
``sqrt(a_k (1 - a_k) / n_k)`` (their Sec. 4.3). The bin counts add up, so
``partial_fit`` is exact. An empty bin predicts its midpoint (the raw
confidence) with the widest uncertainty, 1/2.
"""

import numpy as np

__all__ = ["ConfidenceMethod"]


class ConfidenceMethod:
    uses_features = False
    can_partial_fit = True

    def __init__(self, n_bins=10, random_state=None):
        self.n_bins = n_bins

    def _bin(self, conf):
        return np.clip((conf * self.n_bins).astype(np.intp), 0, self.n_bins - 1)

    def fit(self, Z, correct):
        self.n_ = np.zeros(self.n_bins)
        self.k_ = np.zeros(self.n_bins)
        return self.partial_fit(Z, correct)

    def partial_fit(self, Z, correct):
        b = self._bin(Z[:, 0])
        self.n_ += np.bincount(b, minlength=self.n_bins)
        self.k_ += np.bincount(b, weights=correct, minlength=self.n_bins)
        return self

    def rows(self, Z):
        b = self._bin(Z[:, 0])
        n = self.n_[b]
        mid = (b + 0.5) / self.n_bins
        with np.errstate(invalid="ignore", divide="ignore"):
            a = np.where(n > 0, self.k_[b] / np.maximum(n, 1), mid)
            u = np.where(n > 0, np.sqrt(a * (1 - a) / np.maximum(n, 1)), 0.5)
        return {"p": a, "u": u, "raw": Z[:, 0]}

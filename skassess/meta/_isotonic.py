"""Isotonic calibration of per-row correctness with the smoothed targets of Elder et al.

A correct row's target is ``(n_+ + 1) / (n_+ + 2)`` and a wrong row's
``1 / (n_- + 2)`` (their Eq. 2), where ``n_+`` and ``n_-`` count the correct
and wrong rows of the calibration set: with few rows the map stays near 1/2,
with many it reaches 0 and 1. scikit-learn's ``IsotonicRegression`` does the
fit.
"""

import numpy as np
from sklearn.isotonic import IsotonicRegression

__all__ = ["SmoothedIsotonic"]


class SmoothedIsotonic:
    """An increasing map from raw correctness scores to calibrated ones."""

    def fit(self, raw, correct):
        correct = np.asarray(correct, dtype=bool)
        n_pos = int(correct.sum())
        n_neg = correct.size - n_pos
        target = np.where(correct, (n_pos + 1) / (n_pos + 2), 1.0 / (n_neg + 2))
        self.iso_ = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
        self.iso_.fit(np.asarray(raw, dtype=np.float64), target)
        return self

    def __call__(self, raw):
        raw = np.asarray(raw, dtype=np.float64)
        return self.iso_.predict(raw.ravel()).reshape(raw.shape)

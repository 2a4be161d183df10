"""The "doc" predictor: difference of confidences (Guillory et al., ICCV 2021).

The predicted accuracy of a batch is the reference accuracy plus the change
in mean top confidence from the reference to the batch:
``acc_ref + mean(conf_batch) - mean(conf_ref)``. Each row contributes its
confidence shifted by the reference's calibration gap; sums add up, so
``partial_fit`` is exact.
"""

import numpy as np

__all__ = ["DoCMethod"]


class DoCMethod:
    uses_features = False
    can_partial_fit = True

    def __init__(self, random_state=None):
        pass

    def fit(self, Z, correct):
        self.n_ = 0.0
        self.sum_gap_ = 0.0
        return self.partial_fit(Z, correct)

    def partial_fit(self, Z, correct):
        self.n_ += Z.shape[0]
        self.sum_gap_ += float(np.sum(correct) - np.sum(Z[:, 0]))
        return self

    def rows(self, Z):
        return {"p": Z[:, 0] + self.sum_gap_ / self.n_, "u": None, "raw": Z[:, 0]}

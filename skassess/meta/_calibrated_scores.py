"""The "calibrated_scores" and "combined" predictors.

``"calibrated_scores"`` is the estimate of NannyML's confidence-based
performance estimation (CBPE): each class's score is recalibrated one
against the rest by isotonic regression on the reference rows (is the row of
this class?), with more than two classes a row's calibrated scores are
normalized to sum to one, and a row's probability that the black box is
right is the calibrated score of its predicted class. Unlike
``"confidence"``, which bins the top score alone, each class's score has its
own map, so a binary black box's two kinds of prediction keep their own
calibration. Under a covariate shift that leaves each score's chance of
being right as it was, the mean of these probabilities is unbiased.

``"combined"`` is, row by row, the mean of ``"meta_model"``'s and
``"calibrated_scores"``'s probabilities. The meta-model reads the rows'
features and the proxies, the calibrated scores only the black box's own
scores: two estimates from different evidence, whose errors on a drifted
batch differ, averaged with equal weights. Its other outputs (``raw``,
``members``) are the meta-model's, and ``p_parts`` holds each part's
probabilities.
"""

import numpy as np
from sklearn.isotonic import IsotonicRegression

from ._meta_model import MetaModelMethod

__all__ = ["CalibratedScoresMethod", "CombinedMethod"]


class CalibratedScoresMethod:
    uses_features = False
    uses_scores = True
    can_partial_fit = False

    def __init__(self, random_state=None):
        pass

    def fit(self, Z, correct, *, scores, codes):
        n_classes = scores.shape[1]
        # a binary black box: the one map of class 1's score (class 0's is its complement)
        columns = [1] if n_classes == 2 else range(n_classes)
        self.maps_ = {
            k: IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
                scores[:, k], (codes == k).astype(np.float64)
            )
            for k in columns
        }
        self.n_classes_ = n_classes
        return self

    def calibrated(self, scores):
        """Each row's calibrated class probabilities, shape ``(n_rows, n_classes)``."""
        if self.n_classes_ == 2:
            p1 = self.maps_[1].predict(scores[:, 1])
            return np.column_stack([1.0 - p1, p1])
        C = np.column_stack([self.maps_[k].predict(scores[:, k]) for k in range(self.n_classes_)])
        total = C.sum(axis=1, keepdims=True)
        # a row every map sends to 0 has nothing to say: every class equally likely
        return np.where(total > 0, C / np.where(total > 0, total, 1.0), 1.0 / self.n_classes_)

    def rows(self, Z, *, scores):
        pred = scores.argmax(axis=1)
        p = self.calibrated(scores)[np.arange(pred.size), pred]
        return {"p": p, "u": None, "raw": scores[np.arange(pred.size), pred]}


class CombinedMethod:
    uses_features = True
    uses_scores = True
    can_partial_fit = False

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, Z, correct, *, scores, codes):
        self.meta_model_ = MetaModelMethod(random_state=self.random_state).fit(Z, correct)
        self.calibrated_scores_ = CalibratedScoresMethod().fit(
            Z, correct, scores=scores, codes=codes
        )
        return self

    def rows(self, Z, *, scores):
        out = self.meta_model_.rows(Z)
        parts = {
            "meta_model": out["p"],
            "calibrated_scores": self.calibrated_scores_.rows(Z, scores=scores)["p"],
        }
        out["p"] = 0.5 * (parts["meta_model"] + parts["calibrated_scores"])
        out["p_parts"] = parts
        return out

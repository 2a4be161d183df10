"""The "meta_model" predictor: gradient boosting + logistic regression on per-row features.

Elder et al.'s best predictor (Sec. 3.1, App. 8.1): a classifier of "the
black box is right on this row", here the average of a histogram gradient
boosting model and a logistic regression, trained on 80 % of the reference
rows and calibrated by isotonic regression with smoothed targets on the other
20 %. The predicted accuracy of a batch is the mean calibrated probability.
The paper tunes both members by a 20-draw random search; fixed, moderate
settings are used here (the search was costly and, by the paper's own
account, added variance). Missing feature values are handled by the boosting
model natively and imputed by the mean for the logistic regression.

White-box statistics for the uncertainty model: the spread of the two
members' mean predictions, the mean per-row spread between them, and the
signed change of the predicted accuracy made by the calibration.
"""

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._isotonic import SmoothedIsotonic

__all__ = ["MetaModelMethod", "calibration_split"]


def calibration_split(correct, size, random_state):
    """Indices of (fit, calibration) rows, stratified on correctness when possible."""
    idx = np.arange(correct.size)
    n_min = min(int(correct.sum()), int((~correct).sum()))
    strat = correct if n_min >= 2 else None
    return train_test_split(idx, test_size=size, stratify=strat, random_state=random_state)


class MetaModelMethod:
    uses_features = True
    can_partial_fit = False

    def __init__(self, calibration_size=0.2, random_state=None):
        self.calibration_size = calibration_size
        self.random_state = random_state

    def fit(self, Z, correct):
        fit, cal = calibration_split(correct, self.calibration_size, self.random_state)
        self.members_ = [
            HistGradientBoostingClassifier(
                max_iter=150,
                learning_rate=0.1,
                max_leaf_nodes=7,
                min_samples_leaf=20,
                early_stopping=False,
                random_state=self.random_state,
            ),
            make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(max_iter=1000)),
        ]
        for m in self.members_:
            m.fit(Z[fit], correct[fit])
        self.calibrator_ = SmoothedIsotonic().fit(self._members(Z[cal]).mean(axis=0), correct[cal])
        return self

    def _members(self, Z):
        return np.stack([m.predict_proba(Z)[:, 1] for m in self.members_])

    def rows(self, Z):
        members = self._members(Z)
        raw = members.mean(axis=0)
        return {"p": self.calibrator_(raw), "u": None, "raw": raw, "members": members}

"""The "crossval" predictor: ten random forests on cross-validation folds (Elder et al. 4.3).

Each forest learns "the black box is right on this row" from nine tenths of
the reference rows (one fold left out); their mean, calibrated by isotonic
regression with smoothed targets fitted on the out-of-fold predictions (each
reference row scored by the forest that did not see it), is a row's
predicted correctness. The standard deviation of the forests' predictions is
the intrinsic uncertainty.
"""

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import KFold

from ._isotonic import SmoothedIsotonic

__all__ = ["CrossvalMethod"]


class CrossvalMethod:
    uses_features = True
    can_partial_fit = False

    def __init__(self, n_models=10, random_state=None):
        self.n_models = n_models
        self.random_state = random_state

    def _forest(self, seed):
        return RandomForestClassifier(
            n_estimators=30, min_samples_leaf=5, max_features="sqrt", n_jobs=1, random_state=seed
        )

    def fit(self, Z, correct):
        n_folds = int(min(self.n_models, Z.shape[0]))
        folds = KFold(n_folds, shuffle=True, random_state=self.random_state)
        rng = np.random.RandomState(self.random_state)
        oof = np.empty(Z.shape[0])
        self.members_ = []
        for train, test in folds.split(Z):
            forest = self._forest(rng.randint(2**31 - 1)).fit(Z[train], correct[train])
            self.members_.append(forest)
            oof[test] = _p_correct(forest, Z[test])
        self.calibrator_ = SmoothedIsotonic().fit(oof, correct)
        return self

    def rows(self, Z):
        members = np.stack([_p_correct(m, Z) for m in self.members_])
        cal = self.calibrator_(members)
        return {
            "p": cal.mean(axis=0),
            "u": cal.std(axis=0),
            "raw": members.mean(axis=0),
            "members": members,
        }


def _p_correct(model, Z):
    """P(correct) from a classifier, also when it saw a single class."""
    proba = model.predict_proba(Z)
    classes = list(model.classes_)
    return proba[:, classes.index(True)] if True in classes else np.zeros(Z.shape[0])

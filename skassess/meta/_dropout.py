"""The "dropout" predictor: xgboost's DART booster with dropout at inference (Elder et al. 4.3).

A DART model (dropout rate 0.25, never skipped) learns "the black box is
right on this row" from the reference rows, with early stopping on a fifth of
its training rows; at prediction, ten passes each drop a random quarter of
the trees and scale up the others (Monte Carlo dropout for boosting; seeded,
so predictions repeat). Each pass is calibrated by
isotonic regression with smoothed targets fitted on a held-out fifth of the
reference; the passes' mean is a row's predicted correctness and their
standard deviation its intrinsic uncertainty.
"""

import numpy as np
from scipy.special import expit

from ..utils._random import seed_int
from ._isotonic import SmoothedIsotonic
from ._meta_model import calibration_split
from ._xgboost import import_xgboost

__all__ = ["DropoutMethod"]

_RATE = 0.25


class DropoutMethod:
    uses_features = True
    can_partial_fit = False

    def __init__(self, n_passes=10, calibration_size=0.2, random_state=None):
        self.n_passes = n_passes
        self.calibration_size = calibration_size
        self.random_state = random_state

    def fit(self, Z, correct):
        xgb = import_xgboost()
        seed = seed_int(self.random_state)
        fit, cal = calibration_split(correct, self.calibration_size, seed)
        train, stop = calibration_split(correct[fit], 0.2, seed + 1)
        train, stop = fit[train], fit[stop]
        self.model_ = xgb.XGBClassifier(
            booster="dart",
            rate_drop=_RATE,
            skip_drop=0.0,
            n_estimators=100,
            max_depth=4,
            learning_rate=0.1,
            eval_metric="rmse",
            early_stopping_rounds=10,
            n_jobs=1,
            random_state=seed,
            verbosity=0,
        )
        y = correct.astype(np.int64)
        if np.unique(y[train]).size < 2:  # xgboost needs both outcomes in its training rows
            train = fit
        self.model_.fit(Z[train], y[train], eval_set=[(Z[stop], y[stop])], verbose=False)
        self._seed = seed
        raw_cal = self._passes(Z[cal], 1)[0]
        self.calibrator_ = SmoothedIsotonic().fit(raw_cal, correct[cal])
        return self

    def _passes(self, Z, n_passes):
        # Each pass keeps every tree with probability 1 - rate and scales the kept ones by
        # 1 / (1 - rate), from per-tree margins and a seeded RNG, so predictions are
        # reproducible (xgboost's own training-time dropout draws from a global state).
        xgb = import_xgboost()
        booster = self.model_.get_booster()
        dm = xgb.DMatrix(Z)
        n_trees = int(booster.num_boosted_rounds())
        full = booster.predict(dm, output_margin=True)
        if n_trees < 2:
            return np.tile(expit(full), (n_passes, 1))
        per_tree = np.stack(
            [
                booster.predict(dm, output_margin=True, iteration_range=(i, i + 1))
                for i in range(n_trees)
            ]
        )  # each includes the base margin once
        base = (per_tree.sum(axis=0) - full) / (n_trees - 1)
        per_tree -= base
        rng = np.random.RandomState(self._seed)
        keep = rng.random_sample((n_passes, n_trees)) >= _RATE
        return expit(base + (keep / (1.0 - _RATE)) @ per_tree)

    def rows(self, Z):
        members = self._passes(Z, self.n_passes)
        cal = self.calibrator_(members)
        return {
            "p": cal.mean(axis=0),
            "u": cal.std(axis=0),
            "raw": members.mean(axis=0),
            "members": members,
        }

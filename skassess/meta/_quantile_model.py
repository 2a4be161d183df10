"""The uncertainty model's regressor: an ensemble of xgboost quantile regressors.

Elder et al. (Sec. 3.2, App. 8.2) train ten gradient-boosting models with a
quantile loss on the absolute error of the predicted accuracy and average
them. xgboost's ``reg:quantileerror`` objective fits every level of
``LEVELS`` in one model. The ensemble's quantiles are made non-decreasing
in the level and non-negative; a scale factor per level, fitted on held-out
scenarios to minimize the interval cost, calibrates them (their "TL
calibration"), optionally one per stratum of the batch's drift strength.
The fitted boosters serialize to JSON-safe text (xgboost's UBJSON, base64),
so a pretrained model ships as a small data file, not a pickle.
"""

import base64

import numpy as np

from ..utils._random import seed_int
from ._xgboost import import_xgboost

__all__ = [
    "DRIFT_STRENGTH",
    "LEVELS",
    "QuantileEnsemble",
    "calibrate_quantiles",
    "drift_strength",
    "error_unit",
    "fit_common_scale",
    "fit_scales",
    "fit_stratified_scales",
    "interval_cost",
]

#: The levels alpha the uncertainty model predicts (the paper's range, in steps of 0.05).
LEVELS = tuple(np.round(np.arange(0.5, 0.951, 0.05), 2).tolist())

#: The drift floor of :func:`error_unit`, in accuracy points / 100.
DRIFT_FLOOR = 0.01

_SCALE_GRID = np.exp(np.linspace(np.log(0.1), np.log(10.0), 401))


def interval_cost(error, half_width, alpha):
    """Elder et al.'s interval cost C_alpha, averaged over batches.

    ``alpha * max(|e| - u, 0) + (1 - alpha) * max(u - |e|, 0)``: too narrow
    an interval costs ``alpha`` per unit, too wide ``1 - alpha``. It is the
    pinball loss of ``u`` as the alpha-quantile of ``|e|``, so the constant
    ``u`` that minimizes it is that quantile: an interval ``pred +- u`` then
    covers the truth in a share alpha of the batches.

    Parameters
    ----------
    error : array-like
        Predicted minus true accuracy, per batch (the sign is ignored).
    half_width : array-like or float
        The intervals' half-widths ``u``.
    alpha : float in (0, 1)
        The cost's balance.

    Returns
    -------
    cost : float

    Examples
    --------
    >>> from skassess.meta import interval_cost
    >>> float(interval_cost([0.02, -0.05], 0.03, 0.9))  # (0.1 * 0.01 + 0.9 * 0.02) / 2
    0.0095
    """
    d = np.abs(np.asarray(error, dtype=np.float64))
    u = np.asarray(half_width, dtype=np.float64)
    return float(np.mean(alpha * np.maximum(d - u, 0.0) + (1 - alpha) * np.maximum(u - d, 0.0)))


def error_unit(predicted_accuracy, n_batch):
    """The scale the uncertainty model predicts errors in: ``sqrt(m (1 - m) / n + 0.01^2)``.

    A batch's error is sampling noise (a binomial standard error, which
    shrinks with the batch size ``n``) plus the predictor's bias under drift
    (which does not). Predicting ``|error| / unit`` rather than ``|error|``
    lets a model trained on batches of one size serve batches of another: on
    the library's leave-one-data-set-out benchmark it raised the 95 %
    intervals' coverage on nearest-neighbour drift (smaller batches than the
    linear-skew training scenarios) from about 91 % to 94 %.
    """
    m = np.clip(np.asarray(predicted_accuracy, dtype=np.float64), 0.01, 0.99)
    n = np.maximum(np.asarray(n_batch, dtype=np.float64), 1.0)
    return np.sqrt(m * (1 - m) / n + DRIFT_FLOOR**2)


def fit_scales(error, half_widths, levels=LEVELS):
    """Per level, the factor ``s`` that minimizes ``C_alpha(error, s * u)`` (grid 0.1-10)."""
    d = np.abs(np.asarray(error, dtype=np.float64))
    U = np.asarray(half_widths, dtype=np.float64).reshape(d.size, -1)
    scales = np.empty(len(levels))
    for j, a in enumerate(levels):
        u = U[:, j if U.shape[1] > 1 else 0]
        cost = [interval_cost(d, s * u, a) for s in _SCALE_GRID]
        scales[j] = _SCALE_GRID[int(np.argmin(cost))]
    return scales


def fit_common_scale(error, quantiles, levels=LEVELS):
    """One factor ``s`` for every level: the minimizer of the summed ``C_alpha(error, s * q)``.

    A handful of scenarios cannot fit a factor per level (at 0.95, three of
    sixty fall outside), but they can say how much wider or narrower a
    calibrated model's quantiles are on the whole for one deployment.
    """
    d = np.abs(np.asarray(error, dtype=np.float64))
    Q = np.asarray(quantiles, dtype=np.float64).reshape(d.size, len(levels))
    cost = [
        sum(interval_cost(d, s * Q[:, j], a) for j, a in enumerate(levels)) for s in _SCALE_GRID
    ]
    return float(_SCALE_GRID[int(np.argmin(cost))])


#: How many scenarios' weight the factor of all scenarios has in one stratum's factor.
STRATUM_PRIOR_SCENARIOS = 20


def fit_stratum_factors(error, quantiles, strength, edges, levels=LEVELS):
    """A factor per drift stratum: the stratum's :func:`fit_common_scale`, shrunk to all's.

    On the log scale, a stratum with ``n`` scenarios averages its own factor
    (weight ``n``) with the factor of all scenarios (weight
    :data:`STRATUM_PRIOR_SCENARIOS`); a stratum without scenarios takes the
    latter. ``edges`` are the strata's inner edges of ``strength``.
    """
    d = np.abs(np.asarray(error, dtype=np.float64))
    Q = np.asarray(quantiles, dtype=np.float64).reshape(d.size, len(levels))
    stratum = np.searchsorted(np.asarray(edges, dtype=np.float64), strength, side="right")
    common = np.log(fit_common_scale(d, Q, levels))
    factors = np.empty(len(edges) + 1)
    for s in range(factors.size):
        n = int(np.sum(stratum == s))
        own = np.log(fit_common_scale(d[stratum == s], Q[stratum == s], levels)) if n else 0.0
        prior = STRATUM_PRIOR_SCENARIOS
        factors[s] = np.exp((n * own + prior * common) / (n + prior))
    return factors


#: The batch features whose larger value is the drift strength that picks a calibration stratum.
DRIFT_STRENGTH = ("drift_x_accuracy", "drift_z_accuracy")


def drift_strength(features):
    """How well a classifier tells the batch from the reference, without labels.

    The larger of the two drift classifiers' leave-one-out balanced accuracies
    (in the features and in the scores): 0.5 when nothing tells them apart,
    1 when everything does; 0.5 when neither could be computed.
    """
    values = np.array([features.get(k, np.nan) for k in DRIFT_STRENGTH], dtype=np.float64)
    return 0.5 if np.all(np.isnan(values)) else float(np.nanmax(values))


def fit_stratified_scales(error, half_widths, strength, n_strata=3, levels=LEVELS):
    """``(edges, scales)``: :func:`fit_scales` within each quantile stratum of ``strength``.

    A model's quantiles that are right on average can be too wide where the
    batch looks like the reference and too narrow where it drifted; a scale
    per stratum of the drift strength calibrates each part. ``edges`` are
    the ``n_strata - 1`` inner quantiles of ``strength``; ``scales`` has one
    row per stratum.
    """
    strength = np.asarray(strength, dtype=np.float64)
    U = np.asarray(half_widths, dtype=np.float64).reshape(strength.size, -1)
    d = np.abs(np.asarray(error, dtype=np.float64))
    edges = np.quantile(strength, np.arange(1, n_strata) / n_strata)
    stratum = np.searchsorted(edges, strength, side="right")
    scales = np.vstack(
        [fit_scales(d[stratum == s], U[stratum == s], levels) for s in range(n_strata)]
    )
    return edges, scales


def calibrate_quantiles(q, strength, scales, edges=()):
    """The calibrated error quantiles: ``q`` times its stratum's scales, made non-decreasing."""
    scales = np.atleast_2d(np.asarray(scales, dtype=np.float64))
    s = int(np.searchsorted(np.asarray(edges, dtype=np.float64), strength, side="right"))
    return np.maximum.accumulate(np.asarray(q, dtype=np.float64) * scales[s])


class QuantileEnsemble:
    """``n_models`` xgboost models, each predicting every level of ``levels`` of a target."""

    def __init__(
        self,
        levels=LEVELS,
        n_models=10,
        n_estimators=150,
        max_depth=3,
        learning_rate=0.05,
        subsample=0.8,
        colsample_bynode=0.5,
        random_state=None,
    ):
        self.levels = tuple(levels)
        self.n_models = n_models
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.subsample = subsample
        self.colsample_bynode = colsample_bynode
        self.random_state = random_state

    def fit(self, F, target):
        xgb = import_xgboost()
        F = np.asarray(F, dtype=np.float64)
        target = np.asarray(target, dtype=np.float64)
        dm = xgb.DMatrix(F, label=target)
        self.boosters_ = []
        seed = seed_int(self.random_state)
        for m in range(self.n_models):
            params = {
                "objective": "reg:quantileerror",
                "quantile_alpha": np.asarray(self.levels),
                "tree_method": "hist",
                "max_depth": self.max_depth,
                "learning_rate": self.learning_rate,
                "subsample": self.subsample,
                "colsample_bynode": self.colsample_bynode,
                "seed": seed + m,
                "nthread": 1,
                "verbosity": 0,
            }
            self.boosters_.append(xgb.train(params, dm, num_boost_round=self.n_estimators))
        self.n_features_in_ = F.shape[1]
        return self

    def predict(self, F):
        """Quantiles of the target, shape (n, n_levels), non-decreasing and >= 0."""
        xgb = import_xgboost()
        dm = xgb.DMatrix(np.asarray(F, dtype=np.float64))
        q = np.mean([b.predict(dm).reshape(dm.num_row(), -1) for b in self.boosters_], axis=0)
        return np.maximum.accumulate(np.maximum(q, 0.0), axis=1)

    def to_dict(self):
        """A JSON-safe description (parameters and the boosters as base64 UBJSON)."""
        return {
            "levels": list(self.levels),
            "n_features_in": int(self.n_features_in_),
            "boosters": [
                base64.b64encode(bytes(b.save_raw("ubj"))).decode("ascii") for b in self.boosters_
            ],
        }

    @classmethod
    def from_dict(cls, d):
        xgb = import_xgboost()
        self = cls(levels=d["levels"], n_models=len(d["boosters"]))
        self.boosters_ = []
        for text in d["boosters"]:
            booster = xgb.Booster()
            booster.load_model(bytearray(base64.b64decode(text)))
            self.boosters_.append(booster)
        self.n_features_in_ = d["n_features_in"]
        return self

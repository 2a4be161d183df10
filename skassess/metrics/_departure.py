"""Groups whose labels disagree with the shared calibration map.

Partial pooling is why the calibrated model is tight, and also why it answers
too kindly for a group whose accuracy lies far from the map: a few labels
cannot pull the group's deviation that far. The departure check says when a
group's labels disagree with the map more than the groups' spread allows (a
posterior predictive p-value, :meth:`CalibratedRates.departure`); for a
group it flags, the reported interval is the union of the model's and the
interval of the group's labels alone, which holds whatever the map.
"""

import numpy as np
import pandas as pd
from scipy.stats import beta, betabinom
from sklearn.utils.validation import check_is_fitted

from ..utils._memory import check_draw_memory
from ..utils._params import N_DRAWS, validate_args, validated
from ._base import DEFAULT_N_DRAWS


class DepartureCheck:
    """Mixin of :class:`_RateAssessor`: ``departure_``, the flag and the flagged
    groups' intervals (calibrated accuracy only; ``departure_threshold`` None: off)."""

    def _checks_departure(self):
        return (
            getattr(self, "departure_threshold", None) is not None
            and self._calibrated()
            and self._metric() == "accuracy"
        )

    def _fit_departure(self):
        """``departure_``: each group's p-value (its own draws, the same at every read)."""
        self.departure_ = pd.Series(
            self._hierarchy.departure(), index=self.groups_, name="departure_p"
        )

    def _flagged_groups(self):
        """Whether each group's labels depart from the shared map (``departure_p`` below
        ``departure_threshold``), in the order of ``groups_``; all False when the
        check is off."""
        if not self._checks_departure():
            return np.zeros(len(self.groups_), dtype=bool)
        return (self.departure_.to_numpy() < self.departure_threshold) & (self.n_labeled_ > 0)

    def _labels_interval(self, level=0.95):
        """Each group's equal-tailed interval from its labels alone, ``(lower, upper)``.

        A uniform prior on the group's rate and its labeled rows; for accuracy
        the estimand is the rate of the group's rows in the pool, so the
        unlabeled rows' successes are beta-binomial, else the Beta of the rate.
        """
        tail = (1.0 - level) / 2.0
        n, s = np.asarray(self.n_labeled_, float), np.asarray(self.n_success_, float)
        a, b = 1.0 + s, 1.0 + np.maximum(n - s, 0.0)
        if self._metric() != "accuracy":
            return beta.ppf(tail, a, b), beta.ppf(1.0 - tail, a, b)
        rows = np.asarray(self.n_rows_, float)
        left = np.maximum(np.round(rows - n), 0).astype(np.int64)
        low, high = unlabeled_quantiles(left, a, b, tail)
        with np.errstate(invalid="ignore", divide="ignore"):
            lower, upper = (s + low) / rows, (s + high) / rows
        return np.where(rows > 0, lower, beta.ppf(tail, a, b)), np.where(
            rows > 0, upper, beta.ppf(1.0 - tail, a, b)
        )

    @validated
    @validate_args({"n_draws": [N_DRAWS], "random_state": ["random_state"]})
    def held_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        """Posterior draws per group as the reported intervals hold them, ``(n_draws, n_groups)``.

        The draws of :meth:`groupwise_samples`, except that a group the
        departure check flags (``departure_``) is freed from the shared map:
        its labeled successes plus its unlabeled rows' successes under a
        uniform prior on its rate. What :func:`~skassess.metrics.compare_groups`,
        :func:`~skassess.metrics.rank_groups`,
        :func:`~skassess.metrics.top_m_groups` and
        :func:`~skassess.metrics.worst_group` read. Without a flagged group
        (or with ``departure_threshold=None``), the same draws as
        :meth:`groupwise_samples`.

        Parameters
        ----------
        n_draws : int, default=4000
            Number of Monte Carlo draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws; None uses the estimator's ``random_state``.

        Returns
        -------
        samples : ndarray of shape (n_draws, n_groups)
        """
        check_is_fitted(self)
        check_draw_memory(
            n_draws, self.n_rows_.size, f"{type(self).__name__}.groupwise_samples", "groups"
        )
        rng = self._rng(random_state)
        draws = self._groupwise_samples(n_draws, rng)
        flagged = np.flatnonzero(self._flagged_groups())
        if flagged.size == 0:
            return draws
        n = np.asarray(self.n_labeled_, float)[flagged]
        s = np.asarray(self.n_success_, float)[flagged]
        rate = rng.beta(1.0 + s, 1.0 + np.maximum(n - s, 0.0), (n_draws, flagged.size))
        if self._metric() == "accuracy":
            rows = np.asarray(self.n_rows_, float)[flagged]
            left = np.maximum(np.round(rows - n), 0).astype(np.int64)
            rate = (s + rng.binomial(left, rate)) / np.maximum(rows, 1e-300)
        draws = np.array(draws, dtype=np.float64, copy=True)
        draws[:, flagged] = rate
        return draws

    def _held_interval(self, lower, upper, level):
        """The model's interval, widened to the labels-alone one for flagged groups."""
        flagged = self._flagged_groups()
        if not flagged.any():
            return lower, upper
        lo, hi = self._labels_interval(level)
        return np.where(flagged, np.minimum(lower, lo), lower), np.where(
            flagged, np.maximum(upper, hi), upper
        )


#: Unlabeled rows up to which a group's beta-binomial quantiles are read off its CDF.
EXACT_LEFT = 2000


def unlabeled_quantiles(left, a, b, tail):
    """The ``tail`` and ``1 - tail`` quantiles of ``BetaBinomial(left, a, b)`` per group.

    Up to ``EXACT_LEFT`` trials, exact (the CDF summed over the support;
    scipy's generic discrete ``ppf`` searches it point by point, seconds at
    100,000 rows). Beyond, ``left`` times the Beta of the same mean and
    variance as the unlabeled rows' rate, rounded outward: the binomial's
    share of that variance is below ``(a + b) / left`` of the Beta's.
    """
    low, high = np.zeros(left.shape), np.zeros(left.shape)
    for i, (m, ai, bi) in enumerate(zip(left.tolist(), a.tolist(), b.tolist(), strict=True)):
        if m == 0:
            continue
        if m <= EXACT_LEFT:
            cdf = np.cumsum(betabinom.pmf(np.arange(m + 1), m, ai, bi))
            low[i] = np.searchsorted(cdf, tail * (1.0 - 1e-12))
            high[i] = min(np.searchsorted(cdf, (1.0 - tail) * (1.0 - 1e-12)), m)
            continue
        mean = ai / (ai + bi)
        var = ai * bi / ((ai + bi) ** 2 * (ai + bi + 1.0))  # of the rate
        var = (mean * (1.0 - mean) - var) / m + var * (1.0 - 1.0 / m)  # of the share
        strength = mean * (1.0 - mean) / var - 1.0
        q = beta.ppf([tail, 1.0 - tail], mean * strength, (1.0 - mean) * strength)
        low[i], high[i] = np.floor(m * q[0]), np.ceil(m * q[1])
    return low, high

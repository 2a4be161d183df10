"""Checks of a prior of counts against the labels: how far the uniform prior pulls the
overall accuracy, and whether the labels contradict the informative prior."""

import numpy as np
from scipy import stats

from ..utils._warnings import warn
from ._conjugate import MIN_PSEUDO_COUNT

#: The level of the informative prior's predictive check.
PRIOR_CONFLICT_LEVEL = 0.01


def prior_pull(weights, post_mean, post_var, n_labeled, observed_sum):
    """``(pull, sd)``: how far the priors move a weighted mean of group metrics.

    Each labeled group's observed value ``observed_sum / n_labeled``, each
    unlabeled group the labeled rows' pooled value, against the posterior
    means; weighted by ``weights``, beside the overall posterior standard
    deviation of independent groups. None without labels.
    """
    n = np.asarray(n_labeled, dtype=np.float64)
    if not n.sum() > 0:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(n > 0, observed_sum / n, observed_sum.sum() / n.sum())
    p = weights / weights.sum()
    return float(p @ (post_mean - value)), float(np.sqrt(p**2 @ post_var))


def beta_prior(strength, num, den):
    """``Beta(N0 m, N0 (1 - m))`` with ``m = num / den`` (1/2 where ``den`` is 0).

    ``1 - m`` is computed as ``(den - num) / den`` so that a mean within one
    rounding error of 1 keeps a positive second parameter; both are floored
    at ``MIN_PSEUDO_COUNT``.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(den > 0, num / den, 0.5)
        rest = np.where(den > 0, (den - num) / den, 0.5)
    return (
        np.maximum(strength * np.clip(mean, 0.0, 1.0), MIN_PSEUDO_COUNT),
        np.maximum(strength * np.clip(rest, 0.0, 1.0), MIN_PSEUDO_COUNT),
    )


class _PriorChecks:
    """A rate estimator's checks of its prior against its labels."""

    def _overall_prior_pull(self):
        """How far the uniform prior moves the overall accuracy from the labels.

        Each labeled group's label rate, each unlabeled group the labeled rows'
        pooled rate: the posterior mean's distance from that, weighted as in
        the overall accuracy, against the overall posterior standard deviation.
        """
        if (
            self._metric() != "accuracy"
            or not isinstance(self.prior, str)
            or self.prior != "uniform"
        ):
            return None
        return prior_pull(
            self.group_weights_,
            self.posterior_.mean(),
            self.posterior_.var(),
            self.n_labeled_,
            self.n_success_,
        )

    def _warn_prior_conflict(self):
        """Warn when the labels contradict the informative prior (a prior-predictive check).

        Under ``Beta(alpha_g, beta_g)`` a labeled group's successes are
        beta-binomial. Two checks at the 1 % level: the total over the groups
        (the scores too confident or not confident enough overall), and the
        sum of the groups' squared standardized residuals against a
        chi-square (some groups off in either direction).
        """
        if (
            not self._checks_prior_conflict
            or self._prior_kind() != "informative"
            or self._metric() != "accuracy"
        ):
            return
        n, s = self.n_labeled_, self.n_success_
        labeled = n > 0
        if not labeled.any():
            return
        a, b = self.prior_.alpha[labeled], self.prior_.beta[labeled]
        n, s = n[labeled], s[labeled]
        m = a / (a + b)
        var = n * m * (1.0 - m) * (a + b + n) / (a + b + 1.0)
        expected = n * m
        total_z = (s.sum() - expected.sum()) / np.sqrt(max(var.sum(), 1e-300))
        chi2 = float(((s - expected) ** 2 / np.maximum(var, 1e-300)).sum())
        p_total = 2 * stats.norm.sf(abs(total_z))
        p_groups = stats.chi2.sf(chi2, df=labeled.sum())
        if min(p_total, p_groups) < PRIOR_CONFLICT_LEVEL:
            which = (
                f"{s.sum():g} of {n.sum():g} labeled rows are right where the scores "
                f"expect {expected.sum():.1f} (p = {p_total:.2g})"
                if p_total <= p_groups
                else f"the groups' labels are farther from their scores than chance "
                f"allows (p = {p_groups:.2g})"
            )
            warn(
                f"The labels contradict the informative prior: {which}. The model's scores "
                "are not calibrated here, so the informative prior's intervals may not hold "
                "the accuracy. Use prior='calibrated' (the default), which learns from the "
                "labels how far to trust the scores."
            )

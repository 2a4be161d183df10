"""Confidence bins of a design that labeled its groups at unequal rates.

A design that chooses a group, then one of its rows at random (a labeling
session's group strategies), labels each group at its own rate ``n_g / N_g``:
the labels in a confidence bin then over-represent the groups labeled most.
With each labeled row weighted by its group's inverse rate ``w_g = N_g / n_g``,
a bin's accuracy is estimated by the weighted mean of its labels (Hajek's
estimator, unbiased for the bin's accuracy over all its rows), and its
uncertainty by the effective number of labels ``(sum w)^2 / sum w^2`` (Kish).
The bin's labels enter the ECE's models as ``n_eff`` labels with the weighted
mean's share of successes ``S_eff``: an equal design gives back the plain
counts; a skewed one, fewer effective labels. A group without labels has no
weight: its rows are represented by the other groups of their bins.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ._conjugate import BetaPosterior


@dataclass
class DesignBins:
    """Per-bin totals of group x bin cells (arrays of shape ``(n_bins,)``)."""

    rows: np.ndarray
    expected: np.ndarray
    labeled: np.ndarray
    success: np.ndarray
    effective_labeled: np.ndarray
    effective_success: np.ndarray

    @classmethod
    def of_cells(cls, rows, expected, labeled, success, n_bins):
        """From per-cell rows, expected successes, labels and successes (cell
        ``g * n_bins + b``)."""
        rows, expected, labeled, success = (
            np.asarray(a, dtype=np.float64).reshape(-1, n_bins)
            for a in (rows, expected, labeled, success)
        )
        group_rows, group_labeled = rows.sum(axis=1), labeled.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.where(group_labeled > 0, group_rows / group_labeled, 0.0)[:, None]
            total_w = (w * labeled).sum(axis=0)
            square_w = (w * w * labeled).sum(axis=0)
            share = np.where(total_w > 0, (w * success).sum(axis=0) / total_w, 0.0)
            n_eff = np.where(square_w > 0, total_w**2 / square_w, 0.0)
        return cls(
            rows=rows.sum(axis=0),
            expected=expected.sum(axis=0),
            labeled=labeled.sum(axis=0),
            success=success.sum(axis=0),
            effective_labeled=n_eff,
            effective_success=share * n_eff,
        )

    @property
    def confidence(self):
        """Mean top-1 confidence of each bin's rows (NaN for a bin without rows)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.rows > 0, self.expected / self.rows, np.nan)

    @property
    def weights(self):
        """Each bin's share of all rows."""
        return self.rows / self.rows.sum()

    def pool_accuracy(self, theta, rng):
        """Draws of each bin's accuracy on its rows at hand, given draws ``theta`` of
        its accuracy: the labeled rows' successes, and the unlabeled rows' drawn at
        ``theta`` (the labels are few, so the unlabeled rows' mix of groups is
        about the bin's)."""
        unlabeled = np.rint(np.maximum(self.rows - self.labeled, 0.0)).astype(np.int64)
        drawn = rng.binomial(unlabeled, theta)
        total = self.labeled + unlabeled
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(
                total > 0, (self.success + drawn) / total, np.nan_to_num(self.confidence)
            )


class DesignBinsMixin:
    """:class:`~skassess.metrics.BayesianCalibrationError`'s bins under
    ``grouping="external"``: the estimator's group x bin cells, as bins of
    effective labels."""

    def _design_bins(self):
        """The bins' totals and effective labels under ``grouping="external"``."""
        return DesignBins.of_cells(
            self.n_rows_,
            self.expected_success_,
            self.n_labeled_,
            self.n_success_,
            self.grouping_.n_bins_fitted,
        )

    def _bin_posterior(self, bins):
        """Each design bin's Beta posterior: its prior and its effective labels."""
        prior = self._bin_prior()
        return BetaPosterior(
            prior.alpha + bins.effective_success,
            prior.beta + bins.effective_labeled - bins.effective_success,
        )

    def _bin_prior(self):
        """The Beta prior of each design bin: the cells' pseudo-counts, row-weighted."""
        n_bins = self.grouping_.n_bins_fitted
        rows = self.n_rows_.reshape(-1, n_bins)
        total = rows.sum(axis=0)
        share = np.where(total > 0, rows / np.where(total > 0, total, 1.0), 1.0 / len(rows))
        alpha, beta = (
            (np.broadcast_to(v, self.n_rows_.shape).reshape(-1, n_bins) * share).sum(axis=0)
            for v in (self.prior_.alpha, self.prior_.beta)
        )
        return BetaPosterior(alpha, beta)

    def _design_accuracy_draws(self, n_draws, rng, pool):
        """Draws of each bin's accuracy from its effective labels (``grouping="external"``)."""
        bins = self._design_bins()
        if self.ece_model == "independent":
            theta = self._bin_posterior(bins).rvs(n_draws, rng)
        else:
            theta = self._bin_model_draws(
                np.nan_to_num(bins.confidence),
                bins.effective_success,
                bins.effective_labeled,
                n_draws,
                rng,
            )
        return bins.pool_accuracy(theta, rng) if pool else theta

    def _bin_summary(self, level):
        """:meth:`summary` under ``grouping="external"``: one row per bin."""
        check_is_fitted(self)
        edges = self.bin_edges_
        bins = self._design_bins()
        prior, posterior = self._bin_prior(), self._bin_posterior(bins)
        lower, upper = posterior.interval(level)
        return pd.DataFrame(
            {
                "bin_lower": edges[:-1],
                "bin_upper": edges[1:],
                "confidence": bins.confidence,
                "n_labeled": bins.labeled,
                "effective_labels": bins.effective_labeled,
                "weight": bins.weights,
                "prior_mean": prior.mean(),
                "mean": posterior.mean(),
                "lower": lower,
                "upper": upper,
            },
            index=pd.RangeIndex(len(edges) - 1, name="bin"),
        )

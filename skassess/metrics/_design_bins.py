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

"""Design weights: the calibrated model's counts where labels were drawn unequally.

A row drawn for labeling with probability ``q_i`` among ``m`` candidates has
the design weight ``d_i = 1 / (m q_i)`` (1 under random labeling). The
estimators of the calibrated prior keep, per cell of their calibrated model,
the sums of ``d`` and ``d^2`` over the labeled rows and over their successes;
:class:`~skassess.metrics._calibrated.CalibratedRates` fits its likelihood to
them (see its module Notes, *Designs*).
"""

import numpy as np

#: The per-cell sums, as estimator attributes (listed with the score arrays).
DESIGN_ARRAYS = ("_design_labeled", "_design_success", "_design_square", "_design_square_success")


class DesignCounts:
    """Mixin of the estimators whose calibrated prior takes design weights.

    The estimator holds ``score_labeled_`` and the :data:`DESIGN_ARRAYS`,
    all of one shape, among its score arrays, and a ``_calibrated()`` method.
    """

    def _supports_design_weight(self):
        return self._calibrated()

    def _start_design_counts(self):
        """Before labels are added: an estimator fitted before design weights
        existed (pickled by 0.1) starts its sums from its labels, at ``d = 1``."""
        labeled = getattr(self, "_design_labeled", None)
        if labeled is None or labeled.shape != self.score_labeled_.shape:
            self._design_labeled = self.score_labeled_.copy()
            self._design_success = self.score_success_.copy()
            self._design_square = self.score_labeled_.copy()
            self._design_square_success = self.score_success_.copy()

    def _add_design_counts(self, cell, w, outcome, design_weight):
        """Add labeled rows of weights ``w`` and outcomes in {0, 1} at ``cell``."""
        d = np.ones(len(w)) if design_weight is None else design_weight
        np.add.at(self._design_labeled, cell, w * d)
        np.add.at(self._design_success, cell, w * d * outcome)
        np.add.at(self._design_square, cell, w * d * d)
        np.add.at(self._design_square_success, cell, w * d * d * outcome)

    def _design_arrays(self):
        """The per-cell sums (keyword arguments of :func:`design_counts`), or {}
        for an estimator fitted before design weights existed."""
        labeled = getattr(self, "_design_labeled", None)
        if labeled is None or labeled.shape != self.score_labeled_.shape:
            return {}
        return {
            "design_labeled": labeled,
            "design_success": self._design_success,
            "design_square": self._design_square,
            "design_square_success": self._design_square_success,
        }

    def _design_fit(self):
        """``CalibratedRates``' likelihood counts under the design, or {}."""
        design = self._design_arrays()
        return design_counts(self.score_labeled_, **design) if design else {}


def design_counts(labeled, design_labeled, design_success, design_square, design_square_success):
    """The likelihood's counts of ``CalibratedRates`` under a design, or ``{}``.

    ``labeled`` is the labeled rows per cell (sample-weighted, ``sum w``) and
    the others the same sums with each row's design weight ``d``: ``sum w d``,
    its successes, ``sum w d^2`` and its successes. The weights are scaled to
    sum to Kish's effective sample size ``(sum w d)^2 / sum w d^2``: the
    likelihood then holds as much information as the design's labels do when
    the outcome's variance is the same everywhere, and the dispersion (the
    sandwich ratio, an estimate) carries only what the residuals add to it.
    Scaled to the labels' count instead, a design whose weights span three
    orders of magnitude (saturated naive Bayes scores, where the few rows not
    saturated take half the draws) left the whole design effect to that
    estimate. Equal weights (Cauchy-Schwarz holds with equality) are a
    uniform design: ``{}``, the labels as they are.
    """
    count, total = float(np.sum(labeled)), float(np.sum(design_labeled))
    square = float(np.sum(design_square))
    if not total > 0 or square * count <= total**2 * (1.0 + 1e-9):
        return {}
    scale = total / square  # sum of the scaled weights: total^2 / square
    return {
        "fit_labeled": design_labeled * scale,
        "fit_success": design_success * scale,
        "fit_square": design_square * scale**2,
        "fit_square_success": design_square_success * scale**2,
    }

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

    def _start_stat_arrays(self):
        if not self._design_arrays():
            self._start_design_counts()
        super()._start_stat_arrays()

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


class DesignErrorSplit:
    """Mixin of the confusion matrix: its labeled errors' design-weighted sums.

    The estimator holds ``counts_`` (per predicted and true class), ``n_classes_``
    and, from its ``_init_stats``, ``_design_confusion`` and
    ``_design_confusion_square`` of the same shape.
    """

    def _start_stat_arrays(self):
        if getattr(self, "_design_confusion", None) is None:
            self._design_confusion = self.counts_.copy()
            self._design_confusion_square = self.counts_.copy()
        super()._start_stat_arrays()

    def _add_design_confusion(self, cell, weight, design_weight):
        """The confusion counts' design-weighted sums, ``sum w d`` and ``sum w d^2``.

        An estimator fitted before they existed starts them from its counts, at ``d = 1``.
        """
        K = self.n_classes_
        if getattr(self, "_design_confusion", None) is None:
            self._design_confusion = self.counts_.copy()
            self._design_confusion_square = self.counts_.copy()
            # this call's rows are in counts_ already: take them out, then add them weighted
            back = np.bincount(cell, weights=weight, minlength=K * K).reshape(K, K)
            self._design_confusion -= back
            self._design_confusion_square -= back
        d = np.ones(len(weight)) if design_weight is None else design_weight
        for total, w in (
            (self._design_confusion, weight * d),
            (self._design_confusion_square, weight * d * d),
        ):
            total += np.bincount(cell, weights=w, minlength=K * K).reshape(K, K)

    def _design_error_split(self):
        """Each predicted class's errors split among the true classes under a design.

        Under an unequal design the labeled errors are not a random sample of the
        errors: a class whose errors sit where the design draws often would take
        more than its share. Each error counts its design weight ``d``, the
        weights scaled to Kish's effective number of the class's labeled errors,
        ``(sum d)^2 / sum d^2`` (as :func:`~skassess.metrics._design.design_counts`
        scales the accuracy's). Returns the (n_classes, n_classes) off-diagonal
        counts, or None when every labeled row has ``d = 1``.
        """
        total = getattr(self, "_design_confusion", None)
        if total is None or (
            np.array_equal(total, self.counts_)
            and np.array_equal(self._design_confusion_square, self.counts_)
        ):
            return None
        off = ~np.eye(self.n_classes_, dtype=bool)
        errors = np.where(off, total, 0.0)
        weight = errors.sum(axis=1, keepdims=True)
        square = np.where(off, self._design_confusion_square, 0.0).sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(square > 0, errors * weight / square, 0.0)


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

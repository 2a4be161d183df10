"""Group metrics from labels whose annotators may slip: a mixture over true-label draws.

The true classes of the labeled rows are drawn under the one-coin model of
the annotators (:class:`~skassess.metrics.BayesianAccuracy` with
``label_noise="one_coin"``, its groups the sensitive groups crossed with the
predicted class), and :class:`BayesianGroupMetrics` is fitted once per draw
with those classes as its labels; its draws of every metric are the mixture
of the fits' draws.
"""

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..utils._label_noise import AnnotatorsOfNoiseModel, noise_model, uses_label_noise
from ..utils._random import check_generator
from ._group_totals import checked_rows

#: What a noisy fit takes from its first fit: what the labels' values do not change.
FIRST_FIT_ATTRIBUTES = (
    "groups_",
    "comparisons_",
    "n_labeled_",
    "n_rows_",
    "calibrator_",
    "label_check_",
)


class NoisyGroupMetrics(AnnotatorsOfNoiseModel):
    """Mixin of :class:`BayesianGroupMetrics`: ``fit`` with labels from annotators."""

    def _noisy(self, X, y, annotator):
        return uses_label_noise(self.label_noise, X, y, annotator)

    def _fit_noisy(self, X, y, group_by, name, annotator):
        """The mixture over draws of the labeled rows' true classes (see the module)."""
        n = np.shape(X)[0]
        unlabeled = np.full(n, self.missing_label, dtype=object)
        s, _, groups = checked_rows(X, unlabeled, group_by, name, self.classes, self.missing_label)
        predicted = s > self.threshold
        classes = np.asarray([0, 1] if self.classes is None else self.classes, dtype=object)
        rng = check_generator(self.random_state)
        seeds = rng.integers(2**31 - 1, size=self.n_imputations + 1)
        cells = pd.Series(groups, dtype=object).astype(str) + np.where(predicted, " | 1", " | 0")
        noise = noise_model(self, int(seeds[0])).fit(
            np.column_stack([1 - s, s]),
            y,
            group_by=cells.to_numpy(),
            y_pred=classes[predicted.astype(int)],
            annotator=annotator,
        )
        rows = noise.label_rows_
        per = -(-self.n_draws // self.n_imputations)
        fits = []
        for m in range(self.n_imputations):
            labels = np.full(n, self.missing_label, dtype=object)
            labels[rows] = classes[noise.imputed_labels_[m]]
            if self.classes is None:
                labels = labels.astype(np.int64)
            est = clone(self).set_params(
                label_noise="none", n_draws=per, random_state=int(seeds[m + 1])
            )
            fits.append(est.fit(X, labels, group_by=group_by))
        first = fits[0]
        for attr in FIRST_FIT_ATTRIBUTES:
            setattr(self, attr, getattr(first, attr))
        self.point_ = {
            k: np.nanmean(np.stack([f.point_[k] for f in fits]), axis=0) for k in first.point_
        }
        self.draws_ = {
            k: pd.DataFrame(
                _interleave([f.draws_[k].to_numpy() for f in fits], self.n_draws),
                columns=self.groups_,
            )
            for k in first.draws_
        }
        self.annotators_ = noise
        return self


def _interleave(draws, n_draws):
    """The mixture's first ``n_draws`` draws, draw ``j`` from fit ``j mod M``."""
    stack = np.stack(draws)  # (M, per, ...)
    return np.swapaxes(stack, 0, 1).reshape(-1, *stack.shape[2:])[:n_draws]

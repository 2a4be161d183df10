"""ActiveAssessor's steps between a query and a tell.

What an item-level strategy sees of the pool (QueryContext), the next row
of a chosen group, the design weight 1 / (m q_i) of each told row when the
strategy's draw probabilities are known and the estimator's likelihood takes
them, and the refit of the estimator under a prior update.
"""

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..utils._validation import checked_codes
from ._base import QueryContext
from ._setup import initial_state, is_group_strategy


class _AssessorSteps:
    """ActiveAssessor's steps between a query and a tell."""

    def _decoded(self, codes):
        """Labels in the estimator's own encoding (its classes and missing_label)."""
        if self._classes is None and self.estimator_.missing_label == -1:
            return codes
        out = np.empty(len(codes), dtype=object)
        labeled = codes >= 0
        out[labeled] = (np.arange(self._n_classes) if self._classes is None else self._classes)[
            codes[labeled]
        ]
        out[~labeled] = self.estimator_.missing_label
        return out

    def _refit_prior(self, estimator, codes):
        """The prior update and the estimator refitted under it, from label ``codes``.

        Returns ``(prior_update, estimator)``, new objects: the caller commits
        them (no-op without a prior update or without labels).
        """
        if self.prior_update_ is None or not (codes >= 0).any():
            return self.prior_update_, estimator
        with checked_codes():  # the labels were checked when they were told
            prior_update = clone(self.prior_update_).fit(self._scores, codes, y_pred=self._pred)
            prior = prior_update.prior_for(
                estimator, self._X, codes, group_by=self._group_by, y_pred=self._y_pred
            )
            estimator = (
                clone(self._base_estimator)
                .set_params(prior=prior)
                .fit(self._X, self._decoded(codes), group_by=self._group_by, y_pred=self._y_pred)
            )
        return prior_update, estimator

    def _outcome_proba_once(self):
        """The pool's outcome probabilities, computed at the first call: no label
        changes them until the next ``tell``."""
        proba = []

        def outcome_proba():
            if not proba:
                proba.append(
                    self.estimator_.predict_proba(
                        self._X, group_by=self._group_by, y_pred=self._y_pred
                    )
                )
            return proba[0]

        return outcome_proba

    def _context(self, available, state, outcome_proba):
        """What an item-level strategy sees of the pool now."""
        return QueryContext(
            scores=self._scores,
            y_pred=self._pred,
            labels=self.labels_,
            available=available,
            arm=self._arm,
            estimator=self.estimator_,
            state=state,
            task=self._setup.task,
            outcome_proba=outcome_proba,
        )

    def _next_row(self, arm, pointer, taken):
        """The next open row of the arm's walk (moving ``pointer[arm]`` past the rows
        walked; a partitioned pool keeps its own walks)."""
        if self._pool is not None:

            def is_open(rows, codes):
                return (
                    (codes < 0)
                    & (self.labels_.told(rows) < 0)
                    & ~self._skipped[rows]
                    & ~np.isin(rows, taken)
                )

            return self._pool.next_row(arm, is_open)
        while pointer[arm] < self._arm_end[arm]:
            row = self._order[pointer[arm]]
            pointer[arm] += 1
            if self.labels_[row] < 0 and not self._skipped[row] and row not in taken:
                return row
        raise RuntimeError("No unlabeled row left in the chosen group.")  # pragma: no cover

    def _pool_rows(self, rows):
        """The scores (as given), groups, predicted classes and arms of pool ``rows``."""
        if self._pool is not None:
            record = self._pool.rows(rows)
            return record["X"], record["group_by"], record["pred"], record["arm"]
        return (
            take_rows(self._X, rows),
            take_rows(self._group_by, rows),
            *(
                self._pred[rows],
                self._arm[rows],
            ),
        )

    # ---------------------------------------------------------------- designs
    def design_groups(self):
        """The group of every pool row, when the strategy draws within a group at random.

        A group strategy chooses a group, then one of its unlabeled rows
        uniformly at random: the labels within each group are a random sample
        of it, and the groups are labeled at unequal rates. Estimates that
        group rows otherwise (confidence bins, other group columns) must weight
        these groups by their rows.

        Returns
        -------
        groups : ndarray of shape (n_pool,) or None
            Each row's group index (in the order of ``groups_``); None for a
            strategy that scores items (unequal chances within a group) or a
            pool in Dask partitions.
        """
        check_is_fitted(self)
        if not is_group_strategy(self.strategy_) or self._pool is not None:
            return None
        return self._arm.copy()

    def _design_weighted(self):
        """Whether told rows carry design weights: a strategy with known draw
        probabilities and an estimator whose likelihood takes them (the
        calibrated prior)."""
        supports = getattr(self.estimator_, "_supports_design_weight", None)
        return hasattr(self.strategy_, "draw_probabilities") and bool(
            supports is not None and supports()
        )

    @property
    def _replay_by_step(self):
        # Each step's design weights depend on the posterior before it.
        return self._design_weighted()

    def _design_weights(self, rows):
        """Each new row's design weight ``1 / (m q_i)``, from the state before this tell.

        ``q`` is the strategy's draw probability over the ``m`` unlabeled rows
        the task allows, the rows earlier in the call taken out (the sequential
        draws of a batch); skips are not taken out, so that a replay gives the
        same weights. A row the strategy cannot draw counts 1.
        """
        available = (self.labels_ < 0) & self._setup.task.allowed[self._arm]
        state = initial_state(self.estimator_, self._setup, 1)
        outcome_proba = self._outcome_proba_once()
        out = np.ones(len(rows))
        for j, row in enumerate(rows.tolist()):
            context = self._context(available.copy(), state, outcome_proba)
            q = float(np.asarray(self.strategy_.draw_probabilities(context))[row])
            if available[row] and q > 0:
                out[j] = 1.0 / (available.sum() * q)
            available[row] = False
        return out


def take_rows(values, rows):
    """Rows ``rows`` of ``values`` as it holds them (a DataFrame keeps its columns);
    None stays None."""
    if values is None:
        return None
    if isinstance(values, pd.Series | pd.DataFrame):
        return values.iloc[rows]
    return np.asarray(values)[rows]

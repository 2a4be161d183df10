"""What ActiveAssessor and ActiveTester share: labels so far, history, the labeling loop."""

import copy
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..exceptions import SkassessWarning
from ..utils import as_scalar, warn
from ..utils._sklearn_compat import Interval

__all__ = ["RUN_CONSTRAINTS", "LabelingSessionMixin"]

#: The arguments of ``run(oracle, budget, *, batch_size, progress, callback)``.
RUN_CONSTRAINTS = {
    "oracle": ["array-like", callable],
    "budget": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "progress": ["boolean"],
    "callback": [callable, None],
}


class LabelingSessionMixin:
    """``n_labeled_``, ``history_``, index checks and the query/label loop of :meth:`run`.

    A class using it keeps ``labels_`` (class codes, -1 unlabeled), ``_history``
    (rows of ``_history_columns``) and implements ``query`` and ``tell``.
    """

    _history_columns = ()

    @property
    def n_labeled_(self):
        check_is_fitted(self)
        return int((self.labels_ >= 0).sum())

    @property
    def history_(self):
        check_is_fitted(self)
        return pd.DataFrame(self._history, columns=list(self._history_columns))

    def _check_indices(self, indices):
        indices = np.asarray(indices)
        n = len(self.labels_)
        if indices.ndim != 1 or not (
            np.issubdtype(indices.dtype, np.integer) or indices.size == 0
        ):
            raise ValueError(f"indices must be a 1-D array of integers; got {indices!r}.")
        bad = (indices < 0) | (indices >= n)
        if bad.any():
            raise ValueError(
                f"indices must lie in the pool, 0..{n - 1}; got {as_scalar(indices[bad][0])}."
            )
        return indices.astype(np.intp)

    def _query_state(self):
        """Copies of what a query changes: the random generators and the pending items."""
        return {k: copy.deepcopy(v) for k, v in vars(self).items()
                if isinstance(v, np.random.Generator) or k == "_pending"}

    def _label_loop(self, oracle, budget, left, *, what, batch_size, progress, callback,
                    should_stop=lambda: False):
        """Query ``batch_size`` items, ask ``oracle``, tell, until ``budget`` labels."""
        if budget > left:
            warn(f"budget={budget} is larger than the {left} unlabeled {what}; labeling those "
                 f"{left}.", SkassessWarning)
            budget = left
        from tqdm.auto import tqdm

        with tqdm(total=budget, disable=not progress, desc="labels") as bar:
            done = 0
            while done < budget:
                # A batch whose oracle call or tell fails leaves no trace (the query's
                # draws are undone); the labels of earlier batches are kept.
                saved = self._query_state()
                try:
                    idx = self.query(min(batch_size, budget - done))
                    labels = oracle(idx)
                    if np.ndim(labels) != 1 or len(labels) != len(idx):
                        raise ValueError(
                            f"The oracle must return one label per index: asked for "
                            f"{len(idx)}, got {np.shape(labels)}."
                        )
                    self.tell(idx, labels)
                except BaseException:
                    vars(self).update(saved)
                    raise
                done += len(idx)
                bar.update(len(idx))
                if callback is not None and callback(self):
                    break
                if should_stop():
                    break
        return self

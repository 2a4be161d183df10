"""BC's rows held in Dask partitions: the few it reads on the client, sums of the rest.

BC (``method="bayesian_calibration"``) fits its calibration maps on the
labeled rows and on each group's first row (which only makes the group
known), then adds every unlabeled row's terms under the maps' fixed draws.
With ``unlabeled="expected"`` those terms are sums per group that add over
rows, so a pool in partitions is read twice: once for the labeled rows, each
group's first row and the rows per group (:class:`KeyRows`), once, with the
fitted maps, for the unlabeled rows' sums (:meth:`PartitionedRows.add_up`).
Rows are ordered by ``(partition, row in it)``, the order of the whole file,
so the maps see the rows of the in-memory fit in the same order.
"""

import numpy as np
import pandas as pd

from ..utils._dask import aligned_blocks, import_dask, merge_pair, merge_tree, shared, values
from ._group_methods import GroupRows
from ._group_totals import GROUP_BY_REQUIRED, checked_partition

__all__ = ["PartitionedRows"]

#: Rows per partition that a row key can number: key = partition * ROW_SPAN + row.
ROW_SPAN = 2**40


class KeyRows:
    """A block's labeled rows, its groups' first rows, and its rows per group.

    Attributes
    ----------
    key : ndarray of int64
        The rows' positions in the file (``partition * ROW_SPAN + row``).
    s, y, groups : ndarray
        Their P(y = 1), label (0 / 1, -1 for a group's unlabeled first row)
        and group.
    counts : dict
        Group to its rows in the block.
    """

    def __init__(self, key, s, y, groups, counts):
        self.key, self.s, self.y, self.groups, self.counts = key, s, y, groups, counts

    @classmethod
    def of_rows(cls, s, y, groups, partition):
        frame = pd.Series(groups, dtype=object)
        counts = frame.value_counts(sort=False).to_dict()
        first = np.flatnonzero(~frame.duplicated().to_numpy())
        keep = np.union1d(np.flatnonzero(y >= 0), first)
        key = partition * ROW_SPAN + keep.astype(np.int64)
        return cls(key, s[keep], y[keep], groups[keep], counts)

    def merge(self, other):
        """The rows of both blocks (``other``'s after this one's)."""
        if other is None:
            return self
        counts = dict(self.counts)
        for g, n in other.counts.items():
            counts[g] = counts.get(g, 0) + n
        return KeyRows(
            np.concatenate([self.key, other.key]),
            np.concatenate([self.s, other.s]),
            np.concatenate([self.y, other.y]),
            np.concatenate([self.groups, other.groups]),
            counts,
        )

    def rows(self):
        """The labeled rows and each group's first row, in the order of the file."""
        order = np.argsort(self.key, kind="stable")
        groups = self.groups[order]
        first = ~pd.Series(groups, dtype=object).duplicated().to_numpy()
        keep = (self.y[order] >= 0) | first
        order = order[keep]
        return self.s[order], self.y[order], self.groups[order]


def _key_rows(estimator, index, name, X, y, group_by):
    if values(X).shape[0] == 0:
        return None
    return KeyRows.of_rows(*checked_partition(estimator, index, name, X, y, group_by), index)


def _partition_sums(estimator, index, name, function, X, y, group_by):
    if values(X).shape[0] == 0:
        return None
    return function(*checked_partition(estimator, index, name, X, y, group_by))


def _added(a, b):
    """Two nested structures of arrays (dicts, lists) added leaf by leaf."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict):
        return {k: _added(v, b[k]) for k, v in a.items()}
    if isinstance(a, list | tuple):
        return [_added(x, z) for x, z in zip(a, b, strict=True)]
    return a + b


class PartitionedRows:
    """BC's input held in Dask partitions (read once at construction).

    Attributes
    ----------
    labels : list
        The groups, in the order of their first row in the file.
    n_rows : dict
        Group to its rows.
    """

    def __init__(self, estimator, X, y, group_by, name):
        if group_by is None:
            raise ValueError(GROUP_BY_REQUIRED)
        dask = import_dask()
        self._blocks = aligned_blocks(X, {"y": y, name: group_by})
        self._estimator = dask.delayed(estimator, pure=True, traverse=False)
        self._name = name
        part = dask.delayed(_key_rows, pure=True)
        parts = [
            part(self._estimator, i, name, x, r["y"], r[name])
            for i, (x, r) in enumerate(self._blocks)
        ]
        keyed = merge_tree(parts, dask.delayed(merge_pair, pure=True))
        if keyed is None:
            raise ValueError("X, a Dask collection, holds no rows.")
        self._s, self._y, self._groups = keyed.rows()
        self.labels = pd.unique(pd.Series(self._groups, dtype=object)).tolist()
        self.n_rows = keyed.counts

    def key_rows(self, index):
        """The labeled rows and each group's first row, as :class:`GroupRows` over ``index``."""
        codes = index.get_indexer(pd.Index(self._groups, dtype=object))
        return GroupRows(self._s, self._y, codes, self._groups, index)

    def add_up(self, function):
        """``function(s, y, groups)`` of every partition's rows, added over the partitions."""
        dask = import_dask()
        part = dask.delayed(_partition_sums, pure=True)
        held = shared(function)  # with the calibration maps' chains: megabytes
        parts = [
            part(self._estimator, i, self._name, held, x, r["y"], r[self._name])
            for i, (x, r) in enumerate(self._blocks)
        ]
        return merge_tree(parts, dask.delayed(_added, pure=True))

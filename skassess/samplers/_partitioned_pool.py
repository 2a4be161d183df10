"""A labeling pool held in the partitions of Dask collections.

A group strategy chooses a group (arm) from the posterior, then a uniformly
random unlabeled row of it. In memory, each group's rows are walked in one
random order fixed at ``fit``. Over partitions the order is the same idea:
every row carries a uniform key drawn from its global row number by a
counter-based generator (Philox: row ``i``'s key is the ``i``-th draw, so it
does not depend on how the rows are partitioned), and a group's walk is its
rows in key order.

Each partition sends, per group, its ``k`` smallest-key rows (with their
scores, group, prediction and label at fit); the client keeps the ``k``
smallest of those: the top rows per partition, merged. The client holds
these walk prefixes, the rows told since ``fit`` and counts per group:
nothing of size ``n_pool``. A group's prefix is extended by another pass
when a query walks past it.
"""

import numpy as np
import pandas as pd

from ..utils._dask import aligned_blocks, import_dask, merge_tree, values
from ..utils._validation import check_labels
from ._assessor_steps import take_rows
from ._base import GroupStrategy
from ._setup import pool_rows

#: Rows of each group fetched per pass over the partitions (a cache size: the
#: queries do not depend on it).
ROWS_PER_GROUP = 64


def check_partitioned(strategy, prior_update):
    """Refuse what a pool in partitions cannot do: item-level strategies score every
    row on the client, and a prior update refits on all rows after each label."""
    if not isinstance(strategy, GroupStrategy):
        raise ValueError(
            f"strategy={type(strategy).__name__}() scores every pool item on the client; a "
            "pool in Dask partitions takes a strategy that chooses groups ('thompson', "
            "'random', 'top_two', 'multiple_play', 'epsilon_greedy', 'bayes_ucb' or 'lucb')."
        )
    if prior_update is not None:
        raise ValueError(
            "prior_update refits its prior on every pool row after each label; a pool in "
            "Dask partitions takes prior_update=None."
        )


def row_keys(seed, start, n):
    """The keys of rows ``start .. start + n - 1``: the ``i``-th uniform draw of
    ``Philox(key=seed)`` for row ``i``, computed from ``start`` on."""
    bit_generator = np.random.Philox(key=seed)
    bit_generator.advance(start // 4)  # one Philox step gives four 64-bit draws
    skip = start % 4
    return np.random.Generator(bit_generator).random(n + skip)[skip:]


def _concat(parts):
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    if isinstance(parts[0], pd.DataFrame | pd.Series):
        return pd.concat(parts)
    return np.concatenate(parts)


def _partition_rows(index, estimator, setup, X, rows):
    """A partition's arms, predicted classes and label codes at fit."""
    n = values(X).shape[0]
    if n == 0:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty, empty, np.empty((0, estimator.n_classes_))
    try:
        scores, pred, _, arm = pool_rows(estimator, setup, X, rows["group_by"], rows["y_pred"])
        classes = None if estimator.classes is None else estimator.classes_
        codes = check_labels(
            None if rows["y"] is None else values(rows["y"]),
            n,
            estimator.n_classes_,
            classes,
            missing_label=estimator.missing_label,
        )
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc
    return arm, pred, codes, scores


def _scan_partition(index, estimator, setup, X, rows):
    """``(rows, unlabeled rows per arm, rows per arm, top-1 confidence per arm)``."""
    arm, pred, codes, scores = _partition_rows(index, estimator, setup, X, rows)
    n_arms = setup.n_arms
    confidence = scores[np.arange(arm.size), pred]
    return (
        arm.size,
        np.bincount(arm[codes < 0], minlength=n_arms),
        np.bincount(arm, minlength=n_arms),
        np.bincount(arm, weights=confidence, minlength=n_arms),
    )


def _added_scans(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _prefix_partition(index, start, seed, estimator, setup, wanted, X, rows):
    """Per wanted arm, the partition's ``k`` smallest-key rows with key above a bound.

    ``wanted`` maps an arm to ``(bound, k)``. Returns a list of walk records:
    dicts of arrays ``row``, ``key``, ``arm``, ``pred``, ``code`` and the rows'
    ``X``, ``group_by`` and ``y_pred`` as the partition holds them.
    """
    arm, pred, codes, _ = _partition_rows(index, estimator, setup, X, rows)
    keys = row_keys(seed, start, arm.size)
    out = []
    for a, (bound, k) in wanted.items():
        mine = np.flatnonzero((arm == a) & (keys > bound))
        if mine.size > k:
            mine = mine[np.argpartition(keys[mine], k - 1)[:k]]
        out.append(_record(mine, start, keys, arm, pred, codes, X, rows))
    return out


def _record(local, start, keys, arm, pred, codes, X, rows):
    return {
        "row": start + local.astype(np.int64),
        "key": keys[local],
        "arm": arm[local],
        "pred": pred[local],
        "code": codes[local],
        "X": take_rows(X, local),
        "group_by": take_rows(rows["group_by"], local),
        "y_pred": take_rows(rows["y_pred"], local),
    }


def _rows_partition(index, start, seed, estimator, setup, local, X, rows):
    arm, pred, codes, _ = _partition_rows(index, estimator, setup, X, rows)
    keys = row_keys(seed, start, arm.size)
    return _record(np.asarray(local, dtype=np.intp), start, keys, arm, pred, codes, X, rows)


def _joined(records):
    """Walk records joined, in key order."""
    joined = {}
    for name in ("row", "key", "arm", "pred", "code"):
        joined[name] = np.concatenate([r[name] for r in records])
    for name in ("X", "group_by", "y_pred"):
        joined[name] = _concat([r[name] for r in records])
    order = np.lexsort((joined["row"], joined["key"]))
    return _select(joined, order)


def _select(record, positions):
    return {
        name: (
            None
            if value is None
            else value.iloc[positions]
            if isinstance(value, pd.DataFrame | pd.Series)
            else value[positions]
        )
        for name, value in record.items()
    }


class PartitionedPool:
    """The rows of a pool in Dask partitions, as an :class:`ActiveAssessor` walks them.

    Parameters
    ----------
    X, y, group_by, y_pred : Dask collections (y, group_by, y_pred may be None)
        Partitioned alike.
    estimator, setup : the fitted estimator and its setup
        They give each row's arm.

    The constructor makes one pass over the partitions: their rows, and each
    arm's rows, unlabeled rows and mean top-1 confidence. :meth:`seed_keys`
    then fixes the rows' keys.
    """

    def __init__(self, X, y, group_by, y_pred, estimator, setup):
        dask = import_dask()
        self._blocks = aligned_blocks(X, {"y": y, "group_by": group_by, "y_pred": y_pred})
        self._seed = None
        self._estimator = dask.delayed(estimator, pure=True, traverse=False)
        self._setup = dask.delayed(setup, pure=True, traverse=False)
        scan = dask.delayed(_scan_partition, pure=True)
        parts = [
            scan(i, self._estimator, self._setup, x, rows)
            for i, (x, rows) in enumerate(self._blocks)
        ]
        (lengths,) = dask.compute([p[0] for p in parts])
        totals = merge_tree(parts, dask.delayed(_added_scans, pure=True))
        self.n_rows = int(sum(lengths))
        self._starts = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        _, self.unlabeled, self.arm_sizes, confidence = totals
        self.unlabeled = np.asarray(self.unlabeled, dtype=np.int64)
        self.arm_sizes = np.asarray(self.arm_sizes, dtype=np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean_confidence = np.asarray(confidence) / self.arm_sizes
        self._walks = {}  # arm -> its walk prefix, a record in key order
        self._told = {}  # row -> its record, for rows outside the walk prefixes

    def seed_keys(self, seed):
        """Fix the rows' keys (the seed of their generator); forgets the walks."""
        self._seed = int(seed)
        self._walks, self._told = {}, {}

    # ---------------------------------------------------------------- walks
    def _extend(self, arms, k):
        """Fetch the next ``k`` rows of each arm's walk, in one pass."""
        dask = import_dask()
        wanted = {}
        for a in arms:
            walk = self._walks.get(a)
            bound = -1.0 if walk is None or walk["key"].size == 0 else float(walk["key"][-1])
            wanted[int(a)] = (bound, int(k))
        prefix = dask.delayed(_prefix_partition, pure=True)
        parts = [
            prefix(i, int(self._starts[i]), self._seed, self._estimator, self._setup, wanted, x, r)
            for i, (x, r) in enumerate(self._blocks)
        ]
        (parts,) = dask.compute(parts)
        for j, a in enumerate(wanted):
            found = _joined([part[j] for part in parts])
            found = _select(found, np.arange(min(k, found["row"].size)))
            walk = self._walks.get(a)
            self._walks[a] = found if walk is None else _joined([walk, found])

    def walk(self, arm, position):
        """The arm's walk record, holding at least ``position + 1`` rows where the
        arm has them (fetched as needed)."""
        arm = int(arm)
        while True:
            walk = self._walks.get(arm)
            held = 0 if walk is None else walk["row"].size
            if held > position or held >= self.arm_sizes[arm]:
                return walk
            arms = [arm]
            if walk is None:  # the first rows of every arm: a pass costs the same
                arms += [
                    a
                    for a in np.flatnonzero(self.arm_sizes).tolist()
                    if a != arm and a not in self._walks
                ]
            self._extend(arms, max(ROWS_PER_GROUP, position + 1 - held))

    def walked(self, arm, labels, skipped):
        """The arm's walk up to its first open row (unlabeled, not skipped):
        ``(label codes, predicted classes)`` of those rows."""
        if self.arm_sizes[arm] == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.intp)
        position = 0
        while True:
            walk = self.walk(arm, position)
            rows = walk["row"]
            codes = np.where(walk["code"] >= 0, walk["code"], labels.told(rows))
            open_ = (codes < 0) & ~skipped[rows]
            if open_.any() or rows.size >= self.arm_sizes[arm]:
                n = int(np.argmax(open_)) if open_.any() else rows.size
                return codes[:n], walk["pred"][:n]
            position = rows.size

    def next_row(self, arm, is_open):
        """The first row of the arm's walk for which ``is_open(rows, codes)`` holds."""
        position = 0
        while True:
            walk = self.walk(arm, position)
            rows = walk["row"][position:]
            if rows.size == 0:
                raise RuntimeError("No unlabeled row left in the chosen group.")  # pragma: no cover
            ok = is_open(rows, walk["code"][position:])
            if ok.any():
                return int(rows[np.argmax(ok)])
            position = walk["row"].size

    # ----------------------------------------------------------------- rows
    def rows(self, rows):
        """The record of pool rows ``rows`` (in that order), fetched where needed."""
        rows = np.asarray(rows, dtype=np.int64)
        known = self._known()
        missing = np.setdiff1d(rows, known["row"]) if known is not None else np.unique(rows)
        if missing.size:
            self._fetch(missing)
            known = self._known()
        position = pd.Index(known["row"]).get_indexer(rows)
        return _select(known, position)

    def _known(self):
        records = list(self._walks.values()) + list(self._told.values())
        if not records:
            return None
        known = _joined(records)
        return _select(known, np.flatnonzero(~pd.Index(known["row"]).duplicated()))

    def _fetch(self, rows):
        dask = import_dask()
        part_of = np.searchsorted(self._starts, rows, side="right") - 1
        fetch = dask.delayed(_rows_partition, pure=True)
        tasks = []
        for i in np.unique(part_of):
            start = int(self._starts[i])
            x, r = self._blocks[i]
            local = rows[part_of == i] - start
            tasks.append(
                fetch(int(i), start, self._seed, self._estimator, self._setup, local, x, r)
            )
        (records,) = dask.compute(tasks)
        for record in records:
            for j, row in enumerate(record["row"].tolist()):
                self._told[row] = _select(record, [j])


class PoolLabels:
    """The label codes of a partitioned pool, as ``labels_`` (``-1``: unlabeled).

    Holds the labels told since ``fit``; a label given at ``fit`` is read
    from the pool's partitions when asked for.
    """

    def __init__(self, pool):
        self._pool = pool
        self._told = {}
        self._at_fit = pool.n_rows - int(pool.unlabeled.sum())
        self.n_labeled = self._at_fit

    def __len__(self):
        return self._pool.n_rows

    def __getitem__(self, rows):
        scalar = np.ndim(rows) == 0
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        codes = np.full(rows.size, -1, dtype=np.int64)
        told = np.array([r in self._told for r in rows.tolist()], dtype=bool)
        codes[told] = [self._told[r] for r in rows[told].tolist()]
        if (~told).any() and self._at_fit:  # labels given at fit are in the partitions
            codes[~told] = self._pool.rows(rows[~told])["code"]
        return int(codes[0]) if scalar else codes

    def told(self, rows):
        """The codes told since ``fit`` of ``rows`` (``-1`` where none was)."""
        return np.array([self._told.get(r, -1) for r in np.asarray(rows).tolist()], np.int64)

    def __setitem__(self, rows, codes):
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64)).tolist()
        codes = np.broadcast_to(np.asarray(codes, dtype=np.int64), (len(rows),)).tolist()
        for row, code in zip(rows, codes, strict=True):
            if code >= 0 and row not in self._told:
                self.n_labeled += 1
            self._told[row] = code


class PoolFlags:
    """A boolean per pool row, stored as the set of rows that hold True (``_skipped``)."""

    def __init__(self, n):
        self._n = n
        self._rows = set()

    def __len__(self):
        return self._n

    def __getitem__(self, rows):
        if np.ndim(rows) == 0:
            return int(rows) in self._rows
        return np.array([r in self._rows for r in np.asarray(rows).tolist()], dtype=bool)

    def __setitem__(self, rows, value):
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64)).tolist()
        if value:
            self._rows.update(rows)
        else:
            self._rows.difference_update(rows)

    def nonzero(self):
        return (np.array(sorted(self._rows), dtype=np.intp),)

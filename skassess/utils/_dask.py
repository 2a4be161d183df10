"""An estimator fitted over the partitions of Dask collections, merged exactly.

Each partition of the scores (and of the labels, groups, predictions and
weights, partitioned alike) is fitted where it lives, and only the fitted
estimators, whose size is the number of groups, travel: they are merged
pairwise in a tree (``merge``), so no row reaches the client. The graph runs
on Dask's current scheduler: a ``distributed.Client`` when one is active.
"""

import contextlib
import copy
import logging

import numpy as np

from ._validation import checked_codes

#: The keyword arguments that are per-row data, partitioned like the scores.
ROW_ARGUMENTS = ("y", "group_by", "y_pred", "sample_weight")


def is_dask_collection(obj):
    """Whether ``obj`` is a Dask collection (False when Dask is not installed)."""
    try:
        from dask import is_dask_collection as is_collection
    except ImportError:
        return False
    return is_collection(obj)


def import_dask():
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - the tests install the extra
        raise ImportError(
            'Fitting Dask collections needs Dask: pip install "skassess[dask]".'
        ) from exc
    return dask


def row_blocks(name, value):
    """A Dask Array, DataFrame or Series as a list of delayed row blocks."""
    if hasattr(value, "chunks") and hasattr(value, "ndim"):  # Array
        if any(len(c) > 1 for c in value.chunks[1:]):
            value = value.rechunk({i: -1 for i in range(1, value.ndim)})  # whole rows
        return list(value.to_delayed().flat)
    if hasattr(value, "to_delayed") and hasattr(value, "npartitions"):  # DataFrame, Series
        return list(value.to_delayed())
    raise TypeError(
        f"{name} must be a Dask Array, DataFrame or Series; got {type(value).__name__}."
    )


def values(block):
    """A partition's rows as a NumPy array."""
    return block.to_numpy() if hasattr(block, "to_numpy") else np.asarray(block)


def aligned_blocks(X, rows):
    """``X``'s partitions, each with those of ``rows`` (name to a Dask collection
    partitioned as ``X``, or None): a list of ``(X block, {name: block})``."""
    blocks = row_blocks("X", X)
    aligned = {}
    for name, value in rows.items():
        if value is None:
            aligned[name] = [None] * len(blocks)
            continue
        if not is_dask_collection(value):
            raise TypeError(
                f"{name} must be a Dask collection partitioned as X when X is one; got "
                f"{type(value).__name__}."
            )
        aligned[name] = row_blocks(name, value)
        if len(aligned[name]) != len(blocks):
            raise ValueError(
                f"{name} has {len(aligned[name])} partitions and X {len(blocks)}; partition "
                "them alike."
            )
    return [(x, {name: aligned[name][i] for name in rows}) for i, x in enumerate(blocks)]


def shared(obj):
    """``obj`` for every partition's task: scattered to every worker once when the
    current scheduler is a ``distributed.Client`` (a large object then stays out of
    the task graph), else one delayed key of the graph."""
    dask = import_dask()
    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        client = None
    if client is not None and dask.base.get_scheduler() == client.get:
        return client.scatter(obj, broadcast=True, hash=False)
    return dask.delayed(obj, pure=True, traverse=False)


def merge_tree(parts, merge):
    """The delayed ``parts`` merged pairwise in a tree (``merge``, delayed), computed."""
    dask = import_dask()
    while len(parts) > 1:
        parts = [
            merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
            for i in range(0, len(parts), 2)
        ]
    (merged,) = dask.compute(parts[0])
    return merged


def _sign_flags(block):
    """Whether one partition's labels hold -1, a label other than -1 and 1, and 1."""
    import pandas as pd

    y = values(block)
    if y.dtype.kind not in "iufb":
        y = pd.to_numeric(pd.Series(y, dtype=object), errors="coerce").to_numpy(dtype=float)
    minus = y == -1
    labeled = ~minus & ~pd.isna(y)
    return bool(minus.any()), bool((y[labeled] != 1).any()), bool((y[labeled] == 1).any())


def _any_flags(a, b):
    return tuple(x or y for x, y in zip(a, b, strict=True))


def n_score_columns(X):
    """The classes of Dask scores: 2 for P(class 1), else the number of columns."""
    if getattr(X, "ndim", 2) == 1:
        return 2
    if hasattr(X, "columns"):
        return len(X.columns)
    return int(X.shape[1])


def check_signed_labels(y, n_classes, classes, missing_label, name="y"):
    """:func:`~skassess.utils.check_labels`' {-1, +1} check over a whole Dask
    collection of labels.

    A partition's few labels may all be 1 where the collection's are not; so the
    partitions' own checks skip it (:func:`checked_codes`) and this pass reads
    the labels of every partition once, three flags each.
    """
    from ._validation import signed_labels_error, signs_marker

    if not is_dask_collection(y) or classes is not None or n_classes != 2:
        return
    if not signs_marker(missing_label):
        return
    dask = import_dask()
    flags = dask.delayed(_sign_flags, pure=True)
    minus, other, one = merge_tree(
        [flags(block) for block in row_blocks(name, y)], dask.delayed(_any_flags, pure=True)
    )
    if minus and one and not other:
        raise signed_labels_error(name)


def _fit_partition(estimator, index, first, X, rows):
    """The estimator fitted on one partition (None for an empty one); a pandas
    partition keeps its column names."""
    if not hasattr(X, "iloc"):
        X = values(X)
    if X.shape[0] == 0:
        return None
    rows = {k: None if v is None else values(v) for k, v in rows.items()}
    for name, value in rows.items():
        if value is not None and value.shape[0] != X.shape[0]:
            raise ValueError(
                f"partition {index}: {name} has {value.shape[0]} rows and X {X.shape[0]}; "
                "partition them alike (columns of one Dask DataFrame, or arrays of the "
                "same row chunks)."
            )
    est = copy.deepcopy(estimator)
    try:
        with checked_codes():  # the {-1, +1} check ran on the whole collection
            (est.fit if first else est.partial_fit)(X, **rows)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc
    return est


def _frame_of(estimator):
    if estimator is None:
        raise ValueError(
            "partition 0 holds no rows; its rows set the quantile bins the other partitions share."
        )
    return estimator.empty_like()


def merge_pair(a, b):
    """``a`` merged with ``b`` (a copy), either of which may be None (no rows)."""
    if a is None or b is None:
        return b if a is None else a
    return copy.deepcopy(a).merge(b)


def fit_partitions(estimator, X, rows, *, template):
    """The estimator fitted on every partition of ``X`` and ``rows``, merged.

    Parameters
    ----------
    estimator : estimator
        Unfitted, or (``template``) fitted: the partitions then start from
        its ``empty_like()`` and share its classes, groups and bins.
    X : Dask collection
        The scores.
    rows : dict
        :data:`ROW_ARGUMENTS` to a Dask collection partitioned as ``X``, or None.
    template : bool
        Whether every partition needs the frame of a fitted estimator (quantile
        bins, or a fitted ``estimator``); else each partition is fitted from
        scratch and the groups are matched by label in the merge.

    Returns
    -------
    estimator or None
        The merged fit (None if every partition is empty).
    """
    dask = import_dask()
    blocks = aligned_blocks(X, rows)
    check_signed_labels(
        rows.get("y"),
        n_score_columns(X),
        getattr(estimator, "classes", None),
        getattr(estimator, "missing_label", None),
    )
    fit_one = dask.delayed(_fit_partition, pure=True)
    merge = dask.delayed(merge_pair, pure=True)

    start = 0
    if template and not hasattr(estimator, "n_classes_"):
        # the first partition sets the frame (quantile bin edges) the others share
        first = fit_one(estimator, 0, True, *blocks[0])
        frame = dask.delayed(_frame_of, pure=True)(first)
        parts, start = [first], 1
    else:
        frame = estimator.empty_like() if template else estimator
        parts = []
    parts += [fit_one(frame, i, not template, *blocks[i]) for i in range(start, len(blocks))]
    return merge_tree(parts, merge)


def _partition_sum(function, index, block, rows):
    """``(sum, count)`` of ``function(block, **rows)`` over one partition's rows
    (``(0.0, 0)`` for an empty partition, e.g. of a filtered DataFrame)."""
    if len(block) == 0:
        return 0.0, 0
    try:
        values_ = np.asarray(function(block, **rows), dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc
    return float(values_.sum()), values_.shape[0]


def _added(a, b):
    return a[0] + b[0], a[1] + b[1]


def partition_mean(function, X, rows):
    """The mean over all rows of the per-row values ``function(X block, **row blocks)``.

    Each partition sends its sum and count; the blocks reach ``function`` as
    the partitions hold them (pandas DataFrames keep their columns).
    """
    dask = import_dask()
    blocks = aligned_blocks(X, rows)
    part = dask.delayed(_partition_sum, pure=True)
    parts = [part(function, i, x, r) for i, (x, r) in enumerate(blocks)]
    total, n = merge_tree(parts, dask.delayed(_added, pure=True))
    if n == 0:
        raise ValueError("X, a Dask collection, holds no rows.")
    return total / n


@contextlib.contextmanager
def local_cluster(n_workers):
    """A ``distributed.Client`` on a local cluster of ``n_workers`` single-threaded
    worker processes, closed on exit.

    Dask's nannies give their workers ``MALLOC_TRIM_THRESHOLD_=65536`` by
    default, which makes glibc map and unmap every large array afresh: the
    assessment's array work then takes about a third more time. The workers
    of this cluster keep glibc's default.
    """
    import distributed

    dask = import_dask()
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    with (
        dask.config.set({"distributed.nanny.pre-spawn-environ": environ}),
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            # a failed partition is reported once, by the caller's error; Dask's own
            # "Compute Failed" and shutdown messages would repeat it
            silence_logs=logging.CRITICAL,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client

"""A batch held in Dask partitions, summarized where each partition lives.

The uncertainty model's inputs need the batch's row count before its drift
rows can be chosen (:func:`drift_positions`), so a batch in partitions is
read twice: once for the partitions' row counts (none when a Dask Array's
chunks are known), once for their :class:`BatchSummary` objects, which are
merged in a tree. Only the summaries travel, of a size set by the bins and
the at most ``DRIFT_ROWS`` drift rows, not by the batch.
"""

import numpy as np
from sklearn.utils import Bunch

from ..utils._dask import aligned_blocks, import_dask, merge_pair, merge_tree, shared, values
from ._batch_summary import drift_positions, summarize

__all__ = ["summarize_partitions"]


def _blocks(X, scores):
    """The batch's partitions, as ``(X block or None, scores block or None)``."""
    if X is None:
        return [(None, s) for s, _ in aligned_blocks(scores, {})]
    return [(x, r["scores"]) for x, r in aligned_blocks(X, {"scores": scores})]


def _local(X, scores):
    """A partition's blocks as the predictor takes them (pandas keeps its columns)."""
    if X is not None and not hasattr(X, "iloc"):
        X = values(X)
    return X, None if scores is None else values(scores)


def _length(X, scores):
    X, scores = _local(X, scores)
    return int((scores if X is None else X).shape[0])


def _lengths(X, scores, blocks):
    """Each partition's row count: from a Dask Array's chunks when they are known."""
    lead = scores if X is None else X
    chunks = getattr(lead, "chunks", None)
    if chunks is not None and not np.isnan(np.sum(chunks[0])):
        return [int(c) for c in chunks[0]]
    dask = import_dask()
    length = dask.delayed(_length, pure=True)
    (lengths,) = dask.compute([length(x, s) for x, s in blocks])
    return lengths


def _summarize_partition(held, index, start, X, scores):
    models, frame, taken = held
    X, scores = _local(X, scores)
    if (scores if X is None else X).shape[0] == 0:
        return None
    try:
        return summarize(models, X, scores, frame=frame, taken=taken, start=start)[1]
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc


def summarize_partitions(models, X, scores, *, frame, seed):
    """The :class:`BatchSummary` of a batch in Dask collections, merged over partitions.

    Parameters
    ----------
    models : tuple
        As in :func:`summarize`.
    X, scores : Dask collections or None
        The batch's features and scores, partitioned alike.
    frame : ReferenceFrame
        The reference.
    seed : int
        Seed of the drift positions.

    Returns
    -------
    summary : BatchSummary
    rows : Bunch
        The predictor's ``p`` and ``pred`` as lazy Dask Arrays over the partitions.
    """
    dask = import_dask()
    blocks = _blocks(X, scores)
    lengths = _lengths(X, scores, blocks)
    n = int(sum(lengths))
    if n == 0:
        raise ValueError("X, a Dask collection, holds no rows.")
    starts = np.r_[0, np.cumsum(lengths)]
    taken = drift_positions(frame.n_ref, n, seed)[1]
    # the reference's rows travel with the frame: scattered once on a cluster
    held = shared((models, frame, taken))
    part = dask.delayed(_summarize_partition, pure=True)
    parts = [part(held, i, int(starts[i]), x, s) for i, (x, s) in enumerate(blocks)]
    summary = merge_tree(parts, dask.delayed(merge_pair, pure=True))
    # the lazy rows keep a delayed copy of the models, whatever scheduler computes them
    models = dask.delayed(models, pure=True, traverse=False)
    return summary, _lazy_rows(models, blocks, lengths)


def _rows_partition(models, X, scores):
    X, scores = _local(X, scores)
    rows = models[0].predict_rows(X, scores=scores)
    return np.asarray(rows["p"], dtype=np.float64), np.asarray(rows["pred"], dtype=np.intp)


def _lazy_rows(models, blocks, lengths):
    """The predictor's ``p`` and ``pred`` as lazy Dask Arrays: one task per
    partition gives both, so computing them together reads it once."""
    import dask.array as da

    dask = import_dask()
    part = dask.delayed(_rows_partition, pure=True)
    tasks = [part(models, x, s) for x, s in blocks]
    return Bunch(
        **{
            key: da.concatenate(
                [
                    da.from_delayed(t[j], shape=(m,), dtype=dtype)
                    for t, m in zip(tasks, lengths, strict=True)
                ]
            )
            for j, (key, dtype) in enumerate((("p", np.float64), ("pred", np.intp)))
        }
    )

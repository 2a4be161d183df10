"""The identity of a labeling session's pool: its size, item ids and fingerprint."""

import hashlib

import numpy as np
import pandas as pd

from ..utils._dask import import_dask, is_dask_collection, row_blocks, values
from ._columns import ItemIds


def pool_fingerprint(*parts):
    """SHA-256 of the pool a session labels: its scores, labels, groups, predictions, ids.

    A Dask collection enters by the digests of its partitions, computed where
    they live (one pass), in order.
    """
    partitioned = partition_digests([p for p in parts if is_dask_collection(p)])
    digest = hashlib.sha256()
    for part in parts:
        if part is None:
            digest.update(b"\x00none")
        elif isinstance(part, RowNumbers):
            digest.update(f"\x00rows({len(part)},)".encode())
        elif is_dask_collection(part):
            digest.update(b"\x00partitions")
            for block_digest in partitioned.pop(0)[0]:
                digest.update(block_digest)
        elif isinstance(part, ItemIds):  # the same bytes as an array of its strings
            digest.update(f"\x00({len(part)},)".encode())
            for block in part.joined():
                digest.update(block)
        else:
            _update(digest, part)
    return digest.hexdigest()


def _update(digest, part):
    arr = np.asarray(part)
    digest.update(f"\x00{arr.shape}".encode())
    if arr.dtype == object or arr.dtype.kind in "USO":
        digest.update("\x1f".join(map(str, arr.ravel().tolist())).encode())
    else:
        digest.update(str(arr.dtype).encode())
        # the array's own buffer: no copy of a large pool
        digest.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))


def _block_digest(block):
    """A partition's SHA-256 (as an array's) and its rows."""
    digest = hashlib.sha256()
    if isinstance(block, pd.DataFrame):
        digest.update(repr(list(block.columns)).encode())
    _update(digest, values(block))
    return digest.digest(), len(block)


def partition_digests(collections):
    """Per Dask collection, ``(digests of its partitions, rows)``: one pass over all."""
    if not collections:
        return []
    dask = import_dask()
    digest = dask.delayed(_block_digest, pure=True)
    tasks = [[digest(block) for block in row_blocks("X", c)] for c in collections]
    (computed,) = dask.compute(tasks)
    return [([d for d, _ in parts], sum(n for _, n in parts)) for parts in computed]


class RowNumbers:
    """The ids of a pool too large to list: row ``i``'s id is ``str(i)``."""

    def __init__(self, n):
        self._n = int(n)

    def __len__(self):
        return self._n

    def __getitem__(self, row):
        if not 0 <= row < self._n:
            raise IndexError(row)
        return str(int(row))


def pool_size(X, ids):
    """Rows of the pool ``X`` (a Dask DataFrame's are counted where they live)."""
    if not is_dask_collection(X):
        return len(X)
    if ids is not None:
        raise ValueError(
            "ids: a pool in Dask partitions is labeled by row number (stored as each "
            "item's id); pass ids=None."
        )
    n = X.shape[0] if hasattr(X, "chunks") else np.nan  # a Dask Array knows its chunks
    if np.isnan(n):
        n = X.map_partitions(len).sum().compute()
    return int(n)

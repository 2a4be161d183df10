"""The columns of a pool held compactly: ids as bytes, groups as categoricals.

Item ids: a pool of millions of string ids in a few bytes each.

A numpy object array of Python strings costs about 60 bytes an id (the
string objects and their pointers); a fixed-width numpy string array costs
the longest id's width for every id. :class:`ItemIds` keeps the ids' UTF-8
bytes end to end with one offset per id, the layout of an Arrow string
column, so 10 million ids of 8 characters take 160 MB instead of 600 MB.
pyarrow does the same, but it is an optional dependency of skassess.
"""

import numpy as np
import pandas as pd

__all__ = ["ItemIds", "concat_categories", "stack"]


class ItemIds:
    """A read-only sequence of string ids (``ids[i]`` is a ``str``).

    Build with :meth:`from_strings` (one chunk) and :meth:`concat` (chunks).
    ``numpy.asarray(ids)`` gives an object array of the strings, for the rare
    uses that need them all as Python objects.
    """

    __slots__ = ("_data", "_offsets")

    def __init__(self, data, offsets):
        self._data = data  # uint8: every id's UTF-8 bytes, end to end
        self._offsets = offsets  # int64 of length n + 1

    @classmethod
    def from_strings(cls, values):
        encoded = [str(v).encode("utf-8") for v in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(
            np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:]
        )
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    @classmethod
    def concat(cls, parts):
        parts = list(parts)
        if not parts:
            return cls.from_strings([])
        data = np.concatenate([p._data for p in parts])
        starts = np.cumsum([0] + [len(p._data) for p in parts[:-1]])
        offsets = np.concatenate(
            [parts[0]._offsets[:1]]
            + [p._offsets[1:] + s for p, s in zip(parts, starts, strict=True)]
        )
        return cls(data, offsets)

    def __len__(self):
        return len(self._offsets) - 1

    def _one(self, i):
        return self._data[self._offsets[i] : self._offsets[i + 1]].tobytes().decode("utf-8")

    def __getitem__(self, key):
        if isinstance(key, int | np.integer):
            n = len(self)
            i = int(key) + n if key < 0 else int(key)
            if not 0 <= i < n:
                raise IndexError(f"id index {key} is out of range for {n} ids.")
            return self._one(i)
        rows = np.arange(len(self))[key]
        return np.array([self._one(i) for i in np.atleast_1d(rows)], dtype=object)

    def __iter__(self):
        return (self._one(i) for i in range(len(self)))

    def __array__(self, dtype=None, copy=None):
        out = np.array(list(self), dtype=object)
        return out if dtype is None else out.astype(dtype)

    def tolist(self):
        return list(self)

    def joined(self, sep=b"\x1f", size=1 << 20):
        """The ids' bytes joined by ``sep``, ``size`` ids at a time (separators between
        blocks included): the bytes of ``sep.join(ids)``, without making it whole."""
        o, n = self._offsets, len(self)
        for a in range(0, n, size):
            b = min(a + size, n)
            if a:
                yield sep
            segment = self._data[o[a] : o[b]]
            lengths = np.diff(o[a : b + 1])
            out = np.empty(len(segment) + (b - a - 1) * len(sep), dtype=np.uint8)
            shift = np.repeat(np.arange(b - a) * len(sep), lengths)
            out[np.arange(len(segment)) + shift] = segment
            starts = o[a + 1 : b] - o[a] + np.arange(b - a - 1) * len(sep)
            for k, byte in enumerate(sep):
                out[starts + k] = byte
            yield out

    @property
    def nbytes(self):
        return self._data.nbytes + self._offsets.nbytes


def stack(parts):
    """``np.concatenate(parts)``, freeing each part once copied (peak: result + one part)."""
    total = sum(len(p) for p in parts)
    out = np.empty((total, *parts[0].shape[1:]), dtype=parts[0].dtype)
    start = 0
    for i in range(len(parts)):
        out[start : start + len(parts[i])] = parts[i]
        start += len(parts[i])
        parts[i] = None
    return out


def concat_categories(frames):
    """Row-wise concatenation of frames of categorical columns, categorical throughout."""
    if not frames[0].columns.size:
        return pd.DataFrame(index=range(sum(len(f) for f in frames)))
    return pd.DataFrame(
        {c: pd.api.types.union_categoricals([f[c] for f in frames]) for c in frames[0].columns}
    )

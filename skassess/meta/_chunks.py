"""A stream cut into chunks, and labels spread over them.

How :class:`~skassess.meta.PerformanceMonitor` cuts a stream into chunks
(by key or by size), orders a chunk's rows by their values, and spreads a
labeling budget over the chunks.
"""

import numpy as np
import pandas as pd
from scipy.stats import norm

from ._error_levels import check_levels

__all__ = ["allocate_labels", "chunk_rows", "draw_rows", "level_suffix", "value_order"]


def level_suffix(level):
    """The column suffix of a level: 0.8 -> ``"80"``, 0.997 -> ``"99.7"``."""
    return f"{100 * float(level):.10g}"


def value_order(*parts):
    """An order of rows by their values alone (a hash of each row, ties kept in place)."""
    key = None
    for part in parts:
        if part is None:
            continue
        frame = (
            part if isinstance(part, pd.DataFrame | pd.Series) else pd.DataFrame(np.asarray(part))
        )
        h = pd.util.hash_pandas_object(frame, index=False).to_numpy()
        key = h if key is None else key * np.uint64(1_000_003) ^ h
    if key is None:
        return slice(None)
    return np.argsort(key, kind="stable")


def allocate_labels(table, left, n, level, threshold):
    """How many of ``n`` labels each chunk of a :meth:`PerformanceMonitor.predict` table gets.

    Greedy, one label at a time, to the chunk whose normal approximation
    (sd read off its widest ``level`` interval) narrows most, weighted by the
    density at ``threshold`` when one is set; a chunk gets at most ``left``
    of its rows.
    """
    a = max(check_levels(level))
    s = level_suffix(a)
    z = norm.ppf((1 + a) / 2)
    sd0 = np.maximum((table[f"upper_{s}"] - table[f"lower_{s}"]).to_numpy() / (2 * z), 1e-6)
    m = np.clip(table["mean"].to_numpy(), 0.01, 0.99)
    unit = m * (1 - m)
    left = np.asarray(left, dtype=int)
    taken = np.zeros(left.size, dtype=int)

    def sd_after(k):
        return 1.0 / np.sqrt(1.0 / sd0**2 + k / unit)

    for _ in range(min(n, int(left.sum()))):
        gain = sd_after(taken) - sd_after(taken + 1)
        if threshold is not None:
            gain = gain * norm.pdf((threshold - m) / sd_after(taken)) / sd_after(taken)
        gain = np.where(taken < left, gain, -np.inf)
        taken[int(np.argmax(gain))] += 1
    return taken


def draw_rows(free, taken, rng):
    """``taken[i]`` rows drawn uniformly without replacement from each ``free[i]``, joined."""
    picked = [rng.choice(f, k, replace=False) for f, k in zip(free, taken, strict=True) if k]
    return np.concatenate(picked) if picked else np.empty(0, dtype=np.int64)


def chunk_rows(n, chunk_by, chunk_size):
    """``(keys, list of row-index arrays)`` of ``n`` rows, in the keys' sorted order.

    ``chunk_by`` gives each row's key; None cuts the rows into ``chunk_size``
    rows (None: one chunk).
    """
    if chunk_by is None:
        size = n if chunk_size is None else chunk_size
        starts = np.arange(0, n, max(size, 1))
        return list(range(len(starts))), [np.arange(s, min(s + size, n)) for s in starts]
    keys = chunk_by if isinstance(chunk_by, pd.Series) else pd.Series(chunk_by)
    keys = keys.reset_index(drop=True)
    if len(keys) != n:
        raise ValueError(
            f"chunk_by has {len(keys)} values for {n} rows; give one chunk key per row."
        )
    missing = keys.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"chunk_by has no key at row {int(np.flatnonzero(missing)[0])}; give every row a chunk."
        )
    codes, uniques = pd.factorize(keys, sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return list(uniques), np.split(order, bounds)

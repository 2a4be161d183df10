"""A monitored stream's files, read batch by batch, and its chunks in bounded memory."""

from collections import Counter

import numpy as np
import pandas as pd

from ..exceptions import ScoresFileError
from ._scores_file import ScoresFile

__all__ = ["chunk_keys", "iter_stream_chunks", "stream_batches", "two_columns"]

#: Rows read from a stream file at a time (each batch's text columns are Python objects).
BATCH_ROWS = 200_000


def two_columns(scores):
    """Binary scores of one column as two (``1 - p, p``); others as they are."""
    return np.column_stack([1 - scores, scores]) if scores.ndim == 1 else scores


def chunk_keys(values, path, offset, column, period):
    """The chunk of each row: the column's text, or the period of its time."""
    # ScoresFile has refused empty values of a group column
    values = pd.Series(np.asarray(values, dtype=object))
    if period is None:
        return values.astype(str).to_numpy(dtype=object)
    times = pd.to_datetime(values, errors="coerce", format="mixed")
    bad = times.isna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ScoresFileError(
            f"{path}: row {offset + row + 1}, column {column!r}: {values.iloc[row]!r} is not "
            "a date or time."
        )
    try:
        return times.dt.to_period(period).to_numpy()
    except ValueError as exc:
        raise ValueError(
            f"--period: {period!r} is not a pandas period (D, h, W, M): {exc}"
        ) from exc


def stream_batches(path, options, classes, chunk_column=None, period=None, whole=False):
    """Checked batches of a stream file: ``(table, keys)``, ``keys`` its rows' chunk keys
    (None without ``chunk_column``); ``whole``: the file in one batch."""
    groups = [chunk_column] if chunk_column is not None else []
    sf = ScoresFile(path, **options, group_columns=groups)
    if list(sf.classes) != list(classes):
        raise ValueError(
            f"{path}: its classes {list(sf.classes)} differ from the reference's {list(classes)}."
        )
    try:
        tables = [sf.read()] if whole else sf.iter_chunks(BATCH_ROWS)
        for table in tables:
            keys = None
            if chunk_column is not None:
                offset = getattr(table, "offset", 0)
                keys = chunk_keys(table.groups[chunk_column], path, offset, chunk_column, period)
            yield table, keys
    except ScoresFileError as exc:
        # the chunk column is read as a group column: name it as the chunk's key
        text = str(exc)
        if chunk_column is not None and text.endswith(f"'{chunk_column}': the group is empty."):
            raise ScoresFileError(
                text.replace(
                    "the group is empty.",
                    "the chunk key is empty; every row of the stream needs one (--chunk-column).",
                )
            ) from None
        raise


def iter_stream_chunks(files, options, classes, *, chunk_column=None, period=None, chunk_size=None):
    """``(key, scores, labels)`` of each chunk of the stream, holding open chunks' rows only.

    Chunks of ``chunk_size`` rows run across the files in order; without a
    size or a column, a chunk is a file. With ``chunk_column``, a first pass
    counts each key's rows and the second gives a chunk as soon as all of its
    rows are read: the memory holds the chunks whose rows are still coming
    (one or two for a stream in time order), in the order they complete.
    """
    if chunk_column is None and chunk_size is None:
        for path in files:
            parts = [
                (two_columns(t.scores), t.labels) for t, _ in stream_batches(path, options, classes)
            ]
            yield path, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        return
    if chunk_column is None:
        buffer, held, key = [], 0, 0
        for path in files:
            for table, _ in stream_batches(path, options, classes):
                S, y = two_columns(table.scores), table.labels
                while len(y):
                    take = min(chunk_size - held, len(y))
                    buffer.append((S[:take], y[:take]))
                    held += take
                    S, y = S[take:], y[take:]
                    if held == chunk_size:
                        yield key, *_joined(buffer)
                        buffer, held, key = [], 0, key + 1
        if held:
            yield key, *_joined(buffer)
        return
    total = Counter()
    for path in files:
        for _, keys in stream_batches(path, options, classes, chunk_column, period):
            total.update(keys.tolist())
    open_chunks, seen = {}, Counter()
    for path in files:
        for table, keys in stream_batches(path, options, classes, chunk_column, period):
            S, codes = two_columns(table.scores), _codes(keys)
            order = np.argsort(codes, kind="stable")
            bounds = np.flatnonzero(np.diff(codes[order])) + 1
            for rows in np.split(order, bounds):
                k = keys[rows[0]]
                open_chunks.setdefault(k, []).append((S[rows], table.labels[rows]))
                seen[k] += len(rows)
                if seen[k] == total[k]:
                    yield k, *_joined(open_chunks.pop(k))


def _codes(keys):
    return pd.factorize(keys)[0]


def _joined(parts):
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

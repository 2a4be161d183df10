"""A black box's accuracy over time from scores files (``skassess monitor``)."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..meta import PerformanceMonitor, PerformancePredictor
from ._scores_file import ScoresFile
from ._stream_chunks import iter_stream_chunks, stream_batches, two_columns

__all__ = [
    "MonitoredStream",
    "monitor_files",
    "read_stream",
    "stream_monitor",
    "stream_paths",
    "stream_result",
]

#: The endings of the scores files a stream directory holds.
STREAM_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".parquet")


@dataclass
class MonitoredStream:
    """What ``skassess monitor`` found: the per-chunk table and where it came from.

    Read more in the :ref:`User Guide <ug_monitoring>`.

    Attributes
    ----------
    table : DataFrame
        :meth:`~skassess.meta.PerformanceMonitor.predict`'s table.
    rows : DataFrame or None
        One row per stream row: ``file``, ``id``, ``chunk``, ``labeled``;
        None where the stream was read chunk by chunk (no rows were asked
        for: it is not kept).
    monitor : PerformanceMonitor
        Fitted on the reference.
    reference : dict
        The reference file, its rows, the metric and its value there
        (``accuracy``).
    to_label : DataFrame
        The rows :meth:`~skassess.meta.PerformanceMonitor.query` picked
        (``file``, ``id``, ``chunk``); empty unless asked for.
    files : list of str
        The stream's files, in order.
    """

    table: pd.DataFrame
    rows: pd.DataFrame | None
    monitor: PerformanceMonitor
    reference: dict
    to_label: pd.DataFrame = field(default_factory=pd.DataFrame)
    files: list = field(default_factory=list)

    def to_dict(self):
        table = self.table.reset_index()
        table["chunk"] = table["chunk"].astype(str)
        return {
            "reference": self.reference,
            "threshold": self.monitor.threshold,
            "chunks": table.to_dict(orient="records"),
            "to_label": self.to_label.astype(str).to_dict(orient="records"),
        }


def stream_paths(paths):
    """The stream's files: each path, or the scores files of a directory (sorted by name)."""
    out = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(
                f
                for f in path.iterdir()
                if f.is_file() and f.name.lower().endswith(STREAM_SUFFIXES)
            )
            if not found:
                raise ValueError(
                    f"{p}: the directory holds no scores file ({', '.join(STREAM_SUFFIXES)})."
                )
            out += [str(f) for f in found]
        else:
            out.append(str(p))
    return out


def _reference(reference, file_options, chunk_column, period, chunk_size):
    """The stream's file options, the reference file's table and its labeled rows."""
    options = {k: v for k, v in (file_options or {}).items() if v is not None}
    options.pop("group_columns", None)
    if period is not None and chunk_column is None:
        raise ValueError("--period cuts the times of --chunk-column; give --chunk-column too.")
    if chunk_column is not None and chunk_size is not None:
        raise ValueError("Give --chunk-column or --chunk-size, not both.")
    ref = ScoresFile(reference, **options).read()
    labeled = ref.labels >= 0
    if labeled.sum() < 20 or np.unique(ref.labels[labeled]).size < 2:
        raise ValueError(
            f"{reference}: the reference needs at least 20 labeled rows of two or more classes; "
            f"it has {int(labeled.sum())} labeled rows."
        )
    return options, ref, labeled


def read_stream(
    reference, stream, *, file_options=None, chunk_column=None, period=None, chunk_size=None
):
    """The reference's labeled rows and the stream's rows, chunks and ids, from scores files.

    Parameters are as in :func:`monitor_files`.

    Returns
    -------
    Bunch
        ``reference_scores``, ``reference_labels`` (its labeled rows),
        ``reference_file``; ``scores``, ``labels``, ``chunk_by`` (None: chunks
        of ``chunk_size`` rows), ``ids``, ``display`` (the display columns)
        and ``rows`` (``file``, ``id``, ``labeled``, ``chunk``) of the
        stream; ``classes`` and ``files`` (the stream's files, in order).
    """
    options, ref, labeled = _reference(reference, file_options, chunk_column, period, chunk_size)
    files = stream_paths(stream)
    parts, keys, rows = [], [], []
    for path in files:
        ((table, path_keys),) = stream_batches(
            path, options, ref.classes, chunk_column, period, whole=True
        )
        parts.append(table)
        if chunk_column is not None:
            keys.append(path_keys)
        elif chunk_size is None:
            keys.append(np.full(len(table), path, dtype=object))
        rows.append(
            pd.DataFrame(
                {"file": path, "id": np.asarray(table.ids, dtype=str), "labeled": table.labels >= 0}
            )
        )
    if not parts:
        raise ValueError("The stream has no file.")
    S = np.concatenate([two_columns(p.scores) for p in parts])
    chunk_by = np.concatenate(keys) if keys else None
    if chunk_by is not None and chunk_column is None:  # one chunk per file, in the given order
        chunk_by = pd.Categorical(chunk_by, categories=list(dict.fromkeys(chunk_by)), ordered=True)
    frame = pd.concat(rows, ignore_index=True)
    # a row's chunk is its key, or its block of chunk_size rows (PerformanceMonitor's chunks)
    if chunk_by is None:
        size = len(S) if chunk_size is None else chunk_size
        frame["chunk"] = (np.arange(len(S)) // size).astype(str)
    else:
        frame["chunk"] = np.asarray(chunk_by, dtype=object).astype(str)
    return Bunch(
        reference_scores=two_columns(ref.scores[labeled]),
        reference_labels=ref.labels[labeled],
        reference_file=str(reference),
        scores=S,
        labels=np.concatenate([p.labels for p in parts]),
        chunk_by=chunk_by,
        ids=frame["id"].to_numpy(),
        display=pd.concat([p.display for p in parts], ignore_index=True),
        rows=frame,
        classes=list(ref.classes),
        files=files,
    )


def stream_monitor(n_classes, *, method="combined", **params):
    """The (unfitted) :class:`~skassess.meta.PerformanceMonitor` of :func:`monitor_files`:
    the ``method`` predictor on scores of ``n_classes`` columns, with ``params``."""
    predictor = PerformancePredictor(method=method, classes=list(range(n_classes)))
    return PerformanceMonitor(predictor, **params)


def monitor_files(
    reference,
    stream,
    *,
    file_options=None,
    chunk_column=None,
    period=None,
    chunk_size=None,
    level=(0.8, 0.95),
    metric="accuracy",
    threshold=None,
    alert_probability=0.9,
    method="combined",
    uncertainty_model="pretrained",
    query=0,
    random_state=0,
    progress=True,
):
    """The accuracy of every chunk of a stream of scores files, learned from a labeled reference.

    Read more in the :ref:`User Guide <ug_monitoring>`.

    Parameters
    ----------
    reference : str or path-like
        A scores file whose labeled rows are the reference.
    stream : list of str or path-like
        Scores files (or directories of them) of the monitored period, read
        in order; their labels, where given, are used on top.
    file_options : dict, default=None
        :class:`ScoresFile` options shared by every file.
    chunk_column : str, default=None
        The column that says each row's chunk (a batch name, or a time with
        ``period``); None: ``chunk_size`` rows, else one chunk per file.
    period : str, default=None
        A pandas period (``"D"``, ``"h"``, ``"W"``) that cuts the times of
        ``chunk_column`` into chunks.
    chunk_size : int, default=None
    level, metric, threshold, alert_probability, random_state
        As in :class:`~skassess.meta.PerformanceMonitor` (a rate's positive
        class is the second score column).
    method : str, default="combined"
        The :class:`~skassess.meta.PerformancePredictor` method.
    uncertainty_model : {"pretrained", "recalibrated"}, default="pretrained"
        As in :class:`~skassess.meta.PerformanceMonitor`.
    query : int, default=0
        Rows to pick for labeling next.

    Returns
    -------
    MonitoredStream
    """
    params = dict(
        chunk_size=chunk_size,
        level=level,
        metric=metric,
        threshold=threshold,
        alert_probability=alert_probability,
        method=method,
        uncertainty_model=uncertainty_model,
        random_state=random_state,
        progress=progress,
    )
    if not query:  # chunk by chunk: the memory of the chunks being read, not of the stream
        options, ref, labeled = _reference(
            reference, file_options, chunk_column, period, chunk_size
        )
        S_ref = two_columns(ref.scores[labeled])
        monitor = stream_monitor(S_ref.shape[1], **params).fit(S_ref, ref.labels[labeled])
        files = stream_paths(stream)
        chunks = iter_stream_chunks(
            files,
            options,
            ref.classes,
            chunk_column=chunk_column,
            period=period,
            chunk_size=chunk_size,
        )
        table = monitor.predict_chunks(chunks)
        if chunk_column is not None:  # as PerformanceMonitor.predict, in the keys' order
            table = table.sort_index()
        return MonitoredStream(
            table=table,
            rows=None,
            monitor=monitor,
            reference=_reference_facts(str(reference), int(labeled.sum()), monitor),
            files=files,
        )
    data = read_stream(
        reference,
        stream,
        file_options=file_options,
        chunk_column=chunk_column,
        period=period,
        chunk_size=chunk_size,
    )
    monitor = stream_monitor(data.scores.shape[1], **params)
    monitor.fit(data.reference_scores, data.reference_labels)
    S, y, chunk_by = data.scores, data.labels, data.chunk_by
    table = monitor.predict(S, y, chunk_by=chunk_by)
    picked = monitor.query(S, y, n=query, chunk_by=chunk_by, table=table)
    return stream_result(data, monitor, table, picked)


def _reference_facts(path, n_labeled, monitor):
    return {
        "file": path,
        "labeled": int(n_labeled),
        "metric": monitor.metric,
        "accuracy": monitor.reference_accuracy_,
    }


def stream_result(data, monitor, table, picked):
    """The :class:`MonitoredStream` of a stream read by :func:`read_stream`."""
    frame = data.rows
    return MonitoredStream(
        table=table,
        rows=frame,
        monitor=monitor,
        reference=_reference_facts(data.reference_file, len(data.reference_labels), monitor),
        files=list(data.files),
        to_label=frame.loc[
            np.sort(np.asarray(picked, dtype=np.int64)), ["file", "id", "chunk"]
        ].reset_index(drop=True),
    )

"""The assessment of a data set split into files (partitions), one task per file.

Each partition is read where it lives, in batches, by the same
:class:`ScoresFile` checks as one file (an error names the partition's file,
row and column; a partition with a header and no rows, as Spark writes, adds
nothing), and fits the assessment's estimators from scratch; the fits
travel back, merged pairwise (``merge``): their size is the number of groups,
so no row reaches the client. On a Dask ``distributed.Client`` the partitions
run on its workers; without one, one after the other in this process.
"""

import hashlib
import time

from sklearn.base import clone

from ..exceptions import ScoresFileError
from ._assessment import assessment_settings, assessors, summarize
from ._progress import Steps
from ._scores_file import CHUNK_ROWS, ScoresFile

__all__ = ["assess_partitions"]


def _assess_partition(path, columns, expected, estimators, chunk_rows, checksum):
    """One partition's fitted estimators, rows, labeled rows, bytes and SHA-256."""
    sf = ScoresFile(path, **columns)
    found = sf.describe()
    if found != expected:
        diff = sorted(k for k in expected if found.get(k) != expected[k])
        raise ScoresFileError(
            f"{path}: its columns differ from the first partition's ("
            + "; ".join(f"{k}: {found.get(k)!r} here, {expected[k]!r} there" for k in diff)
            + ")."
        )
    est = {k: None for k in estimators}
    n_rows = n_labeled = 0
    for chunk in sf.iter_chunks(chunk_rows, allow_empty=True):
        for key, e in estimators.items():
            group = chunk.groups[key[6:]].to_numpy() if key.startswith("group:") else None
            if est[key] is None:
                est[key] = clone(e).fit(chunk.scores, chunk.labels, group_by=group)
            else:
                est[key].partial_fit(chunk.scores, chunk.labels, group_by=group)
        n_rows += len(chunk)
        n_labeled += int((chunk.labels >= 0).sum())
    return {
        "estimators": est,
        "rows": n_rows,
        "labeled": n_labeled,
        "bytes": sf.size,
        "sha256": [(sf.path.name, sf.checksum() if checksum else None)],
    }


def _merge(a, b):
    est = {k: _merged(a["estimators"][k], b["estimators"][k]) for k in a["estimators"]}
    out = {"estimators": est, "sha256": a["sha256"] + b["sha256"]}
    out.update({k: a[k] + b[k] for k in ("rows", "labeled", "bytes")})
    return out


def _merged(a, b):
    """``a`` merged with ``b``; an empty partition's fit is None."""
    if a is None or b is None:
        return b if a is None else a
    return a.merge(b)


def assess_partitions(
    paths,
    *,
    client=None,
    prior="calibrated",
    level=0.95,
    rope=0.05,
    decision_probability=0.95,
    n_bins=10,
    cost_matrix=None,
    random_state=0,
    chunk_rows=CHUNK_ROWS,
    checksum=True,
    name=None,
    progress=False,
    **columns,
):
    """Assess the black box of scores files that are partitions of one data set.

    The result is :func:`assess_file`'s on the files' rows one after the
    other (to floating-point summation order). Every file must have the
    columns of the first; ids are checked for duplicates within a file.

    Parameters
    ----------
    paths : list of str or path-like
        The partitions' scores files, in order.
    client : distributed.Client, default=None
        Run one task per file on its workers (pip install "skassess[dask]").
        None: the files are read one after the other here.
    prior, level, rope, decision_probability, n_bins, cost_matrix, random_state
        As in :func:`assess_file`.
    chunk_rows : int, default=CHUNK_ROWS
        Rows per batch within a partition.
    checksum : bool, default=True
        Record each file's SHA-256; ``source["sha256"]`` is the SHA-256 of the
        lines ``"<file name> <its SHA-256>"``, one per file in order.
    name : str, default=None
        What ``source["file"]`` says (e.g. the glob the files came from);
        None: the first file and the number of files.
    progress : bool, default=False
        A progress line of the run's steps on standard error.
    **columns
        The column roles, as in :class:`ScoresFile`.

    Returns
    -------
    FileAssessment
        ``source`` has ``"partitions"``, the number of files.
    """
    start = time.perf_counter()
    paths = [str(p) for p in paths]
    if not paths:
        raise ValueError("paths is empty; pass at least one scores file.")
    first = ScoresFile(paths[0], **columns)
    expected = first.describe()
    seed = int(random_state)
    est = assessors(first.group_columns, prior, n_bins, cost_matrix, seed)
    steps = Steps(5 + len(first.group_columns), progress)
    try:
        steps.step(f"reading {len(paths)} partitions")
        args = (columns, expected, est, chunk_rows, checksum)
        if client is None:
            parts = [_assess_partition(p, *args) for p in paths]
        else:
            parts = client.map(_assess_partition, paths, *[[a] * len(paths) for a in args])
        while len(parts) > 1:
            pairs = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
            tail = [parts[-1]] if len(parts) % 2 else []
            if client is None:
                parts = [_merge(a, b) for a, b in pairs] + tail
            else:
                parts = client.map(_merge, *zip(*pairs, strict=True)) + tail
        merged = parts[0] if client is None else parts[0].result()
        if merged["rows"] == 0:
            raise ScoresFileError(
                f"{name or paths[0]}: the {len(paths)} partition(s) have a header but no rows."
            )
        digests = merged["sha256"]
        sha = None
        if checksum:
            lines = "".join(f"{n} {d}\n" for n, d in digests)
            sha = hashlib.sha256(lines.encode()).hexdigest()
        source = {
            "file": name
            or (paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more"),
            "partitions": len(paths),
            "bytes": merged["bytes"],
            "rows": merged["rows"],
            "labeled": merged["labeled"],
            "sha256": sha,
            "columns": expected,
            "seconds": None,
        }
        settings = assessment_settings(
            prior, level, rope, decision_probability, n_bins, seed, cost_matrix, None
        )
        out = summarize(merged["estimators"], source, settings, steps)
        source["seconds"] = round(time.perf_counter() - start, 3)
        return out
    finally:
        steps.close()

"""The assessment of a partitioned scores data set: one process, and a Dask cluster.

Writes ``--rows`` rows of ``--classes`` class scores (float32, Dirichlet), a
label on 1 % of the rows and a group column, as ``--partitions`` Parquet files
in ``--folder`` (kept: a second run reuses them), then times
``skassess.session.assess_partitions`` on them:

- in this process, the files one after the other (the streaming path);
- on a ``distributed.LocalCluster`` of 1 and of 2 worker processes (one
  thread each), one task per file;
- a labeling session on the files as one pool in Dask partitions (2
  workers): the time to open it, the first query, and each label after;
- and the interval model (``PerformanceIntervalRegressor``) predicting the
  accuracy of the unlabeled rows: the first 5 files in memory, then the same
  files and all of them as a Dask DataFrame on 2 workers.

Each run is a fresh Python process (this script with ``--only``), so that a
run's memory is its own. Printed: seconds, rows per second, the client's
peak memory (RSS, sampled every 0.2 s) and the workers' peak, and the largest
difference of any table cell from the one-process result (floating-point
summation order only).

Usage: ``python benchmarks/bench_dask.py [--rows 100000000] [--partitions 50]
[--classes 10] [--folder /tmp/skassess-dask] [--save dask]``
"""

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pyarrow.dataset
import pyarrow.parquet
from _results import add_save_argument, saving_printed_tables

from skassess.session import ScoresFile, assess_partitions
from skassess.session._assessment import assessors
from skassess.session._partitions import CHUNK_ROWS, _assess_partition
from skassess.utils._dask import local_cluster


def write_partitions(folder, rows, partitions, classes, seed=0):
    """The Parquet files (written once; a file already there is kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    per = rows // partitions
    for i in range(partitions):
        path = folder / f"part-{i:04d}.parquet"
        paths.append(path)
        if path.exists():
            continue
        rng = np.random.default_rng([seed, i])
        frame = {}
        for start in range(0, per, 1_000_000):  # a million rows at a time
            n = min(1_000_000, per - start)
            p = rng.dirichlet(np.full(classes, 0.3), n).astype(np.float32)
            truth = (p.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, classes - 1)
            label = np.where(rng.random(n) < 0.01, truth.astype(str), None)
            chunk = pd.DataFrame(p, columns=[f"score_{k}" for k in range(classes)])
            chunk["label"] = label
            chunk["region"] = rng.choice(["north", "south", "east", "west"], n)
            frame.setdefault("parts", []).append(chunk)
        pd.concat(frame["parts"], ignore_index=True).to_parquet(path, index=False)
    return paths


class PeakMemory:
    """The peak RSS of processes (sampled every 0.2 s in a thread)."""

    def __init__(self, pids):
        self.pids, self.peak, self._stop = list(pids), 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for pid in self.pids:
                try:
                    self.peak = max(self.peak, psutil.Process(pid).memory_info().rss)
                except psutil.NoSuchProcess:
                    pass
            time.sleep(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def tables(result):
    return [result.overall, result.by_class, result.reliability, *result.by_group.values()]


def largest_difference(a, b):
    """The largest difference of any cell of the tables ``a`` and ``b``."""
    return max(
        float(
            np.nanmax(
                np.abs(x.select_dtypes("number").to_numpy() - y.select_dtypes("number").to_numpy())
            )
        )
        for x, y in zip(a, b, strict=True)
    )


def run_one(paths, mode, out):
    """One run in this (fresh) process; its timing and memory go to ``out``
    (JSON), its result next to it (pickle)."""
    options = {"label_column": "label", "group_columns": ["region"], "checksum": False}
    worker_peak = None
    if mode == "one":
        with PeakMemory([psutil.Process().pid]) as mem:
            t0 = time.perf_counter()
            result = assess_partitions(paths, **options)
            seconds = time.perf_counter() - t0
    else:
        # the cluster of skassess assess --workers
        with local_cluster(int(mode)) as client:
            pids = [w.process.pid for w in client.cluster.workers.values()]
            with PeakMemory([psutil.Process().pid]) as mem, PeakMemory(pids) as wmem:
                t0 = time.perf_counter()
                result = assess_partitions(paths, client=client, **options)
                seconds = time.perf_counter() - t0
            worker_peak = wmem.peak
    # what a partition's task sends to the merge, as the workers pickle it (the
    # merged payloads have the same groups and bins, so the same size)
    columns = {"label_column": "label", "group_columns": ["region"]}
    expected = ScoresFile(paths[0], **columns).describe()
    estimators = assessors(["region"], "calibrated", 10, None, 0)
    payload = _assess_partition(paths[0], columns, expected, estimators, CHUNK_ROWS, False)
    merge_bytes = len(pickle.dumps(payload))
    Path(out).write_text(
        json.dumps(
            {
                "seconds": seconds,
                "client_peak": mem.peak,
                "worker_peak": worker_peak,
                "merge_bytes": merge_bytes,
            }
        )
    )
    with open(out + ".pkl", "wb") as f:
        pickle.dump(tables(result), f)


def run_labeling(paths, out, n_labels=50):
    """A labeling session on the files as one pool in partitions, on 2 workers."""
    import dask.dataframe as dd

    from skassess import ActiveAssessor
    from skassess.session import LabelingSession

    columns = score_columns(paths[0])
    times = {}
    with local_cluster(2) as client, tempfile.TemporaryDirectory() as tmp:
        pids = [w.process.pid for w in client.cluster.workers.values()]
        scores = dd.read_parquet([str(p) for p in paths], columns=columns)
        assessor = ActiveAssessor(task="least_accurate", random_state=0)
        rng = np.random.default_rng(0)
        with PeakMemory([psutil.Process().pid]) as mem, PeakMemory(pids) as wmem:
            t0 = time.perf_counter()
            session = LabelingSession(f"{tmp}/labels.sqlite", scores, assessor=assessor)
            times["open"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            row = session.query()
            times["first query"] = time.perf_counter() - t0
            steps = []
            for _ in range(n_labels):
                t0 = time.perf_counter()
                session.tell(row, int(rng.integers(len(columns))))
                row = session.query()
                steps.append(time.perf_counter() - t0)
            session.close()
        times["label"] = float(np.median(steps))
        times["label max"] = float(np.max(steps))
    Path(out).write_text(
        json.dumps({"times": times, "client_peak": mem.peak, "worker_peak": wmem.peak})
    )


def _interval_model(paths):
    """The interval model of the scores alone, fitted on the first file's labeled rows."""
    from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor

    columns = score_columns(paths[0])
    # the labeled rows only: a whole file read here would stay in the client's memory
    table = pyarrow.dataset.dataset(paths[0]).to_table(
        columns=[*columns, "label"], filter=pyarrow.dataset.field("label").is_valid()
    )
    frame = table.to_pandas()
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(classes=np.arange(len(columns))), random_state=0
    ).fit(None, frame["label"].astype(int), scores=frame[columns])
    return pir, columns


def score_columns(path):
    """The score columns of a file, from its schema (no row read)."""
    return [c for c in pyarrow.parquet.read_schema(path).names if c.startswith("score_")]


def run_meta(paths, mode, out, n_small=5):
    """The interval model's prediction for the unlabeled rows of the files, in
    this process (the first ``n_small`` files, in memory) or on 2 workers (the
    same files, then all of them)."""
    import dask.dataframe as dd

    pir, columns = _interval_model(paths)
    runs = {}

    def record(name, batch, mem, wmem, seconds):
        runs[name] = {
            "seconds": seconds,
            "rows": batch.correctness.shape[0],
            "client_peak": mem.peak,
            "worker_peak": None if wmem is None else wmem.peak,
            "accuracy": batch.accuracy,
            "quantiles": batch.error_quantiles.tolist(),
            "features": {k: float(v) for k, v in batch.features.items()},
        }

    if mode == "meta-one":
        with PeakMemory([psutil.Process().pid]) as mem:
            t0 = time.perf_counter()
            frame = pd.concat([pd.read_parquet(p) for p in paths[:n_small]], ignore_index=True)
            scores = frame.loc[frame["label"].isna(), columns].to_numpy()
            del frame
            batch = pir.predict_batch(None, scores=scores)
            record("small", batch, mem, None, time.perf_counter() - t0)
    else:
        with local_cluster(2) as client:
            pids = [w.process.pid for w in client.cluster.workers.values()]
            for name, files in (("small", paths[:n_small]), ("all", paths)):
                frame = dd.read_parquet([str(p) for p in files], columns=[*columns, "label"])
                scores = frame[frame["label"].isna()][columns]
                with PeakMemory([psutil.Process().pid]) as mem, PeakMemory(pids) as wmem:
                    t0 = time.perf_counter()
                    batch = pir.predict_batch(None, scores=scores)
                    record(name, batch, mem, wmem, time.perf_counter() - t0)
    Path(out).write_text(json.dumps(runs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--partitions", type=int, default=50)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--folder", default="/tmp/skassess-dask")
    ap.add_argument(
        "--only", choices=["one", "1", "2", "label", "meta-one", "meta-2"], help=argparse.SUPPRESS
    )
    ap.add_argument("--out", help=argparse.SUPPRESS)
    add_save_argument(ap)
    args = ap.parse_args()
    folder = Path(args.folder) / f"{args.rows}x{args.classes}-{args.partitions}"
    if args.only == "label":
        run_labeling(sorted(folder.glob("part-*.parquet")), args.out)
        return
    if args.only in ("meta-one", "meta-2"):
        run_meta(sorted(folder.glob("part-*.parquet")), args.only, args.out)
        return
    if args.only:
        run_one(sorted(folder.glob("part-*.parquet")), args.only, args.out)
        return
    t0 = time.perf_counter()
    paths = write_partitions(folder, args.rows, args.partitions, args.classes)
    size = sum(p.stat().st_size for p in paths)
    print(
        f"{args.rows:,} rows x {args.classes} classes in {len(paths)} Parquet files, "
        f"{size / 1e9:.2f} GB ({time.perf_counter() - t0:.0f} s to write or find)",
        file=sys.stderr,
    )
    names = {
        "one": "one process, files in turn",
        "1": "Dask, 1 worker process",
        "2": "Dask, 2 worker processes",
    }
    rows, base, runs = [], None, {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode, name in names.items():
            out = f"{tmp}/{mode}.json"
            command = [sys.executable, __file__, "--only", mode, "--out", out]
            command += ["--rows", str(args.rows), "--partitions", str(args.partitions)]
            command += ["--classes", str(args.classes), "--folder", args.folder]
            subprocess.run(command, check=True)
            run = json.loads(Path(out).read_text())
            with open(out + ".pkl", "rb") as f:
                result = pickle.load(f)
            base = result if base is None else base
            diff = largest_difference(result, base)
            rows.append((name, run["seconds"], run["client_peak"], run["worker_peak"], diff))
            runs[mode] = run
            print(f"{name}: {run['seconds']:.1f} s", file=sys.stderr)
        out = f"{tmp}/label.json"
        command = [sys.executable, __file__, "--only", "label", "--out", out]
        command += ["--rows", str(args.rows), "--partitions", str(args.partitions)]
        command += ["--classes", str(args.classes), "--folder", args.folder]
        subprocess.run(command, check=True)
        labeling = json.loads(Path(out).read_text())
        meta = {}
        for mode in ("meta-one", "meta-2"):
            out = f"{tmp}/{mode}.json"
            command = [sys.executable, __file__, "--only", mode, "--out", out]
            command += ["--rows", str(args.rows), "--partitions", str(args.partitions)]
            command += ["--classes", str(args.classes), "--folder", args.folder]
            subprocess.run(command, check=True)
            meta[mode] = json.loads(Path(out).read_text())
    with saving_printed_tables(args.save):
        print(
            f"\nskassess assess on {args.rows:,} rows x {args.classes} classes in "
            f"{len(paths)} Parquet partitions ({size / 1e9:.2f} GB), 1 % labeled, 4 groups; "
            "each run a fresh process"
        )
        print(
            "| run | seconds | rows per second | client peak (MB) | worker peak (MB) "
            "| largest difference |"
        )
        print("|---|---|---|---|---|---|")
        for name, s, client_peak, worker_peak, diff in rows:
            w = "" if worker_peak is None else f"{worker_peak / 1e6:.0f}"
            rate = f"{args.rows / s:,.0f}"
            print(f"| {name} | {s:.1f} | {rate} | {client_peak / 1e6:.0f} | {w} | {diff:.1e} |")
        print_cost_model(args, size, runs)
        times = labeling["times"]
        print(
            f"\nA labeling session on the same {args.rows:,} rows as one pool in Dask "
            "partitions (ActiveAssessor(task='least_accurate'), LabelingSession), 2 worker "
            "processes, the scores read from the files at each pass"
        )
        print("| step | seconds |")
        print("|---|---|")
        print(f"| open (row count, fingerprint, fit, group counts) | {times['open']:.1f} |")
        print(f"| first query (each group's first rows) | {times['first query']:.1f} |")
        print(f"| each of the next 50 labels, tell and query: median | {times['label']:.3f} |")
        print(f"| the same: slowest | {times['label max']:.3f} |")
        print(
            f"| client peak / worker peak memory | {labeling['client_peak'] / 1e6:.0f} MB / "
            f"{labeling['worker_peak'] / 1e6:.0f} MB |"
        )
        print_meta(meta)


def print_meta(meta, n_small=5):
    """The interval model's runs: in memory, and on 2 workers."""
    base = meta["meta-one"]["small"]
    print(
        "\nThe interval model (PerformanceIntervalRegressor, the default predictor on the scores "
        "alone, the shipped uncertainty model, fitted on the first file's labeled rows) predicting "
        "the accuracy of the unlabeled rows; the batch in memory, or as a Dask DataFrame read "
        "from the files (2 worker processes)"
    )
    print(
        "| run | rows | seconds | rows per second | client peak (MB) | worker peak (MB) "
        "| predicted accuracy | 95 % half-width | largest feature difference |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    runs = [
        (f"one process, {n_small} files in memory", base),
        (f"Dask, 2 workers, the same {n_small} files", meta["meta-2"]["small"]),
        ("Dask, 2 workers, all the files", meta["meta-2"]["all"]),
    ]
    for name, run in runs:
        if run["rows"] == base["rows"]:
            diff = max(
                abs(run["features"][k] - v) for k, v in base["features"].items() if not np.isnan(v)
            )
            diff = f"{diff:.1e}"
        else:
            diff = ""
        w = "" if run["worker_peak"] is None else f"{run['worker_peak'] / 1e6:.0f}"
        print(
            f"| {name} | {run['rows']:,} | {run['seconds']:.1f} | "
            f"{run['rows'] / run['seconds']:,.0f} | {run['client_peak'] / 1e6:.0f} | {w} | "
            f"{run['accuracy']:.4f} | {run['quantiles'][-1]:.4f} | {diff} |"
        )


def print_cost_model(args, size, runs, rows=10**10, workers=(2, 64, 512)):
    """The cost of ``rows`` rows, from this run's measured per-row cost."""
    per_partition = args.rows // args.partitions
    partitions = rows // per_partition
    core_seconds = runs["1"]["seconds"] / args.rows  # per row, on one worker
    merge = runs["1"]["merge_bytes"]
    print(
        f"\nA paper model of {rows:.0e} rows ({args.classes} classes, 4 groups), from the "
        f"measured cost above: one worker's {core_seconds * 1e9:.0f} ns per row (read, "
        f"check and fit), {size / args.rows:.1f} bytes of Parquet per row, "
        f"{per_partition:,}-row partitions, a partition's payload (its fits, pickled) "
        f"{merge / 1e3:.0f} kB"
    )
    print("| quantity | value |")
    print("|---|---|")
    print(f"| bytes scanned | {size / args.rows * rows / 1e12:.2f} TB |")
    print(f"| partitions | {partitions:,} |")
    print(
        f"| work per partition | {core_seconds * per_partition:.1f} s, peak "
        f"{runs['1']['worker_peak'] / 1e6:.0f} MB on its worker |"
    )
    print(f"| core time in all | {core_seconds * rows / 3600:.1f} core-hours |")
    for w in workers:
        wall = core_seconds * rows / w
        print(f"| wall time on {w} worker cores | {wall / 60:.1f} min |")
    depth = int(np.ceil(np.log2(partitions)))
    print(
        f"| merge | {partitions - 1:,} pairwise merges of {merge / 1e3:.0f} kB in {depth} "
        f"rounds; {merge * partitions / 1e9:.2f} GB sent in all; O(groups x bins), not O(rows) |"
    )
    print(f"| client | receives one merged fit of {merge / 1e3:.0f} kB |")


if __name__ == "__main__":
    main()

"""The monitor's drift classifier beside k-nearest-neighbour ones, on the same rows.

The drift classifier (a 30-tree random forest, its probabilities out of fold
over 3 folds) is most of :class:`~skassess.meta.PerformanceMonitor`'s CPU per
chunk (``bench_monitor_speed.py``). A k-nearest-neighbour classifier gives
the same kind of probability, the share of chunk rows among a row's ``k``
nearest neighbours (the row itself left out; the per-row inputs scaled by the
reference's spread), for one neighbour search.

On every chunk of the monitoring streams of ``bench_monitor_coverage.py``,
seen as ``skassess monitor`` sees them (the scores alone: the per-row top
confidence, margin, entropy and predicted-class frequency), both classify the
same rows: the reference's and the chunk's, subsampled as the monitor does
(``drift_positions``). For each:
the process CPU per chunk, and the four uncertainty-model inputs they make
(the balanced accuracy, and the Kolmogorov-Smirnov, inverse-overlap and
squared inverse-overlap distances between the reference's and the chunk's
confidence histograms), their mean and their correlation with the forest's.

Usage::

    python benchmarks/bench_drift_features.py [--neighbors 15 30] [--save drift-features]
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _results import Table, add_save_argument
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS  # noqa: E402
from bench_monitor_coverage import FAMILIES, collect_stream  # noqa: E402
from bench_monitor_speed import stream_of  # noqa: E402

from skassess.meta._batch_summary import drift_positions  # noqa: E402
from skassess.meta._row_features import score_features  # noqa: E402
from skassess.meta._um_features import _distances, _drift_forest, _hist  # noqa: E402

FEATURES = ("accuracy", "ks", "io", "sio")


def neighbours_drift(A, B, k):
    """Leave-one-out P(chunk) of a k-nearest-neighbour classifier, and its balanced accuracy."""
    X = np.vstack([A, B])
    t = np.r_[np.zeros(A.shape[0]), np.ones(B.shape[0])]
    sd = A.std(axis=0)
    X = (X - A.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    k = min(k, X.shape[0] - 1)
    idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X, return_distance=False)
    proba = t[idx[:, 1:]].mean(axis=1)
    acc = 0.5 * ((proba[t == 0] < 0.5).mean() + (proba[t == 1] >= 0.5).mean())
    return proba, acc


def inputs(proba, acc, n_ref):
    conf = np.maximum(proba, 1 - proba)
    return (acc, *_distances(_hist(conf[:n_ref]), _hist(conf[n_ref:])))


def unit_rows(name, family):
    """The reference's and each chunk's per-row inputs, subsampled as the monitor does."""
    S_ref, _, S, chunk = stream_of(name, family)
    K = S_ref.shape[1]
    pred_ref = S_ref.argmax(axis=1)
    freq = np.bincount(pred_ref, minlength=K) / len(pred_ref)
    Z_ref = score_features(S_ref, pred_ref, freq)
    for c in np.unique(chunk):
        Sc = S[chunk == c]
        Zc = score_features(Sc, Sc.argmax(axis=1), freq)
        kept, taken = drift_positions(len(Z_ref), len(Zc), 0)
        yield Z_ref[kept], Zc[taken]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(EXTERNAL_DATASETS))
    ap.add_argument("--families", nargs="*", default=list(FAMILIES))
    ap.add_argument("--neighbors", type=int, nargs="*", default=[15, 30])
    add_save_argument(ap)
    args = ap.parse_args()
    methods = ["random forest (the monitor's)"]
    methods += [f"{k} nearest neighbours" for k in args.neighbors]
    values = {m: [] for m in methods}
    cpu = {m: [] for m in methods}
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for name in args.datasets:
            for family in args.families:
                collect_stream(name, family)
                for A, B in unit_rows(name, family):
                    c0 = time.process_time()
                    proba, acc = _drift_forest(A, B, 0)
                    cpu[methods[0]].append(time.process_time() - c0)
                    values[methods[0]].append(inputs(proba, acc, len(A)))
                    for m, k in zip(methods[1:], args.neighbors, strict=True):
                        c0 = time.process_time()
                        proba, acc = neighbours_drift(A, B, k)
                        cpu[m].append(time.process_time() - c0)
                        values[m].append(inputs(proba, acc, len(A)))
                print(f"  {name}/{family}", file=sys.stderr)
    forest = np.array(values[methods[0]])
    table = Table(
        ["classifier", "CPU ms per chunk"]
        + [f"{f}: mean" for f in FEATURES]
        + [f"{f}: correlation with the forest's" for f in FEATURES],
        formats={"CPU ms per chunk": ".1f"}
        | {f"{f}: mean": ".3f" for f in FEATURES}
        | {f"{f}: correlation with the forest's": ".3f" for f in FEATURES},
    )
    for m in methods:
        v = np.array(values[m])
        corr = [np.corrcoef(forest[:, j], v[:, j])[0, 1] for j in range(len(FEATURES))]
        table.add([m, 1000 * float(np.median(cpu[m])), *v.mean(axis=0), *corr])
    table.save(
        args.save,
        caption=f"The drift classifier's inputs to the uncertainty model on {len(forest)} chunks "
        f"of {len(args.datasets) * len(args.families)} monitoring streams (scores alone), "
        "from the monitor's random forest and from k-nearest-neighbour classifiers on the same "
        f"rows: median process CPU per chunk (one thread, load average "
        f"{os.getloadavg()[0]:.1f}), mean and correlation with the forest's.",
    )


if __name__ == "__main__":
    main()

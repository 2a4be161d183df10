"""The monitor's drift classifier beside a random forest and other neighbour counts.

The monitor's drift classifier (:class:`~skassess.meta.PerformanceMonitor`)
is a 15-nearest-neighbour one: a row's probability of being a chunk row is
the share of chunk rows among its 15 nearest neighbours (the row itself left
out; the per-row inputs scaled by the reference's spread), one neighbour
search for every row's out-of-sample probability. A random forest (30 trees,
its probabilities out of fold over 3 folds, 90 tree fits a chunk) gives the
same kind of probability at many times the CPU.

On every chunk of the monitoring streams of ``bench_monitor_coverage.py``,
seen as ``skassess monitor`` sees them (the scores alone: the per-row top
confidence, margin, entropy and predicted-class frequency), both classify the
same rows: the reference's and the chunk's, subsampled as the monitor does
(``drift_positions``). For each:
the process CPU per chunk, and the four uncertainty-model inputs they make
(the balanced accuracy, and the Kolmogorov-Smirnov, inverse-overlap and
squared inverse-overlap distances between the reference's and the chunk's
confidence histograms), their mean and their correlation with the monitor's.

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
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS  # noqa: E402
from bench_monitor_coverage import FAMILIES, collect_stream  # noqa: E402
from bench_monitor_speed import stream_of  # noqa: E402

from skassess.meta._batch_summary import drift_positions  # noqa: E402
from skassess.meta._row_features import score_features  # noqa: E402
from skassess.meta._um_features import (  # noqa: E402
    DRIFT_NEIGHBORS,
    _distances,
    _drift_neighbors,
    _hist,
)

FEATURES = ("accuracy", "ks", "io", "sio")


def forest_drift(A, B, seed=0):
    """Out-of-fold P(chunk) of a 30-tree random forest over 3 folds, and its balanced accuracy."""
    X = np.vstack([A, B])
    t = np.r_[np.zeros(A.shape[0], int), np.ones(B.shape[0], int)]
    forest = RandomForestClassifier(
        n_estimators=30, min_samples_leaf=5, max_features="sqrt", n_jobs=1, random_state=seed
    )
    cv = StratifiedKFold(min(3, A.shape[0], B.shape[0]), shuffle=True, random_state=seed)
    proba = cross_val_predict(forest, X, t, cv=cv, method="predict_proba")[:, 1]
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
    ap.add_argument("--neighbors", type=int, nargs="*", default=[30])
    add_save_argument(ap)
    args = ap.parse_args()
    methods = [f"{DRIFT_NEIGHBORS} nearest neighbours (the monitor's)", "random forest"]
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
                    proba, acc = _drift_neighbors(A, B)
                    cpu[methods[0]].append(time.process_time() - c0)
                    values[methods[0]].append(inputs(proba, acc, len(A)))
                    c0 = time.process_time()
                    proba, acc = forest_drift(A, B)
                    cpu[methods[1]].append(time.process_time() - c0)
                    values[methods[1]].append(inputs(proba, acc, len(A)))
                    for m, k in zip(methods[2:], args.neighbors, strict=True):
                        c0 = time.process_time()
                        proba, acc = _drift_neighbors(A, B, k)
                        cpu[m].append(time.process_time() - c0)
                        values[m].append(inputs(proba, acc, len(A)))
                print(f"  {name}/{family}", file=sys.stderr)
    monitors = np.array(values[methods[0]])
    table = Table(
        ["classifier", "CPU ms per chunk"]
        + [f"{f}: mean" for f in FEATURES]
        + [f"{f}: correlation with the monitor's" for f in FEATURES],
        formats={"CPU ms per chunk": ".1f"}
        | {f"{f}: mean": ".3f" for f in FEATURES}
        | {f"{f}: correlation with the monitor's": ".3f" for f in FEATURES},
    )
    for m in methods:
        v = np.array(values[m])
        corr = [np.corrcoef(monitors[:, j], v[:, j])[0, 1] for j in range(len(FEATURES))]
        table.add([m, 1000 * float(np.median(cpu[m])), *v.mean(axis=0), *corr])
    table.save(
        args.save,
        caption=f"The drift classifier's inputs to the uncertainty model on {len(monitors)} chunks "
        f"of {len(args.datasets) * len(args.families)} monitoring streams (scores alone), "
        "from the monitor's nearest-neighbour classifier and from others on the same "
        f"rows: median process CPU per chunk (one thread, load average "
        f"{os.getloadavg()[0]:.1f}), mean and correlation with the monitor's.",
    )


if __name__ == "__main__":
    main()

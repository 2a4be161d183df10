"""Simulate drift scenarios on the data-set library and record what each predictor does.

For every data set of ``_tabular.DATASETS``, both drift types and both base
models (logistic regression, random forest), this writes one CSV of records
(one per scenario and predictor: true and predicted accuracy of the batch, the
baselines' half-widths and the uncertainty model's inputs) to
``~/.cache/skassess/scenarios/<dataset>_<drift>_<base>.csv.gz``. Files already
there are kept, so an interrupted run resumes. ``bench_meta.py`` and
``train_pretrained_um.py`` read them.

- linear skew: the two features the random forest ranks first, the paper's
  15 sampling ratios, ``--repeats`` draws each (60 scenarios by default);
- nearest neighbours: ``--nn-scenarios`` scenarios (60 by default), p_set =
  p_near = 0.5, p_down in [0.5, 0.7] as in the paper.

Usage: ``python benchmarks/make_drift_scenarios.py [--datasets a b] [--drifts nn] [--n-jobs 2]``
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _parallel import add_parallel_arguments, use_parallel_backend
from _tabular import DATASETS, load_tabular  # noqa: E402

from skassess.meta._scenarios import library_scenario  # noqa: E402
from skassess.meta.drift import LinearSkewSplit, NearestNeighborsSplit  # noqa: E402

CACHE = Path.home() / ".cache" / "skassess" / "scenarios"
METHODS = ("meta_model", "confidence", "crossval", "dropout", "atc", "doc")


def splitter(drift, X, y, args):
    if drift == "ls":
        imp = (
            RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1)
            .fit(np.nan_to_num(X), y)
            .feature_importances_
        )
        return LinearSkewSplit(
            [int(i) for i in np.argsort(imp)[::-1][:2]], n_repeats=args.repeats, random_state=0
        )
    return NearestNeighborsSplit(args.nn_scenarios, random_state=0)


def run(dataset, drift, base, args):
    out = CACHE / f"{dataset}_{drift}_{base}.csv.gz"
    if out.exists():
        return out, 0.0
    t0 = time.perf_counter()
    X, y, _ = load_tabular(dataset)
    records = []
    # one thread per worker: the workers already use both cores
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for s, (ref, batch) in enumerate(splitter(drift, X, y, args).split(X)):
            if np.unique(y[ref]).size < 2 or batch.size < 20:
                continue
            for rec in library_scenario(X, y, ref, batch, base=base, methods=METHODS, seed=s):
                rec.update(dataset=dataset, drift=drift, scenario=s)
                records.append(rec)
    pd.DataFrame(records).to_csv(out, index=False)
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--nn-scenarios", type=int, default=60)
    add_parallel_arguments(ap, n_jobs=2, backend="multiprocessing")
    ap.add_argument("--drifts", nargs="*", default=["ls", "nn"], choices=["ls", "nn"])
    args = ap.parse_args()
    use_parallel_backend(args)
    CACHE.mkdir(parents=True, exist_ok=True)
    jobs = [
        (d, drift, base) for d in args.datasets for drift in args.drifts for base in ("lr", "rf")
    ]
    results = Parallel(n_jobs=args.n_jobs, verbose=0)(delayed(run)(*job, args) for job in jobs)
    for (d, drift, base), (path, secs) in zip(jobs, results, strict=True):
        print(f"{d:18s} {drift} {base}: {secs:7.1f} s -> {path.name}", flush=True)


if __name__ == "__main__":
    main()

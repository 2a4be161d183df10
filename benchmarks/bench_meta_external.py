"""The shipped uncertainty model on data sets it never saw, and its speed.

For each data set of ``_tabular.EXTERNAL_DATASETS`` (kept out of the library
the pretrained model was trained on) and two black boxes (logistic regression,
random forest) trained on a random 40 % of the rows: a
``PerformanceIntervalRegressor`` (pretrained UM, ``--method`` predictor) is
fitted on another 30 % (the labeled reference), and the remaining rows are cut
into drifted batches (linear skew along the two features a random forest ranks
first, the paper's 15 ratios; nearest neighbours, 30 scenarios). Printed: MAE
of the predicted accuracy, coverage and mean half-width of the intervals at
0.80 and 0.95, per data set and overall; then the time of ``fit`` and of
``predict`` on a 10,000-row batch.

Usage: ``python benchmarks/bench_meta_external.py [--method meta_model]``
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS, load_tabular, split_rows  # noqa: E402

from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor  # noqa: E402
from skassess.meta._error_levels import error_quantiles  # noqa: E402
from skassess.meta._scenarios import BASE_MODELS  # noqa: E402
from skassess.meta.drift import LinearSkewSplit, NearestNeighborsSplit  # noqa: E402

LEVELS = (0.8, 0.95)


def run(name, base, method, seed=0):
    X, y, _ = load_tabular(name, max_rows=6000)
    rng = np.random.default_rng(seed)
    tr, ref, rest = split_rows(len(y), rng)
    model = clone(BASE_MODELS[base])
    if "random_state" in model.get_params():
        model.set_params(random_state=seed)
    model.fit(X[tr], y[tr])
    t0 = time.perf_counter()
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(model, method=method), random_state=seed
    ).fit(X[ref], y[ref])
    fit_s = time.perf_counter() - t0
    Xr, yr = X[rest], y[rest]
    imp = RandomForestClassifier(100, random_state=0).fit(Xr, yr).feature_importances_
    splits = [
        ("ls", LinearSkewSplit([int(i) for i in np.argsort(imp)[::-1][:2]], random_state=seed)),
        ("nn", NearestNeighborsSplit(30, random_state=seed)),
    ]
    out = []
    for drift, cv in splits:
        for _, batch in cv.split(Xr):
            if batch.size < 20:
                continue
            truth = float(np.mean(model.predict(Xr[batch]) == yr[batch]))
            b = pir.predict_batch(Xr[batch])  # one pass for both levels
            acc = b.accuracy
            for level in LEVELS:
                u = float(error_quantiles(b.error_quantiles, level))
                out.append((name, base, drift, level, acc - truth, abs(acc - truth) <= u, u))
    return out, fit_s, pir, X


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="meta_model")
    ap.add_argument("--datasets", nargs="*", default=list(EXTERNAL_DATASETS))
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        rows, fits = [], []
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            for name in args.datasets:
                for base in ("lr", "rf"):
                    out, fit_s, pir, X = run(name, base, args.method)
                    rows += out
                    fits.append(fit_s)
        df = pd.DataFrame(
            rows, columns=["dataset", "base", "drift", "level", "error", "covered", "half_width"]
        )
        print(
            f"Pretrained UM ({args.method}) on {df.dataset.nunique()} unseen data sets, "
            f"{len(df) // len(LEVELS)} batches"
        )
        g = df.groupby(["dataset", "drift", "level"]).agg(
            mae=("error", lambda e: 100 * np.mean(np.abs(e))),
            coverage=("covered", "mean"),
            width=("half_width", "mean"),
            n=("covered", "size"),
        )
        for (d, drift, level), r in g.iterrows():
            print(
                f"  {d:17s} {drift} {level:.2f}: MAE {r.mae:5.2f}  coverage "
                f"{100 * r.coverage:5.1f} %  half-width {100 * r.width:5.2f}  (n = {r.n})"
            )
        tot = df.groupby(["drift", "level"]).agg(
            mae=("error", lambda e: 100 * np.mean(np.abs(e))),
            coverage=("covered", "mean"),
            width=("half_width", "mean"),
            n=("covered", "size"),
        )
        print("Overall:")
        for (drift, level), r in tot.iterrows():
            print(
                f"  {drift} {level:.2f}: MAE {r.mae:5.2f}  coverage {100 * r.coverage:5.1f} %  "
                f"half-width {100 * r.width:5.2f}  (n = {r.n})"
            )
        # speed: fit, and predict on a 10,000-row batch (rows drawn with replacement)
        big = X[np.random.default_rng(1).integers(0, len(X), 10_000)]
        pir.predict(big[:100])
        t0 = time.perf_counter()
        pir.predict(big)
        print(
            f"\nfit (predictor + pretrained UM): median {np.median(fits):.2f} s, "
            f"max {np.max(fits):.2f} s; predict on 10,000 rows: "
            f"{time.perf_counter() - t0:.2f} s"
        )


if __name__ == "__main__":
    main()

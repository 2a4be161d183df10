"""Monitoring a binary rate: coverage of PPV and NPV intervals by drift strength and family.

``PerformanceMonitor(metric="ppv")`` (``"npv"``) predicts the accuracy of the
rows the black box predicts as class 1 (class 0): a rate is the accuracy of a
subset, so the monitor fits its interval regressor on the reference's rows of
that prediction and predicts each chunk's rows of it.

The units are those of ``bench_monitor_coverage.py`` restricted to binary
data sets (never seen by the shipped uncertainty model; the same black boxes,
references and linear-skew and nearest-neighbour batches, and 30 random
batches of this script's own seed). For every batch and rate it records the
true rate, the label-free prediction and its 80 / 90 / 95 / 99 % intervals
(one ``predict`` with every level), the drift classifiers' accuracies and the
rows of the prediction, in
``~/.cache/skassess/monitor-rates-<hash>/<data set>_<family>.csv.gz`` (an
interrupted run resumes). Batches with fewer than 20 rows of the prediction
are left out and counted.

Printed: coverage per rate by drift-strength tercile, by black-box family,
and by the rows of the prediction; the MAE of the point prediction.

With ``--inputs scores`` the monitor sees the black box's scores alone, as
``skassess monitor --metric`` does.

With ``--uncertainty-model recalibrated`` each monitor refits its width on drift
simulated inside its reference's rows of the prediction.

Usage: ``python benchmarks/bench_monitor_rates.py [--inputs scores]
[--uncertainty-model recalibrated] [--save monitor-rates]``
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from bench_monitor_coverage import FAMILIES, INPUTS, LEVELS, cache_dir, seen, unit_setup
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS, load_tabular  # noqa: E402

from skassess.meta import PerformanceMonitor  # noqa: E402
from skassess.meta._monitor import level_suffix  # noqa: E402
from skassess.meta._quantile_model import drift_strength  # noqa: E402
from skassess.meta.drift import LinearSkewSplit, NearestNeighborsSplit  # noqa: E402

RATES = {"ppv": 1, "npv": 0}
MIN_ROWS = 20


def unit_path(name, family, inputs="features", uncertainty_model="pretrained"):
    folder = cache_dir().parent / cache_dir().name.replace("monitor-coverage", "monitor-rates")
    tag = (".scores" if inputs == "scores" else "") + (
        "" if uncertainty_model == "pretrained" else f".{uncertainty_model}"
    )
    return folder / f"{name}_{family.replace(' ', '-')}{tag}.csv.gz"


def collect(name, family, seed=0, inputs="features", uncertainty_model="pretrained"):
    out = unit_path(name, family, inputs, uncertainty_model)
    if out.exists():
        return pd.read_csv(out)
    X, y, ref, rest, model, _ = unit_setup(name, family, seed)
    rng = np.random.default_rng(seed + 1)
    Xr, yr = X[rest], y[rest]
    imp = RandomForestClassifier(100, random_state=0).fit(Xr, yr).feature_importances_
    size = max(50, len(rest) // 6)
    splits = [("none", [rng.choice(len(rest), size, replace=False) for _ in range(30)])]
    top2 = [int(i) for i in np.argsort(imp)[::-1][:2]]
    splits.append(
        ("linear skew", [b for _, b in LinearSkewSplit(top2, random_state=seed).split(Xr)])
    )
    splits.append(
        (
            "nearest neighbours",
            [b for _, b in NearestNeighborsSplit(30, random_state=seed).split(Xr)],
        )
    )
    pred = model.predict(Xr)
    predictor, X = seen(model, X, inputs)
    Xr = seen(model, Xr, inputs)[1]
    records = []
    t0 = time.perf_counter()
    for rate, cls in RATES.items():
        monitor = PerformanceMonitor(
            predictor, metric=rate, level=LEVELS, uncertainty_model=uncertainty_model,
            random_state=seed, progress=False,
        )  # fmt: skip
        try:
            monitor.fit(X[ref], y[ref])
        except ValueError as exc:  # too few reference rows of the prediction, or no drift
            print(f"  {name} {family} {rate}: {exc}", flush=True)
            continue
        for drift, split in splits:
            for b, batch in enumerate(split):
                own = batch[pred[batch] == cls]
                rec = {"dataset": name, "family": family, "rate": rate, "drift": drift,
                       "batch": b, "n_predicted": int(own.size)}  # fmt: skip
                if own.size >= MIN_ROWS:
                    row = monitor.predict(Xr[batch]).iloc[0]
                    rec["truth"] = float(np.mean(yr[own] == cls))
                    rec["reference"] = monitor.reference_accuracy_
                    rec["predicted"] = float(row["predicted"])
                    for a in LEVELS:
                        s = level_suffix(a)
                        rec[f"lower_{a}"] = float(row[f"predicted_lower_{s}"])
                        rec[f"upper_{a}"] = float(row[f"predicted_upper_{s}"])
                    rec["strength"] = drift_strength(
                        {"drift_x_accuracy": row["drift_features"],
                         "drift_z_accuracy": row["drift_scores"]}
                    )  # fmt: skip
                records.append(rec)
    df = pd.DataFrame(records)
    df["seconds_per_batch"] = (time.perf_counter() - t0) / max(len(df), 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    return df


def coverage(df, by, title):
    print(f"\n{title}")
    cols = " | ".join(f"{int(100 * a)} %" for a in LEVELS)
    print(f"| rate | {by} | batches | {cols} | half-width at 95 % (points) | MAE (points) |")
    print("|---|---|---|" + "---|" * len(LEVELS) + "---|---|")
    for (rate, key), g in df.groupby(["rate", by], observed=True, sort=True):
        inside = {
            a: (g[f"lower_{a}"] <= g["truth"]) & (g["truth"] <= g[f"upper_{a}"]) for a in LEVELS
        }
        cov = " | ".join(f"{100 * inside[a].mean():.1f}" for a in LEVELS)
        half = 100 * (g["upper_0.95"] - g["lower_0.95"]).mean() / 2
        mae = 100 * (g["predicted"] - g["truth"]).abs().mean()
        print(f"| {rate} | {key} | {len(g)} | {cov} | {half:.2f} | {mae:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(EXTERNAL_DATASETS))
    ap.add_argument("--families", nargs="*", default=list(FAMILIES))
    ap.add_argument(
        "--inputs",
        choices=INPUTS,
        default="features",
        help="what the monitor sees: the black box's features and scores, or its scores alone",
    )
    ap.add_argument(
        "--uncertainty-model",
        choices=["pretrained", "recalibrated"],
        default="pretrained",
        help="PerformanceMonitor's uncertainty_model",
    )
    add_save_argument(ap)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    frames = []
    with threadpool_limits(1):
        for name in args.datasets:
            if np.unique(load_tabular(name, max_rows=6000)[1]).size != 2:
                continue
            for family in args.families:
                t0 = time.perf_counter()
                frames.append(
                    collect(
                        name, family, inputs=args.inputs, uncertainty_model=args.uncertainty_model
                    )
                )
                print(f"{name:24s} {family:18s} {time.perf_counter() - t0:7.1f} s", flush=True)
    df = pd.concat(frames, ignore_index=True)
    kept = df.dropna(subset=["truth"]).copy()
    with saving_printed_tables(args.save):
        print(
            f"\nBatches: {len(kept)} of {len(df)} with at least {MIN_ROWS} rows of the "
            f"prediction, on {kept['dataset'].nunique()} binary data sets never seen by the "
            "shipped uncertainty model"
            + ("; the monitor sees the scores alone" if args.inputs == "scores" else "")
            + ("; recalibrated." if args.uncertainty_model == "recalibrated" else ".")
        )
        terciles = ["low", "middle", "high"]
        kept["drift strength"] = pd.Categorical(
            kept.groupby("rate")["strength"].transform(
                lambda s: pd.qcut(s, 3, labels=terciles).astype(str)
            ),
            categories=terciles,
            ordered=True,
        )
        kept["rows of the prediction"] = pd.cut(
            kept["n_predicted"], [0, 50, 150, np.inf], labels=["20-50", "51-150", "> 150"]
        )
        coverage(kept, "drift strength", "Label-free coverage (%) by drift-strength tercile")
        coverage(kept, "family", "Label-free coverage (%) by black-box family")
        coverage(
            kept, "rows of the prediction", "Label-free coverage (%) by the rows of the prediction"
        )
        print(f"\nSeconds per batch and rate: {kept['seconds_per_batch'].mean():.2f}")


if __name__ == "__main__":
    main()

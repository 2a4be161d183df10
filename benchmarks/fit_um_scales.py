"""Fit the shipped uncertainty model's scales on monitoring batches of the library.

The shipped boosters stay; their scales (one per level and drift-strength
tercile, :func:`~skassess.meta._quantile_model.fit_stratified_scales`) are
refitted on the batches a monitor sees: chunks drawn at random (no drift) and
nearest-neighbour scenarios, of every data set of ``_tabular.DATASETS`` (the
library the boosters were trained on, whose linear-skew scenarios are left
out: the boosters saw those) and the four black-box families of
``bench_monitor_coverage.py``. The batches' records are that script's
(:func:`bench_monitor_coverage.collect`, cached the same way); the external data
sets are never read here, so ``bench_monitor_coverage.py`` checks the scales
on data they never saw.

Printed: the leave-one-data-set-out coverage within the library (scales fitted
on the other data sets), by drift-strength tercile and by family. With
``--write``, the scales fitted on every library data set replace those of the
default predictor's file, ``skassess/meta/_pretrained/um_<method>.json.gz`` (the
boosters and their load-time check are kept).

With ``--inputs scores`` the monitor sees each batch's scores alone (as
``skassess monitor`` does): the records are ``bench_monitor_coverage.py``'s of
that case, and ``--write`` stores the scales as ``scales_scores`` and
``drift_edges_scores``, which a regressor whose predictor has no features uses.

Usage: ``python benchmarks/fit_um_scales.py [--inputs scores] [--n-jobs 2] [--write]
[--save um-scales]``
"""

import argparse
import gzip
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
import bench_monitor_coverage as bmc  # noqa: E402
from _tabular import DATASETS  # noqa: E402

from skassess.meta import PerformancePredictor  # noqa: E402
from skassess.meta._error_levels import error_quantiles  # noqa: E402
from skassess.meta._pretrained import PRETRAINED_DIR  # noqa: E402
from skassess.meta._quantile_model import (  # noqa: E402
    LEVELS,
    calibrate_quantiles,
    drift_strength,
    fit_stratified_scales,
)

#: The batches the scales are fitted on (the records' ``drift``).
CALIBRATION_DRIFTS = ("none", "nearest neighbours")
CHECK_LEVELS = (0.8, 0.9, 0.95)
N_STRATA = 3


def collect(name, family, inputs):
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        return bmc.collect(name, family, inputs=inputs)


def raw_quantiles(df):
    return df[[f"raw_q{j}" for j in range(len(LEVELS))]].to_numpy()


def strengths(df):
    return np.array(
        [drift_strength(r) for r in df[["drift_x_accuracy", "drift_z_accuracy"]].to_dict("records")]
    )


def fit(df):
    """``(edges, scales)`` on the records ``df``."""
    error = (df["predicted"] - df["truth"]).abs().to_numpy()
    return fit_stratified_scales(error, raw_quantiles(df), strengths(df), N_STRATA)


def covered(df, edges, scales):
    """Per record and level of ``CHECK_LEVELS``: whether the interval holds the truth."""
    raw, s = raw_quantiles(df), strengths(df)
    q = np.vstack([calibrate_quantiles(raw[i], s[i], scales, edges) for i in range(len(df))])
    half = error_quantiles(q, np.array(CHECK_LEVELS))
    error = (df["predicted"] - df["truth"]).abs().to_numpy()
    return error[:, None] <= half, half


def print_table(frame):
    """``frame`` as a markdown table."""
    print("| " + " | ".join(map(str, frame.columns)) + " |")
    print("|" + "---|" * frame.shape[1])
    for row in frame.itertuples(index=False):
        print("| " + " | ".join(map(str, row)) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--families", nargs="*", default=list(bmc.FAMILIES))
    ap.add_argument(
        "--inputs",
        choices=bmc.INPUTS,
        default="features",
        help="the scales of a monitor that sees features and scores, or the scores alone",
    )
    ap.add_argument("--write", action="store_true", help="write the scales into the package")
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    units = [(d, f) for d in args.datasets for f in args.families]
    use_parallel_backend(args)
    with saving_printed_tables(args.save):
        frames = Parallel(n_jobs=args.n_jobs, verbose=5)(
            delayed(collect)(d, f, args.inputs) for d, f in units
        )
        df = pd.concat(frames, ignore_index=True)
        df = df[df["drift"].isin(CALIBRATION_DRIFTS)].reset_index(drop=True)
        # Leave one data set out: the scales of the others, on its batches.
        rows = []
        for name in args.datasets:
            test = df["dataset"] == name
            edges, scales = fit(df[~test])
            hit, half = covered(df[test], edges, scales)
            part = df[test].assign(
                **{f"cov{int(a * 100)}": hit[:, j] for j, a in enumerate(CHECK_LEVELS)},
                half95=half[:, CHECK_LEVELS.index(0.95)],
            )
            rows.append(part)
        ev = pd.concat(rows, ignore_index=True)
        # equal thirds of the batches by drift strength (ties, many at 0.5, in record order)
        rank = pd.Series(strengths(ev)).rank(method="first")
        ev["tercile"] = pd.qcut(rank, 3, labels=["low", "middle", "high"])
        for by, title in (
            ("tercile", "drift-strength tercile"),
            ("family", "black-box family"),
            ("drift", "batch kind"),
        ):
            table = ev.groupby(by, observed=True, sort=by == "tercile").agg(
                batches=("truth", "size"),
                **{f"{int(a * 100)} %": (f"cov{int(a * 100)}", "mean") for a in CHECK_LEVELS},
                half95=("half95", "median"),
            )
            for a in CHECK_LEVELS:
                table[f"{int(a * 100)} %"] = (100 * table[f"{int(a * 100)} %"]).round(1)
            table["median half-width at 95 % (points)"] = (100 * table.pop("half95")).round(2)
            print(
                f"\nLibrary, leave one data set out: coverage (%) by {title} "
                f"({len(args.datasets)} data sets, {len(args.families)} families"
                + ("; the monitor sees the scores alone)" if args.inputs == "scores" else ")")
            )
            print_table(table.reset_index())
    edges, scales = fit(df)
    print(f"\nEvery library data set: edges {np.round(edges, 3).tolist()}")
    print(f"scales {np.round(scales, 3).tolist()}")
    if args.write:
        path = PRETRAINED_DIR / f"um_{PerformancePredictor().method}.json.gz"
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            payload = json.load(fh)
        key = "" if args.inputs == "features" else "_scores"
        payload[f"scales{key}"] = scales.tolist()
        payload[f"drift_edges{key}"] = edges.tolist()
        payload["trained_on"].update(
            {
                f"n_calibration{key}": len(df),
                f"calibration{key}": (
                    "monitoring batches of the library: chunks at random and nearest "
                    f"neighbours, four black-box families, {N_STRATA} strata of drift "
                    "strength"
                    + ("" if args.inputs == "features" else "; the monitor sees the scores alone")
                ),
                "calibration_datasets": sorted(df["dataset"].unique().tolist()),
            }
        )
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(payload, fh)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

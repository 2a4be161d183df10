"""Train the uncertainty models shipped in skassess/meta/_pretrained/.

Reads every scenario record written by ``make_drift_scenarios.py`` (the
data-set library of ``_tabular.py``, both base models) and, for each predictor
in ``--methods``, trains a ``QuantileEnsemble`` on 80 % of the linear-skew
scenarios of all data sets (the same recipe that ``bench_meta.py`` evaluates
leave-one-data-set-out). The scales are fitted on scenarios the boosters never
saw, the other 20 % of the linear-skew ones and every nearest-neighbour one,
per level and per tercile of the drift strength (``--strata``).
``--scales-only`` keeps the shipped boosters and refits the scales alone, on
the nearest-neighbour scenarios (the boosters' own split is not known then). Writes
``um_<method>.json.gz``: the boosters (xgboost UBJSON, base64), the scales and
the strata's edges, the feature names, and how it was trained.

Retrain (after ``make_drift_scenarios.py``; then ``add_um_reference.py``):
``python benchmarks/train_pretrained_um.py [--methods meta_model confidence]``
"""

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import skassess
from skassess.meta._quantile_model import (
    QuantileEnsemble,
    drift_strength,
    error_unit,
    fit_stratified_scales,
)
from skassess.meta._um_features import UM_FEATURES

#: What the scales' fit records in ``trained_on`` (kept with the boosters' own facts).
CALIBRATION_KEYS = ("n_calibration", "calibration", "calibration_datasets")

CACHE = Path.home() / ".cache" / "skassess" / "scenarios"
OUT = Path(skassess.__file__).parent / "meta" / "_pretrained"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="*", default=["meta_model", "confidence"])
    ap.add_argument("--n-models", type=int, default=5)
    ap.add_argument("--n-estimators", type=int, default=100)
    ap.add_argument("--strata", type=int, default=3)
    ap.add_argument("--scales-only", action="store_true")
    args = ap.parse_args()
    files = sorted(CACHE.glob("*.csv.gz"))
    if not files:
        sys.exit(f"No scenario files in {CACHE}; run make_drift_scenarios.py first.")
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    OUT.mkdir(parents=True, exist_ok=True)
    for method in args.methods:
        path = OUT / f"um_{method}.json.gz"
        every = df[df["method"] == method]
        sub = every[every["drift"] == "ls"]
        rng = np.random.default_rng(0)
        cal = rng.random(len(sub)) < 0.2
        F = sub.loc[:, list(UM_FEATURES)].to_numpy(dtype=np.float64)
        target = sub["error"].abs().to_numpy()
        unit = error_unit(sub["prediction"], sub["n_batch"])
        t0 = time.perf_counter()
        if args.scales_only:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                old = json.load(fh)
            um = QuantileEnsemble.from_dict(old["model"])
        else:
            um = QuantileEnsemble(
                n_models=args.n_models, n_estimators=args.n_estimators, random_state=0
            ).fit(F[~cal], target[~cal] / unit[~cal])
        # the scales' scenarios: held-out linear skew (when the boosters are fitted here, so
        # that the split is theirs) and every nearest-neighbour one
        held_out = [] if args.scales_only else [sub[cal]]
        calib = pd.concat([*held_out, every[every["drift"] == "nn"]], ignore_index=True)
        Fc = calib.loc[:, list(UM_FEATURES)].to_numpy(dtype=np.float64)
        uc = error_unit(calib["prediction"], calib["n_batch"])
        strength = [
            drift_strength(r)
            for r in calib[["drift_x_accuracy", "drift_z_accuracy"]].to_dict("records")
        ]
        edges, scales = fit_stratified_scales(
            calib["error"].abs().to_numpy(), um.predict(Fc) * uc[:, None], strength, args.strata
        )
        secs = time.perf_counter() - t0
        payload = {
            "format": 2,
            "method": method,
            "features": list(UM_FEATURES),
            "scales": scales.tolist(),
            "drift_edges": edges.tolist(),
            "model": um.to_dict(),
            "trained_on": {
                "datasets": sorted(sub["dataset"].unique().tolist()),
                "base_models": sorted(sub["base"].unique().tolist()),
                "drift": "linear skew",
                "n_scenarios": int((~cal).sum()),
                "n_calibration": int(len(calib)),
                "calibration": ("" if args.scales_only else "held-out linear skew and ")
                + f"nearest neighbours, {args.strata} strata of drift strength",
                "n_models": args.n_models,
                "n_estimators": args.n_estimators,
                "xgboost": __import__("xgboost").__version__,
            },
        }
        payload["trained_on"]["calibration_datasets"] = sorted(calib["dataset"].unique().tolist())
        if args.scales_only:  # the same boosters: their facts and load-time check still hold
            payload["check"] = old["check"]
            payload["trained_on"] = {
                **old["trained_on"],
                **{k: payload["trained_on"][k] for k in CALIBRATION_KEYS},
            }
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(payload, fh)
        print(
            f"{method}: {len(calib)} calibration scenarios, {secs:.1f} s -> {path} "
            f"({path.stat().st_size / 1e6:.2f} MB); edges {np.round(edges, 3).tolist()}, "
            f"scales {np.round(scales, 2).tolist()}"
        )


if __name__ == "__main__":
    main()

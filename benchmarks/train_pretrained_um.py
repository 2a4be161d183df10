"""Train the uncertainty models shipped in skassess/meta/_pretrained/.

Reads every scenario record written by ``make_drift_scenarios.py`` (the
data-set library of ``_tabular.py``, both base models) and, for each predictor
in ``--methods``, trains a ``QuantileEnsemble`` on 80 % of the linear-skew
scenarios of all data sets and fits the per-level scales on the other 20 %
(the same recipe that ``bench_meta.py`` evaluates leave-one-data-set-out).
Writes ``um_<method>.json.gz``: the boosters (xgboost UBJSON, base64), the
scales, the feature names, and how it was trained.

Retrain (after ``make_drift_scenarios.py``):
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
from skassess.meta._quantile_model import QuantileEnsemble, error_unit, fit_scales
from skassess.meta._um_features import UM_FEATURES

CACHE = Path.home() / ".cache" / "skassess" / "scenarios"
OUT = Path(skassess.__file__).parent / "meta" / "_pretrained"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="*", default=["meta_model", "confidence"])
    ap.add_argument("--n-models", type=int, default=5)
    ap.add_argument("--n-estimators", type=int, default=100)
    args = ap.parse_args()
    files = sorted(CACHE.glob("*.csv.gz"))
    if not files:
        sys.exit(f"No scenario files in {CACHE}; run make_drift_scenarios.py first.")
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    df = df[df["drift"] == "ls"]
    OUT.mkdir(parents=True, exist_ok=True)
    for method in args.methods:
        sub = df[df["method"] == method]
        rng = np.random.default_rng(0)
        cal = rng.random(len(sub)) < 0.2
        F = sub.loc[:, list(UM_FEATURES)].to_numpy(dtype=np.float64)
        target = sub["error"].abs().to_numpy()
        unit = error_unit(sub["prediction"], sub["n_batch"])
        t0 = time.perf_counter()
        um = QuantileEnsemble(
            n_models=args.n_models, n_estimators=args.n_estimators, random_state=0
        ).fit(F[~cal], target[~cal] / unit[~cal])
        scales = fit_scales(target[cal], um.predict(F[cal]) * unit[cal, None])
        secs = time.perf_counter() - t0
        payload = {
            "format": 1,
            "method": method,
            "features": list(UM_FEATURES),
            "scales": scales.tolist(),
            "model": um.to_dict(),
            "trained_on": {
                "datasets": sorted(sub["dataset"].unique().tolist()),
                "base_models": sorted(sub["base"].unique().tolist()),
                "drift": "linear skew",
                "n_scenarios": int(len(sub)),
                "n_calibration": int(cal.sum()),
                "n_models": args.n_models,
                "n_estimators": args.n_estimators,
                "xgboost": __import__("xgboost").__version__,
            },
        }
        path = OUT / f"um_{method}.json.gz"
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(payload, fh)
        print(
            f"{method}: {len(sub)} scenarios, {secs:.1f} s -> {path} "
            f"({path.stat().st_size / 1e6:.2f} MB); scales {np.round(scales, 2).tolist()}"
        )


if __name__ == "__main__":
    main()

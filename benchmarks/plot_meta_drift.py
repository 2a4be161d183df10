"""The user guide's figure: predicted accuracy with intervals over a drift sweep.

A random forest is trained on 40 % of a data set the pretrained uncertainty
model never saw (``_tabular.EXTERNAL_DATASETS``, default ``college_distance``),
``PerformanceIntervalRegressor`` (pretrained UM, the default predictor) is
fitted on another 30 %, and the other rows are skewed along the most important
feature (linear skew, ratios 0-1). Writes ``docs/_static/meta_drift.png``.

Usage: ``python benchmarks/plot_meta_drift.py [--dataset college_distance]``
"""

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import load_tabular  # noqa: E402

from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor  # noqa: E402
from skassess.meta._scenarios import BASE_MODELS  # noqa: E402
from skassess.meta.drift import LINEAR_SKEW_RATIOS, LinearSkewSplit  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="college_distance")
    ap.add_argument("--base", default="rf")
    ap.add_argument("--out", default="docs/_static/meta_drift.png")
    args = ap.parse_args()
    X, y, names = load_tabular(args.dataset, max_rows=6000)
    perm = np.random.default_rng(0).permutation(len(y))
    n_tr, n_ref = int(0.4 * len(y)), int(0.3 * len(y))
    tr, ref, rest = perm[:n_tr], perm[n_tr : n_tr + n_ref], perm[n_tr + n_ref :]
    model = clone(BASE_MODELS[args.base])
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    model.fit(X[tr], y[tr])
    pir = PerformanceIntervalRegressor(PerformancePredictor(model), random_state=0)
    pir.fit(X[ref], y[ref])
    Xr, yr = X[rest], y[rest]
    imp = RandomForestClassifier(100, random_state=0).fit(Xr, yr).feature_importances_
    f = int(np.argmax(imp))
    rows = []
    for r, (_, batch) in zip(
        LINEAR_SKEW_RATIOS, LinearSkewSplit(f, random_state=0).split(Xr), strict=True
    ):
        truth = np.mean(model.predict(Xr[batch]) == yr[batch])
        p95 = pir.predict(Xr[batch], level=0.95)
        p80 = pir.predict(Xr[batch], level=0.8)
        rows.append((r, truth, p95.accuracy, p95.lower, p95.upper, p80.lower, p80.upper))
        print(
            f"R = {r:4.2f}: true {truth:.3f}  predicted {p95.accuracy:.3f}  "
            f"95 % [{p95.lower:.3f}, {p95.upper:.3f}]"
        )
    a = np.array(rows)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.fill_between(a[:, 0], a[:, 3], a[:, 4], color="C0", alpha=0.18, label="95 % interval")
    ax.fill_between(a[:, 0], a[:, 5], a[:, 6], color="C0", alpha=0.3, label="80 % interval")
    ax.plot(a[:, 0], a[:, 2], "-", color="C0", label="predicted (no labels)")
    ax.plot(a[:, 0], a[:, 1], "o", color="k", ms=4, label="true accuracy")
    ax.set_xlabel(f"drift: share of the reference below the median of {names[f]!r}")
    ax.set_ylabel("accuracy of the batch")
    ax.set_title(
        f"{args.dataset}, random forest: accuracy under drift, without labels", fontsize=10
    )
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""Planning: the width plan_labels predicts against the width the calibrated prior gives.

For each pool, the realised mean width of ``BayesianAccuracy`` 's overall 95 %
interval at n random labels is read from ``bench_headline.py``'s JSON lines
(``--headline``); the predicted width comes from :func:`skassess.metrics.plan_labels`

* from the scores alone (no label), and
* from ``--pilot`` random labels (``--runs`` pilots; the mean prediction),

and each ratio predicted / realised is printed (the goal: within 0.8-1.2),
with the range of the pilots' own ratios. Without ``--headline`` the
realised widths are measured here: ``--realised-runs`` random labelings of
each budget of ``--budgets`` on each of ``--pools`` (as ``bench_headline.py``
fits them, seed 0)::

    python benchmarks/bench_plan.py --headline headline.jsonl
    OMP_NUM_THREADS=1 python benchmarks/bench_plan.py --pools svhn bank-mlp@check
"""

import argparse
import json
import warnings

import numpy as np
import pandas as pd
from bench_headline import one_run, pools
from tqdm.auto import tqdm

from skassess.metrics import plan_labels


def measured(names, budgets, runs):
    """``(pool, n, width)`` of the calibrated prior's overall interval, ``runs`` a budget."""
    rows = []
    for name in names:
        X, target, groups = pools([name], 0)[name]
        rng = np.random.default_rng([0, 2])
        for n in budgets:
            for r in tqdm(range(runs), desc=f"{name} n={n}", leave=False):
                labeled = rng.choice(len(target), n, replace=False)
                lo, hi, _ = one_run(X, target, groups, labeled, r, priors=("calibrated",))[
                    "calibrated"
                ]["overall"]
                rows.append((name, n, hi - lo))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--headline", default=None, help="bench_headline.py's JSON lines")
    ap.add_argument("--pools", nargs="+", default=None, help="without --headline")
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 200, 500])
    ap.add_argument("--realised-runs", type=int, default=40)
    ap.add_argument("--pilot", type=int, default=50)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    if args.headline:
        rows = []
        for line in open(args.headline):
            r = json.loads(line)
            lo, hi, _ = r["calibrated"]["overall"]
            rows.append((r["pool"], r["n"], hi - lo))
    else:
        rows = measured(args.pools, args.budgets, args.realised_runs)
    realised = (
        pd.DataFrame(rows, columns=["pool", "n", "width"]).groupby(["pool", "n"])["width"].mean()
    )
    out = []
    for name in realised.index.get_level_values(0).unique():
        X, target, _ = pools([name], 0)[name]
        budgets = [n for n in realised.loc[name].index if n > args.pilot]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores_only = plan_labels(X, n_labels=budgets).table.set_index("n_labels")["width"]
            rng = np.random.default_rng(0)
            pilots = []
            for _ in tqdm(range(args.runs), desc=f"{name} pilots", leave=False):
                y = np.full(len(target), -1)
                rows = rng.choice(len(target), args.pilot, replace=False)
                y[rows] = target[rows]
                pilots.append(plan_labels(X, y, n_labels=budgets).table["width"].to_numpy())
        pilot = np.mean(pilots, axis=0)
        for k, n in enumerate(budgets):
            real = realised.loc[(name, n)]
            out.append(
                {
                    "pool": name,
                    "n": n,
                    "realised": real,
                    "scores_only": scores_only.loc[n],
                    "ratio_scores": scores_only.loc[n] / real,
                    f"pilot_{args.pilot}": pilot[k],
                    "ratio_pilot": pilot[k] / real,
                    "each_pilot": f"{min(q[k] for q in pilots) / real:.2f}-"
                    f"{max(q[k] for q in pilots) / real:.2f}",
                }
            )
    table = pd.DataFrame(out)
    pd.set_option("display.width", 200)
    print(table.round(3).to_string(index=False))
    for col in ("ratio_scores", "ratio_pilot"):
        inside = table[col].between(0.8, 1.2).mean()
        print(
            f"{col}: {inside:.0%} of cells within 0.8-1.2 (range "
            f"{table[col].min():.2f}-{table[col].max():.2f})"
        )


if __name__ == "__main__":
    main()

"""Planning: the width plan_labels predicts against the width the calibrated prior gives.

For each pool, the realised mean width of ``BayesianAccuracy`` 's overall 95 %
interval at n random labels is read from ``bench_headline.py``'s JSON lines
(``--headline``); the predicted width comes from :func:`skassess.metrics.plan_labels`

* from the scores alone (no label), and
* from ``--pilot`` random labels (``--runs`` pilots; the mean prediction),

and each ratio predicted / realised is printed (the goal: within 0.8-1.2).

    python benchmarks/bench_plan.py --headline headline.jsonl
"""

import argparse
import json
import warnings

import numpy as np
import pandas as pd
from bench_headline import pools

from skassess.metrics import plan_labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--headline", required=True)
    ap.add_argument("--pilot", type=int, default=50)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for line in open(args.headline):
        r = json.loads(line)
        lo, hi, _ = r["calibrated"]["overall"]
        rows.append((r["pool"], r["n"], hi - lo))
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
            for _ in range(args.runs):
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

"""Planning: the width plan_labels predicts against the width the calibrated prior gives.

For each pool, the realised mean width of ``BayesianAccuracy`` 's overall 95 %
interval at n random labels is read from ``bench_headline.py``'s JSON lines
(``--headline``); the predicted width comes from :func:`skassess.metrics.plan_labels`

* from the scores alone (no label), and
* from ``--pilot`` random labels (``--runs`` pilots; the mean prediction),

and each ratio predicted / realised is printed (the goal: within 0.8-1.2),
with the range of the pilots' own ratios and how often a pilot's band
(``width_lower`` to ``width_upper``) held the realised mean width
(``band_held``) and the realised runs' own widths (``runs_in_band``). Without ``--headline`` the
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


def measured(names, budgets, runs, out=None):
    """``(pool, n, width)`` of the calibrated prior's overall interval, ``runs`` a budget.

    With ``out`` each row is also appended to that JSON-lines file as it is
    measured (``--realised`` reads it back).
    """
    rows = []
    sink = open(out, "a") if out else None
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
                if sink:
                    sink.write(json.dumps({"pool": name, "n": int(n), "width": hi - lo}) + "\n")
                    sink.flush()
    if sink:
        sink.close()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--headline", default=None, help="bench_headline.py's JSON lines")
    ap.add_argument("--pools", nargs="+", default=None, help="without --headline")
    ap.add_argument(
        "--realised", nargs="+", default=None, help="realised widths saved by --realised-out"
    )
    ap.add_argument("--realised-out", default=None, help="save the realised widths (JSON lines)")
    ap.add_argument(
        "--realised-only", action="store_true", help="measure the realised widths and stop"
    )
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 200, 500])
    ap.add_argument("--realised-runs", type=int, default=40)
    ap.add_argument("--pilot", type=int, default=50)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = ap.parse_args()
    if args.headline:
        rows = []
        for line in open(args.headline):
            r = json.loads(line)
            lo, hi, _ = r["calibrated"]["overall"]
            rows.append((r["pool"], r["n"], hi - lo))
        if args.realised_only:
            return
    elif args.realised:
        rows = [
            (r["pool"], r["n"], r["width"])
            for path in args.realised
            for r in map(json.loads, open(path))
        ]
    else:
        rows = measured(args.pools, args.budgets, args.realised_runs, args.realised_out)
        if args.realised_only:
            return
    runs = pd.DataFrame(rows, columns=["pool", "n", "width"])
    realised = runs.groupby(["pool", "n"])["width"].mean()
    out = []
    for name in realised.index.get_level_values(0).unique():
        X, target, _ = pools([name], 0)[name]
        budgets = [n for n in realised.loc[name].index if n > args.pilot]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores_only = plan_labels(X, n_labels=budgets).table.set_index("n_labels")["width"]
            rng = np.random.default_rng(0)
            pilots, bands = [], []
            for k in tqdm(range(args.runs), desc=f"{name} pilots", leave=False):
                y = np.full(len(target), -1)
                rows = rng.choice(len(target), args.pilot, replace=False)
                y[rows] = target[rows]
                plan = plan_labels(X, y, n_labels=budgets, random_state=k).table
                pilots.append(plan["width"].to_numpy())
                bands.append(plan[["width_lower", "width_upper"]].to_numpy())
        pilot = np.mean(pilots, axis=0)
        for k, n in enumerate(budgets):
            real = realised.loc[(name, n)]
            each = runs.loc[(runs["pool"] == name) & (runs["n"] == n), "width"].to_numpy()
            held = [lo <= real <= hi for lo, hi in (b[k] for b in bands)]
            inside = [((each >= lo) & (each <= hi)).mean() for lo, hi in (b[k] for b in bands)]
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
                    "band_lower": np.mean([b[k][0] for b in bands]) / real,
                    "band_upper": np.mean([b[k][1] for b in bands]) / real,
                    "band_held": np.mean(held),
                    "runs_in_band": np.mean(inside),
                    "_each": [q[k] / real for q in pilots],
                }
            )
    table = pd.DataFrame(out)
    each = np.concatenate(table.pop("_each").tolist())
    pd.set_option("display.width", 200)
    print(table.round(3).to_string(index=False))
    print(
        f"single pilots: {np.mean((each >= 0.8) & (each <= 1.2)):.0%} within 0.8-1.2 (range "
        f"{each.min():.2f}-{each.max():.2f}, median |log ratio| "
        f"{np.median(np.abs(np.log(each))):.3f}); the band held the realised mean width for "
        f"{table['band_held'].mean():.1%} of pilots (lowest cell {table['band_held'].min():.2f}) "
        f"and {table['runs_in_band'].mean():.1%} of the realised runs' widths"
    )
    if args.save:
        from _results import save

        columns = [
            "pool",
            "n",
            "realised",
            "from scores",
            "ratio (scores)",
            f"from {args.pilot} labels",
            "ratio (labels)",
            "single pilots",
            "band held",
        ]
        save(
            args.save,
            columns,
            table[
                [
                    "pool",
                    "n",
                    "realised",
                    "scores_only",
                    "ratio_scores",
                    f"pilot_{args.pilot}",
                    "ratio_pilot",
                    "each_pilot",
                    "band_held",
                ]
            ]
            .to_numpy()
            .tolist(),
            formats={c: ".3f" for c in columns[2:4] + columns[5:6]}
            | {"ratio (scores)": ".2f", "ratio (labels)": ".2f", "band held": ".2f"},
        )
    for col in ("ratio_scores", "ratio_pilot"):
        inside = table[col].between(0.8, 1.2).mean()
        print(
            f"{col}: {inside:.0%} of cells within 0.8-1.2 (range "
            f"{table[col].min():.2f}-{table[col].max():.2f})"
        )


if __name__ == "__main__":
    main()

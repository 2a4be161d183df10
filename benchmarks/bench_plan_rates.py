"""Planning a binary rate: the width plan_labels predicts against the width realised.

For each pool, rate and budget n: the realised mean width of
``BayesianAccuracy(metric=..., grouping="external")`` 's overall 95 %
interval (one group) over ``--runs`` random labelings of n rows, and the
width :func:`skassess.metrics.plan_labels` predicts for it

* from the scores alone (no label), and
* from ``--pilot`` random labels (``--pilots`` pilots; the mean prediction),

each with ``n_simulations=--simulations``; then the ratio predicted /
realised (the goal: within 0.8-1.2) and, for a target width equal to the
realised width at each budget, the budget the plan asks for against that
budget. Each cell is appended to ``--out`` (JSON lines) as it comes.

Pools: the fairness files' binary models as ``bench_headline.py`` names them
(``bank-mlp``, ``adult-nb``, their ``@tune`` and ``@check`` halves,
``adult-mlp``, ``compas-mlp``) and the synthetic binary pools of
``bench_rates_calibrated.py`` (``over``, ``under``, ``groupwise``,
``ignore``; ``--seed`` draws them; seed 7 is the tuning seed, 0 the
checking one)::

    OMP_NUM_THREADS=1 python benchmarks/bench_plan_rates.py --pools bank-mlp@tune \\
        adult-nb@tune --out plan_rates.jsonl
    python benchmarks/bench_plan_rates.py --table plan_rates.jsonl [--markdown]
"""

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from bench_headline import pools as headline_pools
from bench_rates_calibrated import SYNTHETIC, synthetic

from skassess import BayesianAccuracy
from skassess.metrics import plan_labels


def load(name, seed):
    """Binary scores ``(N, 2)`` and classes of a pool."""
    if name in SYNTHETIC:
        p1, y, _ = synthetic(name, seed)
        return np.column_stack([1 - p1, p1]), y
    X, y, _ = headline_pools([name], seed)[name]
    if X.shape[1] != 2:
        raise ValueError(f"pool {name!r} is not binary ({X.shape[1]} classes)")
    return X, y


def realised(X, y, metric, n, runs, rng):
    """Mean width of the overall interval over ``runs`` random labelings of n rows."""
    widths = []
    group = np.zeros(len(y), dtype=int)
    for r in range(runs):
        lab = np.full(len(y), -1)
        rows = rng.choice(len(y), n, replace=False)
        lab[rows] = y[rows]
        est = BayesianAccuracy(metric=metric, grouping="external", random_state=r)
        lo, hi = est.fit(X, lab, group_by=group).overall_interval()
        widths.append(hi - lo)
    return float(np.mean(widths)), float(np.std(widths))


def run(args):
    sink = open(args.out, "a") if args.out else None
    for name in args.pools:
        X, y = load(name, args.seed)
        for metric in args.metrics:
            t0 = time.time()
            rng = np.random.default_rng([args.seed, 1])
            real = {n: realised(X, y, metric, n, args.runs, rng) for n in args.budgets}
            kw = dict(
                n_labels=args.budgets,
                metric=metric,
                n_simulations=args.simulations,
                progress=False,
            )
            scores = plan_labels(X, random_state=0, **kw).table["width"].to_numpy()
            pilots = []
            for k in range(args.pilots):
                lab = np.full(len(y), -1)
                rows = rng.choice(len(y), args.pilot, replace=False)
                lab[rows] = y[rows]
                pilots.append(plan_labels(X, lab, random_state=k, **kw).table["width"].to_numpy())
            pilot = np.mean(pilots, axis=0)
            for j, n in enumerate(args.budgets):
                rec = {
                    "pool": name,
                    "seed": args.seed,
                    "metric": metric,
                    "n": n,
                    "realised": real[n][0],
                    "realised_sd": real[n][1],
                    "runs": args.runs,
                    "scores_only": float(scores[j]),
                    f"pilot_{args.pilot}": float(pilot[j]),
                    "pilot_min": float(np.min([p[j] for p in pilots])),
                    "pilot_max": float(np.max([p[j] for p in pilots])),
                    "pilots": args.pilots,
                    "simulations": args.simulations,
                }
                print(
                    f"{name:16s} {metric} n={n:4d} realised {rec['realised']:.4f} "
                    f"scores {rec['scores_only'] / rec['realised']:.2f} x, "
                    f"pilot {pilot[j] / rec['realised']:.2f} x",
                    flush=True,
                )
                if sink:
                    sink.write(json.dumps(rec) + "\n")
                    sink.flush()
            print(f"  ({time.time() - t0:.0f} s)", flush=True)


def table(paths, pilot, markdown=False):
    frame = pd.DataFrame([json.loads(line) for path in paths for line in open(path)])
    frame["/scores"] = frame["scores_only"] / frame["realised"]
    frame["/pilot"] = frame[f"pilot_{pilot}"] / frame["realised"]
    frame["range"] = [
        f"{lo / r:.2f}-{hi / r:.2f}"
        for lo, hi, r in zip(frame["pilot_min"], frame["pilot_max"], frame["realised"], strict=True)
    ]
    pd.set_option("display.width", 200)
    print(frame.round(3).to_string(index=False))
    for col in ("/scores", "/pilot"):
        inside = frame[col].between(0.8, 1.2)
        print(
            f"{col}: {inside.sum()} of {len(frame)} cells within 0.8-1.2 (range "
            f"{frame[col].min():.2f}-{frame[col].max():.2f})"
        )
    if markdown:
        print(
            "\n| pool | rate | n | realised | from scores | ratio | from "
            f"{pilot} labels | ratio | each pilot's ratio |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for _, r in frame.iterrows():
            seed = f" (seed {r['seed']})" if r["pool"] in SYNTHETIC else ""
            print(
                f"| {r['pool']}{seed} | {r['metric'].upper()} | {r['n']} | {r['realised']:.3f} | "
                f"{r['scores_only']:.3f} | {r['/scores']:.2f} | {r[f'pilot_{pilot}']:.3f} | "
                f"{r['/pilot']:.2f} | {r['range']} |"
            )
    return frame


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["bank-mlp@tune", "adult-nb@tune"])
    ap.add_argument("--metrics", nargs="+", default=["tpr", "ppv"])
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 200, 500])
    ap.add_argument("--runs", type=int, default=40, help="labelings for the realised width")
    ap.add_argument("--pilot", type=int, default=50, help="labels of a pilot")
    ap.add_argument("--pilots", type=int, default=5)
    ap.add_argument("--simulations", type=int, default=20, help="plan_labels' n_simulations")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="JSON lines file the cells are appended to")
    ap.add_argument("--table", nargs="+", default=None, help="print the table of JSON lines files")
    ap.add_argument("--markdown", action="store_true", help="with --table: the page's table")
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        if args.table:
            table(args.table, args.pilot, args.markdown)
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(args)


if __name__ == "__main__":
    main()

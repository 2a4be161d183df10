"""Binary rates under ``ActiveAssessor``'s design: coverage and width against random labels.

For each fairness file (groups: its sensitive attribute), binary rate, budget n
and run, the 95 % interval of the pool's rate and of each group's from

* ``random``: ``BayesianAccuracy(metric=..., grouping="external")`` (the
  calibrated prior) on n uniform random labels;
* ``thompson``: ``ActiveAssessor`` of the same estimator with its default
  strategy: Thompson sampling on the estimate task's reward (each group's
  expected variance drop, weighted by its share of the rate's condition rows
  times the chance that a random row of it meets the condition), a random row
  of the chosen group;
* ``thompson-bins``: the same with the rows grouped by ten equal-count bins of
  the top-1 confidence instead of the sensitive attribute
  (``grouping="score_bins", binning="quantile"``): a design for the pool's
  rate alone (its groups' columns are empty).

The active runs label in batches of ``--batch-size`` (one refit per batch).
Prints coverage, mean width and width / ``random`` (same runs), RMSE, and the
groups' coverage. Each run is appended to ``--out`` (JSON lines) as it ends::

    OMP_NUM_THREADS=1 python benchmarks/bench_active_rates.py --runs 20 --out rates.jsonl
    python benchmarks/bench_active_rates.py --table rates.jsonl
"""

import argparse
import json
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
from _results import add_save_argument, frame_markdown, saving_printed_tables

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_headline import pools  # noqa: E402

from skassess import BayesianAccuracy  # noqa: E402
from skassess.metrics._rate_table import rate_terms
from skassess.samplers import ActiveAssessor  # noqa: E402

#: ``variance`` reads runs of the unequal design measured before it was refused.
METHODS = ("random", "variance", "thompson", "thompson-bins")
RUNNABLE = ("random", "thompson", "thompson-bins")


def truths(scores, target, groups, metric):
    """The pool's rate and each group's (in the estimator's group order)."""
    cond, out = rate_terms(metric, scores.argmax(axis=1), target)
    frame = pd.DataFrame({"g": groups, "num": cond * out, "den": cond})
    by = frame.groupby("g", sort=True)[["num", "den"]].sum()
    return float((cond * out).sum() / cond.sum()), (by["num"] / by["den"]).tolist()


def _summary(est):
    lo, hi = est.overall_interval(0.95)
    s = est.summary()
    return {
        "overall": (float(lo), float(hi), float(est.overall_mean())),
        "lower": s["lower"].tolist(),
        "upper": s["upper"].tolist(),
    }


def one_run(scores, target, groups, metric, budgets, seed, methods, batch_size):
    out = {m: {} for m in methods}

    def estimator():
        return BayesianAccuracy(metric=metric, grouping="external", random_state=seed)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "random" in methods:
            order = np.random.default_rng(seed).permutation(len(target))
            for n in budgets:
                y = np.full(len(target), -1)
                y[order[:n]] = target[order[:n]]
                out["random"][n] = _summary(estimator().fit(scores, y, group_by=groups))
        for method in ("thompson", "thompson-bins"):
            if method not in methods:
                continue
            if method == "thompson-bins":
                binned = BayesianAccuracy(
                    metric=metric, grouping="score_bins", binning="quantile", random_state=seed
                )
                assessor = ActiveAssessor(binned, random_state=seed).fit(scores)
            else:
                assessor = ActiveAssessor(estimator(), random_state=seed)
                assessor.fit(scores, group_by=groups)
            done = 0
            for n in budgets:
                assessor.run(target, budget=n - done, batch_size=batch_size, progress=False)
                done = n
                out[method][n] = _summary(assessor.estimator_)
                if method == "thompson-bins":  # the bins are not the groups
                    out[method][n]["lower"] = out[method][n]["upper"] = []
    return out


def table(records):
    rows = []
    for r in records:
        for m in METHODS:
            if m not in r:
                continue
            lo, hi, point = r[m]["overall"]
            gt = np.array(r["group_truth"])
            glo, ghi = np.array(r[m]["lower"]), np.array(r[m]["upper"])
            held = (glo <= gt) & (gt <= ghi) if glo.size else np.nan  # none: bins
            rows.append(
                {
                    "pool": r["pool"],
                    "metric": r["metric"],
                    "n": r["n"],
                    "run": r["run"],
                    "method": m,
                    "covered": lo <= r["truth"] <= hi,
                    "width": hi - lo,
                    "sq_error": (point - r["truth"]) ** 2,
                    "group_cov": np.mean(held),
                }
            )
    frame = pd.DataFrame(rows)
    keys = ["pool", "metric", "n"]
    cell = frame.groupby(keys + ["method"], sort=False)
    return pd.DataFrame(
        {
            "runs": cell.size(),
            "coverage": cell["covered"].mean(),
            "width": cell["width"].mean(),
            "/random": cell["width"].mean()
            / frame[frame.method == "random"].groupby(keys, sort=False)["width"].mean(),
            "rmse_x100": 100 * np.sqrt(cell["sq_error"].mean()),
            "group_cov": cell["group_cov"].mean(),
        }
    ).reset_index()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["adult-mlp", "compas-mlp"])
    ap.add_argument("--metrics", nargs="+", default=["tpr", "ppv"])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--first-run", type=int, default=0, help="seed of the first run")
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--methods", nargs="+", default=list(RUNNABLE), choices=RUNNABLE)
    ap.add_argument("--batch-size", type=int, default=5)
    ap.add_argument("--out", default=None, help="JSON lines file the runs are appended to")
    ap.add_argument("--table", default=None, help="print the table of a JSON lines file")
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        pd.set_option("display.width", 200)
        pd.set_option("display.max_rows", 500)
        if args.table:
            records = [json.loads(line) for line in open(args.table)]
            flat = [
                {**{k: r[k] for k in ("pool", "metric", "run", "truth", "group_truth")}, "n": n}
                | {m: r[m][str(n)] for m in METHODS if m in r}
                for r in records
                for n in map(int, r["random" if "random" in r else r["methods"][0]])
            ]
            print(frame_markdown(table(flat).round(3)))
            return
        sink = open(args.out, "a") if args.out else None
        budgets = sorted(args.budgets)
        for name, (scores, target, groups) in pools(args.pools, 0).items():
            for metric in args.metrics:
                truth, gt = truths(scores, target, groups, metric)
                print(f"\n{name} {metric}: {len(target):,} rows, rate {truth:.4f}", flush=True)
                flat = []
                for r in range(args.first_run, args.first_run + args.runs):
                    res = one_run(
                        scores, target, groups, metric, budgets, r, args.methods, args.batch_size
                    )
                    rec = {"pool": name, "metric": metric, "run": r, "truth": truth}
                    rec |= {"group_truth": gt, "methods": args.methods, **res}
                    if sink:
                        sink.write(json.dumps(rec) + "\n")
                        sink.flush()
                    flat += [
                        {**{k: rec[k] for k in ("pool", "metric", "run", "truth", "group_truth")}}
                        | {"n": n}
                        | {m: res[m][n] for m in args.methods}
                        for n in budgets
                    ]
                print(table(flat).drop(columns=["pool", "metric"]).round(3).to_string(index=False))


if __name__ == "__main__":
    main()

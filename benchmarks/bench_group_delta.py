"""Group differences from few labels: the calibrated prior against labels alone (BB).

On the fairness files (``../shared/data/fairness``; MLP and Gaussian naive
Bayes scores), n rows labeled uniformly at random, ``--runs`` times: the
difference of a rate (``--metric``: accuracy, or TPR / FPR / PPV / NPV, the
gaps of equal opportunity and equalized odds) between the file's two largest
groups,

* ``calibrated``: ``BayesianAccuracy(grouping="external")`` (the default
  prior) and :func:`skassess.metrics.compare_groups`: the groups share the
  calibration map and differ by their deviations, learned from the labels;
* ``BB``: independent ``Beta(1, 1)`` posteriors per group (labels only; for
  a rate, of the labeled rows where its condition holds),

prints MAE x 100 of the posterior mean difference against the pool's true
difference, the coverage of the 95 % interval and its mean width. ``--bgm``
adds ``BayesianGroupMetrics()`` (its default, ``method="calibrated"``: the
same model with each group's free alternative, ``p_pooled="auto"``) and
scores the posterior median of every method; ``--bgm-only`` leaves out
``compare_groups`` (BB stays, the reference).

``--files`` also takes the synthetic binary pools of
``bench_rates_calibrated.py`` as ``KIND@SEED`` (e.g. ``groupwise@0``: four
groups whose log-odds are shifted from their scores by N(0, 1) each; the two
largest, ``0`` and ``1``, are compared).

    OMP_NUM_THREADS=1 python benchmarks/bench_group_delta.py --runs 200
    OMP_NUM_THREADS=1 python benchmarks/bench_group_delta.py --runs 100 --metric tpr
    OMP_NUM_THREADS=1 python benchmarks/bench_group_delta.py --runs 100 --bgm --out d.jsonl
    OMP_NUM_THREADS=1 python benchmarks/bench_group_delta.py --runs 50 --bgm-only --metric ppv \
        --files groupwise@0 groupwise@1 --budgets 20 50 100
"""

import argparse
import warnings

import numpy as np
import pandas as pd
from bench_headline import fairness
from bench_rates_calibrated import synthetic

from skassess import BayesianAccuracy
from skassess.calibration import BayesianGroupMetrics
from skassess.metrics import compare_groups
from skassess.metrics._rate_table import rate_terms

FILES = [
    ("adult", "mlp"),
    ("bank", "mlp"),
    ("compas", "mlp"),
    ("adult", "nb"),
    ("bank", "nb"),
    ("compas", "nb"),
]
COLUMN = {"mlp": "score_MultiLayerPerceptron", "nb": "score_GaussianNB"}


def save_table(paths, name, command):
    """The benchmarks page's table: per file, metric and n, each method's MAE, coverage, width."""
    from _results import Table

    cells = pd.concat([pd.read_json(p, orient="records", lines=True) for p in paths])
    wide = cells.pivot_table(
        index=["file", "metric", "n"], columns="method", values=["mae_x100", "coverage", "width"]
    )
    methods = [m for m in ("bgm", "BB", "calibrated") if ("coverage", m) in wide.columns]
    shown = {"bgm": "BayesianGroupMetrics", "BB": "BB", "calibrated": "compare_groups"}
    columns = ["file", "metric", "n"]
    for what in ("MAE x 100", "coverage", "width"):
        columns += [f"{what}: {shown[m]}" for m in methods]
    formats = {
        c: ".1f" if c.startswith("MAE") else ".2f" if "coverage" in c else ".3f"
        for c in columns[3:]
    }
    table = Table(columns, formats=formats)
    for key, row in wide.iterrows():
        values = [row[(v, m)] for v in ("mae_x100", "coverage", "width") for m in methods]
        table.add([*key, *values])
    table.save(name, command=command)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--budgets", type=int, nargs="+", default=[10, 20, 50, 100])
    ap.add_argument(
        "--metric", default="accuracy", choices=["accuracy", "tpr", "fpr", "ppv", "npv"]
    )
    ap.add_argument(
        "--bgm",
        action="store_true",
        help="add BayesianGroupMetrics() and score the posterior median",
    )
    ap.add_argument(
        "--bgm-only",
        action="store_true",
        help="BayesianGroupMetrics() and BB only (no compare_groups); implies --bgm",
    )
    ap.add_argument(
        "--files",
        nargs="+",
        default=None,
        help="files as base-model, e.g. bank-mlp, or synthetic pools as KIND@SEED "
        "(default: the six files)",
    )
    ap.add_argument("--out", default=None, help="append one JSON line per cell here")
    ap.add_argument(
        "--table",
        nargs="+",
        metavar="JSONL",
        help="save the table of these --out files, run nothing",
    )
    ap.add_argument("--save", metavar="NAME", help="with --table: benchmarks/results/NAME")
    ap.add_argument("--command", help="with --save: the commands that made the runs")
    args = ap.parse_args()
    if args.table:
        save_table(args.table, args.save, args.command)
        return
    args.bgm = args.bgm or args.bgm_only
    files = FILES if args.files is None else [tuple(f.split("-")) for f in args.files]
    point = np.median if args.bgm else np.mean
    out = []
    for base, *model in files:
        if "@" in base:  # a synthetic pool of bench_rates_calibrated.py
            kind, seed = base.split("@")
            p1, target, group = synthetic(kind, int(seed))
            X, name = np.column_stack([1.0 - p1, p1]), base
        else:
            X, target, group = fairness(base, COLUMN[model[0]])
            name = f"{base}-{model[0]}"
        a, b = pd.Series(group).value_counts().index[:2]
        keep = np.isin(group, [a, b])
        X, target, group = X[keep], target[keep], group[keep]
        cond, hit = rate_terms(args.metric, X.argmax(axis=1), target)

        def rate(mask, cond=cond, hit=hit):
            return (cond * hit)[mask].sum() / cond[mask].sum()

        truth = rate(group == a) - rate(group == b)
        rng = np.random.default_rng(0)
        for n in args.budgets:
            res = {"BB": []} if args.bgm_only else {"calibrated": [], "BB": []}
            if args.bgm:
                res["bgm"] = []
            for r in range(args.runs):
                rows = rng.choice(len(target), n, replace=False)
                y = np.full(len(target), -1)
                y[rows] = target[rows]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    for method, prior in (("calibrated", "calibrated"), ("BB", "uniform")):
                        if method == "calibrated" and args.bgm_only:
                            continue
                        est = BayesianAccuracy(
                            metric=args.metric, grouping="external", prior=prior, random_state=r
                        ).fit(X, y, group_by=group)
                        d = compare_groups(est, a, b, n_draws=4000).samples
                        lo, hi = np.quantile(d, [0.025, 0.975])
                        res[method].append((point(d), lo, hi))
                    if args.bgm:
                        est = BayesianGroupMetrics(
                            metrics=(args.metric,), n_draws=4000, random_state=r
                        ).fit(X[:, 1], y, sensitive_features=group)
                        d = est.compare(args.metric, a, b).samples
                        d = d[~np.isnan(d)]
                        lo, hi = np.quantile(d, [0.025, 0.975])
                        res["bgm"].append((np.median(d), lo, hi))
            for method, v in res.items():
                v = np.array(v)
                out.append(
                    {
                        "file": name,
                        "metric": args.metric,
                        "groups": f"{a} - {b}",
                        "n": n,
                        "method": method,
                        "truth": truth,
                        "mae_x100": 100 * np.mean(np.abs(v[:, 0] - truth)),
                        "coverage": np.mean((v[:, 1] <= truth) & (truth <= v[:, 2])),
                        "width": np.mean(v[:, 2] - v[:, 1]),
                    }
                )
            cells = pd.DataFrame(out[-len(res) :])
            print(cells.round(3).to_string(index=False, header=len(out) == len(res)), flush=True)
            if args.out:
                cells.to_json(args.out, orient="records", lines=True, mode="a")


if __name__ == "__main__":
    main()

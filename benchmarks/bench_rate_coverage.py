"""Coverage of the rate and cost intervals: TPR, FPR, PPV, NPV, accuracy per group; cost.

Usage::

    python benchmarks/bench_rate_coverage.py --runs 200 --n-jobs 2
    python benchmarks/bench_rate_coverage.py --runs 200 --only cost
    python benchmarks/bench_rate_coverage.py --runs 200 --priors hierarchical
    python benchmarks/bench_rate_coverage.py --only cost --synthetic --priors hierarchical

Rates: ``BayesianAccuracy(metric=..., grouping="external")`` on the fairness
files of ``../shared/data/fairness`` (4 files x 5 models; groups: the
privileged group and the rest), with the uniform and the informative prior,
after N random labels (no stratification; a group or class may get none).
Each cell is the share of 95 % intervals that hold the rate computed from
every row of the file: per group (``summary()``), the overall rate
(``overall_interval()``, Monte Carlo) and the difference privileged - rest
(``compare_groups``). Cost: ``BayesianMisclassificationCost``
on SVHN (the paper's ResNet-152 outputs) and the bundled Fashion-MNIST
scores, with a cost matrix drawn once per pool (off-diagonal costs
uniform on [0, 10]), overall expected cost per row against the pool's mean
cost, and beside it ``BayesianAccuracy``'s overall accuracy (groups: the
predicted classes) against the pool's accuracy and its per-class intervals
against the classes' accuracies, and the interval of the difference of every
pair of classes' accuracies against the pool's. Rate rows are pooled over the
files and models of a metric (the range over them in brackets).
"""

import argparse
import pathlib
import warnings

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table
from bench_ece_coverage import pools
from bench_fairness import SETS as FILES
from bench_prior_coverage import synthetic_pool
from joblib import Parallel, delayed

from skassess import BayesianAccuracy
from skassess.metrics import BayesianMisclassificationCost, compare_groups

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared/data"
MODELS = ("GaussianNB", "LR", "DecisionTree", "RandomForest", "MultiLayerPerceptron")
METRICS = ("accuracy", "tpr", "fpr", "ppv", "npv")


def true_rate(pred, y, mask, metric):
    """The rate on the rows of ``mask`` (NaN where it is undefined)."""
    pred, y = pred[mask], y[mask]
    on = {
        "accuracy": np.ones_like(y, dtype=bool),
        "tpr": y == 1,
        "fpr": y == 0,
        "ppv": pred == 1,
        "npv": pred == 0,
    }[metric]
    if not on.any():
        return np.nan
    hit = (
        (pred == y)
        if metric == "accuracy"
        else (pred == 1 if metric in ("tpr", "fpr") else y == 1 if metric == "ppv" else y == 0)
    )
    return float(hit[on].mean())


def rate_cell(name, model, metric, prior, budget, runs, seed):
    """Coverage per group and overall, over ``runs`` random label sets."""
    file, label, attribute, privileged = FILES[name]
    frame = pd.read_csv(SHARED / f"fairness/{file}_scores.csv.gz", index_col=0)
    p = frame[f"score_{model}"].to_numpy()
    X, y = np.column_stack([1 - p, p]), frame[label].to_numpy().astype(int)
    groups = np.where(frame[attribute] == privileged, "privileged", "rest")
    pred = (p > 0.5).astype(int)
    truth_g = {g: true_rate(pred, y, groups == g, metric) for g in ("privileged", "rest")}
    truth = true_rate(pred, y, np.ones(len(y), dtype=bool), metric)
    group_hits, overall_hits, delta_hits = [], [], []
    for run in range(runs):
        rng = np.random.default_rng([seed, budget, run])
        rows = rng.choice(len(y), size=min(budget, len(y)), replace=False)
        masked = np.full(len(y), -1)
        masked[rows] = y[rows]
        est = BayesianAccuracy(metric=metric, grouping="external", prior=prior, random_state=run)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, masked, group_by=groups)
            table = est.summary()
            lower, upper = est.overall_interval(0.95, n_draws=2000)
            d_lower, d_upper = compare_groups(
                est, "privileged", "rest", n_draws=2000, random_state=run
            ).interval(0.95)
        for g, t in truth_g.items():
            if np.isfinite(t):
                group_hits.append(table.loc[g, "lower"] <= t <= table.loc[g, "upper"])
        if np.isfinite(truth):
            overall_hits.append(lower <= truth <= upper)
        delta = truth_g["privileged"] - truth_g["rest"]
        if np.isfinite(delta):
            delta_hits.append(d_lower <= delta <= d_upper)
    return np.mean(group_hits), np.mean(overall_hits), np.mean(delta_hits)


def cost_pools(seed, synthetic=False):
    """SVHN (when its file is there) and the bundled Fashion-MNIST scores, or synthetic pools.

    With ``synthetic``, instead, two pools of ``bench_prior_coverage.py`` whose
    classes' calibration differs (30 classes of ~300 rows, log-odds shift
    sd 0.8; 20 classes of ~500 rows, sd 2.5: accuracies far apart).
    """
    for name, X, y in pools(seed):
        if name in ("SVHN", "Fashion-MNIST") and not synthetic:
            yield name, X, y
    if synthetic:
        yield "synthetic 30 x 300, shift 0.8", *synthetic_pool(30, 300, seed, 0.8)
        yield "synthetic 20 x 500, shift 2.5", *synthetic_pool(20, 500, seed + 6, 2.5)


def cost_cell(X, y, prior, budget, runs, seed):
    K = X.shape[1]
    rng = np.random.default_rng(seed)
    cost = rng.uniform(0, 10, (K, K))
    np.fill_diagonal(cost, 0.0)
    pred = X.argmax(axis=1)
    truth, accuracy = cost[y, pred].mean(), np.mean(pred == y)
    per_class = np.bincount(pred, weights=pred == y, minlength=K) / np.maximum(
        np.bincount(pred, minlength=K), 1
    )
    hits, widths = [], []
    for run in range(runs):
        rows = np.random.default_rng([seed, budget, run]).choice(len(y), budget, replace=False)
        masked = np.full(len(y), -1)
        masked[rows] = y[rows]
        est = BayesianMisclassificationCost(cost_matrix=cost, prior=prior, random_state=run)
        lower, upper = est.fit(X, masked).overall_interval(0.95, n_draws=2000)
        widths.append(upper - lower)
        acc = BayesianAccuracy(prior=prior, random_state=run).fit(X, masked)
        acc_lower, acc_upper = acc.overall_interval(0.95, n_draws=2000)
        table = acc.summary()
        groups = np.mean((table["lower"] <= per_class) & (per_class <= table["upper"]))
        # every pair of classes: the interval of theta_j - theta_k (compare_groups)
        draws = acc.groupwise_samples(2000, random_state=run)
        j, k = np.triu_indices(K, 1)
        d_lower, d_upper = np.quantile(draws[:, j] - draws[:, k], [0.025, 0.975], axis=0)
        delta = per_class[j] - per_class[k]
        pairs = np.mean((d_lower <= delta) & (delta <= d_upper))
        hits.append((lower <= truth <= upper, acc_lower <= accuracy <= acc_upper, groups, pairs))
    return truth, np.mean(hits, axis=0), np.mean(widths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budgets", type=int, nargs="+", default=[50, 200, 1000])
    add_parallel_arguments(parser, n_jobs=1)
    parser.add_argument("--only", choices=["rates", "cost"])
    parser.add_argument(
        "--synthetic", action="store_true", help="the cost table on two synthetic pools instead"
    )
    parser.add_argument(
        "--priors",
        nargs="+",
        default=["uniform", "informative"],
        choices=["uniform", "informative", "hierarchical", "calibrated"],
    )
    parser.add_argument(
        "--save", metavar="NAME", help="save the tables as benchmarks/results/NAME[-cost]"
    )
    args = parser.parse_args()
    use_parallel_backend(args)
    priors = args.priors
    if args.only != "cost":
        keys = [
            (n, m, metric, prior, b)
            for metric in METRICS
            for prior in priors
            for b in args.budgets
            for n in FILES
            for m in MODELS
        ]
        out = Parallel(n_jobs=args.n_jobs)(
            delayed(rate_cell)(*k, args.runs, args.seed) for k in keys
        )
        res = dict(zip(keys, out, strict=True))
        print(
            f"\nRates: coverage % of 95 % intervals, mean over {len(FILES)} files x "
            f"{len(MODELS)} models (lowest), {args.runs} runs each"
        )
        names = ["per group", "overall", "difference"]
        lowest = [f"{n}: lowest" for n in names]
        table = Table(
            ["metric", "prior", "N"]
            + [c for pair in zip(names, lowest, strict=True) for c in pair],
            formats={**dict.fromkeys(names, ".1f"), **dict.fromkeys(lowest, ".0f")},
        )
        for metric in METRICS:
            for prior in priors:
                for b in args.budgets:
                    parts = (
                        np.array([res[(n, m, metric, prior, b)][:3] for n in FILES for m in MODELS])
                        * 100
                    )
                    row = [metric, prior, b]
                    for v in parts.T:
                        row += [np.nanmean(v), np.nanmin(v)]
                    table.add(row)
        table.save(
            args.save,
            caption=f"{args.runs} runs a cell; coverage % of the 95 % intervals, the mean "
            f"over {len(FILES)} files x {len(MODELS)} models and the lowest of them.",
        )
    if args.only != "rates":
        print(
            f"\nCost and overall accuracy (groups: the predicted classes): coverage % of "
            f"the 95 % interval of the overall expected cost / of the overall accuracy / "
            f"of the class accuracies (mean over classes) / of the differences of two "
            f"classes' accuracies (mean over pairs), {args.runs} runs each; w: mean "
            f"width of the cost's interval"
        )
        table = Table(
            [
                "pool",
                "true cost",
                "prior",
                "N",
                "cost",
                "accuracy",
                "classes",
                "pairs",
                "cost's width",
            ],
            formats={
                "true cost": ".3f",
                "cost": ".1f",
                "accuracy": ".1f",
                "classes": ".1f",
                "pairs": ".1f",
                "cost's width": ".3f",
            },
        )
        for name, X, y in cost_pools(args.seed, args.synthetic):
            for prior in priors:
                out = Parallel(n_jobs=args.n_jobs)(
                    delayed(cost_cell)(X, y, prior, b, args.runs, args.seed) for b in args.budgets
                )
                for b, (truth, hits, width) in zip(args.budgets, out, strict=True):
                    table.add([name, truth, prior, b, *(100 * np.asarray(hits)), width])
        table.save(
            args.save and f"{args.save}-cost",
            caption=f"{args.runs} runs a cell; coverage % of the 95 % intervals of the overall "
            "expected cost, the overall accuracy, the classes' accuracies (mean over classes) "
            "and the differences of two classes' accuracies (mean over pairs).",
        )


if __name__ == "__main__":
    main()

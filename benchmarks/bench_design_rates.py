"""Binary rates under an unequal design: the calibrated prior with and without design weights.

For each pool, rate, budget n and run, ``n`` rows are drawn one at a time
without replacement, row ``i`` with probability
``q_i = (1 - s) sqrt(p_i (1 - p_i)) / sum + s / m`` over the ``m`` rows left
(``p_i`` the positive class's score, ``s = 0.5``: the active inference design
of Zrnic and Candes 2024 on the scores), and the 95 % interval of the pool's
rate is read from ``BayesianAccuracy(metric=..., grouping="external")``:

* ``weighted``: each label with its design weight ``1 / (m q_i)``
  (``add_labels(..., design_weight=...)``, the generalized regression
  estimator with the design's sandwich dispersion);
* ``unweighted``: the same labels taken as a random sample;
* ``random``: ``n`` uniformly random rows (the width and error the design is
  measured against).

Pools: ``FILE:MODEL``, the fairness files of ``../shared/data/fairness``
(groups: the privileged group and the rest) with the MLP's and naive Bayes'
scores; ``hinge``, a synthetic pool whose map no shift or slope follows
(over-confident above 1/2, under-confident below); and any pool of
``bench_headline.py`` by its name there (e.g. the tuning half
``bank-nb@tune``, groups by its sensitive attribute). ``--metrics cost`` on a
many-class pool (``fashion-mnist``, ``svhn``, or ``split``: ten synthetic classes
whose errors' class goes with the top-1 score, an error costing 1 where the true
class is the next one and 10 elsewhere; ``ordinal``: twelve ordered classes, scores
silent on the errors, most errors a neighbouring class, costs ``|j - k|``; ``grades``:
seven ordered grades, errors one or two grades off or anywhere, costs ``(j - k)^2``; a pool's
name ending ``-top1``, e.g. ``svhn-top1``: its top-1 confidence only, the other classes'
scores even): ``BayesianMisclassificationCost``'s
interval of the pool's mean cost (off-diagonal costs uniform on [0, 10], drawn
once), the design on the top-1 score. Prints coverage, mean
width, width / ``random``'s and RMSE / ``random``'s; each cell is appended to
``--out`` (JSON lines) as it ends::

    OMP_NUM_THREADS=1 python benchmarks/bench_design_rates.py --runs 100 --out rates.jsonl
"""

import argparse
import json
import pathlib
import time
import warnings

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from bench_fairness import SETS as FILES
from bench_headline import pools as headline_pools
from bench_rate_coverage import true_rate
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.metrics import BayesianMisclassificationCost

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared/data"
POOLS = ("Adult race:MultiLayerPerceptron", "Adult race:GaussianNB", "Compas-R race:GaussianNB")
POOLS += ("Compas-R race:MultiLayerPerceptron", "hinge")
METHODS = ("weighted", "unweighted", "random")


def load(pool):
    """Binary scores ``X``, classes ``y`` and groups of one pool."""
    if pool == "hinge":
        rng = np.random.default_rng(31)
        p = np.clip(rng.beta(1.2, 2.0, 6000), 1e-4, 1 - 1e-4)
        ell = logit(p)
        y = (rng.random(6000) < expit(np.where(ell > 0, 0.3 + 0.2 * ell, 1.5 * ell - 0.5))).astype(
            int
        )
        return np.column_stack([1 - p, p]), y, rng.integers(0, 3, 6000)
    if pool == "split":
        return split_pool()
    if pool == "ordinal":
        return ordinal_pool()
    if pool == "grades":
        return grades_pool()
    if pool.endswith("-top1"):  # served as the top-1 confidence only, the rest even
        X, y, groups = load(pool[: -len("-top1")])
        conf, pred = X.max(axis=1), X.argmax(axis=1)
        X = np.tile(((1 - conf) / (X.shape[1] - 1))[:, None], (1, X.shape[1]))
        X[np.arange(len(y)), pred] = conf
        return X, y, groups
    if ":" not in pool:  # a pool of bench_headline, e.g. a tuning half "bank-nb@tune"
        return headline_pools([pool], 0)[pool]
    name, model = pool.split(":")
    file, label, attribute, privileged = FILES[name]
    frame = pd.read_csv(SHARED / f"fairness/{file}_scores.csv.gz", index_col=0)
    p = frame[f"score_{model}"].to_numpy()
    groups = np.where(frame[attribute] == privileged, "privileged", "rest")
    return np.column_stack([1 - p, p]), frame[label].to_numpy().astype(int), groups


def split_pool(n=8000, n_classes=10):
    """Ten classes whose errors' class goes with the top-1 score: an error below a
    score of 0.65 is of the next class, above it of any other but that one. A
    design on the top-1 score over-draws the first kind."""
    rng = np.random.default_rng(41)
    conf = rng.uniform(0.3, 0.99, n)
    pred = rng.integers(0, n_classes, n)
    wrong = rng.random(n) > conf
    far = (pred + rng.integers(2, n_classes, n)) % n_classes
    y = np.where(wrong, np.where(conf < 0.65, (pred + 1) % n_classes, far), pred)
    X = np.tile(((1 - conf) / (n_classes - 1))[:, None], (1, n_classes))
    X[np.arange(n), pred] = conf
    return X, y, np.zeros(n, dtype=int)


def ordinal_pool(n=6000, n_classes=12):
    """Twelve ordered classes scored by the top-1 confidence only (the rest even),
    calibrated; an error is a neighbouring class (either side) with probability
    0.8 and any other with 0.2. Costs ``|j - k|``."""
    rng = np.random.default_rng(43)
    conf = rng.beta(4.0, 1.5, n).clip(1.5 / n_classes, 0.999)
    pred = rng.integers(0, n_classes, n)
    wrong = rng.random(n) > conf
    step = np.where(rng.random(n) < 0.5, -1, 1)
    near = np.clip(pred + step, 0, n_classes - 1)
    near = np.where(near == pred, pred - step, near)
    other = (pred + rng.integers(1, n_classes, n)) % n_classes
    y = np.where(wrong, np.where(rng.random(n) < 0.8, near, other), pred)
    X = np.tile(((1 - conf) / (n_classes - 1))[:, None], (1, n_classes))
    X[np.arange(n), pred] = conf
    return X, y, np.zeros(n, dtype=int)


def grades_pool(n=5000, n_classes=7):
    """Seven ordered grades scored by the top-1 confidence only (the rest even),
    calibrated; an error is one grade off with probability 0.6, two off with 0.25
    (within the scale) and any other grade with 0.15. Costs ``(j - k)^2``."""
    rng = np.random.default_rng(47)
    conf = rng.beta(3.0, 1.5, n).clip(1.5 / n_classes, 0.999)
    pred = rng.integers(0, n_classes, n)
    wrong = rng.random(n) > conf
    kind = rng.random(n)
    size = np.where(kind < 0.6, 1, 2)
    step = np.where(rng.random(n) < 0.5, -1, 1) * size
    near = pred + step
    near = np.where((near < 0) | (near >= n_classes), pred - step, near)
    other = (pred + rng.integers(1, n_classes, n)) % n_classes
    y = np.where(wrong, np.where(kind < 0.85, near, other), pred)
    X = np.tile(((1 - conf) / (n_classes - 1))[:, None], (1, n_classes))
    X[np.arange(n), pred] = conf
    return X, y, np.zeros(n, dtype=int)


def design_draws(p, n, rng, mix=0.5):
    """``n`` rows drawn one at a time by the design, and each one's ``1 / (m q_i)``."""
    u = np.sqrt(np.clip(p * (1 - p), 0.0, None))
    left = np.ones(len(p), dtype=bool)
    rows, weights = [], []
    for _ in range(n):
        m = left.sum()
        total = u[left].sum()
        q = np.where(left, mix / m + (1 - mix) * (u / total if total > 0 else 1.0 / m), 0.0)
        row = rng.choice(len(p), p=q / q.sum())
        rows.append(row)
        weights.append(1.0 / (m * q[row]))
        left[row] = False
    return np.array(rows), np.array(weights)


def cost_matrix(n_classes, seed):
    """Off-diagonal costs uniform on [0, 10], drawn once per pool (as bench_rate_coverage)."""
    cost = np.random.default_rng(seed).uniform(0, 10, (n_classes, n_classes))
    np.fill_diagonal(cost, 0.0)
    return cost


def cell(pool, metric, budget, runs, seed):
    X, y, groups = load(pool)
    pred = X.argmax(axis=1)
    if metric == "cost":
        # The pool's mean misclassification cost; the design on the top-1 score.
        cost = cost_matrix(X.shape[1], seed)
        K = X.shape[1]
        if pool == "split":  # mistaking a class for the next one is cheap
            cost = np.where(np.arange(K)[:, None] == (np.arange(K) + 1) % K, 1.0, 10.0)
            np.fill_diagonal(cost, 0.0)
        if pool == "ordinal":
            cost = np.abs(np.subtract.outer(np.arange(K), np.arange(K))).astype(float)
        if pool == "grades":
            cost = np.subtract.outer(np.arange(K), np.arange(K)).astype(float) ** 2
        truth, score = cost[y, pred].mean(), X.max(axis=1)
    else:
        truth, score = true_rate(pred, y, np.ones(len(y), dtype=bool), metric), X[:, 1]
    out = {m: [] for m in METHODS}
    for run in range(runs):
        rng = np.random.default_rng([seed, budget, run])
        rows, d = design_draws(score, budget, rng)
        uniform = rng.choice(len(y), budget, replace=False)
        for method in METHODS:
            r = uniform if method == "random" else rows
            design = {"design_weight": d} if method == "weighted" else {}
            if metric == "cost":
                est = BayesianMisclassificationCost(cost_matrix=cost, random_state=run)
                fit, told = {}, {}
            else:
                est = BayesianAccuracy(metric=metric, grouping="external", random_state=run)
                fit, told = {"group_by": groups}, {"group_by": groups[r]}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, **fit)
                est.add_labels(X[r], y[r], **told, **design)
                lo, hi = est.overall_interval(0.95, n_draws=2000)
                mean = est.overall_mean()
            out[method].append((lo <= truth <= hi, hi - lo, mean - truth))
    summary = {}
    for method, values in out.items():
        a = np.array(values, dtype=float)
        summary[method] = {
            "coverage": float(a[:, 0].mean()),
            "width": float(a[:, 1].mean()),
            "bias": float(a[:, 2].mean()),
            "rmse": float(np.sqrt((a[:, 2] ** 2).mean())),
        }
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--budgets", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--metrics", nargs="+", default=["tpr", "ppv"])
    parser.add_argument("--pools", nargs="+", default=list(POOLS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=pathlib.Path, default=None)
    add_save_argument(parser)
    args = parser.parse_args()
    with saving_printed_tables(args.save):
        print(
            "| pool | rate | n | coverage: weighted | unweighted | random "
            "| width / random: weighted | unweighted | RMSE / random: weighted | unweighted |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for pool in args.pools:
            for metric in args.metrics:
                for budget in args.budgets:
                    start = time.perf_counter()
                    res = cell(pool, metric, budget, args.runs, args.seed)
                    w, u, r = (res[m] for m in METHODS)
                    print(
                        f"| {pool} | {metric} | {budget} | {w['coverage']:.3f} | "
                        f"{u['coverage']:.3f} | {r['coverage']:.3f} | "
                        f"{w['width'] / r['width']:.2f} | {u['width'] / r['width']:.2f} | "
                        f"{w['rmse'] / r['rmse']:.2f} | {u['rmse'] / r['rmse']:.2f} |",
                        flush=True,
                    )
                    if args.out is not None:
                        record = dict(pool=pool, metric=metric, budget=budget, runs=args.runs)
                        record |= {"seconds": time.perf_counter() - start, **res}
                        with args.out.open("a") as f:
                            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()

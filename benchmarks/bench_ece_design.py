"""Coverage of the ECE interval when a labeling session chose the items.

Usage::

    python benchmarks/bench_ece_design.py --runs 30 --n-jobs 2

A session's group strategy (``ActiveAssessor``, Thompson sampling, grouped by
predicted class: the ``skassess label`` default) labels its groups at
unequal rates, each group's items at random. For each pool, task and budget,
each run labels ``N`` items with that sampler (its own seed) and fits
``BayesianCalibrationError`` on the session's labels twice: with the plain
confidence bins (``grouping="score_bins"``, which takes the labels as a random
sample of each bin) and with the bins split by the session's groups and
weighted by their rows (``grouping="external"``, what ``skassess report
--session`` shows). The table gives the coverage of their 95 % intervals of
the pool's ECE (computed from every label), their mean width, and how unequal
the design was (the largest over the smallest labeling rate of a predicted
class, median over runs). Pools: a synthetic 10-class pool whose classes
differ in calibration (half calibrated, half over-confident), the bundled
Fashion-MNIST scores, SVHN (ResNet-152) and the Adult random forest.
"""

import argparse
import pathlib
import time
import warnings

import numpy as np
import pandas as pd
from _results import Table
from joblib import Parallel, delayed
from scipy.special import expit, logit

from skassess import ActiveAssessor
from skassess.datasets import load_fashion_mnist_scores, read_predictions
from skassess.metrics import BayesianCalibrationError, expected_calibration_error

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared/data"
GROUPINGS = ("score_bins", "external")


def classes_differ(seed, n_rows=10_000, n_classes=10):
    """Top-1 confidences ~ Beta(4, 1) on (0.1, 1); the even classes are calibrated,
    the odd ones over-confident (``sigmoid(0.6 logit c - 0.3)``)."""
    rng = np.random.default_rng([seed, 99])
    conf = np.clip(0.1 + 0.9 * rng.beta(4.0, 1.0, n_rows), 0.1 + 1e-6, 1 - 1e-6)
    pred = rng.integers(n_classes, size=n_rows)
    truth = np.where(pred % 2 == 0, conf, expit(0.6 * logit(conf) - 0.3))
    scores = np.repeat(((1 - conf) / (n_classes - 1))[:, None], n_classes, axis=1)
    scores[np.arange(n_rows), pred] = conf
    right = rng.random(n_rows) < truth
    other = (pred + rng.integers(1, n_classes, n_rows)) % n_classes
    return scores, np.where(right, pred, other)


def pools(seed):
    yield "synthetic, classes differ", *classes_differ(seed)
    data = load_fashion_mnist_scores()
    yield "Fashion-MNIST", data.scores, data.target
    svhn = SHARED / "predictions/svhn_resnet152.txt.gz"
    if svhn.exists():
        data = read_predictions(svhn)
        yield "SVHN", data.scores, data.target
    adult = SHARED / "fairness/adult_sex_scores.csv.gz"
    if adult.exists():
        frame = pd.read_csv(adult, index_col=0)
        p = frame["score_RandomForest"].to_numpy()
        yield "adult RandomForest", np.column_stack([1 - p, p]), frame["income-per-year"].to_numpy()


def one_run(X, y, task, budget, seed):
    """Coverage and width of both groupings after one session's labels."""
    truth = expected_calibration_error(y, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = ActiveAssessor(task=task, random_state=seed).fit(X)
        session.run(lambda i: y[i], budget, progress=False)
    labels = session.labels_
    pred = X.argmax(axis=1)
    rate = np.bincount(pred[labels >= 0], minlength=X.shape[1]) / np.bincount(
        pred, minlength=X.shape[1]
    ).clip(1)
    present = np.bincount(pred, minlength=X.shape[1]) > 0
    ratio = rate[present].max() / max(rate[present].min(), 1.0 / len(y))
    out = {"ratio": ratio}
    for grouping in GROUPINGS:
        est = BayesianCalibrationError(grouping=grouping, random_state=seed)
        est.fit(X, labels, group_by=pred if grouping == "external" else None)
        lower, upper = est.overall_interval(0.95)
        out[grouping] = (lower <= truth <= upper, upper - lower)
    return truth, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budgets", type=int, nargs="+", default=[200])
    parser.add_argument("--tasks", nargs="+", default=["estimate", "least_accurate"])
    parser.add_argument("--only", help="pools whose name contains this text")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    table = Table(
        [
            "pool",
            "task",
            "N",
            "ECE* x 100",
            "rate ratio",
            "coverage %, plain bins",
            "coverage %, bins by group",
            "width x 100, plain",
            "width x 100, by group",
        ],
        formats={
            "ECE* x 100": ".2f",
            "rate ratio": ".1f",
            "coverage %, plain bins": ".0f",
            "coverage %, bins by group": ".0f",
            "width x 100, plain": ".1f",
            "width x 100, by group": ".1f",
        },
    )
    cpu, wall = time.process_time(), time.perf_counter()
    for name, X, y in pools(args.seed):
        if args.only and args.only not in name:
            continue
        for task in args.tasks:
            for budget in args.budgets:
                results = Parallel(n_jobs=args.n_jobs)(
                    delayed(one_run)(X, y, task, budget, 100_000 * args.seed + 1000 * budget + run)
                    for run in range(args.runs)
                )
                truth = results[0][0]
                rows = [r[1] for r in results]
                cover = {g: 100 * np.mean([r[g][0] for r in rows]) for g in GROUPINGS}
                width = {g: 100 * np.mean([r[g][1] for r in rows]) for g in GROUPINGS}
                table.add(
                    [
                        name,
                        task,
                        budget,
                        100 * truth,
                        float(np.median([r["ratio"] for r in rows])),
                        cover["score_bins"],
                        cover["external"],
                        width["score_bins"],
                        width["external"],
                    ]
                )
    table.save(
        args.save,
        caption=f"{args.runs} sessions a row; the 95 % interval of the ECE of the pool; "
        "rate ratio: the largest over the smallest labeling rate of a predicted class "
        "(median over the sessions).",
    )
    print(
        f"process CPU {time.process_time() - cpu:.0f} s (this process only), "
        f"wall {time.perf_counter() - wall:.0f} s"
    )


if __name__ == "__main__":
    main()

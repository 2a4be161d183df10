"""Coverage of the 95 % interval of the ECE, on calibrated and miscalibrated scores.

Usage::

    python benchmarks/bench_ece_coverage.py --runs 200
    python benchmarks/bench_ece_coverage.py --runs 200 --ece-model independent   # Ji et al.
    python benchmarks/bench_ece_coverage.py --runs 20 --ece-model shared

``--ece-model shared`` draws the bins' accuracies from the package's shared
scores-informed model instead (``BayesianAccuracy(grouping="score_bins")``,
the calibrated prior: one map of the scores, its trust learned from the
labels, per-bin deviations) and takes the ECE of those draws, on the same bins.

For each pool and N = 50, 200, 1000 labels drawn at random: the share of runs
whose 95 % interval of the binned ECE (10 equal-width bins of the top-1
confidence) holds the ECE computed from every label of the pool, the mean
posterior mean, and the true value. Pools: synthetic (10,000 rows of a
10-class model whose correctness is ``f(c)`` for the top-1 confidence ``c``:
calibrated ``f(c) = c``, slightly and strongly overconfident, underconfident),
SVHN (ResNet-152), the bundled Fashion-MNIST scores, and the ten models of the
Adult, bank and ProPublica fairness files (binary scores, top-1 confidence
``max(p, 1 - p)``). ``--seed`` changes both the synthetic pools and the runs.
"""

import argparse
import copy
import pathlib
import warnings

import numpy as np
import pandas as pd
from _results import Table
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.datasets import load_fashion_mnist_scores, read_predictions
from skassess.metrics import BayesianCalibrationError, expected_calibration_error

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared/data"
SYNTHETIC = {
    "calibrated": lambda c: c,
    "overconfident, mild": lambda c: expit(0.8 * logit(c)),
    "overconfident": lambda c: expit(0.6 * logit(c) - 0.3),
    "underconfident": lambda c: expit(1.5 * logit(c)),
}
FAIRNESS = {
    "adult": ("adult_sex", "income-per-year"),
    "bank": ("bank_age", "y"),
    "propublica": ("propublica-recidivism_sex", "two_year_recid"),
}
FAIRNESS_MODELS = ("GaussianNB", "LR", "DecisionTree", "RandomForest", "MultiLayerPerceptron")


def synthetic(kind, seed, n_rows=10_000, n_classes=10):
    """Top-1 confidences ~ Beta(4, 1) on (0.1, 1); right with probability f(c)."""
    rng = np.random.default_rng([seed, list(SYNTHETIC).index(kind)])
    conf = np.clip(0.1 + 0.9 * rng.beta(4.0, 1.0, n_rows), 0.1 + 1e-6, 1 - 1e-6)
    pred = rng.integers(n_classes, size=n_rows)
    scores = np.repeat(((1 - conf) / (n_classes - 1))[:, None], n_classes, axis=1)
    scores[np.arange(n_rows), pred] = conf
    right = rng.random(n_rows) < SYNTHETIC[kind](conf)
    other = (pred + rng.integers(1, n_classes, n_rows)) % n_classes
    return scores, np.where(right, pred, other)


def pools(seed):
    for kind in SYNTHETIC:
        yield f"synthetic, {kind}", *synthetic(kind, seed)
    svhn = SHARED / "predictions/svhn_resnet152.txt.gz"
    if svhn.exists():
        data = read_predictions(svhn)
        yield "SVHN", data.scores, data.target
    data = load_fashion_mnist_scores()
    yield "Fashion-MNIST", data.scores, data.target
    for name, (file, label) in FAIRNESS.items():
        path = SHARED / f"fairness/{file}_scores.csv.gz"
        if not path.exists():
            continue
        frame = pd.read_csv(path, index_col=0)
        for model in FAIRNESS_MODELS:
            p = frame[f"score_{model}"].to_numpy()
            yield f"{name} {model}", np.column_stack([1 - p, p]), frame[label].to_numpy()


def shared_samples(est, X, y, rows, run):
    """ECE draws from the calibrated prior's bin accuracies (``--ece-model shared``)."""
    labels = np.full(len(y), -1)
    labels[rows] = y[rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = BayesianAccuracy(grouping="score_bins", n_bins=est.n_bins, random_state=run)
        acc.fit(X, labels)
    return est.calibration_error(np.asarray(acc.groupwise_samples(4000, random_state=run)))


def cell(X, y, budget, runs, seed, **params):
    """Coverage, mean posterior mean and mean width over ``runs`` random label sets."""
    shared = params["ece_model"] == "shared"
    if shared:
        params["ece_model"] = "hierarchical"  # for its bins and confidences only
    base = BayesianCalibrationError(**params).fit(X, np.full(len(y), -1))
    truth = expected_calibration_error(y, X)
    hits, means, widths = [], [], []
    for run in range(runs):
        rng = np.random.default_rng([seed, budget, run])
        rows = rng.choice(len(y), size=budget, replace=False)
        est = copy.deepcopy(base).add_labels(X[rows], y[rows])
        if shared:
            draws = shared_samples(est, X, y, rows, run)
        else:
            draws = est.overall_samples(4000, random_state=run)
        lower, upper = np.quantile(draws, [0.025, 0.975])
        hits.append(lower <= truth <= upper)
        means.append(draws.mean())
        widths.append(upper - lower)
    return truth, np.mean(hits), np.mean(means), np.mean(widths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budgets", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument(
        "--ece-model", default="hierarchical", choices=["hierarchical", "independent", "shared"]
    )
    parser.add_argument("--p-calibrated", type=float, default=0.5)
    parser.add_argument("--unlabeled", default="sampled", choices=["sampled", "expected"])
    parser.add_argument("--only", help="pools whose name contains this text")
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    print(
        f"ece_model={args.ece_model!r}, p_calibrated={args.p_calibrated}, "
        f"unlabeled={args.unlabeled!r}, {args.runs} runs; cells: coverage % of the 95 % "
        "interval / mean posterior mean x 100 / mean width x 100"
    )
    table = Table(
        ["pool", "ECE* x 100", "N", "coverage %", "mean x 100", "width x 100"],
        formats={
            "ECE* x 100": ".2f",
            "coverage %": ".0f",
            "mean x 100": ".1f",
            "width x 100": ".1f",
        },
    )
    worst = 100.0
    for name, X, y in pools(args.seed):
        if args.only and args.only not in name:
            continue
        for b in args.budgets:
            truth, cov, mean, width = cell(
                X,
                y,
                b,
                args.runs,
                args.seed,
                ece_model=args.ece_model,
                p_calibrated=args.p_calibrated,
                unlabeled=args.unlabeled,
            )
            worst = min(worst, 100 * cov)
            table.add([name, 100 * truth, b, 100 * cov, 100 * mean, 100 * width])
    table.save(
        args.save,
        caption=f"`ece_model={args.ece_model!r}`, {args.runs} runs a cell: coverage of the "
        "95 % interval, the mean posterior mean and the mean width.",
    )
    print(f"lowest coverage: {worst:.0f} %")


if __name__ == "__main__":
    main()

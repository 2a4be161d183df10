"""Throughput of fit / partial_fit: labeled rows per second for K = 10 classes.

    python benchmarks/bench_fit.py [--rows 2000000] [--repeats 5]

Prints the best of ``--repeats`` runs for each estimator, for ``fit`` on one
batch and for ``partial_fit`` over 10 batches. Memory beyond the input is
O(G K) for the posteriors plus O(batch) temporaries.

Then the default estimator's whole fit (the rows' counts and the calibrated
model fitted on them, read by ``summary()``) on a pool of which 1,000 rows are
labeled, beside a bare numpy pass over the same scores (row sums, argmax,
bincount of the predicted classes): the model's grid works on per-cell
counts, so its cost does not grow with the rows.
"""

import argparse
import time

import numpy as np
from _results import Table

from skassess import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)


def make(n, k, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 3
    logits -= logits.max(axis=1, keepdims=True)
    scores = np.exp(logits)
    scores /= scores.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    return scores, y


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--save",
        metavar="NAME",
        help="save the tables as benchmarks/results/NAME.json and NAME-numpy.json",
    )
    args = parser.parse_args()
    scores, y = make(args.rows, args.classes)
    chunks = np.array_split(np.arange(args.rows), 10)
    parts = [(scores[c], y[c]) for c in chunks]
    print(f"{args.rows:,} labeled rows, K = {args.classes}; best of {args.repeats}")
    table = Table(
        ["estimator", "fit rows/s", "partial_fit rows/s"],
        formats={"fit rows/s": ",.0f", "partial_fit rows/s": ",.0f"},
    )
    for est in (
        BayesianAccuracy(),
        BayesianAccuracy(prior="informative", grouping="class_bin"),
        BayesianCalibrationError(),
        BayesianConfusionMatrix(prior="informative"),
        BayesianMisclassificationCost(),
    ):
        t_fit = best_of(args.repeats, lambda est=est: est.fit(scores, y))

        def chunked(est=est):
            est.fit(*parts[0])
            for s, t in parts[1:]:
                est.partial_fit(s, t)

        t_part = best_of(args.repeats, chunked)
        table.add([f"`{est!r}`", args.rows / t_fit, args.rows / t_part])
    table.save(
        args.save,
        caption=f"{args.rows:,} labeled rows, K = {args.classes}; best of {args.repeats}; "
        "`partial_fit` over 10 batches.",
    )
    default_fit_against_numpy(scores, y, args.repeats, args.save)


def bare_pass(scores):
    """What any estimator must do with the rows: their sums, argmax and class counts."""
    scores.sum(axis=1)
    return np.bincount(scores.argmax(axis=1), minlength=scores.shape[1])


def default_fit_against_numpy(scores, y, repeats, save):
    labeled = np.full(len(y), -1)
    labeled[:1000] = y[:1000]

    def whole_fit():
        BayesianAccuracy(random_state=0).fit(scores, labeled).summary()

    t_fit = best_of(repeats, whole_fit)
    t_bare = best_of(repeats, lambda: bare_pass(scores))
    print()
    table = Table(
        ["rows", "labeled", "fit + summary (s)", "numpy pass (s)", "ratio"],
        formats={
            "rows": ",",
            "labeled": ",",
            "fit + summary (s)": ".3f",
            "numpy pass (s)": ".3f",
            "ratio": ".2f",
        },
    )
    table.add([len(y), 1000, t_fit, t_bare, t_fit / t_bare])
    table.save(
        save and f"{save}-numpy",
        caption="`BayesianAccuracy()`'s whole fit read by `summary()`, beside a bare numpy "
        "pass over the same scores (row sums, argmax, bincount of the predicted classes).",
    )


if __name__ == "__main__":
    main()

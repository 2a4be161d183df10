"""Speed of the calibrated cost, whose split of the errors is learned on a grid.

A synthetic pool of ``--rows`` rows and ``--classes`` classes (Dirichlet scores,
30 % of the labels flipped at random) and a dense cost matrix of distinct values
(uniform on [0, 10]); prints the time of the first fit with ``--labels`` labels
(the prior's split computed once), of a refit after 10 more labels and of the
95 % interval (4,000 draws)::

    OMP_NUM_THREADS=1 python benchmarks/bench_error_split.py --classes 100
"""

import argparse
import time

import numpy as np
from _results import add_save_argument, saving_printed_tables

from skassess.metrics import BayesianMisclassificationCost


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--labels", type=int, default=500)
    add_save_argument(parser)
    args = parser.parse_args()
    with saving_printed_tables(args.save):
        rng = np.random.default_rng(0)
        K, n = args.classes, args.rows
        scores = rng.dirichlet(np.full(K, 0.3), n)
        target = scores.argmax(axis=1)
        flip = rng.random(n) < 0.3
        target[flip] = rng.integers(0, K, flip.sum())
        cost = rng.uniform(0, 10, (K, K))
        np.fill_diagonal(cost, 0.0)
        rows = rng.choice(n, args.labels + 10, replace=False)
        est = BayesianMisclassificationCost(cost_matrix=cost, random_state=0).fit(scores)
        start = time.perf_counter()
        est.add_labels(scores[rows[:-10]], target[rows[:-10]])
        est.overall_mean()
        first = time.perf_counter() - start
        start = time.perf_counter()
        est.add_labels(scores[rows[-10:]], target[rows[-10:]])
        est.overall_mean()
        refit = time.perf_counter() - start
        start = time.perf_counter()
        lower, upper = est.overall_interval()
        interval = time.perf_counter() - start
        print(
            f"{K} classes, {n:,} rows, {args.labels} labels: first fit {first:.2f} s, "
            f"refit after 10 more labels {refit:.2f} s, interval {interval:.2f} s "
            f"(cost {est.overall_mean():.4f} [{lower:.4f}, {upper:.4f}])"
        )


if __name__ == "__main__":
    main()

"""Time one ActiveAssessor query + tell on a pool of 1 M rows and 1,000 groups.

Usage::

    python benchmarks/bench_active_step.py [--rows 1000000] [--groups 1000] [--steps 1000]
"""

import argparse
import time

import numpy as np
from _results import add_save_argument, saving_printed_tables

from skassess import ActiveAssessor, BayesianAccuracy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    add_save_argument(parser)
    args = parser.parse_args()
    with saving_printed_tables(args.save):
        rng = np.random.default_rng(0)
        p1 = rng.random(args.rows)
        X = np.c_[1 - p1, p1]
        groups = rng.integers(0, args.groups, args.rows)
        y = (rng.random(args.rows) < p1).astype(int)
        for strategy in ("thompson", "random", "top_two", "epsilon_greedy"):
            est = BayesianAccuracy(grouping="external", prior="informative")
            start = time.perf_counter()
            assessor = ActiveAssessor(est, strategy=strategy, random_state=0).fit(
                X, group_by=groups
            )
            fit = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(args.steps):
                idx = assessor.query()
                assessor.tell(idx, y[idx])
            step = (time.perf_counter() - start) / args.steps
            print(f"{strategy:>15}: fit {fit:.2f} s, query + tell {1e3 * step:.3f} ms")


if __name__ == "__main__":
    main()

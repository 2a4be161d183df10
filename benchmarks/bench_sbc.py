"""Simulation-based calibration of HierarchicalBetaCalibrator: rank histograms.

Runs the replicates of ``tests/calibration/test_sbc.py`` (parameters from the
model's prior, data from them, the default emcee fit, the rank of each true
parameter among 19 posterior draws) and prints, per parameter, the counts in
5 rank bins, the chi-square p-value of uniformity and the share of ranks at
either end.

    python benchmarks/bench_sbc.py --reps 500
"""

import argparse
import os
import sys
import time

import numpy as np
from _results import add_save_argument, saving_printed_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "calibration"))

import test_sbc  # noqa: E402  (the replicates live beside their test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument(
        "--first-seed", type=int, default=10_000, help="seeds apart from the test's (0..)"
    )
    add_save_argument(parser)
    args = parser.parse_args()
    with saving_printed_tables(args.save):
        start = time.perf_counter()
        ranks = test_sbc.sbc_ranks(args.reps, args.first_seed)
        counts, p = test_sbc.rank_histograms(ranks)
        print(
            f"{args.reps} replicates, {test_sbc.GROUPS} groups x {test_sbc.ROWS} labeled rows, "
            f"llo map, {time.perf_counter() - start:.0f} s"
        )
        print("| parameter | rank counts (5 bins) | p (uniform) | at an end |")
        print("|---|---|---|---|")
        for j, name in enumerate(test_sbc.NAMES):
            ends = np.mean((ranks[:, j] == 0) | (ranks[:, j] == test_sbc.N_DRAWS))
            print(
                f"| {name} | {' '.join(str(c) for c in counts[:, j])} | {p[j]:.3f} | "
                f"{ends:.3f} (uniform {2 / (test_sbc.N_DRAWS + 1):.3f}) |"
            )


if __name__ == "__main__":
    main()

"""Fuzz the public API with many adversarial calls and print the tally of outcomes.

Runs the property tests of ``tests/test_fuzz.py`` with more examples per target
(each example makes several calls) and prints, per target, the calls sorted
into outcomes: finite, clean error (ValueError/TypeError naming an argument),
not fitted, and the defects -- crash, nan/inf, unclear message, bad input
accepted, state changed (by a call that failed), valid input refused. Any
defect fails the run.

    python benchmarks/bench_fuzz.py --examples 400

The targets: every metric estimator, the group comparisons, the metric
functions, the samplers and the fairness estimator, the model comparison and
selection, the active tester, the labeling session, the scores file, the
displays and the commands (``assess``, ``plan``, ``label``, ``report``).
"""

import argparse
import os
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=150, help="examples per target")
    args = parser.parse_args()
    env = dict(os.environ, SKASSESS_FUZZ_EXAMPLES=str(args.examples))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.call(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # one process: the tally table counts every target's calls
            "-n",
            "0",
            os.path.join(root, "tests", "test_fuzz.py"),
        ],
        env=env,
        cwd=root,
    )


if __name__ == "__main__":
    sys.exit(main())

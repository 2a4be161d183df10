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
import json
import os
import subprocess
import sys
import tempfile

from _results import Table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=150, help="examples per target")
    parser.add_argument("--save", metavar="NAME", help="save the tally as benchmarks/results/NAME")
    args = parser.parse_args()
    tally = os.path.join(tempfile.mkdtemp(), "tally.json")
    env = dict(os.environ, SKASSESS_FUZZ_EXAMPLES=str(args.examples), SKASSESS_FUZZ_TALLY=tally)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = subprocess.call(
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
    if args.save and os.path.exists(tally):
        with open(tally, encoding="utf-8") as f:
            record = json.load(f)
        outcomes = record["outcomes"]
        table = Table(["target", "calls", *outcomes])
        total = dict.fromkeys(outcomes, 0)
        for target, counts in sorted(record["tally"].items()):
            row = [counts.get(o, 0) for o in outcomes]
            for o, v in zip(outcomes, row, strict=True):
                total[o] += v
            table.add([target, sum(row), *row])
        table.add(["all", sum(total.values()), *total.values()])
        table.save(
            args.save,
            caption=f"{args.examples} examples per target; the calls sorted by outcome. "
            "The last six columns count defects.",
        )
    return code


if __name__ == "__main__":
    sys.exit(main())

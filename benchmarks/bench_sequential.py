"""Optional stopping: does an interval read after every batch of labels keep its level?

Labels arrive in a uniformly random order, ``--step`` at a time. After each
batch the calibrated prior is refitted and labeling stops once its 95 %
overall interval is at most ``--width`` wide (a width stop rule on the
overall interval; ``skassess label --stop-width`` reads the widest group's),
or at ``--max-labels``. At that point we record whether

* the calibrated prior's credible interval holds the pool's accuracy, and
* the anytime-valid confidence sequence
  (:func:`skassess.metrics.anytime_accuracy_interval`) holds it at *every*
  step up to then,

beside the number of labels used and the widths. Its promise: each covers in
at least 95 % of runs (the credible interval has no such guarantee under
optional stopping; this measures how far it keeps it).

    OMP_NUM_THREADS=1 python benchmarks/bench_sequential.py --runs 100
"""

import argparse
import warnings

import numpy as np
from _results import add_save_argument, saving_printed_tables
from bench_headline import pools

from skassess import BayesianAccuracy
from skassess.metrics import anytime_accuracy_interval

WIDTHS = {"fashion-mnist": 0.06, "svhn": 0.03, "over-100": 0.12, "adult-mlp": 0.08}


def one_run(X, target, width, step, max_labels, rng, seed):
    order = rng.permutation(len(target))[:max_labels]
    truth = float(np.mean(X.argmax(axis=1) == target))
    for n in range(step, max_labels + 1, step):
        y = np.full(len(target), -1)
        y[order[:n]] = target[order[:n]]
        lo, hi = BayesianAccuracy(random_state=seed).fit(X, y).overall_interval()
        if hi - lo <= width:
            break
    a_lo, a_hi = anytime_accuracy_interval(X, order[:n], target[order[:n]], refit_every=step * 5)
    return {
        "n": n,
        "credible": lo <= truth <= hi,
        "credible_width": hi - lo,
        "anytime": bool(np.all((a_lo <= truth) & (truth <= a_hi))),
        "anytime_width": a_hi[-1] - a_lo[-1],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=list(WIDTHS))
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--max-labels", type=int, default=1000)
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        print(
            "Stopping once the 95 % overall interval is at most the target width: labels at "
            "the stop (mean), coverage of the credible interval there, and of the anytime "
            "interval at every step up to there"
        )
        print(
            "| pool | target width | runs | labels | credible coverage | anytime coverage "
            "| anytime width |\n|---|---:|---:|---:|---:|---:|---:|"
        )
        for name in args.pools:
            X, target, _ = pools([name], 0)[name]
            rng = np.random.default_rng(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = [
                    one_run(X, target, WIDTHS[name], args.step, args.max_labels, rng, r)
                    for r in range(args.runs)
                ]
            n = np.mean([r["n"] for r in res])
            cred = np.mean([r["credible"] for r in res])
            anyt = np.mean([r["anytime"] for r in res])
            aw = np.mean([r["anytime_width"] for r in res])
            print(
                f"| {name} | {WIDTHS[name]} | {args.runs} | {n:.0f} | {cred:.3f} | "
                f"{anyt:.3f} | {aw:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

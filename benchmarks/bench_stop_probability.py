"""Optional stopping with ``--stop-probability``: is the answer wrong as rarely as promised?

``skassess label --task least_accurate --stop-probability P`` stops once the most
probable least-accurate group has posterior probability at least ``P``; its
promise is that the answer it stops on is wrong in at most ``1 - P`` of runs.
This replays it: ``ActiveAssessor`` with the command's estimator for accuracy
tasks (``BayesianAccuracy()``, the calibrated prior) and its default strategy
(Thompson sampling), labels 10 at a time from the pool's true labels, the stop
rule checked after each batch exactly as the command checks it
(:func:`skassess.session.stop_rule` on :func:`skassess.session.task_answer`),
or ``--max-labels`` (one run serves every ``P``: where each first fires).
Prints, per pool and ``P``: runs, the share that stopped, labels at the stop
(mean), and the error rate of the answer among the runs that stopped, with
its binomial standard error.

    OMP_NUM_THREADS=1 python benchmarks/bench_stop_probability.py --runs 40
"""

import argparse
import warnings

import numpy as np
from bench_headline import pools

from skassess import BayesianAccuracy
from skassess.samplers import ActiveAssessor
from skassess.session import stop_rule, task_answer


def one_run(scores, target, probabilities, max_labels, seed, prior="auto"):
    """Labels at which each stop probability first fires, and the answer then (or None)."""
    assessor = ActiveAssessor(BayesianAccuracy(prior=prior, random_state=seed),
                              task="least_accurate", random_state=seed).fit(scores)
    out = {}
    while assessor.n_labeled_ < max_labels and len(out) < len(probabilities):
        rows = assessor.query(10)
        assessor.tell(rows, target[rows])
        answer = task_answer(assessor)
        for p in probabilities:
            if p not in out and stop_rule(answer, p, None) == "probability":
                out[p] = (assessor.n_labeled_,
                          assessor.identification_probabilities().idxmax())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["fashion-mnist", "classwise-20"])
    ap.add_argument("--probabilities", type=float, nargs="+", default=[0.9, 0.95])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--max-labels", type=int, default=1500)
    ap.add_argument("--prior", default="auto",
                    help="BayesianAccuracy's prior (the command's: auto, the calibrated one)")
    args = ap.parse_args()
    print("pool            P      runs  stopped  labels  error rate (se)   truth")
    for name, (scores, target, _) in pools(args.pools, 0).items():
        pred = scores.argmax(axis=1)
        acc = np.array([np.mean(target[pred == k] == k) for k in range(scores.shape[1])])
        worst = int(np.argmin(acc))
        results = []
        for r in range(args.runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(one_run(scores, target, args.probabilities, args.max_labels, r,
                                       args.prior))
        for p in args.probabilities:
            hits = [res[p] for res in results if p in res]
            stopped, labels = len(hits), [n for n, _ in hits]
            wrong = sum(int(chosen != worst) for _, chosen in hits)
            rate = wrong / stopped if stopped else float("nan")
            se = np.sqrt(rate * (1 - rate) / stopped) if stopped else float("nan")
            print(f"{name:<15} {p:<6} {args.runs:>4}  {stopped:>7}  "
                  f"{np.mean(labels) if labels else float('nan'):>6.0f}  "
                  f"{rate:>6.3f} ({se:.3f})    class {worst} ({acc[worst]:.3f}; next "
                  f"{np.sort(acc)[1]:.3f})", flush=True)


if __name__ == "__main__":
    main()

"""How much of the scores can a fairness estimate use and never be worse than the labels alone?

On the stress suite's files (``bench_fairness_stress.py``: a large group
``A``, a small group ``B`` whose scores are calibrated differently or not at
all), the estimate of Delta accuracy (A - B) that blends the default's
posterior median with the Beta-binomial's (BB, each group's labels alone) at
a fixed share ``w`` of the default: ``w x calibrated + (1 - w) x BB``. Per
cell and share, the mean paired excess of its absolute error over BB's
(same file, same labels) x 100, with its standard error. A share whose
excess is above one standard error in some cell is worse than the labels
alone there: the files are built so that the small group's few labels
cannot show whether its scores hold.

    OMP_NUM_THREADS=1 python benchmarks/bench_fairness_blend.py --runs 100 --save fairness-blend
"""

import argparse
import itertools
import warnings

import numpy as np
from _results import Table
from bench_fairness_stress import KINDS, labeled_rows, make_file

from skassess.calibration import BayesianGroupMetrics

SHARES = (0.25, 0.5, 0.75, 1.0)


def medians(s, y_obs, group, run):
    out = {}
    for method in ("calibrated", "beta_binomial"):
        est = BayesianGroupMetrics(method, metrics=("accuracy",), privileged="A", random_state=run)
        out[method] = est.fit(s, y_obs, sensitive_features=group).differences().iloc[0]["median"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=["moderate", "strong"])
    ap.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = ap.parse_args()
    table = Table(["kind", "n", "B share", "n_L", *(f"w = {w:g}" for w in SHARES)])
    warnings.simplefilter("ignore")
    for kind, n, share, n_labeled in itertools.product(
        args.kinds, (200, 1000), (0.1, 0.3), (10, 40)
    ):
        s, y, group = make_file(kind, n, share, seed=[n, int(100 * share), KINDS.index(kind)])
        right = (s > 0.5) == y
        truth = right[group == "A"].mean() - right[group == "B"].mean()
        errors = []
        for run in range(args.runs):
            rng = np.random.default_rng([run, n, n_labeled])
            y_obs = np.full(n, -1)
            rows = labeled_rows(group, n_labeled, rng)
            y_obs[rows] = y[rows]
            m = medians(s, y_obs, group, run)
            errors.append(
                [abs(w * m["calibrated"] + (1 - w) * m["beta_binomial"] - truth) for w in SHARES]
                + [abs(m["beta_binomial"] - truth)]
            )
        errors = 100 * np.array(errors)
        excess = errors[:, :-1] - errors[:, -1:]
        se = excess.std(axis=0, ddof=1) / np.sqrt(len(excess))
        table.add(
            [kind, n, share, n_labeled]
            + [f"{e:+.1f} ({s_:.1f})" for e, s_ in zip(excess.mean(axis=0), se, strict=True)]
        )
    table.save(
        args.save,
        caption=f"{args.runs} runs per cell; mean excess of |error| x 100 over BB's (its SE), "
        "Delta accuracy A - B, the blend w x calibrated + (1 - w) x BB.",
    )


if __name__ == "__main__":
    main()

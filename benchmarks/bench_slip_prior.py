"""One annotator and no repeats: how far the slip rate's prior carries the accuracy interval.

With one annotator who labels each item once, nothing in the labels tells a
slip from a model error: the slip rate is not identified, and the noise
model's interval of the accuracy rests on the prior of the annotator's
accuracy (with ``slip_evidence="all"``, also on the one thing the labels say
under the one-coin model: a group of items whose labels agree with the black
box 90 % of the time caps the slip rate near 10 %). 2,000 items of a pool
are labeled at random by one annotator who slips (uniform slips) at a
fixed rate, or at a rate drawn for each run from the default prior of an
annotator's accuracy (95 % in [0.85, 0.999]): the coverage averaged over
the prior, the one a Bayesian interval promises, with the Wilson interval of
each coverage and, over several pools, their pooled runs.

The estimates of the pool's accuracy, each ``BayesianAccuracy()``:

* ``default``: the noise model with the default prior and
  ``slip_evidence="bounds"``: the slip rate drawn at either end of the range
  the labels allow;
* ``prior kept``: the same with ``slip_evidence="repeats"`` (the slip rate
  keeps its prior: no item is repeated);
* ``all labels``: the same with ``slip_evidence="all"``;
* ``prior ±4 points``: the noise model with a prior whose central 95 % is the
  annotator's true accuracy ±4 points (what a team that has measured its
  annotator knows);
* ``oracle``: the noise model told the true slip rate;
* ``identified set``: the bound of an honest interval that assumes nothing
  beyond the prior's range, the union of the oracle's intervals over every slip
  rate in the default prior's central 95 % that the labels do not reject
  (likelihood ratio at 5 %). It holds the truth whenever the slip rate is in
  that range; its width is what no prior-free interval can avoid.

Usage::

    python benchmarks/bench_slip_prior.py --save slip-prior
    python benchmarks/bench_slip_prior.py --slip prior --runs 100 --save slip-prior-averaged
"""

import argparse
import time

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table, add_save_argument
from bench_label_noise import SVHN, annotate, confusable_class, load
from joblib import Parallel, delayed
from scipy import stats

from skassess import BayesianAccuracy
from skassess.metrics._annotators import OneCoinAnnotators, beta_from_interval
from skassess.metrics._noisy_labels import DEFAULT_ANNOTATOR_PRIOR

SLIPS = ("0.0", "0.02", "0.05", "0.1", "prior")
#: Slip rates on which the labels' likelihood is read for the identified set.
GRID = 200
#: Half-width of the informed prior's central 95 % (accuracy points).
INFORMED = 0.04


def prior_range():
    """The default prior's central 95 % of the slip rate, and its Beta."""
    a, b = beta_from_interval(*DEFAULT_ANNOTATOR_PRIOR)
    return (1.0 - stats.beta.ppf(0.975, a, b), 1.0 - stats.beta.ppf(0.025, a, b)), (a, b)


def not_rejected(pred, labels, n_classes, grid):
    """The slip rates of ``grid`` the labels do not reject (likelihood ratio, 5 %)."""
    model = OneCoinAnnotators(
        pred, pred, labels[:, None], n_classes, [1.0], np.random.default_rng(0)
    )
    log_ev = model.log_evidence(grid[:, None])
    keep = log_ev >= log_ev.max() - stats.chi2.ppf(0.95, 1) / 2
    return grid[keep]


def one_run(X, y, n_labels, slip, confusable, seed):
    rng = np.random.default_rng(seed)
    (low, high), (a, b) = prior_range()
    eps = 1.0 - rng.beta(a, b) if slip == "prior" else float(slip)
    pred = X.argmax(1)
    K = X.shape[1]
    truth = float(np.mean(pred == y))
    items = rng.choice(y.size, n_labels, replace=False)
    given = annotate(y[items], eps, "uniform", confusable, rng)
    labels = np.full((y.size, 1), -1)
    labels[items, 0] = given
    frame = pd.DataFrame(labels, columns=["a0"])

    def noisy(prior, evidence="bounds"):
        return BayesianAccuracy(
            annotator_prior=prior,
            label_noise="one_coin",
            slip_evidence=evidence,
            random_state=seed,
        ).fit(X, frame)

    acc = 1.0 - eps
    informed = (max(acc - INFORMED, 0.5), min(acc + INFORMED, 0.999))
    if informed[1] <= informed[0] + 1e-3:
        informed = (informed[1] - 2 * INFORMED, informed[1])
    out = {}
    fits = {
        "default": lambda: noisy(DEFAULT_ANNOTATOR_PRIOR),
        "prior kept": lambda: noisy(DEFAULT_ANNOTATOR_PRIOR, "repeats"),
        "all labels": lambda: noisy(DEFAULT_ANNOTATOR_PRIOR, "all"),
        "prior ±4 points": lambda: noisy(informed),
        "oracle": lambda: noisy(max(acc, 1e-6)),
    }
    for method, fit in fits.items():
        start = time.process_time()
        lo, hi = fit().overall_interval(0.95)
        out[method] = (lo <= truth <= hi, hi - lo, time.process_time() - start)
    start = time.process_time()
    kept = not_rejected(pred[items], given, K, np.linspace(low, high, GRID))
    ends = [noisy(1.0 - e).overall_interval(0.95) for e in (kept.min(), kept.max())]
    lo, hi = min(e[0] for e in ends), max(e[1] for e in ends)
    out["identified set"] = (lo <= truth <= hi, hi - lo, time.process_time() - start)
    return eps, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", action="append", choices=["fashion-mnist", "svhn", "synthetic-100"])
    ap.add_argument("--labels", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--slip", action="append", choices=SLIPS, help="slip rates (default all)")
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    pools = args.pool or ["fashion-mnist", "svhn", "synthetic-100"]
    columns = [
        "pool",
        "slip rate",
        "method",
        "coverage 95 %",
        "coverage's 95 % interval",
        "width (points)",
        "width ÷ oracle's",
        "CPU s",
    ]
    table = Table(
        columns,
        formats={
            "coverage 95 %": ".2f",
            "width (points)": ".2f",
            "width ÷ oracle's": ".2f",
            "CPU s": ".2f",
        },
    )
    pooled = {}

    def add(pool, label, res):
        oracle = np.array([r[1]["oracle"][1] for r in res])
        for method in res[0][1]:
            v = np.array([r[1][method] for r in res], dtype=float)
            covered = int(v[:, 0].sum())
            ci = stats.binomtest(covered, len(v)).proportion_ci(method="wilson")
            table.add(
                [
                    pool,
                    label,
                    method,
                    v[:, 0].mean(),
                    f"[{ci.low:.2f}, {ci.high:.2f}]",
                    100 * np.median(v[:, 1]),
                    np.median(v[:, 1] / oracle),
                    np.median(v[:, 2]),
                ]
            )

    for pool in pools:
        if pool == "svhn" and not SVHN.exists():
            print(f"skipping svhn: {SVHN} is absent")
            continue
        X, y = load(pool)
        confusable = confusable_class(X, y)
        for slip in args.slip or SLIPS:
            res = Parallel(n_jobs=args.n_jobs)(
                delayed(one_run)(X, y, args.labels, slip, confusable, seed)
                for seed in range(args.runs)
            )
            label = "from the prior" if slip == "prior" else float(slip)
            add(pool, label, res)
            pooled.setdefault(label, []).extend(res)
    if len(pools) > 1:
        for label, res in pooled.items():
            add("all pools", label, res)
    table.save(
        args.save,
        caption=f"One annotator, no repeats: {args.labels} items labeled at random, "
        f"{args.runs} runs a cell",
    )


if __name__ == "__main__":
    main()

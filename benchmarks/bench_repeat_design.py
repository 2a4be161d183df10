"""Which item to label twice: the repeat design against random repeats and new items.

Two annotators slip at 2.5 % and 7.5 % (any other class alike). ``--start``
items of the pool are labeled once each, by one of them at random. Then
``--step`` labels at a time are added, up to ``--extra``, three ways:

* ``repeat design``: a second label, from the other annotator, on the labeled
  items of largest ``repeat_utilities()`` (the posterior doubt on whether the
  black box is right there), refitted after each step;
* ``random repeats``: a second label on labeled items drawn at random;
* ``new items``: new items labeled once (no repeats);
* ``repeat design, slip rates known``: the repeat design's labels at each
  step, fitted by the noise model told the annotators' true slip rates (what
  the width would be if the repeats had pinned them).

Each is ``BayesianAccuracy()`` with the annotators named (the one-coin noise
model). Prints, after each step, the median width of the 95 % interval of the
overall accuracy and its coverage, over ``--runs`` runs, and the labels each
way needs to reach the width that random repeats reach at the end.

Usage::

    python benchmarks/bench_repeat_design.py --save repeat-design
"""

import argparse

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table, add_save_argument
from bench_label_noise import annotate, load
from joblib import Parallel, delayed

from skassess import BayesianAccuracy

SLIPS = (0.025, 0.075)
METHODS = ("repeat design", "random repeats", "new items")
#: The repeat design's labels, fitted by the noise model told the true slip rates.
KNOWN = "repeat design, slip rates known"
SERIES = (METHODS[0], KNOWN, *METHODS[1:])


def one_run(X, y, start, step, extra, seed):
    rng = np.random.default_rng(seed)
    K = X.shape[1]
    confusable = np.arange(K)  # unused by uniform slips
    truth = float(np.mean(X.argmax(1) == y))
    order = rng.permutation(y.size)
    first = order[:start]
    who = rng.integers(0, 2, y.size)
    base = np.full((y.size, 2), -1)
    for a in range(2):
        rows = first[who[first] == a]
        base[rows, a] = annotate(y[rows], SLIPS[a], "uniform", confusable, rng)
    out = {}
    for method in METHODS:
        labels = base.copy()
        fresh = iter(order[start:])
        spent, curve, known = 0, [], []
        est = fit(X, labels, seed)
        curve.append(measure(est, truth))
        if method == "repeat design":
            known.append(measure(fit(X, labels, seed, slips=SLIPS), truth))
        while spent < extra:
            if method == "new items":
                rows = np.array([next(fresh) for _ in range(step)])
                cols = who[rows]
            else:
                once = np.flatnonzero((labels >= 0).sum(1) == 1)
                if method == "repeat design":
                    doubt = est.repeat_utilities()
                    doubt = doubt[doubt.index.isin(once)]
                    rows = doubt.index.to_numpy()[:step]
                else:
                    rows = rng.choice(once, step, replace=False)
                cols = 1 - (labels[rows, 1] >= 0).astype(int)  # the other annotator
            for a in range(2):
                r = rows[cols == a]
                labels[r, a] = annotate(y[r], SLIPS[a], "uniform", confusable, rng)
            spent += step
            est = fit(X, labels, seed)
            curve.append(measure(est, truth))
            if method == "repeat design":
                known.append(measure(fit(X, labels, seed, slips=SLIPS), truth))
        out[method] = curve
        if known:
            out[KNOWN] = known
    return out


def fit(X, labels, seed, slips=None):
    """``BayesianAccuracy()`` with the annotators named, or told their slip rates."""
    est = BayesianAccuracy(random_state=seed)
    if slips is not None:
        est.set_params(annotator_prior={"a": 1 - slips[0], "b": 1 - slips[1]})
    return est.fit(X, pd.DataFrame(labels, columns=["a", "b"]))


def measure(est, truth):
    lo, hi = est.overall_interval(0.95)
    return hi - lo, lo <= truth <= hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="fashion-mnist", choices=["fashion-mnist", "svhn"])
    ap.add_argument("--start", type=int, default=1000)
    ap.add_argument("--step", type=int, default=100)
    ap.add_argument("--extra", type=int, default=600)
    ap.add_argument("--runs", type=int, default=20)
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    X, y = load(args.pool)
    res = Parallel(n_jobs=args.n_jobs)(
        delayed(one_run)(X, y, args.start, args.step, args.extra, seed) for seed in range(args.runs)
    )
    table = Table(
        ["labels", *[f"{m}: width" for m in SERIES], *[f"{m}: coverage" for m in SERIES]],
        formats={c: ".2f" for m in SERIES for c in (f"{m}: width", f"{m}: coverage")},
    )
    widths = {m: np.array([[w for w, _ in r[m]] for r in res]) for m in SERIES}
    covers = {m: np.array([[c for _, c in r[m]] for r in res], dtype=float) for m in SERIES}
    budgets = args.start + args.step * np.arange(widths[METHODS[0]].shape[1])
    for j, n in enumerate(budgets):
        table.add(
            [
                int(n),
                *[100 * np.median(widths[m][:, j]) for m in SERIES],
                *[covers[m][:, j].mean() for m in SERIES],
            ]
        )
    table.save(
        args.save and f"{args.save}-1",
        caption=f"{args.pool}: median width (points) and coverage of the 95 % interval, "
        f"{args.runs} runs; two annotators slipping {SLIPS[0]:.1%} and {SLIPS[1]:.1%}",
    )
    target = np.median(widths["random repeats"][:, -1])
    needed = Table(["method", "labels to reach the width of random repeats at the end"])
    for m in SERIES:
        med = np.median(widths[m], axis=0)
        hit = np.flatnonzero(med <= target + 1e-12)
        needed.add([m, int(budgets[hit[0]]) if hit.size else f"more than {int(budgets[-1])}"])
    needed.save(
        args.save and f"{args.save}-2",
        caption=f"Labels needed for a median width of {100 * target:.2f} points",
    )


if __name__ == "__main__":
    main()

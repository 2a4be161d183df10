"""The least accurate group: the departure check, its flag and the interval that holds.

Pools of 100 predicted classes (~100 rows each, the synthetic model of
``bench_prior_coverage.py``: ``sigmoid(0.6 logit(c) - 0.3 + delta_class)``,
``delta ~ N(0, sd^2)``) in which ``--far`` classes are set ``--spreads``
standard deviations below the map: the least accurate class is one of them.
Each run labels ``N`` random rows (N/K = 2, 5, 10) and fits
``BayesianAccuracy()`` (the departure check on, its default) beside the same
model without it (``departure_threshold=None``). Reported per budget:

* the share of runs that flag the least accurate class, and the coverage of
  its 95 % interval when flagged, when not, and over all runs, with and
  without the check (the labels-alone interval's beside);
* the mean coverage over classes and how many classes are flagged (false
  flags are classes within the spread);
* the mean per-class RMSE (the check changes the intervals, not the means)
  and the mean width, with over without the check;
* the coverage of :func:`~skassess.metrics.worst_group`'s intervals: the
  minimum over classes of the pool's least class accuracy, the class ranked
  last of its own accuracy.

    OMP_NUM_THREADS=1 python benchmarks/bench_worst_group.py --pools 5 --runs 20
"""

import argparse
import time

import numpy as np
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table
from joblib import Parallel, delayed
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.metrics import worst_group


def far_pool(seed, sd=0.8, far=1, spreads=3.0, n_classes=100, rows=100):
    """Scores and labels of a pool whose ``far`` classes sit ``spreads`` sd below the map."""
    rng = np.random.default_rng(seed)
    size = rng.integers(int(0.78 * rows), int(1.31 * rows) + 1, n_classes)
    pred = np.repeat(np.arange(n_classes), size)
    conf = np.clip(rng.beta(6.0, 1.2, len(pred)), 1.5 / n_classes, 1 - 1e-6)
    delta = rng.normal(0.0, sd, n_classes)
    delta[rng.choice(n_classes, far, replace=False)] = -spreads * sd
    right = rng.random(len(pred)) < expit(0.6 * logit(conf) - 0.3 + delta[pred])
    scores = np.repeat(((1 - conf) / (n_classes - 1))[:, None], n_classes, axis=1)
    scores[np.arange(len(pred)), pred] = conf
    other = (pred + rng.integers(1, n_classes, len(pred))) % n_classes
    return scores, np.where(right, pred, other)


def one_run(X, y, budget, seed):
    pred = X.argmax(axis=1)
    K = X.shape[1]
    size = np.bincount(pred, minlength=K)
    truth = np.bincount(pred, weights=pred == y, minlength=K) / np.maximum(size, 1)
    weight = size / size.sum()
    worst = int(np.argmin(np.where(size > 0, truth, np.inf)))
    rows = np.random.default_rng(seed).choice(len(y), budget, replace=False)
    labels = np.full(len(y), -1)
    labels[rows] = y[rows]
    out = {}
    for name, threshold in (("check", 0.05), ("none", None)):
        est = BayesianAccuracy(departure_threshold=threshold, random_state=seed)
        table = est.fit(X, labels).summary()
        lo, hi = table["lower"].to_numpy(), table["upper"].to_numpy()
        cover = (lo <= truth) & (truth <= hi)
        out[name] = {
            "worst": bool(cover[worst]),
            "mean_cover": float(cover[size > 0].mean()),
            "rmse": float(np.sqrt(((table["mean"].to_numpy() - truth) ** 2) @ weight)),
            "width": float((hi - lo)[size > 0].mean()),
        }
        if threshold is not None:
            worst_table = worst_group(est, random_state=seed)
            low = worst_table.loc["minimum over groups"]
            out["minimum"] = bool(low["lower"] <= truth[size > 0].min() <= low["upper"])
            last = worst_table.loc["ranked last"]
            t = truth[est.groups_.get_loc(last["group"])]
            out["ranked_last"] = bool(last["lower"] <= t <= last["upper"])
            flagged = table["flagged"].to_numpy()
            out["flagged_worst"] = bool(flagged[worst])
            out["flags"] = int(flagged.sum())
            llo, lhi = table["labels_lower"].to_numpy(), table["labels_upper"].to_numpy()
            out["labels_worst"] = bool(llo[worst] <= truth[worst] <= lhi[worst])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=5, help="pools drawn (seeds 0, 1, ...)")
    ap.add_argument("--runs", type=int, default=20, help="label draws per pool and budget")
    ap.add_argument("--ratios", type=int, nargs="+", default=[2, 5, 10], help="N / K")
    ap.add_argument("--far", type=int, default=1, help="classes set far below the map")
    ap.add_argument("--spreads", type=float, default=3.0)
    add_parallel_arguments(ap, n_jobs=1)
    ap.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = ap.parse_args()
    use_parallel_backend(args)
    table = Table(
        [
            "N/K",
            "runs",
            "least accurate flagged",
            "its coverage: flagged",
            "not flagged",
            "all runs",
            "without the check",
            "labels alone",
            "class coverage: mean",
            "without the check ",
            "flags per run",
            "RMSE ratio",
            "width ratio",
            "minimum over classes: coverage",
            "class ranked last: coverage",
        ],
        formats={
            **dict.fromkeys(
                [
                    "least accurate flagged",
                    "its coverage: flagged",
                    "not flagged",
                    "all runs",
                    "without the check",
                    "labels alone",
                    "class coverage: mean",
                    "without the check ",
                ],
                ".3f",
            ),
            "flags per run": ".2f",
            "RMSE ratio": ".3f",
            "width ratio": ".3f",
            "minimum over classes: coverage": ".3f",
            "class ranked last: coverage": ".3f",
        },
    )
    pools = [far_pool(seed, far=args.far, spreads=args.spreads) for seed in range(args.pools)]
    for ratio in args.ratios:
        start = time.perf_counter()
        tasks = [
            delayed(one_run)(X, y, ratio * X.shape[1], 1000 * p + r)
            for p, (X, y) in enumerate(pools)
            for r in range(args.runs)
        ]
        res = Parallel(n_jobs=args.n_jobs)(tasks)
        flagged = np.array([r["flagged_worst"] for r in res])
        worst = np.array([r["check"]["worst"] for r in res])

        def share(mask, values=worst):
            return float(values[mask].mean()) if mask.any() else None

        table.add(
            [
                ratio,
                len(res),
                flagged.mean(),
                share(flagged),
                share(~flagged),
                worst.mean(),
                np.mean([r["none"]["worst"] for r in res]),
                np.mean([r["labels_worst"] for r in res]),
                np.mean([r["check"]["mean_cover"] for r in res]),
                np.mean([r["none"]["mean_cover"] for r in res]),
                np.mean([r["flags"] for r in res]),
                np.mean([r["check"]["rmse"] for r in res])
                / np.mean([r["none"]["rmse"] for r in res]),
                np.mean([r["check"]["width"] for r in res])
                / np.mean([r["none"]["width"] for r in res]),
                np.mean([r["minimum"] for r in res]),
                np.mean([r["ranked_last"] for r in res]),
            ],
            note=f"[{time.perf_counter() - start:.0f} s]",
        )
    table.save(
        args.save,
        caption=f"{args.pools} pools, {args.runs} label draws each per budget; "
        f"{args.far} class(es) {args.spreads:g} spreads below the map.",
    )


if __name__ == "__main__":
    main()

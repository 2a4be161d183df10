"""Coverage of the confusion-matrix cell intervals that ``BayesianConfusionMatrix`` prints.

Usage::

    python benchmarks/bench_confusion_coverage.py --runs 1000 --n-jobs 2
    python benchmarks/bench_confusion_coverage.py --runs 1000 --priors hierarchical

For every pool and prior (uniform, informative, hierarchical, calibrated; N0 = 2), N rows
labeled at random: the share of the cells ``theta_kj = P(y = j | pred = k)``
whose 95 % interval in :meth:`BayesianConfusionMatrix.summary` holds the
pool's own share of true class ``j`` among the rows predicted ``k``. The
estimand is a count of rows, so the interval is read on the pool's grid: a
cell is covered when ``round(lower N_k) <= count <= round(upper N_k)``
(``N_k``: rows predicted ``k``). Without this, an empty cell (no row of class
``j`` predicted ``k``, most off-diagonal cells) could never be covered: an
equal-tailed interval of a Dirichlet cell never reaches 0 exactly. Reported:
coverage over all cells, over the diagonal (each predicted class's accuracy)
and over the non-empty off-diagonal cells, mean over runs (standard error
over runs in brackets). Pools: SVHN (``../shared/data``), the bundled
Fashion-MNIST scores and the synthetic 100-class pool of
``bench_prior_coverage.py``.
"""

import argparse
import time

import numpy as np
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table
from bench_prior_coverage import load
from joblib import Parallel, delayed

from skassess.metrics import BayesianConfusionMatrix


def _run(X, y, budget, prior, seeds):
    pred = X.argmax(1)
    K = X.shape[1]
    n_k = np.bincount(pred, minlength=K)
    truth = np.zeros((K, K))
    np.add.at(truth, (pred, y), 1)
    diagonal = np.eye(K, dtype=bool)
    off = ~diagonal & (truth > 0)
    out = []
    for seed in seeds:
        rows = np.random.default_rng(seed).choice(len(y), budget, replace=False)
        labels = np.full(len(y), -1)
        labels[rows] = y[rows]
        summary = BayesianConfusionMatrix(prior=prior).fit(X, labels).summary()
        lower = np.round(summary["lower"].to_numpy().reshape(K, K) * n_k[:, None])
        upper = np.round(summary["upper"].to_numpy().reshape(K, K) * n_k[:, None])
        covered = (lower <= truth) & (truth <= upper)
        out.append([covered.mean(), covered[diagonal].mean(), covered[off].mean()])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dataset", choices=["svhn", "fashion-mnist", "synthetic"], action="append"
    )
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--budgets", type=int, nargs="+", default=[20, 50, 100, 200, 1000])
    parser.add_argument("--seed", type=int, default=0)
    add_parallel_arguments(parser, n_jobs=2, backend="multiprocessing")
    parser.add_argument(
        "--priors",
        nargs="+",
        default=["uniform", "informative"],
        choices=["uniform", "informative", "hierarchical", "calibrated"],
    )
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    use_parallel_backend(args)
    print(
        f"{args.runs} runs a cell; coverage % of the 95 % cell intervals: all cells, the "
        "diagonal, the non-empty off-diagonal cells; SE: the largest of the three"
    )
    table = Table(
        ["pool", "prior", "N", "all cells", "diagonal", "off-diagonal", "SE"],
        formats={c: ".1f" for c in ("all cells", "diagonal", "off-diagonal", "SE")},
    )
    for name in args.dataset or ["svhn", "fashion-mnist", "synthetic"]:
        X, y = load(name, args.seed)
        for prior in args.priors:
            for budget in args.budgets:
                start = time.perf_counter()
                seeds = np.random.SeedSequence([args.seed, budget]).generate_state(args.runs)
                chunks = np.array_split(seeds, 4 * args.n_jobs)
                res = Parallel(n_jobs=args.n_jobs)(
                    delayed(_run)(X, y, budget, prior, chunk) for chunk in chunks
                )
                res = 100 * np.concatenate([np.array(r) for r in res])
                mean, se = res.mean(axis=0), res.std(axis=0) / np.sqrt(len(res))
                table.add(
                    [name, prior, budget, *mean, se.max()],
                    note=f"[{time.perf_counter() - start:.0f} s]",
                )
        table.save(
            args.save,
            caption=f"{args.runs} runs a cell; coverage % of the 95 % intervals (SE: the "
            "largest standard error of the three).",
        )


if __name__ == "__main__":
    main()

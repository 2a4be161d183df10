"""Coverage of the per-group accuracy intervals under each prior, beside their RMSE.

Usage::

    python benchmarks/bench_prior_coverage.py --runs 1000
    python benchmarks/bench_prior_coverage.py --dataset synthetic --runs 1000 --seed 3
    python benchmarks/bench_prior_coverage.py --dataset synthetic --shift 1.5 --methods CPrior+TS
    python benchmarks/bench_prior_coverage.py --dataset svhn --tau-prior half-normal
    python benchmarks/bench_prior_coverage.py --methods HPrior HPrior+TS --n-jobs 2
    python benchmarks/bench_prior_coverage.py --runs 100 --save per-group

For every pool and method, at N = 20, 50 and 100 labels (and 200 on the
synthetic 100-group pool): the share of groups whose 95 % interval holds the
group's accuracy on the pool (averaged over runs and groups; the standard
error over runs in brackets) and RMSE x 100 of the posterior means. Methods
(``METHODS``): the paper's informative prior with random labels and Thompson
sampling (``IPrior``, ``IPrior+TS``; run by ``simulate``); ``BayesianAccuracy()``'s
calibrated default (``default``, ``default+TS``) and ``prior="hierarchical"``
(``HPrior``, ``HPrior+TS``), both as ``ActiveAssessor`` query/tell runs refitted
after every label and read from ``summary()``; and ``CalibratedPrior`` as
``simulate``'s prior update (``CPrior``, ``CPrior+TS``). Pools: SVHN (the
paper's ResNet-152 outputs, ``../shared/data``), the bundled Fashion-MNIST
scores, and a synthetic pool of 100 classes x ~100 rows whose calibration
differs by class (a pool the defaults were not chosen on; ``--seed`` draws
another one, ``--shift`` sets how far the classes' calibration differs and
``--groups`` their number). ``--tau-prior`` replaces ``CalibratedPrior``'s
grid of group deviations by the quantiles of another prior on tau.
``--save NAME`` writes the table to ``benchmarks/results/NAME.json``.
"""

import argparse
import pathlib
import time

import numpy as np
from _parallel import add_parallel_arguments, use_parallel_backend
from joblib import Parallel, delayed
from scipy import stats
from scipy.special import expit, logit

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.datasets import load_fashion_mnist_scores, read_predictions
from skassess.samplers import CalibratedPrior, simulate

SVHN = pathlib.Path(__file__).resolve().parents[2] / "shared/data/predictions/svhn_resnet152.txt.gz"


#: Priors on tau, as grids of 15 points of equal prior mass (or, log-uniform,
#: 10 points evenly spaced in log tau): the default is uniform on [0, 3].
TAU_PRIORS = {
    "uniform": None,
    "half-normal": tuple(stats.halfnorm(scale=1.5).ppf((np.arange(15) + 0.5) / 15)),
    "half-cauchy": tuple(
        stats.halfcauchy().ppf((np.arange(15) + 0.5) / 15 * stats.halfcauchy().cdf(3.0))
    ),
    "log-uniform": tuple(np.geomspace(0.05, 3.0, 10)),
}


#: Each method's label strategy and prior: the paper's informative prior (run by
#: ``simulate``), the calibrated default and the hierarchical prior (ActiveAssessor
#: query/tell runs, refitted after every label), and CalibratedPrior as ``simulate``'s
#: prior update.
METHODS = {
    "IPrior": ("random", None),
    "IPrior+TS": ("thompson", None),
    "default": ("random", "calibrated"),
    "default+TS": ("thompson", "calibrated"),
    "CPrior": ("random", "calibrated-prior-update"),
    "CPrior+TS": ("thompson", "calibrated-prior-update"),
    "HPrior": ("random", "hierarchical"),
    "HPrior+TS": ("thompson", "hierarchical"),
}


def synthetic_pool(n_classes=100, rows=100, seed=0, shift=0.8):
    """Top-1 confidences of an overconfident model whose calibration differs by class.

    Each row's predicted class is its group; the confidence is drawn from a
    Beta(6, 1.2); the row is right with probability
    ``sigmoid(0.6 * logit(c) - 0.3 + delta_class)``, ``delta ~ N(0, shift)``;
    the rest of the score mass is spread evenly over the other classes.
    """
    rng = np.random.default_rng(seed)
    size = rng.integers(int(0.78 * rows), int(1.31 * rows) + 1, n_classes)
    pred = np.repeat(np.arange(n_classes), size)
    conf = np.clip(rng.beta(6.0, 1.2, len(pred)), 1.5 / n_classes, 1 - 1e-6)
    delta = rng.normal(0.0, shift, n_classes)
    right = rng.random(len(pred)) < expit(0.6 * logit(conf) - 0.3 + delta[pred])
    scores = np.repeat(((1 - conf) / (n_classes - 1))[:, None], n_classes, axis=1)
    scores[np.arange(len(pred)), pred] = conf
    other = (pred + rng.integers(1, n_classes, len(pred))) % n_classes
    return scores, np.where(right, pred, other)


def load(name, seed, shift=0.8, groups=100):
    if name == "svhn":
        data = read_predictions(SVHN)
        return data.scores, data.target
    if name == "synthetic":
        return synthetic_pool(n_classes=groups, rows=10_000 // groups, seed=seed, shift=shift)
    data = load_fashion_mnist_scores()
    return data.scores, data.target


def assessor_run(X, y, strategy, budgets, seed, prior="hierarchical"):
    """Coverage and RMSE at each budget of one ActiveAssessor query/tell run under ``prior``."""
    pred = X.argmax(axis=1)
    K = X.shape[1]
    size = np.bincount(pred, minlength=K)
    truth = np.bincount(pred, weights=pred == y, minlength=K) / np.maximum(size, 1)
    present, weight = size > 0, size / size.sum()
    assessor = ActiveAssessor(
        BayesianAccuracy(prior=prior), strategy=strategy, random_state=seed
    ).fit(X)
    out = []
    for t in range(1, budgets[-1] + 1):
        rows = assessor.query(1)
        assessor.tell(rows, y[rows])
        if t in budgets:
            table = assessor.summary()
            inside = (table["lower"].to_numpy() <= truth) & (truth <= table["upper"].to_numpy())
            rmse = np.sqrt(((table["mean"].to_numpy() - truth) ** 2) @ weight)
            out.append((inside[present].mean(), rmse))
    return np.array(out)


def assessor_cells(X, y, strategy, budgets, runs, seed, n_jobs, prior):
    res = np.array(
        Parallel(n_jobs=n_jobs)(
            delayed(assessor_run)(X, y, strategy, budgets, seed * 100_003 + run, prior)
            for run in range(runs)
        )
    )
    cover, rmse = res[..., 0], res[..., 1]
    return {
        "coverage": (100 * cover.mean(axis=0), 100 * cover.std(axis=0) / np.sqrt(runs)),
        "rmse": (100 * rmse.mean(axis=0), None),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dataset", choices=["svhn", "fashion-mnist", "synthetic"], action="append"
    )
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    add_parallel_arguments(parser, n_jobs=1)
    parser.add_argument(
        "--shift",
        type=float,
        default=0.8,
        help="standard deviation of the synthetic classes' log-odds shift",
    )
    parser.add_argument("--groups", type=int, default=100, help="synthetic classes")
    parser.add_argument("--tau-prior", choices=list(TAU_PRIORS), default="uniform")
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=["IPrior", "IPrior+TS", "default", "default+TS"],
    )
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    use_parallel_backend(args)
    saved = []
    grid = TAU_PRIORS[args.tau_prior]
    calibrated = {} if grid is None else {"deviations": grid}
    for name in args.dataset or ["svhn", "fashion-mnist", "synthetic"]:
        X, y = load(name, args.seed, args.shift, args.groups)
        budgets = [20, 50, 100] + ([200] if name == "synthetic" else [])
        print(
            f"\n{name}: {len(y)} rows, {X.shape[1]} groups (predicted classes), "
            f"{args.runs} runs; coverage % of the 95 % intervals (SE) / RMSE x 100; prior on "
            f"tau: {args.tau_prior}"
            + (f"; shift {args.shift}, seed {args.seed}" if name == "synthetic" else "")
        )
        print(
            "| method | "
            + " | ".join(f"N={b}" for b in budgets)
            + " |\n|---|"
            + "---|" * len(budgets)
        )
        for label, (strategy, prior) in METHODS.items():
            if label not in args.methods:
                continue
            if prior == "calibrated-prior-update":
                prior = CalibratedPrior(**calibrated)
            start = time.perf_counter()
            cells = {}
            if prior in ("hierarchical", "calibrated"):
                cells = assessor_cells(
                    X, y, strategy, budgets, args.runs, args.seed, args.n_jobs, prior
                )
            for evaluate in () if cells else ("coverage", "rmse"):
                res = simulate(
                    X,
                    y,
                    estimator=BayesianAccuracy(prior="informative"),
                    strategy=strategy,
                    budget=budgets[-1],
                    n_runs=args.runs,
                    log_every=10,
                    prior_update=prior,
                    evaluate=evaluate,
                    n_jobs=args.n_jobs,
                    random_state=args.seed,
                )
                at = [np.flatnonzero(res.n_labels == b)[0] for b in budgets]
                cells[evaluate] = (
                    100 * res.mean[at],
                    100 * res.by_run[:, at].std(axis=0) / np.sqrt(args.runs),
                )
            row = [
                f"{c:.1f} ({se:.1f}) / {r:.2f}"
                for c, se, r in zip(*cells["coverage"], cells["rmse"][0], strict=True)
            ]
            print(
                f"| {label} | " + " | ".join(row) + f" |  [{time.perf_counter() - start:.0f} s]",
                flush=True,
            )
            for b, c, se, r in zip(budgets, *cells["coverage"], cells["rmse"][0], strict=True):
                saved.append([name, label, b, args.runs, c, se, r])
        if args.save:  # after each pool: a stopped run keeps what it measured
            from _results import save

            save(
                args.save,
                ["pool", "method", "N", "runs", "coverage %", "SE", "RMSE x 100"],
                saved,
                formats={"coverage %": ".1f", "SE": ".1f", "RMSE x 100": ".2f"},
            )


if __name__ == "__main__":
    main()

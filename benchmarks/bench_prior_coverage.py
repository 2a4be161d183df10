"""Coverage of the per-group accuracy intervals under each prior, beside their RMSE.

Usage::

    python benchmarks/bench_prior_coverage.py --runs 1000
    python benchmarks/bench_prior_coverage.py --dataset synthetic --runs 1000 --seed 3
    python benchmarks/bench_prior_coverage.py --dataset synthetic --shift 1.5 --methods CPrior+TS
    python benchmarks/bench_prior_coverage.py --dataset svhn --tau-prior half-normal
    python benchmarks/bench_prior_coverage.py --methods HPrior HPrior+TS --n-jobs 2

For every pool, prior (informative, calibrated) and strategy (random,
Thompson sampling), at N = 20, 50 and 100 labels (and 200 on the synthetic
100-group pool): the share of groups whose 95 % interval holds the group's
accuracy on the pool (averaged over runs and groups; the standard error over
runs in brackets) and RMSE x 100 of the posterior means. Pools: SVHN (the
paper's ResNet-152 outputs, ``../shared/data``), the bundled Fashion-MNIST
scores, and a synthetic pool of 100 classes x ~100 rows whose calibration
differs by class (a pool the defaults were not chosen on; ``--seed`` draws
another one, ``--shift`` sets how far the classes' calibration differs and
``--groups`` their number). ``--tau-prior`` replaces the calibrated prior's
grid of group deviations by the quantiles of another prior on tau (the
frontier of coverage against RMSE in docs/benchmarks.md). ``HPrior`` is
``prior="hierarchical"`` (no score prior: the groups' accuracies share a
Beta whose mean and concentration the labels learn); ``simulate`` does not
refit it, so its runs are ``ActiveAssessor`` query/tell loops, and its
intervals are the mixture quantiles of ``summary()``.
"""

import argparse
import pathlib
import time

import numpy as np
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


def hierarchical_run(X, y, strategy, budgets, seed):
    """Coverage and RMSE at each budget of one query/tell run under prior="hierarchical"."""
    pred = X.argmax(axis=1)
    K = X.shape[1]
    size = np.bincount(pred, minlength=K)
    truth = np.bincount(pred, weights=pred == y, minlength=K) / np.maximum(size, 1)
    present, weight = size > 0, size / size.sum()
    assessor = ActiveAssessor(
        BayesianAccuracy(prior="hierarchical"), strategy=strategy, random_state=seed
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


def hierarchical_cells(X, y, strategy, budgets, runs, seed, n_jobs):
    res = np.array(
        Parallel(n_jobs=n_jobs)(
            delayed(hierarchical_run)(X, y, strategy, budgets, seed * 100_003 + run)
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
    parser.add_argument("--n-jobs", type=int, default=1)
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
        choices=["IPrior", "IPrior+TS", "CPrior", "CPrior+TS", "HPrior", "HPrior+TS"],
        default=["IPrior", "IPrior+TS", "CPrior", "CPrior+TS"],
    )
    args = parser.parse_args()
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
        for label, strategy, prior in [
            ("IPrior", "random", None),
            ("IPrior+TS", "thompson", None),
            ("CPrior", "random", CalibratedPrior(**calibrated)),
            ("CPrior+TS", "thompson", CalibratedPrior(**calibrated)),
            ("HPrior", "random", "hierarchical"),
            ("HPrior+TS", "thompson", "hierarchical"),
        ]:
            if label not in args.methods:
                continue
            start = time.perf_counter()
            cells = {}
            if prior == "hierarchical":
                cells = hierarchical_cells(
                    X, y, strategy, budgets, args.runs, args.seed, args.n_jobs
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


if __name__ == "__main__":
    main()

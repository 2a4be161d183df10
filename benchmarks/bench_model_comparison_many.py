"""Coverage of each model's accuracy when the comparison holds many models at once.

On each of the five fairness files (ten black boxes each, binary), the first
``M`` models (``--models``, 2 to 10) are compared by one
:class:`~skassess.metrics.BayesianModelComparison` on ``--labels`` items
labeled uniformly at random, ``--runs`` times. For ``prior_split="even"``
(the default for two or three models), ``"scores"`` and ``"learned"`` (which
block is right learned from the labels of every pattern; the default from four
models on): the coverage of
the 95 % interval of each model's accuracy on the pool, the mean bias of its
posterior mean (points), its median width, and the coverage of the interval
of the difference between the two most accurate models (``pairwise()``).

``--metric tpr`` or ``--metric ppv`` compares the models' true positive rate
or precision on the fairness files instead of their accuracy (a model that
predicts no positive, which has no precision, is left out of its pool's
coverage).

``--pool independent`` is a pool made to break the prior instead: ten
models of ten classes on 5,000 items, each right with probability 0.82 on
its own (its errors uniform over the other classes, independent of the
other models'), each scoring its prediction 0.802 and every other class
0.022. Where most models agree they are nearly always right, which the
averaged scores understate.

Each model's items split by agreement pattern: with ``M`` models there are up
to ``2^(M-1)`` patterns on a binary task, most of them holding few labels, so
each pattern's prior mean (which block is right) speaks for its unlabeled
items.

Usage::

    python benchmarks/bench_model_comparison_many.py --save model-comparison-many
    python benchmarks/bench_model_comparison_many.py --pool independent \
        --save model-comparison-many-independent
"""

import argparse
import warnings

import numpy as np
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table, add_save_argument
from bench_model_selection import fairness_pools
from joblib import Parallel, delayed

from skassess.metrics import BayesianModelComparison

SPLITS = ("even", "scores", "learned")
METRIC_NAMES = {"accuracy": "accuracy", "tpr": "true positive rate", "ppv": "precision (PPV)"}


def independent_pool(n=5000, n_models=10, n_classes=10, accuracy=0.82, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    scores = []
    for _ in range(n_models):
        wrong = (y + rng.integers(1, n_classes, n)) % n_classes
        pred = np.where(rng.random(n) < accuracy, y, wrong)
        scores.append(np.eye(n_classes)[pred] * 0.78 + 0.022)
    return np.stack(scores, axis=1), y


def true_metric(S, y, metric):
    """Each model's metric on the pool: accuracy, or for binary models TPR or PPV."""
    pred = S.argmax(axis=2)
    if metric == "accuracy":
        return (pred == y[:, None]).mean(axis=0)
    if metric == "tpr":
        return (pred[y == 1] == 1).mean(axis=0)
    positive = pred == 1
    return (positive & (y[:, None] == 1)).sum(axis=0) / positive.sum(axis=0)


def one_run(S, y, labels, split, seed, metric="accuracy"):
    rng = np.random.default_rng(seed)
    codes = np.full(len(y), -1)
    rows = rng.choice(len(y), labels, replace=False)
    codes[rows] = y[rows]
    with np.errstate(invalid="ignore"):
        truth = true_metric(S, y, metric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = BayesianModelComparison(metric=metric, prior_split=split, random_state=seed)
        est.fit(S, codes)
        table = est.summary()
        first, second = np.argsort(truth)[::-1][:2]
        pairs = est.pairwise()
    lower, upper = table["lower"].to_numpy(), table["upper"].to_numpy()
    names = list(table.index)
    a, b = sorted((first, second))
    row = pairs[(pairs["model_a"] == names[a]) & (pairs["model_b"] == names[b])].iloc[0]
    d = truth[a] - truth[b]
    # a model that predicts no positive has no precision: it is left out
    ok = np.isfinite(truth)
    return (
        np.mean(((lower <= truth) & (truth <= upper))[ok]),
        float(np.mean((table["mean"].to_numpy() - truth)[ok])),
        float(np.median((upper - lower)[ok])),
        bool(row["lower"] <= d <= row["upper"]),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, nargs="+", default=[2, 3, 5, 10])
    ap.add_argument("--labels", type=int, default=200)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--pool", choices=["fairness", "independent"], default="fairness")
    ap.add_argument(
        "--metric",
        choices=["accuracy", "tpr", "ppv"],
        default="accuracy",
        help="what is compared (tpr and ppv: the fairness files, binary)",
    )
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    if args.metric != "accuracy" and args.pool != "fairness":
        ap.error("--metric tpr or ppv needs the fairness files (binary models)")
    if args.pool == "fairness":
        pools = [(S, y) for _, _, S, y in fairness_pools()]
    else:
        pools = [independent_pool()]
    table = Table(
        [
            "models",
            "prior_split",
            "each model: coverage",
            "lowest pool",
            "bias (points)",
            "width (points)",
            "best two's difference: coverage",
        ],
        formats={
            "each model: coverage": ".2f",
            "lowest pool": ".2f",
            "bias (points)": "+.2f",
            "width (points)": ".2f",
            "best two's difference: coverage": ".2f",
        },
    )
    for M in args.models:
        for split in SPLITS:
            per_file = []
            for S, y in pools:
                runs = Parallel(n_jobs=args.n_jobs)(
                    delayed(one_run)(S[:, :M], y, args.labels, split, seed, args.metric)
                    for seed in range(args.runs)
                )
                per_file.append(np.array(runs, dtype=float).mean(axis=0))
            per_file = np.array(per_file)
            table.add(
                [
                    M,
                    split,
                    per_file[:, 0].mean(),
                    per_file[:, 0].min(),
                    100 * per_file[:, 1].mean(),
                    100 * per_file[:, 2].mean(),
                    per_file[:, 3].mean(),
                ]
            )
    table.save(
        args.save,
        caption=(
            f"The first M of the ten models of each of the {len(pools)} fairness files"
            if args.pool == "fairness"
            else "The first M of ten independent models of ten classes (5,000 items)"
        )
        + f" in one comparison, {args.labels} random labels, {args.runs} runs a pool: coverage "
        f"of the 95 % interval of each model's {METRIC_NAMES[args.metric]} (mean over the "
        "pools, and the lowest "
        "pool), the mean bias and median width of each model's (points), and the coverage "
        "of the interval of the difference between the two most accurate models.",
    )


if __name__ == "__main__":
    main()

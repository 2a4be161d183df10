"""Coverage of the accuracy interval when annotators slip: the one-coin noise model.

A pool's rows are labeled at random (``--labels`` items) by simulated
annotators who slip: with probability ``eps`` an annotator gives another class
than the true one -- any other class alike (``uniform``), or, with probability
0.7, the class the black box most often predicts for that true class
(``confusable``, the slips a person who shares the model's confusions makes).
Each labeled item gets one annotator at random; a share of the items (the
repeats) gets a second, different one. The annotators' slip rates are unequal:
with two, ``eps/2`` and ``3 eps/2``; with three, ``eps/2``, ``eps`` and
``3 eps/2``.

Four estimates of the pool's accuracy (and of each predicted class's), each
``BayesianAccuracy()`` with its default prior:

* ``noise model``: the labels with their annotators (``label_noise="auto"``
  models the slips; the default prior of every annotator's accuracy, 95 % in
  [0.85, 0.999]; the annotators' accuracy read from the items labeled twice,
  and with none, drawn at the ends of the range the single labels allow);
* ``all labels``: the same with ``slip_evidence="all"``, the annotators'
  accuracy read from every label, jointly with the black box's;
* ``labels as truth``: each item's first label, as if it were the truth;
* ``oracle``: the noise model told each annotator's true accuracy;
* with ``crowd-kit`` installed (``pip install crowd-kit``), the peers: each
  item's label aggregated by its majority vote (``majority vote``) or by
  Dawid and Skene's model (``Dawid-Skene``), then taken as the truth.

Prints, per pool, slip kind, annotators and slip rate: the coverage of the
95 % interval of the overall accuracy, its bias and median width (points),
and the share of predicted classes whose 95 % interval holds the class's
accuracy.

Usage::

    python benchmarks/bench_label_noise.py --save label-noise
    python benchmarks/bench_label_noise.py --pool synthetic-100 --runs 10
"""

import argparse
import pathlib
import time

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table, add_save_argument
from joblib import Parallel, delayed
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.datasets import load_fashion_mnist_scores, read_predictions

SVHN = pathlib.Path(__file__).resolve().parents[2] / "shared/data/predictions/svhn_resnet152.txt.gz"
SLIPS = (0.0, 0.02, 0.05, 0.10)
#: (annotators, share of the items labeled twice)
SETUPS = ((1, 0.0), (2, 0.1), (2, 0.3), (3, 0.3))


def synthetic_pool(n_classes=100, rows=10_000, seed=0):
    """An overconfident 100-class model whose calibration differs by class (about 74 % right)."""
    rng = np.random.default_rng(seed)
    pred = rng.integers(0, n_classes, rows)
    conf = np.clip(rng.beta(6.0, 1.2, rows), 1.5 / n_classes, 1 - 1e-6)
    delta = rng.normal(0.0, 0.8, n_classes)
    right = rng.random(rows) < expit(0.6 * logit(conf) + 0.4 + delta[pred])
    scores = np.repeat(((1 - conf) / (n_classes - 1))[:, None], n_classes, axis=1)
    scores[np.arange(rows), pred] = conf
    other = (pred + rng.integers(1, n_classes, rows)) % n_classes
    return scores, np.where(right, pred, other)


def load(name):
    if name == "svhn":
        data = read_predictions(SVHN)
        return data.scores, np.asarray(data.target)
    if name == "synthetic-100":
        return synthetic_pool()
    data = load_fashion_mnist_scores()
    return data.scores, np.asarray(data.target)


def confusable_class(scores, y):
    """For each true class, the class the black box most often predicts instead of it."""
    K = scores.shape[1]
    pred = scores.argmax(1)
    counts = np.zeros((K, K))
    np.add.at(counts, (y, pred), 1.0)
    counts[np.arange(K), np.arange(K)] = -1.0
    counts += np.random.default_rng(0).random((K, K)) * 1e-3  # ties: any
    return counts.argmax(1)


def annotate(y, eps, kind, confusable, rng):
    K = confusable.size
    slip = rng.random(y.size) < eps
    other = (y + rng.integers(1, K, y.size)) % K
    if kind == "confusable":
        other = np.where(rng.random(y.size) < 0.7, confusable[y], other)
    return np.where(slip, other, y)


def rates(n_annotators, eps):
    return {1: [eps], 2: [eps / 2, 1.5 * eps], 3: [eps / 2, eps, 1.5 * eps]}[n_annotators]


def one_run(X, y, n_labels, setup, eps, kind, confusable, seed):
    aggregators = peer_aggregators()
    rng = np.random.default_rng(seed)
    n_annotators, repeat = setup
    pred = X.argmax(1)
    K = X.shape[1]
    truth = float(np.mean(pred == y))
    group_truth = np.bincount(pred, weights=pred == y, minlength=K) / np.maximum(
        np.bincount(pred, minlength=K), 1
    )
    items = rng.choice(y.size, n_labels, replace=False)
    first = rng.integers(0, n_annotators, n_labels)
    second = np.full(n_labels, -1)
    twice = rng.random(n_labels) < repeat if n_annotators > 1 else np.zeros(n_labels, bool)
    second[twice] = (first[twice] + rng.integers(1, n_annotators, twice.sum())) % n_annotators
    labels = np.full((y.size, n_annotators), -1)
    slip = rates(n_annotators, eps)
    for a in range(n_annotators):
        for who in (first, second):
            rows = items[who == a]
            labels[rows, a] = annotate(y[rows], slip[a], kind, confusable, rng)
    names = [f"a{a}" for a in range(n_annotators)]
    first_label = np.full(y.size, -1)
    first_label[items] = labels[items, first]
    out = {}
    fits = {
        "noise model": lambda: BayesianAccuracy(random_state=seed).fit(X, _frame(labels, names)),
        "all labels": lambda: BayesianAccuracy(slip_evidence="all", random_state=seed).fit(
            X, _frame(labels, names)
        ),
        "labels as truth": lambda: BayesianAccuracy(random_state=seed).fit(X, first_label),
        "oracle": lambda: BayesianAccuracy(
            annotator_prior={n: 1.0 - s for n, s in zip(names, slip, strict=False)},
            label_noise="one_coin",
            random_state=seed,
        ).fit(X, _frame(labels, names)),
    }
    if aggregators:
        long = pd.DataFrame(
            [(i, names[a], labels[i, a]) for i in items for a in range(n_annotators)],
            columns=["task", "worker", "label"],
        )
        long = long[long["label"] >= 0]
        for method, aggregator in aggregators.items():
            agg = aggregator().fit_predict(long)
            y_agg = np.full(y.size, -1)
            y_agg[agg.index.to_numpy(dtype=int)] = agg.to_numpy(dtype=int)
            fits[method] = lambda y_agg=y_agg: BayesianAccuracy(random_state=seed).fit(X, y_agg)
    for method, fit in fits.items():
        start = time.process_time()
        est = fit()
        lo, hi = est.overall_interval(0.95)
        table = est.summary(0.95)
        g = np.asarray(table.index, dtype=int) if table.index.dtype != object else None
        gt = group_truth[g] if g is not None else group_truth
        inside = (table["lower"].to_numpy() <= gt) & (gt <= table["upper"].to_numpy())
        labeled = table["n_labeled"].to_numpy() > 0
        out[method] = (
            lo <= truth <= hi,
            est.overall_mean() - truth,
            hi - lo,
            inside[labeled].mean(),
            time.process_time() - start,
        )
    return out


def _frame(labels, names):
    return pd.DataFrame(labels, columns=names)


def peer_aggregators():
    """crowd-kit's label aggregators, when it is installed (none otherwise)."""
    try:
        from crowdkit.aggregation import DawidSkene, MajorityVote
    except ImportError:
        return {}
    return {
        "majority vote": MajorityVote,
        "Dawid-Skene": lambda: DawidSkene(n_iter=100),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", action="append", choices=["fashion-mnist", "svhn", "synthetic-100"])
    ap.add_argument("--kind", action="append", choices=["uniform", "confusable"])
    ap.add_argument("--labels", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--slip", type=float, action="append", help="slip rates (default 0-0.10)")
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    pools = args.pool or ["fashion-mnist", "svhn", "synthetic-100"]
    kinds = args.kind or ["uniform", "confusable"]
    columns = [
        "pool",
        "slips",
        "annotators",
        "repeats",
        "slip rate",
        "method",
        "coverage 95 %",
        "bias (points)",
        "width (points)",
        "classes covered",
        "CPU s a fit",
    ]
    table = Table(
        columns,
        formats={
            "coverage 95 %": ".2f",
            "bias (points)": "+.2f",
            "width (points)": ".2f",
            "classes covered": ".2f",
            "CPU s a fit": ".2f",
        },
    )
    for pool in pools:
        if pool == "svhn" and not SVHN.exists():
            print(f"skipping svhn: {SVHN} is absent")
            continue
        X, y = load(pool)
        confusable = confusable_class(X, y)
        for kind in kinds:
            for setup in SETUPS:
                for eps in args.slip or SLIPS:
                    if kind == "confusable" and eps == 0:
                        continue
                    res = Parallel(n_jobs=args.n_jobs)(
                        delayed(one_run)(X, y, args.labels, setup, eps, kind, confusable, seed)
                        for seed in range(args.runs)
                    )
                    for method in res[0]:
                        v = np.array([r[method] for r in res], dtype=float)
                        table.add(
                            [
                                pool,
                                kind,
                                setup[0],
                                f"{setup[1]:.0%}",
                                eps,
                                method,
                                v[:, 0].mean(),
                                100 * v[:, 1].mean(),
                                100 * np.median(v[:, 2]),
                                v[:, 3].mean(),
                                np.median(v[:, 4]),
                            ]
                        )
    table.save(
        args.save,
        caption=f"Accuracy under annotators who slip: {args.labels} items labeled at random, "
        f"{args.runs} runs a cell",
    )


if __name__ == "__main__":
    main()

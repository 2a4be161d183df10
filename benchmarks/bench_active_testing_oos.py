"""ActiveTester on pools its design never saw: random labeling against the final method.

Usage::

    python benchmarks/bench_active_testing_oos.py --seeds 25 --n-jobs 2
    python benchmarks/bench_active_testing_oos.py --report-only --out oos.pkl

``bench_alt_mas.py`` (MNIST, four models) is where ``ActiveTester``'s defaults
were chosen. This benchmark asks the same question, "is the final method ever
worse than random labeling?", on pools that played no part in that: SVHN
(ResNet-152 test outputs, 26,032 items), the bundled Fashion-MNIST MLP
scores (10,000), and two synthetic 10-class pools of 10,000 items whose
scores are miscalibrated per class (one overconfident, one whose errors
concentrate on two classes per predicted class). The surrogate sees only the
scores (no pixels). Methods: ``tradition`` (random labels, plug-in metrics),
``dirichlet`` (random labels, ``BayesianConfusionMatrix`` posterior mean) and
``final`` (``ActiveTester()``); budgets 50 / 100 / 200 / 400; the same table
layout and goal check as ``bench_alt_mas.py``.
"""

import argparse
import pathlib
import sys
import time

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed
from scipy.special import softmax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_alt_mas import (  # noqa: E402
    BATCH,
    BUDGETS,
    METRICS,
    _random_methods,
    _surrogate,
    _totals,
    error_record,
    report,
)

from skassess.datasets import load_fashion_mnist_scores, read_predictions  # noqa: E402
from skassess.samplers import ActiveTester  # noqa: E402
from skassess.samplers._acquisition import parse_metrics  # noqa: E402
from skassess.samplers._confusion_metrics import metric_values  # noqa: E402

SVHN = pathlib.Path(__file__).resolve().parents[2] / "shared/data/predictions/svhn_resnet152.txt.gz"


def synthetic(kind, n=10_000, K=10, seed=0):
    """Scores and labels of a 10-class pool whose calibration differs by predicted class."""
    rng = np.random.default_rng([seed, ["overconfident", "confusions"].index(kind)])
    logits = rng.normal(scale=2.5, size=(n, K))
    scores = softmax(logits, axis=1)
    pred = scores.argmax(1)
    conf = scores.max(1)
    # Each predicted class is right with probability sigmoid(a logit(conf) + b_class).
    b = rng.normal(-0.8, 0.8, K)
    p_right = 1 / (1 + np.exp(-(0.6 * np.log(conf / (1 - conf)) + b[pred])))
    right = rng.random(n) < p_right
    if kind == "overconfident":  # errors go where the scores put the rest of their mass
        rest = scores.copy()
        rest[np.arange(n), pred] = 0
        other = np.array([rng.choice(K, p=r / r.sum()) for r in rest])
    else:  # errors of each predicted class go to two classes fixed per class
        pairs = np.array(
            [rng.choice(np.delete(np.arange(K), c), 2, replace=False) for c in range(K)]
        )
        other = pairs[pred, rng.integers(0, 2, n)]
    return scores, np.where(right, pred, other)


def pools():
    if SVHN.exists():
        data = read_predictions(SVHN)
        yield "svhn", data.scores, np.asarray(data.target)
    data = load_fashion_mnist_scores()
    yield "fashion-mnist", data.scores, np.asarray(data.target)
    for kind in ("overconfident", "confusions"):
        yield f"synthetic-{kind}", *synthetic(kind)


def _final(scores, y, seed):
    tester = ActiveTester(METRICS, surrogate=_surrogate(seed), random_state=seed).fit(scores)
    rows = []
    for budget in BUDGETS:
        tester.run(y, budget - tester.n_labeled_, batch_size=BATCH, progress=False)
        table = tester.summary()
        rows.append(
            (
                "final",
                budget,
                table["estimate"].to_numpy(),
                table["lower"].to_numpy(),
                table["upper"].to_numpy(),
            )
        )
    return rows


def _task(pool, method, seed, scores, y, metrics):
    rows = (
        _random_methods(scores, y, metrics, seed) if method == "random" else _final(scores, y, seed)
    )
    return [(pool, seed, *r) for r in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--methods", nargs="+", default=["random", "final"])
    add_parallel_arguments(parser, n_jobs=2, backend="multiprocessing")
    parser.add_argument("--out", default="active_testing_oos.pkl")
    parser.add_argument("--report-only", action="store_true")
    add_save_argument(parser)
    args = parser.parse_args()
    use_parallel_backend(args)
    with saving_printed_tables(args.save):
        if args.report_only:
            report(pd.read_pickle(args.out))
            return
        K = 10
        metrics = parse_metrics(METRICS, range(K))
        data = {name: (scores, y) for name, scores, y in pools()}
        tasks = [
            delayed(_task)(name, method, seed, scores, y, metrics)
            for name, (scores, y) in data.items()
            for method in args.methods
            for seed in range(args.seeds)
        ]
        t0 = time.perf_counter()
        results = Parallel(n_jobs=args.n_jobs, verbose=5)(tasks)
        print(f"{len(tasks)} runs in {time.perf_counter() - t0:.0f} s")
        records = []
        for rows in results:
            for pool, seed, method, budget, est, lo, hi in rows:
                scores, y = data[pool]
                truth = metric_values(_totals(scores.argmax(1), y, K), metrics)
                records.append(error_record(pool, method, budget, seed, est, lo, hi, truth))
        df = pd.DataFrame(records)
        df.to_pickle(args.out)
        report(df)


if __name__ == "__main__":
    main()

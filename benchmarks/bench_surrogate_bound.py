"""How far a better surrogate takes ``ActiveTester`` on MNIST's weak model, and BALD with it.

Usage::

    python benchmarks/bench_surrogate_bound.py --seeds 5 --n-jobs 2 --save surrogate-bound

The weak model of ``bench_alt_mas.py`` (a logistic regression fitted on 100
training images, 74 % accurate) is assessed at 400 labels, as there, with
the surrogate of ``bench_alt_mas.py`` refitted on the labels (its features:
the first 30 principal components of the pixels, or the raw pixels) and
with a surrogate fitted once on 5,000 MNIST *training* images and never
refitted: five MLPs, 96 % accurate on the pool, which no label of the pool
could give (a bound on what a better surrogate could do). ``final`` is
``ActiveTester()`` (the unbiased difference estimate), ``bald`` is
``ActiveTester(strategy="bald")`` (the metrics from the surrogate's predicted
labels). Printed: the surrogate's accuracy on the pool at the end, the mean
absolute error (points) of the 10 classes' precisions and recalls (mean over
seeds, standard error), and the share of seeds whose 95 % interval holds the
true macro F1.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.decomposition import PCA

sys.path.insert(0, str(Path(__file__).parent))
import bench_alt_mas as am  # noqa: E402
from _mnist import load_mnist_models  # noqa: E402
from _results import Table  # noqa: E402

from skassess.samplers import ActiveTester  # noqa: E402
from skassess.samplers._acquisition import parse_metrics  # noqa: E402
from skassess.samplers._confusion_metrics import metric_values  # noqa: E402

BUDGET = 400
CONFIGS = (
    ("final", "refitted, 30 PCs", "pca30"),
    ("final", "refitted, pixels", "pixels"),
    ("final", "fitted on 5,000 other images", "pretrained"),
    ("bald", "refitted, 30 PCs", "pca30"),
    ("bald", "fitted on 5,000 other images", "pretrained"),
)


def one_run(method, surrogate, features, y, scores, seed):
    strategy = {"final": "variance", "bald": "bald"}[method]
    tester = ActiveTester(am.METRICS, surrogate=surrogate, strategy=strategy, random_state=seed)
    tester.fit(scores, features=features)
    tester.run(y, BUDGET, batch_size=am.BATCH, progress=False)
    table = tester.summary()
    proba = tester.surrogate_.predict_proba_members(features).mean(axis=0)
    return (
        table["estimate"].to_numpy(),
        table["lower"].to_numpy(),
        table["upper"].to_numpy(),
        float((proba.argmax(axis=1) == y).mean()),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    X, y, all_scores = load_mnist_models()
    scores = all_scores["weak"]
    pca = PCA(30, random_state=0).fit(X)
    spread = pca.transform(X).std()

    def pca30(images):
        return pca.transform(images) / spread

    inputs = {
        "pca30": np.hstack([pca30(X), scores]),
        "pixels": np.hstack([X, scores]),
        "pretrained": pca30(X),
    }
    members = am._pretrain(pca30, 5000)
    metrics = parse_metrics(am.METRICS, range(10))
    truth = metric_values(am._totals(scores.argmax(1), y, 10), metrics)
    table = Table(
        [
            "method",
            "surrogate",
            "surrogate accuracy",
            "precision MAE",
            "recall MAE",
            "cover macro F1 %",
        ],
        formats={"surrogate accuracy": ".3f", "cover macro F1 %": ".0f"},
    )
    cpu, wall = time.process_time(), time.perf_counter()
    for method, label, kind in CONFIGS:

        def surrogate(seed, kind=kind):
            if kind == "pretrained":
                return am.PretrainedSurrogate(members=am._Fitted(members))
            return am._surrogate(seed)

        runs = Parallel(n_jobs=args.n_jobs)(
            delayed(one_run)(method, surrogate(seed), inputs[kind], y, scores, seed)
            for seed in range(args.seeds)
        )
        prec = [100 * np.abs(r[0][2:12] - truth[2:12]).mean() for r in runs]
        rec = [100 * np.abs(r[0][12:22] - truth[12:22]).mean() for r in runs]
        cover = [r[1][1] <= truth[1] <= r[2][1] for r in runs]

        def cell(values):
            values = np.asarray(values)
            return f"{values.mean():.2f} ({values.std(ddof=1) / np.sqrt(values.size):.2f})"

        table.add(
            [
                method,
                label,
                float(np.mean([r[3] for r in runs])),
                cell(prec),
                cell(rec),
                100 * float(np.mean(cover)),
            ]
        )
    table.save(
        args.save,
        caption=f"The weak model at {BUDGET} labels, {args.seeds} seeds a row: mean absolute "
        "error in points (standard error).",
    )
    print(
        f"process CPU {time.process_time() - cpu:.0f} s (this process), "
        f"wall {time.perf_counter() - wall:.0f} s"
    )


if __name__ == "__main__":
    main()

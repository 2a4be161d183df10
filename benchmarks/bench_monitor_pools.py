"""The monitor's label-free bands on score pools unlike its library: coverage and width.

The shipped uncertainty model learned from tabular data sets with the black
boxes trained beside them. Here the monitor sees only a model's scores, as
``skassess monitor`` does, on pools it never saw: SVHN (a ResNet-152, 10
classes), the bundled Fashion-MNIST scores (10 classes) and five models of
each fairness file (Adult by sex, bank by age, ProPublica by sex: binary
scores). Per pool, ``--reference`` rows at random are the labeled reference
(a third of the pool at most) and chunks of ``--chunk-rows`` rows are drawn
from the rest, ``--chunks`` of each kind:

- **none**: at random (no drift);
- **confidence**: with weights ``exp(-t · confidence)``, ``t`` drawn in [0, 8]
  per chunk (traffic toward the rows the model is least sure of, a covariate
  shift the scores show);
- **class**: one true class (drawn per chunk) over-sampled ``1 + s`` times,
  ``s`` in [0, 4] (label shift, under which a row's chance of being right given
  its scores changes);
- **group** (fairness files): one group of the sensitive attribute
  over-sampled ``1 + s`` times, ``s`` in [0, 4].

For each chunk: the coverage of the label-free 80 / 90 / 95 % intervals
(``PerformanceMonitor(level=...)``, shipped scales), and their 95 %
half-width beside the chunk's own sampling error at 95 %,
``1.96 sqrt(a (1 - a) / n)`` (``a`` its true accuracy): the width a band
cannot go below, which it should approach where nothing drifted.

Usage::

    python benchmarks/bench_monitor_pools.py [--chunks 20] [--n-jobs 2]
        [--uncertainty-model recalibrated] [--save monitor-pools]
"""

import argparse
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from skassess.datasets import load_fashion_mnist_scores, read_predictions
from skassess.meta import PerformanceMonitor

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared/data"
LEVELS = (0.8, 0.9, 0.95)
FAIRNESS = {
    "Adult": ("adult_sex", "income-per-year", "sex"),
    "bank": ("bank_age", "y", "age"),
    "ProPublica": ("propublica-recidivism_sex", "two_year_recid", "sex"),
}
MODELS = ("GaussianNB", "LR", "DecisionTree", "RandomForest", "MultiLayerPerceptron")


def pools():
    """``(name, scores, labels, groups or None)`` of every pool present."""
    svhn = SHARED / "predictions/svhn_resnet152.txt.gz"
    if svhn.exists():
        data = read_predictions(svhn)
        yield "SVHN", data.scores, np.asarray(data.target), None
    data = load_fashion_mnist_scores()
    yield "Fashion-MNIST", data.scores, np.asarray(data.target), None
    for name, (file, label, attribute) in FAIRNESS.items():
        path = SHARED / f"fairness/{file}_scores.csv.gz"
        if not path.exists():
            continue
        frame = pd.read_csv(path, index_col=0)
        groups = pd.factorize(frame[attribute])[0]
        for model in MODELS:
            p = frame[f"score_{model}"].to_numpy()
            yield f"{name} {model}", np.column_stack([1 - p, p]), frame[label].to_numpy(), groups


def chunk_weights(kind, S, y, groups, rng):
    """Row weights of one chunk of ``kind`` (None: uniform)."""
    if kind == "none":
        return None
    if kind == "confidence":
        conf = S.max(axis=1)
        w = np.exp(-rng.uniform(0, 8) * (conf - conf.max()))
    elif kind == "class":
        w = np.where(y == rng.choice(np.unique(y)), 1.0 + rng.uniform(0, 4), 1.0)
    else:
        w = np.where(groups == rng.choice(np.unique(groups)), 1.0 + rng.uniform(0, 4), 1.0)
    return w / w.sum()


def run_pool(name, S, y, groups, args, seed):
    rng = np.random.default_rng(seed)
    n_ref = min(args.reference, len(y) // 3)
    perm = rng.permutation(len(y))
    ref, rest = perm[:n_ref], perm[n_ref:]
    monitor = PerformanceMonitor(
        level=LEVELS,
        uncertainty_model=args.uncertainty_model,
        random_state=seed,
        progress=False,
    )
    try:
        monitor.fit(S[ref], y[ref])
    except ValueError as err:  # e.g. "recalibrated" on hard 0/1 scores
        print(f"{name}: skipped, {err}", file=sys.stderr)
        return None
    kinds = ["none", "confidence", "class"] + ([] if groups is None else ["group"])
    size = min(args.chunk_rows, len(rest) // 2)
    parts, keys, kind_of = [], [], []
    for kind in kinds:
        for _ in range(args.chunks):
            p = chunk_weights(kind, S[rest], y[rest], None if groups is None else groups[rest], rng)
            parts.append(rest[rng.choice(len(rest), size, replace=False, p=p)])
            keys.append(len(keys))
            kind_of.append(kind)
    rows = np.concatenate(parts)
    chunk = np.repeat(keys, size)
    table = monitor.predict(S[rows], chunk_by=chunk)
    truth = pd.Series(S[rows].argmax(axis=1) == y[rows]).groupby(chunk).mean().to_numpy()
    out = pd.DataFrame(
        {
            "pool": name,
            "kind": kind_of,
            "rows": size,
            "truth": truth,
            "predicted": table["predicted"].to_numpy(),
            "reference": monitor.reference_accuracy_,
        }
    )
    for a in LEVELS:
        s = f"{round(100 * a)}"
        lo, hi = table[f"predicted_lower_{s}"].to_numpy(), table[f"predicted_upper_{s}"].to_numpy()
        out[f"cov_{s}"] = (lo <= truth) & (truth <= hi)
        out[f"half_{s}"] = (hi - lo) / 2
    out["sampling_95"] = 1.96 * np.sqrt(truth * (1 - truth) / size)
    return out


def summary(g):
    return (
        f"{len(g)} | "
        + " | ".join(f"{100 * g[f'cov_{round(100 * a)}'].mean():.0f}" for a in LEVELS)
        + f" | {100 * g['half_95'].median():.1f} | {100 * g['sampling_95'].median():.1f} | "
        f"{(g['half_95'] / g['sampling_95']).median():.1f} | "
        f"{100 * (g['predicted'] - g['truth']).abs().mean():.1f} |"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=20, help="chunks of each kind per pool")
    ap.add_argument("--chunk-rows", type=int, default=500)
    ap.add_argument("--reference", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--uncertainty-model",
        choices=["pretrained", "recalibrated"],
        default="pretrained",
        help="PerformanceMonitor's uncertainty_model",
    )
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)

    def one(*a):
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            return run_pool(*a, args, args.seed)

    items = list(pools())
    parts = Parallel(n_jobs=args.n_jobs)(delayed(one)(*p) for p in items)
    skipped = [p[0] for p, r in zip(items, parts, strict=True) if r is None]
    res = pd.concat([r for r in parts if r is not None], ignore_index=True)
    res["family"] = np.where(res["pool"].isin(["SVHN", "Fashion-MNIST"]), "images", "tabular")
    head = (
        " | chunks | 80 % | 90 % | 95 % | half-width at 95 % (points) | sampling error at "
        "95 % (points) | half-width ÷ sampling error | MAE (points) |"
    )
    with saving_printed_tables(args.save):
        print(
            f"\nLabel-free coverage (%) by pool and drift: {args.chunks} chunks of "
            f"{args.chunk_rows} rows (fewer in small pools) of each kind, a reference of "
            f"{args.reference} rows (a third of the pool at most); "
            + ("shipped scales" if args.uncertainty_model == "pretrained" else "recalibrated")
            + (f"; refused (no drift to simulate): {', '.join(skipped)}" if skipped else "")
        )
        print("| pool | drift" + head)
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (pool, kind), g in res.groupby(["pool", "kind"], sort=False):
            print(f"| {pool} | {kind} | " + summary(g))
        print("\nLabel-free coverage (%) by kind of pool and drift")
        print("| pools | drift" + head)
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (fam, kind), g in res.groupby(["family", "kind"], sort=False):
            print(f"| {fam} | {kind} | " + summary(g))


if __name__ == "__main__":
    main()

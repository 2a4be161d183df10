"""Group metrics and the comparison of models when annotators slip: coverage beside the truth.

Labels come from two annotators who slip at ``eps/2`` and ``3 eps/2`` (any
other class alike): ``--labels`` items drawn at random, each labeled by one
of them at random, and ``--repeats`` of them again by the other. Five fits:

* **noise model**: the labels with their annotators (``label_noise``, the
  default prior of every annotator's accuracy, the annotators' accuracy read
  from the repeated items, and with ``--repeats 0`` drawn at the ends of the
  range the single labels allow);
* **all labels**: the same with ``slip_evidence="all"`` (the annotators'
  accuracy read from every label, jointly with the models');
* **labels as truth**: each item's first label, as if it were the truth;
* **oracle**: the noise model told each annotator's true accuracy;
* **true labels**: the same items with their true labels (the estimator's
  own coverage, without slips).

Pools:

* ``groups``: :class:`~skassess.calibration.BayesianGroupMetrics` on the
  bundled Adult scores (logistic regression, groups by sex); the coverage of
  the 95 % interval of each group's accuracy, TPR and FPR, and of their
  difference between the groups;
* ``models``: :class:`~skassess.metrics.BayesianModelComparison` of the
  Adult file's logistic regression and random forest, and of two synthetic
  models of 3 classes (accuracy 0.90 and 0.85 on 3,000 items); the coverage
  of each model's accuracy interval and of their difference's.

Usage::

    python benchmarks/bench_noisy_comparisons.py --save noisy-comparisons
    python benchmarks/bench_noisy_comparisons.py --repeats 0 --save noisy-comparisons-once
"""

import argparse
import time

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table, add_save_argument
from joblib import Parallel, delayed

from skassess.calibration import BayesianGroupMetrics
from skassess.datasets import load_adult_scores
from skassess.metrics import BayesianModelComparison

FITS = ("noise model", "all labels", "labels as truth", "oracle", "true labels")


def annotate(y, n_classes, labels, repeats, eps, rng):
    """Labels of two annotators (columns "a", "b"; -1: none) and their accuracies."""
    n = len(y)
    slips = (eps / 2, 3 * eps / 2)
    rows = rng.choice(n, labels, replace=False)
    first = rng.integers(0, 2, labels)
    wide = np.full((n, 2), -1)
    for r, a in zip(rows, first, strict=True):
        wide[r, a] = y[r]
    for r, a in zip(rows[:repeats], first[:repeats], strict=True):
        wide[r, 1 - a] = y[r]
    for a in range(2):
        given = np.flatnonzero(wide[:, a] >= 0)
        slip = given[rng.random(given.size) < slips[a]]
        wide[slip, a] = (wide[slip, a] + rng.integers(1, n_classes, slip.size)) % n_classes
    first_label = np.where(wide[:, 0] >= 0, wide[:, 0], wide[:, 1])
    truth = np.full(n, -1)
    truth[rows] = y[rows]
    return pd.DataFrame(wide, columns=["a", "b"]), first_label, truth, (1 - slips[0], 1 - slips[1])


def _fits(make, X, y, n_classes, labels, repeats, eps, seed, **fit_kw):
    rng = np.random.default_rng(seed)
    wide, first, truth, accuracies = annotate(y, n_classes, labels, repeats, eps, rng)
    out, seconds = {}, None
    for name in FITS:
        start = time.process_time()
        if name == "noise model":
            est = make(seed).fit(X, wide, **fit_kw)
            seconds = time.process_time() - start
        elif name == "all labels":
            est = make(seed).set_params(slip_evidence="all").fit(X, wide, **fit_kw)
        elif name == "oracle":
            prior = dict(zip(["a", "b"], accuracies, strict=True))
            est = make(seed).set_params(annotator_prior=prior).fit(X, wide, **fit_kw)
        elif name == "labels as truth":
            est = make(seed).fit(X, first, **fit_kw)
        else:
            est = make(seed).fit(X, truth, **fit_kw)
        out[name] = est
    return out, seconds


def group_run(s, y, group, labels, repeats, eps, seed):
    def make(seed):
        return BayesianGroupMetrics(n_draws=1000, n_imputations=10, random_state=seed)

    fits, seconds = _fits(make, s, y, 2, labels, repeats, eps, seed, group_by=group)
    pred = s > 0.5
    truth = {}
    for g in ("Female", "Male"):
        m = group == g
        truth[("accuracy", g)] = np.mean(pred[m] == y[m])
        truth[("tpr", g)] = np.mean(pred[m][y[m] == 1])
        truth[("fpr", g)] = np.mean(pred[m][y[m] == 0])
    out = {}
    for name, est in fits.items():
        table = est.summary()
        inside = [table.loc[k, "lower"] <= v <= table.loc[k, "upper"] for k, v in truth.items()]
        diff = est.differences()
        both = []
        for metric in ("accuracy", "tpr", "fpr"):
            row = diff.loc[metric].iloc[0]
            a, b = row.name.split(" - ")
            d = truth[(metric, a)] - truth[(metric, b)]
            both.append(row["lower"] <= d <= row["upper"])
        out[name] = (np.mean(inside), np.mean(both))
    return out, seconds


def synthetic_models(seed):
    rng = np.random.default_rng(10_000 + seed)
    n = 3000
    y = rng.integers(0, 3, n)

    def model(accuracy):
        pred = np.where(rng.random(n) < accuracy, y, (y + rng.integers(1, 3, n)) % 3)
        conf = rng.uniform(0.5, 0.95, n)
        S = np.tile(((1 - conf) / 2)[:, None], (1, 3))
        S[np.arange(n), pred] = conf
        return S

    return np.stack([model(0.9), model(0.85)], axis=1), y


def model_run(X, y, labels, repeats, eps, seed):
    if X is None:
        X, y = synthetic_models(seed)

    def make(seed):
        return BayesianModelComparison(n_imputations=10, random_state=seed)

    fits, seconds = _fits(make, X, y, X.shape[2], labels, repeats, eps, seed)
    truth = (X.argmax(axis=2) == y[:, None]).mean(axis=0)
    out = {}
    for name, est in fits.items():
        table = est.summary()
        inside = (table["lower"].to_numpy() <= truth) & (truth <= table["upper"].to_numpy())
        pair = est.pairwise().iloc[0]
        d = truth[0] - truth[1]
        out[name] = (inside.mean(), pair["lower"] <= d <= pair["upper"])
    return out, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--labels", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=120)
    ap.add_argument("--slip", type=float, action="append", help="eps (repeatable; 0.05 0.1)")
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    slips = args.slip or [0.05, 0.1]
    data = load_adult_scores("sex")
    y = data.target.to_numpy().astype(int)
    group = data.sensitive["sex"].to_numpy()
    pools = {
        "Adult, groups by sex (LR)": lambda seed, eps: group_run(
            data.scores["LR"].to_numpy(), y, group, args.labels, args.repeats, eps, seed
        ),
        "Adult, LR against RF": lambda seed, eps: model_run(
            np.stack(
                [
                    np.column_stack([1 - data.scores[c], data.scores[c]])
                    for c in ("LR", "RandomForest")
                ],
                axis=1,
            ),
            y,
            args.labels,
            args.repeats,
            eps,
            seed,
        ),
        "synthetic, 2 models, 3 classes": lambda seed, eps: model_run(
            None, None, args.labels, args.repeats, eps, seed
        ),
    }
    table = Table(
        [
            "pool",
            "eps",
            *[f"{f}: each" for f in FITS],
            *[f"{f}: difference" for f in FITS],
            "CPU s",
        ],
        formats={
            **{f"{f}: each": ".2f" for f in FITS},
            **{f"{f}: difference": ".2f" for f in FITS},
            "CPU s": ".1f",
        },
    )
    for pool, run in pools.items():
        for eps in slips:
            res = Parallel(n_jobs=args.n_jobs)(delayed(run)(seed, eps) for seed in range(args.runs))
            each = {f: np.mean([r[f][0] for r, _ in res]) for f in FITS}
            both = {f: np.mean([r[f][1] for r, _ in res]) for f in FITS}
            cpu = float(np.median([s for _, s in res]))
            table.add([pool, eps, *each.values(), *both.values(), cpu])
    table.save(
        args.save,
        caption=f"Coverage of the 95 % intervals over {args.runs} runs: each group's "
        "metric (accuracy, TPR, FPR) or each model's accuracy (*each*), and the "
        f"difference between the two; {args.labels} labels, {args.repeats} of them "
        "labeled twice; *CPU s*: the median CPU seconds of the noise model's fit.",
    )


if __name__ == "__main__":
    main()

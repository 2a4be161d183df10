"""How narrow can an interval of the overall accuracy be, beside PPI++'s?

The estimand is the accuracy of a pool of ``N`` scored rows, ``n`` of them
labeled at random. An estimator that assumes nothing about ``p(s) = P(right
| s)`` (a nonparametric model of the scores' calibration) has at best the
semiparametric efficiency bound of a mean with labels missing completely at
random, ``E[p (1 - p)] / n + Var(p) / N``; PPI++ with the top-1 confidence
``c`` as its prediction has ``min_l Var(y - l c) / n + l^2 Var(c) / N``. For
``n`` much smaller than ``N``, the ratio of their square roots is the
narrowest width over PPI++'s that an assumption-free estimator reaches at
large ``n``. Narrower needs a parametric model of ``p`` (as the default's
shared map is): it holds on pools that follow the model, not on every pool.

``p`` is unknown on a real pool; this script stands in for it with an
*oracle calibrator*: a gradient-boosted classifier of "right" on the scores'
summaries (top-1 confidence, margin to the second score, entropy, the
predicted class and the file's group), fitted on all of the pool's labels
and read out of fold (5 folds), with its out-of-fold Brier score ``E[(y -
p_hat)^2]`` in place of ``E[p (1 - p)]``. A calibrator of the top-1
confidence alone (isotonic, out of fold) is beside it. Both estimate the
bound from above (an estimated ``p_hat`` only adds error) by the few
thousandths that ``p_hat``'s error adds.

Beside them, the default's measured width / PPI++ at n >= 100 from the
headline's result file (``benchmarks/results/headline.json``), and the bound
at the same ``n`` for the pool's accuracy: its labeled rows are known, so
only the unlabeled share ``1 - n / N`` of the pool is estimated (PPI++,
an interval of the population's mean, does not count it).

    OMP_NUM_THREADS=1 python benchmarks/bench_overall_bound.py --save overall-bound
"""

import argparse
import json
import pathlib

import numpy as np
from _results import Table
from bench_headline import POOLS, pools
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import KFold, cross_val_predict

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def summaries(scores, groups):
    """The scores' summaries a calibrator may use, and the categorical columns."""
    top = np.sort(scores, axis=1)
    conf = top[:, -1]
    margin = conf - top[:, -2]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.nansum(np.where(scores > 0, scores * np.log(scores), 0.0), axis=1)
    pred = scores.argmax(axis=1)
    columns = [conf, margin, entropy, pred]
    categorical = [False, False, False, True]
    if groups is not None:
        codes = np.unique(groups, return_inverse=True)[1]
        columns.append(codes)
        categorical.append(True)
    return np.column_stack(columns), categorical


def bound(scores, target, groups, seed):
    pred = scores.argmax(axis=1)
    y = (pred == target).astype(float)
    conf = scores.max(axis=1)
    folds = KFold(5, shuffle=True, random_state=seed)
    features, categorical = summaries(scores, groups)
    K = scores.shape[1]
    model = HistGradientBoostingClassifier(
        categorical_features=categorical if K <= 255 else None,
        max_iter=300,
        learning_rate=0.05,
        early_stopping=True,
        random_state=seed,
    )
    p_all = cross_val_predict(model, features, y, cv=folds, method="predict_proba")[:, 1]
    p_conf = cross_val_predict(
        IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip"), conf, y, cv=folds
    )
    cov = np.cov(y, conf)
    ppi = cov[0, 0] - cov[0, 1] ** 2 / cov[1, 1]  # min over l of Var(y - l c)
    return {
        "accuracy": y.mean(),
        "summaries": np.sqrt(np.mean((y - p_all) ** 2) / ppi),
        "confidence": np.sqrt(np.mean((y - p_conf) ** 2) / ppi),
    }


def measured(pool):
    """The default's width / PPI++ per n from the headline's result file."""
    path = RESULTS / "headline.json"
    if not path.exists():
        return {}
    table = json.loads(path.read_text())
    cols = table["columns"]
    out = {}
    for row in table["rows"]:
        cell = dict(zip(cols, row, strict=True))
        if cell["pool"].removesuffix(" (tuning)") == pool and cell["n"] >= 100:
            out[int(cell["n"])] = cell["width / PPI++"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=[*POOLS, "kink-10"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = ap.parse_args()
    table = Table(
        [
            "pool",
            "rows",
            "accuracy",
            "bound / PPI++: the scores' summaries",
            "the top-1 confidence",
            "default / PPI++ (headline, n >= 100)",
            "the bound at the same n, the pool's labeled share known",
        ],
        formats={
            "accuracy": ".3f",
            "bound / PPI++: the scores' summaries": ".3f",
            "the top-1 confidence": ".3f",
        },
    )
    data = pools(args.pools, args.seed)
    for name in args.pools:
        scores, target, groups = data[name]
        b = bound(scores, target, groups, args.seed)
        widths = measured(name)
        shown = " / ".join(f"{v:.2f}" for _, v in sorted(widths.items())) or "--"
        if widths:
            shown += f" (n = {', '.join(str(n) for n in sorted(widths))})"
        # The estimand is the pool's accuracy: its labeled rows are known, so an
        # estimator's error is that of the unlabeled share, 1 - n / N, of the pool
        # (PPI++ estimates the population's mean and does not count it).
        at_n = " / ".join(f"{b['summaries'] * (1.0 - n / len(target)):.2f}" for n in sorted(widths))
        table.add(
            [name, len(target), b["accuracy"], b["summaries"], b["confidence"], shown, at_n or "--"]
        )
    table.save(
        args.save,
        caption="The assumption-free bound's width over PPI++'s at large n (each row's "
        "probability of being right estimated out of fold on all the pool's labels).",
    )


if __name__ == "__main__":
    main()

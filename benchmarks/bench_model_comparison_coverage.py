"""Coverage of the model comparison's interval: Δ accuracy of two black boxes, random labels.

For each pool and pair of models and each label budget n, ``--runs`` times, n
items labeled uniformly at random; the 95 % interval of Δ accuracy (a - b, the
truth on every item of the pool) from

* ``BayesianModelComparison()`` (the default: informative Dirichlet per
  agreement pattern with the tie component), its ``pairwise()`` row;
* ``BayesianModelComparison(prior_split="learned")``: which block is right
  learned from the labels of every pattern;
* ``BayesianModelComparison(prior="uniform")``;
* the paired label mean: the mean of ``right_a - right_b`` over the labeled
  items with its normal interval (labels alone);
* PPI++ (``ppi_py.ppi_mean_ci``) on ``right_a - right_b`` with the
  prediction ``c_a - c_b`` (each model's top-1 score: what it expects of its
  own correctness).

The pairs are fixed by the models' rank of true accuracy before any run: the
best and the second, the best and the third, the second and the fifth, the
fourth and the eighth (of the ten models of each fairness file and of the
synthetic three-class pool of ``bench_model_selection.py``). Prints per
pool, pair and n: coverage, mean width and MAE x 100 of each method's point
estimate (posterior mean; the label mean; PPI++'s), and writes a JSON line
per cell to ``--out``.

Needs the peers' extra (``pip install "skassess[peers]"``)::

    OMP_NUM_THREADS=1 python benchmarks/bench_model_comparison_coverage.py --runs 100 \\
        --out cmp.jsonl
"""

import argparse
import warnings

import numpy as np
import pandas as pd
from _results import add_save_argument, frame_markdown, saving_printed_tables
from bench_model_selection import fairness_pools, synthetic_pool
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from skassess.metrics import BayesianModelComparison

RANK_PAIRS = ((0, 1), (0, 2), (1, 4), (3, 7))
METHODS = ("default", "learned split", "uniform", "label mean", "PPI++")


def intervals(S, y_obs, lab, right, conf):
    """{method: (point, lower, upper)} of Δ accuracy (model 0 - model 1)."""
    out = {}
    for name, params in (
        ("default", {}),
        ("learned split", {"prior_split": "learned"}),
        ("uniform", {"prior": "uniform"}),
    ):
        est = BayesianModelComparison(random_state=0, **params).fit(S, y_obs)
        row = est.pairwise(0.95).iloc[0]
        out[name] = (row["mean"], row["lower"], row["upper"])
    d = right[lab, 0] - right[lab, 1]
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.inf
    out["label mean"] = (d.mean(), d.mean() - half, d.mean() + half)
    dhat = conf[:, 0] - conf[:, 1]
    lo, hi = ppi_mean_ci(d.astype(float), dhat[lab], dhat[~lab], alpha=0.05)

    point = ppi_mean_pointestimate(d.astype(float), dhat[lab], dhat[~lab])
    out["PPI++"] = (float(np.ravel(point)[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0]))
    return out


def summary(frame):
    """One row per budget and method: coverage over the cells, and ratios to the peers."""
    keys = ["pool", "pair", "n"]
    ppi = frame[frame.method == "PPI++"].set_index(keys)
    mean = frame[frame.method == "label mean"].set_index(keys)
    rows = []
    for (n, method), cells in frame.groupby(["n", "method"], sort=True):
        cells = cells.set_index(keys)
        rows.append(
            {
                "n": n,
                "method": method,
                "cells": len(cells),
                "coverage: mean": cells.coverage.mean(),
                "lowest": cells.coverage.min(),
                "cells < 0.90": int((cells.coverage < 0.90).sum()),
                "width / PPI++": (cells.width / ppi.width.reindex(cells.index)).median(),
                "MAE / label mean": (cells.mae_x100 / mean.mae_x100.reindex(cells.index)).median(),
            }
        )
    return pd.DataFrame(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--budgets", type=int, nargs="+", default=[20, 50, 100, 200, 500])
    ap.add_argument("--pools", nargs="+", default=None, help="pool names (default: all)")
    ap.add_argument("--out", default=None)
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        pools = list(fairness_pools()) + [synthetic_pool()]
        frames = []
        for name, models, S_all, y in pools:
            if args.pools and name not in args.pools:
                continue
            right_all = S_all.argmax(axis=2) == y[:, None]
            order = np.argsort(-right_all.mean(axis=0), kind="stable")
            for ra, rb in RANK_PAIRS:
                a, b = order[ra], order[rb]
                S = S_all[:, [a, b]]
                right = right_all[:, [a, b]].astype(int)
                conf = S.max(axis=2)
                truth = right[:, 0].mean() - right[:, 1].mean()
                rng = np.random.default_rng(0)
                for n in args.budgets:
                    res = {m: [] for m in METHODS}
                    for _ in range(args.runs):
                        rows = rng.choice(len(y), n, replace=False)
                        lab = np.zeros(len(y), bool)
                        lab[rows] = True
                        y_obs = np.where(lab, y, -1)
                        if len(np.unique(y[rows])) < 2:  # y of one class only reads as ambiguous
                            continue
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            for m, v in intervals(S, y_obs, lab, right, conf).items():
                                res[m].append(v)
                    cells = []
                    for m, v in res.items():
                        v = np.array(v)
                        cells.append(
                            {
                                "pool": name,
                                "pair": f"{models[a]} - {models[b]}",
                                "ranks": f"{ra + 1}-{rb + 1}",
                                "n": n,
                                "method": m,
                                "truth": truth,
                                "runs": len(v),
                                "coverage": np.mean((v[:, 1] <= truth) & (truth <= v[:, 2])),
                                "width": np.mean(v[:, 2] - v[:, 1]),
                                "mae_x100": 100 * np.mean(np.abs(v[:, 0] - truth)),
                            }
                        )
                    frame = pd.DataFrame(cells)
                    frames.append(frame)
                    print(frame.round(3).to_string(index=False), flush=True)
                    if args.out:
                        frame.to_json(args.out, orient="records", lines=True, mode="a")
        if frames:
            print(
                "\nPer budget and method, over the cells (pool x pair): coverage of the 95 % "
                "interval of Delta accuracy (mean, lowest, cells under 0.90); width and MAE "
                "over PPI++'s and the label mean's in the same runs (median)"
            )
            print(frame_markdown(summary(pd.concat(frames)).round(3)))


if __name__ == "__main__":
    main()

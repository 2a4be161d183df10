"""The overall-accuracy interval beside prediction-powered inference and labels alone.

For each pool and label budget n, ``--runs`` times: n rows labeled uniformly at
random; the 95 % interval of the pool's accuracy from

* skassess ``BayesianAccuracy(prior="hierarchical")`` (the default of ``assess``)
  and ``prior="informative"``;
* Wilson's interval on the n labels alone;
* PPI (lambda = 1) and PPI++ (power-tuned lambda) of ``ppi_py``, with the
  black box's top-1 confidence as the prediction of "the model is right"
  on every unlabeled row.

Prints coverage (share of runs whose interval holds the accuracy on the whole
pool), mean width, RMSE x 100 of the point estimate, and each width's ratio to
PPI++'s measured in the same runs. Pools: SVHN's ResNet-152 (``../shared/data``),
the bundled Fashion-MNIST MLP, and a synthetic 100-class over-confident pool
(mean top-1 confidence 0.84, accuracy about 0.74), made here.

Needs the peers' extra: ``pip install ppi_python``.

    python benchmarks/bench_overall_peers.py --runs 200
"""

import argparse
import pathlib
import warnings

import numpy as np
from scipy import stats

from skassess import BayesianAccuracy
from skassess.datasets import load_fashion_mnist_scores, read_predictions

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
METHODS = ("hierarchical", "informative", "wilson", "ppi", "ppi++")


def pools(seed):
    out = {}
    svhn = DATA / "predictions" / "svhn_resnet152.txt.gz"
    if svhn.exists():
        p = read_predictions(svhn)
        out["svhn"] = (p.scores, p.target)
    fm = load_fashion_mnist_scores()
    out["fashion-mnist"] = (fm.scores, fm.target)
    # 100 classes, over-confident: the scores' top-1 is sharper than the truth
    rng = np.random.default_rng(seed)
    n, k = 20_000, 100
    logits = rng.normal(size=(n, k)) * 7.0
    truth_p = np.exp(logits - logits.max(axis=1, keepdims=True))
    truth_p /= truth_p.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(truth_p, axis=1)).sum(axis=1)
    y = np.minimum(y, k - 1)
    sharp = np.exp(1.6 * (logits - logits.max(axis=1, keepdims=True)))
    scores = sharp / sharp.sum(axis=1, keepdims=True)
    out["synthetic-100-overconfident"] = (scores, y)
    return out


def intervals(scores, target, rows, seed):
    """The five methods' (lower, upper, point) for one labeled sample."""
    import ppi_py

    pred = scores.argmax(axis=1)
    conf = scores.max(axis=1)
    correct = (pred == target).astype(float)
    labeled = np.zeros(len(target), dtype=bool)
    labeled[rows] = True
    y = np.where(labeled, target, -1)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for prior in ("hierarchical", "informative"):
            est = BayesianAccuracy(prior=prior, random_state=seed).fit(scores, y)
            lo, hi = est.overall_interval(0.95)
            out[prior] = (lo, hi, est.overall_mean())
    k, n = int(correct[rows].sum()), len(rows)
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    out["wilson"] = (ci.low, ci.high, k / n)
    Y, Yhat, Yun = correct[rows], conf[rows], conf[~labeled]
    for name, lam in (("ppi", 1.0), ("ppi++", None)):
        lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yun, alpha=0.05, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yun, lam=lam)
        out[name] = (float(np.ravel(lo)[0]), float(np.ravel(hi)[0]), float(np.ravel(point)[0]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--budgets", type=int, nargs="+", default=[20, 50, 100, 200])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for name, (scores, target) in pools(args.seed).items():
        truth = float(np.mean(scores.argmax(axis=1) == target))
        conf = float(scores.max(axis=1).mean())
        print(f"\n{name}: {len(target):,} rows, {scores.shape[1]} classes, accuracy "
              f"{truth:.4f}, mean top-1 confidence {conf:.4f}")
        print(f"{'n':>4} {'method':<13} {'coverage':>9} {'width':>7} {'/PPI++':>7} "
              f"{'RMSEx100':>9}")
        rng = np.random.default_rng(args.seed)
        for n in args.budgets:
            res = {m: [] for m in METHODS}
            for r in range(args.runs):
                rows = rng.choice(len(target), n, replace=False)
                for m, v in intervals(scores, target, rows, r).items():
                    res[m].append(v)
            width_ref = np.mean([hi - lo for lo, hi, _ in res["ppi++"]])
            for m in METHODS:
                a = np.array(res[m])
                cover = np.mean((a[:, 0] <= truth) & (truth <= a[:, 1]))
                width = np.mean(a[:, 1] - a[:, 0])
                rmse = np.sqrt(np.mean((a[:, 2] - truth) ** 2)) * 100
                print(f"{n:>4} {m:<13} {cover:>9.3f} {width:>7.4f} {width / width_ref:>7.2f} "
                      f"{rmse:>9.2f}", flush=True)


if __name__ == "__main__":
    main()

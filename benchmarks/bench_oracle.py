"""What any estimator can reach per group: the oracle that knows how the pool was made.

Each synthetic pool of the per-group tables is drawn from a known model: a row of
predicted class ``g`` with top-1 confidence ``c`` is right with probability
``sigmoid(m(c) + delta_g)``, with the map ``m`` and the spread of the class
deviations ``delta_g ~ N(0, sd^2)`` known, only each class's ``delta_g`` not. The
*oracle* is the exact posterior of each class's accuracy on the pool under that
model (the deviation integrated on a grid, the unlabeled rows' count a mixture of
normals over it), given the same random labels as the estimators. Averaged over
pools drawn from the model no estimator has a lower expected squared error, and its
95 % intervals cover 95 % of the classes on average over pools; so what it does
*not* reach — an RMSE far below it, or the least accurate class covered 95 % of the
time on one pool — no estimator that is not told the deviations reaches either.

Beside it, on the same labels: skassess's default (``BayesianAccuracy()``, the
calibrated model, which is told nothing) and each class's labels alone (a
``Beta(1, 1)`` posterior of its rate from its labeled rows).

Pools (``--pools``):

* ``table3``: the 100-class pool of the Table 3 protocol
  (``bench_prior_coverage.synthetic_pool``: ``m(c) = 0.6 logit(c) - 0.3``,
  ``sd = 0.8``), budgets N = 200, 500, 1000 (N/K = 2, 5, 10);
* ``classwise-20``: the headline table's pool (20 classes of ~500 rows,
  ``m(c) = logit(c)``, ``sd = 1``), budgets 20-500.

Each ``--pool-seeds`` value draws a new pool from the model; ``--runs`` label
draws per pool and budget. Prints RMSE x 100 over classes weighted by their
rows (Table 3's; the mean over runs of each run's), and for the 95 %
intervals: mean width, coverage averaged over the classes, over the pools'
lowest class and over their least accurate class::

    OMP_NUM_THREADS=1 python benchmarks/bench_oracle.py --pools table3 --runs 30
"""

import argparse
import time
import warnings

import numpy as np
from _results import add_save_argument, saving_printed_tables
from bench_headline import synthetic  # the script's folder is on the path
from bench_prior_coverage import synthetic_pool
from scipy.special import log_expit, logit
from scipy.stats import beta, norm

from skassess import BayesianAccuracy

#: Points of the deviation's grid, over +-GRID_SDS prior standard deviations.
N_GRID, GRID_SDS = 241, 6.0
#: Points of each class's count grid for the mixture's quantiles.
N_COUNT = 401


def pool(name, seed):
    """``(scores, target, m, sd)``: a pool, its map's log-odds per row and the deviations' sd."""
    if name == "table3":
        scores, target = synthetic_pool(seed=seed)
        conf = scores.max(axis=1)
        return scores, target, 0.6 * logit(conf) - 0.3, 0.8
    if name == "classwise-20":
        scores, target, _ = synthetic("classwise-20", seed)
        conf = np.clip(scores.max(axis=1), 1e-4, 1 - 1e-4)
        return scores, target, logit(conf), 1.0
    raise ValueError(name)


class Oracle:
    """Exact per-class posterior of the pool's accuracy, given the generating model."""

    def __init__(self, pred, m, sd, n_classes):
        self.pred, self.m, self.K = pred, m, n_classes
        self.delta = np.linspace(-GRID_SDS * sd, GRID_SDS * sd, N_GRID)
        self.log_prior = norm.logpdf(self.delta, scale=sd)
        eta = m[:, None] + self.delta[None, :]
        self.p = np.exp(log_expit(eta))
        self.lp, self.lq = log_expit(eta), log_expit(-eta)
        # per class and grid point: the pool's expected count and variance
        self.mu = np.zeros((n_classes, N_GRID))
        self.var = np.zeros((n_classes, N_GRID))
        np.add.at(self.mu, pred, self.p)
        np.add.at(self.var, pred, self.p * (1 - self.p))
        self.rows = np.bincount(pred, minlength=n_classes).astype(float)

    def fit(self, labeled, right, level=0.95):
        """Per class: posterior mean and equal-tailed interval of its accuracy on the pool."""
        K, G = self.K, N_GRID
        g = self.pred[labeled]
        z = right[labeled]
        loglik = np.zeros((K, G))
        np.add.at(loglik, g, np.where(z[:, None], self.lp[labeled], self.lq[labeled]))
        log_w = loglik + self.log_prior
        w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        mu_l = np.zeros((K, G))
        var_l = np.zeros((K, G))
        pl = self.p[labeled]
        np.add.at(mu_l, g, pl)
        np.add.at(var_l, g, pl * (1 - pl))
        mu, var = self.mu - mu_l, np.maximum(self.var - var_l, 1e-12)
        s_lab = np.bincount(g, weights=z, minlength=K)
        n_unl = self.rows - np.bincount(g, minlength=K)
        mean = (s_lab + (w * mu).sum(axis=1)) / self.rows
        # the unlabeled count: a mixture over the grid of normals (Poisson-binomial)
        grid = np.linspace(0, 1, N_COUNT)[None, :] * n_unl[:, None]  # (K, C)
        cdf = np.einsum(
            "kg,kgc->kc",
            w,
            norm.cdf((grid[:, None, :] - mu[:, :, None]) / np.sqrt(var)[:, :, None]),
        )
        tail = (1 - level) / 2
        lo_i = np.array([np.searchsorted(c, tail) for c in cdf]).clip(0, N_COUNT - 1)
        hi_i = np.array([np.searchsorted(c, 1 - tail) for c in cdf]).clip(0, N_COUNT - 1)
        rows = np.arange(K)
        lower = (s_lab + grid[rows, lo_i]) / self.rows
        upper = (s_lab + grid[rows, hi_i]) / self.rows
        return mean, lower, upper


def labels_alone(pred, labeled, right, K, level=0.95):
    """Each class's ``Beta(1, 1)`` posterior of its rate from its labeled rows."""
    n = np.bincount(pred[labeled], minlength=K)
    s = np.bincount(pred[labeled], weights=right[labeled], minlength=K)
    tail = (1 - level) / 2
    post = beta(1 + s, 1 + n - s)
    return post.mean(), post.ppf(tail), post.ppf(1 - tail)


def default(scores, target, labeled, seed):
    y = np.where(labeled, target, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = BayesianAccuracy(random_state=seed).fit(scores, y)
    s = est.summary()
    return s["mean"].to_numpy(float), s["lower"].to_numpy(float), s["upper"].to_numpy(float)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["table3", "classwise-20"])
    ap.add_argument("--pool-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--runs", type=int, default=30, help="label draws per pool and budget")
    ap.add_argument("--budgets", type=int, nargs="+", default=None)
    ap.add_argument("--no-default", action="store_true", help="skip BayesianAccuracy()")
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        methods = ["oracle", "labels alone"] + ([] if args.no_default else ["default"])
        for name in args.pools:
            budgets = args.budgets or (
                [200, 500, 1000] if name == "table3" else [20, 50, 100, 200, 500]
            )
            print(f"\n{name}: pools {args.pool_seeds}, {args.runs} runs per pool and budget")
            print(
                "| n | method | RMSE x 100 | width | class coverage: mean | lowest class "
                "| least accurate class |\n|---:|---|---:|---:|---:|---:|---:|"
            )
            acc = {
                (n, m): {"rmse": [], "width": [], "cov": [], "low": [], "worst": []}
                for n in budgets
                for m in methods
            }
            start = time.perf_counter()
            for ps in args.pool_seeds:
                scores, target, m, sd = pool(name, ps)
                pred = scores.argmax(axis=1)
                K = scores.shape[1]
                right = pred == target
                rows = np.bincount(pred, minlength=K)
                share = rows / rows.sum()
                truth = np.bincount(pred, weights=right, minlength=K) / np.maximum(rows, 1)
                worst = np.argmin(np.where(rows > 0, truth, np.inf))
                oracle = Oracle(pred, m, sd, K)
                rng = np.random.default_rng(1000 + ps)
                for n in budgets:
                    held = {k: [] for k in methods}
                    for r in range(args.runs):
                        labeled = np.zeros(len(target), bool)
                        labeled[rng.choice(len(target), n, replace=False)] = True
                        out = {
                            "oracle": oracle.fit(labeled, right),
                            "labels alone": labels_alone(pred, labeled, right, K),
                        }
                        if "default" in methods:
                            out["default"] = default(scores, target, labeled, r)
                        for k, (mean, lo, hi) in out.items():
                            a = acc[(n, k)]
                            a["rmse"].append(np.sqrt(share @ (mean - truth) ** 2))
                            a["width"].append(share @ (hi - lo))
                            held[k].append((lo <= truth + 1e-9) & (truth <= hi + 1e-9))
                    for k in methods:
                        cov = np.mean(held[k], axis=0)[rows > 0]
                        a = acc[(n, k)]
                        a["cov"].append(cov.mean())
                        a["low"].append(cov.min())
                        a["worst"].append(np.mean(held[k], axis=0)[worst])
                print(f"  [pool {ps}: {time.perf_counter() - start:.0f} s]", flush=True)
            for n in budgets:
                for k in methods:
                    a = acc[(n, k)]
                    print(
                        f"| {n} | {k} | {100 * np.mean(a['rmse']):.1f} | "
                        f"{np.mean(a['width']):.3f} | {np.mean(a['cov']):.3f} | "
                        f"{np.mean(a['low']):.3f} | {np.mean(a['worst']):.3f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()

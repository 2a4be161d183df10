"""Active labeling with valid intervals: overall accuracy at equal budgets, active against random.

For each pool, budget n and run, the 95 % interval of the pool's accuracy from

* ``active``: :class:`~skassess.samplers.ActiveTester` (``metrics="accuracy"``,
  its defaults): items drawn from the variance-minimizing proposal mixed with
  uniform sampling, the difference estimator with a control variate chosen on
  the earlier draws (see its Notes);
* ``random``: the same estimator on uniform draws (``strategy="random"``);
* ``zc-active``: the active inference of Zrnic and Candes (2024), written here
  in a few lines: each item labeled with probability ``pi_i`` proportional to
  ``sqrt(c_i (1 - c_i))`` (``c_i`` the top-1 confidence, the model's own
  uncertainty), mixed half with uniform, ``n`` labels in expectation; the
  inverse-probability-weighted mean with the scores as a power-tuned control
  variate and its normal interval;
* ``ppi++`` (``ppi_py``) and skassess's ``calibrated`` prior
  (``BayesianAccuracy``) on n uniform random labels;
* ``calibrated-zc``: the calibrated prior on the labels ``zc-active`` drew;
* ``calibrated-active``: ``ActiveAssessor(BayesianAccuracy(),
  strategy="variance")``, items drawn with probability proportional to the
  standard deviation of their outcome under the current calibrated posterior,
  mixed half with uniform (:class:`~skassess.samplers.VarianceSampling`), and
  the calibrated posterior's interval;
* ``calibrated-thompson``: the same with ``strategy="thompson"`` (the estimate
  task's reward of Ji et al. 2021: the groups' expected variance drop).

Prints coverage, mean width and width / ``random``, / ``ppi++`` and / ``calibrated``
(same runs),
and for the calibrated methods the coverage of each predicted class's interval
(mean and lowest over the classes, and the least accurate class's).
Each run is appended to ``--out`` (JSON lines) as it ends. Needs the peers'
extra (``pip install "skassess[peers]"``)::

    OMP_NUM_THREADS=1 python benchmarks/bench_active_design.py --runs 100 --out design.jsonl
    python benchmarks/bench_active_design.py --table design.jsonl
"""

import argparse
import json
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_headline import group_truth, pools  # noqa: E402

from skassess import BayesianAccuracy  # noqa: E402
from skassess.samplers import ActiveAssessor, ActiveTester  # noqa: E402

METHODS = (
    "active",
    "random",
    "zc-active",
    "ppi++",
    "calibrated",
    "calibrated-zc",
    "calibrated-active",
    "calibrated-thompson",
)
Z95 = stats.norm.ppf(0.975)


def zrnic_candes(conf, correct, n, rng, mix=0.5):
    """Active inference of the mean of ``correct`` (Zrnic and Candes 2024, their eq. 5-6)."""
    u = np.sqrt(conf * (1.0 - conf))
    pi = n * ((1.0 - mix) * u / u.sum() + mix / len(conf))
    pi = np.minimum(pi, 1.0)
    xi = rng.random(len(conf)) < pi
    w = xi / pi
    # theta = mean(lam f + (y - lam f) xi / pi); lam minimizing the empirical variance.
    a, b = conf * (1.0 - w), correct * w
    c = np.cov(a, b)
    lam = -c[0, 1] / c[0, 0] if c[0, 0] > 0 else 0.0
    z = lam * a + b
    est, se = z.mean(), z.std(ddof=1) / np.sqrt(len(z))
    return (est - Z95 * se, est + Z95 * se, est), xi


def _with_groups(est):
    """(lower, upper, point) of the overall accuracy, then each predicted class's lower
    and upper bounds (the calibrated methods)."""
    lo, hi = est.overall_interval(0.95)
    s = est.summary(0.95)
    return (lo, hi, est.overall_mean(), s["lower"].tolist(), s["upper"].tolist())


def one_run(scores, target, budgets, seed, methods):
    import ppi_py

    conf, pred = scores.max(axis=1), scores.argmax(axis=1)
    correct = (pred == target).astype(float)
    out = {m: {} for m in methods}
    for strategy in ("active", "random"):
        if strategy not in methods:
            continue
        name = "variance" if strategy == "active" else "random"
        tester = ActiveTester("accuracy", strategy=name, random_state=seed).fit(scores)
        done = 0
        for n in budgets:
            tester.run(target, budget=n - done, progress=False)
            done = n
            s = tester.summary().loc["accuracy"]
            out[strategy][n] = (s["lower"], s["upper"], s["estimate"])
    for method, strategy in (
        ("calibrated-active", "variance"),
        ("calibrated-thompson", "thompson"),
    ):
        if method not in methods:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assessor = ActiveAssessor(BayesianAccuracy(), strategy=strategy, random_state=seed).fit(
                scores
            )
            done = 0
            for n in budgets:
                assessor.run(target, budget=n - done, progress=False)
                done = n
                out[method][n] = _with_groups(assessor.estimator_)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(target))  # n random labels: the first n of one permutation
    for n in budgets:
        if "zc-active" in methods or "calibrated-zc" in methods:
            zc, drawn = zrnic_candes(conf, correct, n, rng)
            if "zc-active" in methods:
                out["zc-active"][n] = zc
            if "calibrated-zc" in methods:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = BayesianAccuracy(random_state=seed).fit(
                        scores, np.where(drawn, target, -1)
                    )
                    lo, hi = est.overall_interval(0.95)
                out["calibrated-zc"][n] = (lo, hi, est.overall_mean())
        rows = order[:n]
        labeled = np.zeros(len(target), dtype=bool)
        labeled[rows] = True
        if "ppi++" in methods:
            lo, hi = ppi_py.ppi_mean_ci(correct[rows], conf[rows], conf[~labeled], alpha=0.05)
            point = ppi_py.ppi_mean_pointestimate(correct[rows], conf[rows], conf[~labeled])
            out["ppi++"][n] = (
                float(np.ravel(lo)[0]),
                float(np.ravel(hi)[0]),
                float(np.ravel(point)[0]),
            )
        if "calibrated" in methods:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = BayesianAccuracy(random_state=seed).fit(scores, np.where(labeled, target, -1))
            out["calibrated"][n] = _with_groups(est)
    return out


def table(records):
    rows = []
    for r in records:
        gt = np.asarray(r.get("group_truth", []))
        for m, cells in r["methods"].items():
            for n, (lo, hi, est, *groups) in cells.items():
                row = {
                    "pool": r["pool"],
                    "n": int(n),
                    "method": m,
                    "run": r["run"],
                    "cover": lo <= r["truth"] <= hi,
                    "width": hi - lo,
                    "err2": (est - r["truth"]) ** 2,
                }
                if groups and gt.size == len(groups[0]):
                    held = (np.asarray(groups[0]) <= gt) & (gt <= np.asarray(groups[1]))
                    row.update({"group_held": held, "worst_held": held[np.argmin(gt)]})
                rows.append(row)
    frame = pd.DataFrame(rows)
    if "group_held" not in frame:
        frame["group_held"] = frame["worst_held"] = None
    keys = ["pool", "n", "method"]
    agg = (
        frame.groupby(keys, sort=False)
        .agg(
            runs=("run", "size"),
            coverage=("cover", "mean"),
            width=("width", "mean"),
            rmse_x100=("err2", lambda e: 100 * np.sqrt(e.mean())),
        )
        .reset_index()
    )
    grouped = frame.dropna(subset=["group_held"])
    if len(grouped):
        per_group = grouped.groupby(keys, sort=False)["group_held"].apply(
            lambda h: np.mean(np.stack(h.to_list()), axis=0)
        )
        extra = pd.DataFrame(
            {
                "group_cov": per_group.map(np.mean),
                "group_cov_min": per_group.map(np.min),
                "worst_group_cov": grouped.groupby(keys, sort=False)["worst_held"].mean(),
            }
        )
        agg = agg.merge(extra.reset_index(), on=keys, how="left")
    for ref in ("random", "ppi++", "calibrated"):
        if not (agg["method"] == ref).any():
            continue
        base = agg[agg["method"] == ref].set_index(["pool", "n"])["width"]
        agg[f"/{ref}"] = (
            agg["width"] / base.reindex(pd.MultiIndex.from_frame(agg[["pool", "n"]])).to_numpy()
        )
    return agg


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["svhn", "fashion-mnist", "over-100"])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100, 200, 500])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--first-run", type=int, default=0, help="seed of the first run")
    ap.add_argument("--out", default=None, help="JSON lines file the runs are appended to")
    ap.add_argument("--table", default=None, help="print the table of a JSON lines file")
    args = ap.parse_args()
    pd.set_option("display.width", 200)
    if args.table:
        print(
            table([json.loads(line) for line in open(args.table)]).round(3).to_string(index=False)
        )
        return
    sink = open(args.out, "a") if args.out else None
    for name, (scores, target, _) in pools(args.pools, 0).items():
        truth = float(np.mean(scores.argmax(axis=1) == target))
        gt = group_truth(scores, target, None).tolist()
        print(f"\n{name}: {len(target):,} rows, accuracy {truth:.4f}", flush=True)
        records = []
        for r in range(args.first_run, args.first_run + args.runs):
            rec = {
                "pool": name,
                "run": r,
                "truth": truth,
                "group_truth": gt,
                "methods": one_run(scores, target, args.budgets, r, args.methods),
            }
            records.append(rec)
            if sink:
                sink.write(json.dumps(rec) + "\n")
                sink.flush()
        print(table(records).drop(columns=["pool"]).round(3).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()

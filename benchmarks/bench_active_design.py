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
* ``calibrated-thompson-bins``: the same with the rows grouped by
  ``--n-bins`` equal-count bins of the top-1 confidence
  (``BayesianAccuracy(grouping="score_bins", binning="quantile")``, the
  design of ``skassess label --confidence-bins``): the reward can move labels
  towards the uncertain rows, each bin still drawn uniformly, so the labels
  need no weights. Its per-group columns are the bins'.

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
from _results import add_save_argument, frame_markdown, saving_printed_tables
from scipy import stats

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_headline import group_truth, pools  # noqa: E402

from skassess import BayesianAccuracy  # noqa: E402
from skassess.samplers import ActiveAssessor, ActiveTester, VarianceSampling  # noqa: E402

METHODS = (
    "active",
    "random",
    "zc-active",
    "ppi++",
    "calibrated",
    "calibrated-zc",
    "calibrated-active",
    "calibrated-thompson",
    "calibrated-thompson-bins",
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


def design_oracle(scores, target, mixes=(0.5, 0.3, 0.2, 0.1, 0.0)):
    """Width of the best design of each uniform share, over random labeling's.

    The design draws row ``i`` with probability ``q_i = (1 - s) sd_i / sum sd +
    s / N`` with ``sd_i = sqrt(p_i (1 - p_i))`` and ``p_i`` the calibrated
    posterior's map on *every* label of the pool (the map the design would use
    if it knew it). The regression estimator's variance is ``sum_i v_i / (N^2
    n q_i)`` under the design and ``mean(v) / n`` on random labels (with-
    replacement approximations, the same ``n``), ``v_i`` the squared residual
    ``(z_i - p_i)^2`` (``"true"``) or the map's own variance ``p_i (1 - p_i)``
    (``"map"``). The square root of their ratio bounds what ``VarianceSampling``
    can gain: it learns ``p`` from its own labels and its interval also carries
    the design variance's estimation noise.
    """
    pred = scores.argmax(axis=1)
    z = (pred == target).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = BayesianAccuracy(random_state=0).fit(scores, target).predict_proba(scores)[:, 1]
    sd = np.sqrt(p * (1.0 - p))
    out = {}
    for kind, v in (("map", p * (1.0 - p)), ("true", (z - p) ** 2)):
        for s in mixes:
            q = (1.0 - s) * sd / sd.sum() + s / len(z)
            out[(kind, s)] = float(np.sqrt(np.mean(v / (len(z) * q)) / np.mean(v)))
    return out


def bin_estimator(n_bins):
    return BayesianAccuracy(grouping="score_bins", binning="quantile", n_bins=n_bins)


def bin_truth(scores, target, n_bins):
    """The accuracy of each confidence bin of ``calibrated-thompson-bins``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bin_estimator(n_bins).fit(scores)
    pred, conf = scores.argmax(axis=1), scores.max(axis=1)
    groups = est.grouping_.transform(pred, conf)
    frame = pd.DataFrame({"g": groups, "ok": pred == target})
    return frame.groupby("g", sort=True)["ok"].mean().reindex(range(len(est.groups_))).tolist()


def one_run(scores, target, budgets, seed, methods, variance=None, n_bins=10):
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
        ("calibrated-thompson-bins", "thompson"),
    ):
        if method not in methods:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if strategy == "variance" and variance:
                strategy = VarianceSampling(**variance)
            estimator = bin_estimator(n_bins) if method.endswith("-bins") else BayesianAccuracy()
            assessor = ActiveAssessor(estimator, strategy=strategy, random_state=seed).fit(scores)
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
        for m, cells in r["methods"].items():
            # the bins' truth for the design over confidence bins (runs that kept it)
            gt = np.asarray(r.get("bin_truth" if m.endswith("-bins") else "group_truth", []))
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


def width_ratio_bootstrap(records, method, base, n_boot=20_000):
    """Print, per pool and budget, ``method``'s mean width over ``base``'s with a bootstrap.

    The runs are resampled in pairs (both methods see the same label seed), so
    the interval is that of the ratio of the two mean widths over the runs.
    """
    widths = {}
    for r in records:
        for n, cell in r["methods"].get(method, {}).items():
            if n in r["methods"].get(base, {}):
                other = r["methods"][base][n]
                widths.setdefault((r["pool"], int(n)), []).append(
                    (cell[1] - cell[0], other[1] - other[0])
                )
    rng = np.random.default_rng(0)
    for (pool, n), pairs in sorted(widths.items()):
        w = np.asarray(pairs)
        idx = rng.integers(0, len(w), (n_boot, len(w)))
        boot = w[idx, 0].mean(axis=1) / w[idx, 1].mean(axis=1)
        lo90, hi90, lo95, hi95 = np.quantile(boot, [0.05, 0.95, 0.025, 0.975])
        print(
            f"{pool} n={n}: {method} / {base} width {w[:, 0].mean() / w[:, 1].mean():.3f} "
            f"over {len(w)} runs; bootstrap 90 % {lo90:.3f}-{hi90:.3f}, 95 % {lo95:.3f}-{hi95:.3f}"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["svhn", "fashion-mnist", "over-100"])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100, 200, 500])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--first-run", type=int, default=0, help="seed of the first run")
    ap.add_argument("--out", default=None, help="JSON lines file the runs are appended to")
    ap.add_argument("--table", nargs="+", default=None, help="print the table of JSON lines files")
    ap.add_argument(
        "--bootstrap",
        nargs=2,
        metavar=("METHOD", "BASE"),
        default=None,
        help="with --table: each cell's ratio of METHOD's mean width to BASE's, with a "
        "bootstrap over the runs",
    )
    ap.add_argument(
        "--uniform-mix", type=float, default=None, help="VarianceSampling's uniform_mix"
    )
    ap.add_argument("--min-labels", type=int, default=None, help="VarianceSampling's min_labels")
    ap.add_argument(
        "--n-bins", type=int, default=10, help="confidence bins of calibrated-thompson-bins"
    )
    ap.add_argument(
        "--oracle",
        action="store_true",
        help="print the width / random of the best design per uniform share, and stop",
    )
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        pd.set_option("display.width", 200)
        if args.table:
            records = [json.loads(line) for path in args.table for line in open(path)]
            print(frame_markdown(table(records).round(3)))
            if args.bootstrap:
                width_ratio_bootstrap(records, *args.bootstrap)
            return
        if args.oracle:
            for name, (scores, target, _) in pools(args.pools, 0).items():
                ratios = design_oracle(scores, target)
                print(
                    name,
                    "  ".join(f"{kind} s={s}: {r:.3f}" for (kind, s), r in ratios.items()),
                    flush=True,
                )
            return
        variance = {
            k: v
            for k, v in (("uniform_mix", args.uniform_mix), ("min_labels", args.min_labels))
            if v is not None
        }
        sink = open(args.out, "a") if args.out else None
        for name, (scores, target, _) in pools(args.pools, 0).items():
            truth = float(np.mean(scores.argmax(axis=1) == target))
            gt = group_truth(scores, target, None).tolist()
            bt = bin_truth(scores, target, args.n_bins)
            print(f"\n{name}: {len(target):,} rows, accuracy {truth:.4f}", flush=True)
            records = []
            for r in range(args.first_run, args.first_run + args.runs):
                rec = {
                    "pool": name,
                    "run": r,
                    "truth": truth,
                    "group_truth": gt,
                    "bin_truth": bt,
                    "n_bins": args.n_bins,
                    "methods": one_run(
                        scores, target, args.budgets, r, args.methods, variance, args.n_bins
                    ),
                    "variance": variance,
                }
                records.append(rec)
                if sink:
                    sink.write(json.dumps(rec) + "\n")
                    sink.flush()
            print(table(records).drop(columns=["pool"]).round(3).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()

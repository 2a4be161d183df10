"""Binary rates (TPR, FPR, PPV, NPV) with the calibrated prior, beside PPI++ and Wilson.

For each pool, rate and label budget n, ``--runs`` times: n rows labeled
uniformly at random, then

* ``BayesianAccuracy(metric=..., grouping="external")`` with
  ``prior="calibrated"`` (the default) and ``"hierarchical"``: the overall
  interval, each group's, and that of the difference of the first two groups
  (``compare_groups``);
* Wilson's interval on the labeled rows where the rate's condition holds;
* PPI++ (``ppi_py``, the positive class's score as the prediction of
  ``y``): for PPV and NPV, whose condition is the prediction, the mean of
  ``y`` over the rows predicted positive (negative); for TPR and FPR, a ratio
  of two means, by the delta method: the rate's point estimate from the two
  PPI++ means, and the interval's half-width that of PPI++ on the
  linearised variable ``(pred - r) * y / mean(y)`` (and its ``1 - y``
  counterpart for FPR).

Prints, per pool, rate and n: coverage of the overall 95 % interval, mean
width and its ratio to PPI++'s and Wilson's, RMSE x 100 of the point estimate
and its ratio to the label rate's; per group: mean and lowest coverage and
mean width; the difference's coverage. Each run's numbers are appended to
``--out`` (JSON lines) as they come.

Pools. No pool was looked at while the model was built (its priors were
chosen for accuracy on Fashion-MNIST). The fairness files of
``../shared/data/fairness`` (groups: the file's sensitive attribute, the
privileged group and the rest), with the MLP's and Gaussian naive Bayes'
scores (``POOL@tune`` and ``POOL@check``: the halves of ``bench_headline.py``'s
fixed split), and synthetic binary pools made to break the model (four groups of
unequal size, 8,000 rows):

* ``over``: scores over-confident (the true log-odds 0.5 x the score's);
* ``under``: scores under-confident (the true log-odds 2 x the score's);
* ``groupwise``: each group's log-odds shifted from its scores by N(0, 1);
* ``ignore``: the class ignores the scores (positive with probability 0.35).

Needs the peers' extra (``pip install "skassess[peers]"``)::

    OMP_NUM_THREADS=1 python benchmarks/bench_rates_calibrated.py --runs 100 --out rates.jsonl
    python benchmarks/bench_rates_calibrated.py --table rates.jsonl [--markdown]

``--runs 130 --first-run 30`` adds 100 new label draws to cells measured with 30.
"""

import argparse
import json
import pathlib
import warnings

import numpy as np
import pandas as pd
from bench_headline import split_half
from scipy import stats
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.metrics import compare_groups
from skassess.metrics._rate_table import rate_terms

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "fairness"
METRICS = ("tpr", "fpr", "ppv", "npv")
PRIORS = ("calibrated", "hierarchical")
FILES = {
    "adult": ("adult_sex_scores.csv.gz", "sex", "Male", "income-per-year"),
    "bank": ("bank_age_scores.csv.gz", "age", "adult", "y"),
    "compas": ("propublica-recidivism_race_scores.csv.gz", "race", "Caucasian", "two_year_recid"),
}
MODELS = {"mlp": "score_MultiLayerPerceptron", "nb": "score_GaussianNB"}
SYNTHETIC = ("over", "under", "groupwise", "ignore")


def synthetic(kind, seed, n=8000):
    """Positive-class scores, classes and four groups of unequal size."""
    rng = np.random.default_rng([seed, SYNTHETIC.index(kind)])
    groups = rng.choice(4, size=n, p=[0.55, 0.25, 0.15, 0.05])
    p1 = np.clip(rng.beta(1.2, 2.0, n), 1e-4, 1 - 1e-4)
    s = logit(p1)
    if kind == "over":
        p = expit(0.5 * s)
    elif kind == "under":
        p = expit(2.0 * s)
    elif kind == "groupwise":
        p = expit(s + rng.normal(0.0, 1.0, 4)[groups])
    else:
        p = np.full(n, 0.35)
    return p1, (rng.random(n) < p).astype(int), groups.astype(str)


def pool(name, seed):
    if "@" in name:
        # A real file's tuning or checking half: the headline's fixed split.
        base, part = name.split("@")
        return split_half(pool(base, seed), part)
    if name in SYNTHETIC:
        return synthetic(name, seed)
    base, model = name.split("-")
    file, attribute, privileged, label = FILES[base]
    frame = pd.read_csv(DATA / file)
    p1 = frame[MODELS[model]].to_numpy(dtype=float).clip(0.0, 1.0)
    groups = np.where(frame[attribute] == privileged, "privileged", "rest")
    return p1, frame[label].to_numpy().astype(int), groups


def rate(metric, pred, y):
    cond, out = rate_terms(metric, pred, y)
    return float((cond * out).sum() / cond.sum()) if cond.sum() > 0 else np.nan


def ppi_interval(metric, pred, p1, y, labeled):
    """PPI++ (ppi_py) interval and point of the rate on the pool."""
    import ppi_py

    lab, unl = labeled, ~labeled
    if metric in ("ppv", "npv"):
        on = pred == (1 if metric == "ppv" else 0)
        target = y if metric == "ppv" else 1 - y
        guess = p1 if metric == "ppv" else 1 - p1
        Y, Yh, Yu = target[lab & on], guess[lab & on], guess[unl & on]
        if len(Y) < 2:
            return np.nan, np.nan, np.nan
        lo, hi = ppi_py.ppi_mean_ci(Y, Yh, Yu, alpha=0.05)
        point = ppi_py.ppi_mean_pointestimate(Y, Yh, Yu)
        return float(np.ravel(lo)[0]), float(np.ravel(hi)[0]), float(np.ravel(point)[0])
    # TPR = E[pred y] / E[y]; FPR = E[pred (1 - y)] / E[1 - y]
    cls, guess = (y, p1) if metric == "tpr" else (1 - y, 1 - p1)
    Y, Yh, Yu = cls[lab], guess[lab], guess[unl]
    if Y.sum() == 0 or len(Y) < 2:
        return np.nan, np.nan, np.nan
    num = float(
        np.ravel(ppi_py.ppi_mean_pointestimate(pred[lab] * Y, pred[lab] * Yh, pred[unl] * Yu))[0]
    )
    den = float(np.ravel(ppi_py.ppi_mean_pointestimate(Y, Yh, Yu))[0])
    if not den > 0:
        return np.nan, np.nan, np.nan
    r = num / den
    z, zh, zu = ((pred[lab] - r) * Y / den, (pred[lab] - r) * Yh / den, (pred[unl] - r) * Yu / den)
    lo, hi = ppi_py.ppi_mean_ci(z, zh, zu, alpha=0.05)
    half = (float(np.ravel(hi)[0]) - float(np.ravel(lo)[0])) / 2.0
    return r - half, r + half, r


def one_run(metric, p1, y, groups, rows, seed):
    n = len(y)
    pred = (p1 > 0.5).astype(int)
    X = np.column_stack([1.0 - p1, p1])
    labeled = np.zeros(n, dtype=bool)
    labeled[rows] = True
    masked = np.where(labeled, y, -1)
    names = sorted(np.unique(groups))
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for prior in PRIORS:
            est = BayesianAccuracy(
                metric=metric, grouping="external", prior=prior, random_state=seed
            ).fit(X, masked, group_by=groups)
            lo, hi = est.overall_interval(0.95)
            s = est.summary().loc[names]
            d = compare_groups(est, names[0], names[1], random_state=seed).interval(0.95)
            out[prior] = {
                "overall": (float(lo), float(hi), float(est.overall_mean())),
                "lower": s["lower"].tolist(),
                "upper": s["upper"].tolist(),
                "delta": (float(d[0]), float(d[1])),
            }
    cond, hit = rate_terms(metric, pred[rows], y[rows])
    k, m = int((cond * hit).sum()), int(cond.sum())
    if m:
        ci = stats.binomtest(k, m).proportion_ci(0.95, method="wilson")
        out["wilson"] = {"overall": (ci.low, ci.high, k / m)}
    else:
        out["wilson"] = {"overall": (0.0, 1.0, np.nan)}
    out["ppi++"] = {"overall": ppi_interval(metric, pred, p1, y, labeled)}
    return out


def run(pools, metrics, budgets, runs, seed, out_path, first_run=0):
    for name in pools:
        p1, y, groups = pool(name, seed)
        pred = (p1 > 0.5).astype(int)
        names = sorted(np.unique(groups))
        for metric in metrics:
            truth = rate(metric, pred, y)
            gt = [rate(metric, pred[groups == g], y[groups == g]) for g in names]
            for n in budgets:
                for r in range(first_run, runs):
                    rng = np.random.default_rng([seed, n, r])
                    rows = rng.choice(len(y), size=n, replace=False)
                    rec = {
                        "pool": name,
                        "metric": metric,
                        "n": n,
                        "run": r,
                        "seed": seed,
                        "truth": truth,
                        "group_truth": gt,
                        **one_run(metric, p1, y, groups, rows, r),
                    }
                    with open(out_path, "a") as f:
                        f.write(json.dumps(rec) + "\n")
                print(f"{name} {metric} n={n}: {runs - first_run} runs", flush=True)


def table(records):
    frame = pd.DataFrame(records)
    lines = []
    for (name, metric, n), cell in frame.groupby(["pool", "metric", "n"], sort=False):
        truth = cell["truth"].to_numpy()
        gt = np.array(cell["group_truth"].tolist())
        ref = {
            m: np.array(cell[m].map(lambda r: r["overall"]).tolist(), dtype=float)
            for m in ("ppi++", "wilson") + PRIORS
        }
        width = {m: np.nanmean(a[:, 1] - a[:, 0]) for m, a in ref.items()}
        ok = np.isfinite(ref["wilson"][:, 2])
        rmse_label = np.sqrt(np.mean((ref["wilson"][ok, 2] - truth[ok]) ** 2))
        for m, a in ref.items():
            fine = np.isfinite(a[:, 0])
            cover = np.mean((a[fine, 0] <= truth[fine]) & (truth[fine] <= a[fine, 1]))
            rmse = np.sqrt(np.mean((a[ok & fine, 2] - truth[ok & fine]) ** 2))
            row = {
                "pool": name,
                "metric": metric,
                "n": n,
                "method": m,
                "runs": int(fine.sum()),
                "coverage": cover,
                "width": width[m],
                "/ppi++": width[m] / width["ppi++"],
                "/wilson": width[m] / width["wilson"],
                "rmse_x100": 100 * rmse,
                "/label_rate": rmse / rmse_label,
            }
            if m in PRIORS:
                lo = np.array(cell[m].map(lambda r: r["lower"]).tolist())
                hi = np.array(cell[m].map(lambda r: r["upper"]).tolist())
                held = (lo <= gt) & (gt <= hi)
                d = np.array(cell[m].map(lambda r: r["delta"]).tolist())
                delta = gt[:, 0] - gt[:, 1]
                row.update(
                    {
                        "group_cov": held.mean(),
                        "group_cov_min": held.mean(axis=0).min(),
                        "group_width": np.mean(hi - lo),
                        "delta_cov": np.mean((d[:, 0] <= delta) & (delta <= d[:, 1])),
                        "delta_width": np.mean(d[:, 1] - d[:, 0]),
                    }
                )
            lines.append(row)
    return pd.DataFrame(lines)


def markdown(frame):
    """The benchmarks page's tables: overall coverage and width ratios; groups and differences."""
    ns = sorted(frame["n"].unique())
    cal = frame[frame.method == "calibrated"].set_index(["pool", "metric", "n"])
    hier = frame[frame.method == "hierarchical"].set_index(["pool", "metric", "n"])
    ppi = frame[frame.method == "ppi++"].set_index(["pool", "metric", "n"])
    keys = cal.index.droplevel("n").unique()
    out = [
        "| pool | rate | " + " | ".join(f"n={n}" for n in ns) + " |",
        "|---|---|" + "---|" * len(ns),
    ]
    for pool, metric in keys:
        cells = []
        for n in ns:
            if (pool, metric, n) not in cal.index:  # not run (yet)
                cells.append("–")
                continue
            c = cal.loc[(pool, metric, n)]
            cov = f"{c.coverage:.2f}" if c.coverage >= 0.9 else f"**{c.coverage:.2f}**"
            p = ppi.loc[(pool, metric, n)]
            cells.append(f"{cov} ({p.coverage:.2f}) {c['/ppi++']:.2f}× {c['/wilson']:.2f}×")
        out.append(f"| {pool} | {metric} | " + " | ".join(cells) + " |")
    out += [
        "",
        "| pool | rate | " + " | ".join(f"n={n}" for n in ns) + " |",
        "|---|---|" + "---|" * len(ns),
    ]
    for pool, metric in keys:
        cells = []
        for n in ns:
            if (pool, metric, n) not in cal.index:
                cells.append("–")
                continue
            c, h = cal.loc[(pool, metric, n)], hier.loc[(pool, metric, n)]
            cells.append(
                f"{c.group_cov:.2f} / {c.group_cov_min:.2f} {c.delta_cov:.2f}"
                f" {c.group_width / h.group_width:.2f}×"
                f" {c['/label_rate']:.2f}"
            )
        out.append(f"| {pool} | {metric} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def summary(frame):
    """The numbers the benchmarks page quotes, over every cell of the calibrated prior."""
    cal = frame[frame.method == "calibrated"]
    short = cal[cal.coverage < 0.9]
    wide = cal[cal["/wilson"] > 1.0]
    late = cal[cal.n >= 100]
    lines = [
        f"cells: {len(cal)}; coverage mean {cal.coverage.mean():.3f}, "
        f"lowest {cal.coverage.min():.3f}",
        f"below 0.90 in {len(short)}: "
        + ", ".join(f"{r.pool} {r.metric} n={r.n} {r.coverage:.3f}" for r in short.itertuples()),
        f"wider than Wilson in {len(wide)} (up to {cal['/wilson'].max():.2f} x)",
        f"n >= 100: width / PPI++ median {late['/ppi++'].median():.2f} "
        f"({late['/ppi++'].min():.2f}-{late['/ppi++'].max():.2f})"
        if len(late)
        else "n >= 100: no cell",
        f"groups: mean coverage {cal.group_cov.min():.2f}-{cal.group_cov.max():.2f}, "
        f"lowest group {cal.group_cov_min.min():.2f}; difference {cal.delta_cov.min():.2f}-"
        f"{cal.delta_cov.max():.2f} (mean {cal.delta_cov.mean():.3f})",
        f"RMSE / label rate {cal['/label_rate'].min():.2f}-{cal['/label_rate'].max():.2f} "
        f"(mean {cal['/label_rate'].mean():.2f}; above 1 in {(cal['/label_rate'] > 1).sum()})",
    ]
    return "\n".join(lines)


def save_table(frame, name, command):
    """The benchmarks page's table: one row per pool, rate and n (calibrated prior)."""
    from _results import save

    cal = frame[frame.method == "calibrated"].set_index(["pool", "metric", "n"])
    ppi = frame[frame.method == "ppi++"].set_index(["pool", "metric", "n"])
    wilson = frame[frame.method == "wilson"].set_index(["pool", "metric", "n"])
    rows = []
    for key, c in cal.iterrows():
        rows.append(
            [
                *key,
                int(c.runs),
                c.coverage,
                ppi.loc[key].coverage,
                wilson.loc[key].coverage,
                c["/ppi++"],
                c["/wilson"],
                c["/label_rate"],
                c.group_cov,
                c.group_cov_min,
                c.delta_cov,
            ]
        )
    columns = [
        "pool",
        "rate",
        "n",
        "runs",
        "coverage: calibrated",
        "PPI++",
        "Wilson",
        "width / PPI++",
        "width / Wilson",
        "RMSE / label rate",
        "groups: mean",
        "groups: lowest",
        "difference",
    ]
    formats = {c: ".2f" for c in columns[4:]}
    formats.update({c: ".3f" for c in columns[4:7]})
    save(name, columns, rows, command=command, formats=formats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pools", nargs="+", default=[f"{f}-{m}" for f in FILES for m in MODELS] + list(SYNTHETIC)
    )
    parser.add_argument("--metrics", nargs="+", default=list(METRICS), choices=METRICS)
    parser.add_argument("--budgets", type=int, nargs="+", default=[20, 50, 100, 200, 500])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--first-run",
        type=int,
        default=0,
        help="skip the runs before this one (fresh label draws for a cell already measured)",
    )
    parser.add_argument("--out", default="rates_calibrated.jsonl")
    parser.add_argument("--table", metavar="JSONL", nargs="+", help="print the table of these runs")
    parser.add_argument(
        "--markdown", action="store_true", help="with --table: the benchmarks page's two tables"
    )
    parser.add_argument(
        "--save", metavar="NAME", help="with --table: save the table as benchmarks/results/NAME"
    )
    parser.add_argument(
        "--command", help="with --save: the commands that made the runs (stored beside the table)"
    )
    args = parser.parse_args()
    if args.table:
        records = []
        for path in args.table:
            with open(path) as f:
                records += [json.loads(line) for line in f]
        pd.set_option("display.width", 250)
        frame = table(records)
        print(markdown(frame) if args.markdown else frame.round(3).to_string(index=False))
        print(summary(frame))
        if args.save:
            save_table(frame, args.save, args.command)
        return
    run(args.pools, args.metrics, args.budgets, args.runs, args.seed, args.out, args.first_run)


if __name__ == "__main__":
    main()

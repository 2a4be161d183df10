"""Coverage, width and error of every accuracy interval, beside PPI++ and Wilson.

For each pool and label budget n, ``--runs`` times: n rows labeled uniformly at
random, then

* skassess ``BayesianAccuracy`` with ``prior="calibrated"`` (the default),
  ``"hierarchical"`` and ``"informative"``: the overall interval and each
  group's (predicted class, or the file's sensitive attribute);
* Wilson's interval on the n labels alone;
* PPI and PPI++ of ``ppi_py`` (the top-1 confidence as the prediction of
  "the model is right" on every unlabeled row).

Prints, per pool and n: overall coverage, mean width, width / PPI++ and /
Wilson (same runs), RMSE x 100 of the point estimate and its ratio to the
label mean's; for the group intervals the mean coverage over groups, the
lowest, and that of the least accurate group. Each run's numbers are appended
to ``--out`` (JSON lines) as they come, so a run cut short keeps its results.

Pools. *Tuning* (looked at while the model's priors were chosen): the
bundled Fashion-MNIST MLP. *Checking* (never looked at before the table):
SVHN's ResNet-152, three fairness files (MLP and Gaussian naive Bayes
scores), and synthetic pools made to break a prior:

* ``over-100``: 100 classes of ~100 rows, top-1 confidence ~10 points above
  the accuracy;
* ``under-10``: 10 classes, scores flattened (confidence below accuracy);
* ``classwise-20``: 20 classes, each class's log-odds of being right shifted
  from its confidence by N(0, 1) (per-class miscalibration);
* ``ignore-10``: 10 classes whose errors ignore the scores (right with
  probability 0.8 whatever the confidence);
* ``POOL@tune`` and ``POOL@check``: the halves of a real file split at
  random by a fixed seed (``SPLIT_SEED``). The labels' dispersion check of
  the calibrated model was designed on the tuning halves of ``bank-mlp`` and
  ``adult-nb`` (and on Fashion-MNIST and synthetic pools of seed 7); the
  checking halves were run once, after.
* ``kink-10``: 10 classes, calibrated up to a confidence of 0.9 and
  over-confident above it (accuracy falls to 0.6 at confidence 1): no
  monotone map of the scores fits it.

Needs the peers' extra (``pip install "skassess[peers]"``)::

    OMP_NUM_THREADS=1 python benchmarks/bench_headline.py --runs 200 --out headline.jsonl
    python benchmarks/bench_headline.py --table headline.jsonl
"""

import argparse
import json
import pathlib
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.datasets import load_fashion_mnist_scores, read_predictions

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
PRIORS = ("calibrated", "hierarchical", "informative")
PEERS = ("wilson", "ppi", "ppi++")
TUNING = ("fashion-mnist", "bank-mlp@tune", "adult-nb@tune")
#: The pools run by default.
POOLS = (
    "fashion-mnist",
    "svhn",
    "over-100",
    "under-10",
    "classwise-20",
    "ignore-10",
    "adult-mlp",
    "bank-mlp",
    "compas-mlp",
    "adult-nb",
)


def top1_pool(conf, correct, pred, n_classes, rng):
    """A score matrix with this top-1 confidence and prediction, and a target."""
    n = len(conf)
    rest = (1.0 - conf) / (n_classes - 1)
    scores = np.repeat(rest[:, None], n_classes, axis=1)
    scores[np.arange(n), pred] = conf
    other = (pred + rng.integers(1, n_classes, n)) % n_classes
    return scores, np.where(correct, pred, other)


def synthetic(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "over-100":
        K, n = 100, 10_000
        pred = rng.integers(0, K, n)
        true_p = rng.beta(3.0, 1.0, n)  # mean 0.75
        conf = expit(logit(np.clip(true_p, 1e-4, 1 - 1e-4)) + 0.9)
        conf = np.maximum(conf, 1.0 / K + 1e-3)
        return (*top1_pool(conf, rng.random(n) < true_p, pred, K, rng), None)
    if kind == "under-10":
        K, n = 10, 10_000
        pred = rng.integers(0, K, n)
        true_p = rng.beta(6.0, 1.0, n)
        conf = np.maximum(expit(0.5 * logit(np.clip(true_p, 1e-4, 1 - 1e-4))), 0.11)
        return (*top1_pool(conf, rng.random(n) < true_p, pred, K, rng), None)
    if kind == "classwise-20":
        K, n = 20, 10_000
        pred = rng.integers(0, K, n)
        conf = np.maximum(rng.beta(5.0, 1.5, n), 0.06)
        shift = rng.normal(0.0, 1.0, K)
        p = expit(logit(np.clip(conf, 1e-4, 1 - 1e-4)) + shift[pred])
        return (*top1_pool(conf, rng.random(n) < p, pred, K, rng), None)
    if kind == "ignore-10":
        K, n = 10, 10_000
        pred = rng.integers(0, K, n)
        conf = np.maximum(rng.beta(8.0, 2.0, n), 0.11)
        return (*top1_pool(conf, rng.random(n) < 0.8, pred, K, rng), None)
    if kind == "kink-10":
        # Calibrated up to a confidence of 0.9, over-confident above it: accuracy falls
        # back to 0.6 at a confidence of 1, a shape no monotone map of the scores fits.
        K, n = 10, 10_000
        pred = rng.integers(0, K, n)
        conf = np.maximum(rng.beta(5.0, 1.2, n), 0.11)
        p = np.where(conf < 0.9, conf, 0.9 - 3.0 * (conf - 0.9))
        return (*top1_pool(conf, rng.random(n) < p, pred, K, rng), None)
    raise ValueError(kind)


def fairness(name, column):
    file, group, target = {
        "adult": ("adult_sex_scores.csv.gz", "sex", "income-per-year"),
        "bank": ("bank_age_scores.csv.gz", "age", "y"),
        "compas": ("propublica-recidivism_race_scores.csv.gz", "race", "two_year_recid"),
    }[name]
    frame = pd.read_csv(DATA / "fairness" / file)
    p1 = frame[column].to_numpy(dtype=float).clip(0.0, 1.0)
    return np.column_stack([1.0 - p1, p1]), frame[target].to_numpy(), frame[group].to_numpy()


#: Seed of the fixed split of a real file into a tuning and a checking half
#: (``POOL@tune``, ``POOL@check``): decided before either half was looked at.
SPLIT_SEED = 12345


def split_half(data, part):
    """The tuning or the checking half of a pool's rows (a fixed random split)."""
    n = len(data[1])
    perm = np.random.default_rng(SPLIT_SEED).permutation(n)
    rows = {"tune": perm[: n // 2], "check": perm[n // 2 :]}[part]
    return tuple(None if v is None else v[rows] for v in data)


def pools(names, seed):
    out = {}
    for name in names:
        if "@" in name:
            base, part = name.split("@")
            out[name] = split_half(pools([base], seed)[base], part)
            continue
        if name == "svhn":
            p = read_predictions(DATA / "predictions" / "svhn_resnet152.txt.gz")
            out[name] = (p.scores, p.target, None)
        elif name == "fashion-mnist":
            fm = load_fashion_mnist_scores()
            out[name] = (fm.scores, fm.target, None)
        elif name.split("-")[0] in ("adult", "bank", "compas"):
            base, model = name.split("-", 1)
            column = {"mlp": "score_MultiLayerPerceptron", "nb": "score_GaussianNB"}[model]
            out[name] = fairness(base, column)
        else:
            out[name] = synthetic(name, seed)
    return out


def one_run(scores, target, groups, rows, seed, priors=PRIORS):
    """Each method's overall (lower, upper, point) and groups' (lower, upper)."""
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
        for prior in priors:
            kw = {} if groups is None else {"grouping": "external"}
            fit = {} if groups is None else {"group_by": groups}
            est = BayesianAccuracy(prior=prior, random_state=seed, **kw).fit(scores, y, **fit)
            lo, hi = est.overall_interval(0.95)
            s = est.summary()
            out[prior] = {
                "overall": (lo, hi, est.overall_mean()),
                "lower": s["lower"].tolist(),
                "upper": s["upper"].tolist(),
            }
    k, n = int(correct[rows].sum()), len(rows)
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    out["wilson"] = {"overall": (ci.low, ci.high, k / n)}
    Y, Yhat, Yun = correct[rows], conf[rows], conf[~labeled]
    for name, lam in (("ppi", 1.0), ("ppi++", None)):
        lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yun, alpha=0.05, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yun, lam=lam)
        out[name] = {
            "overall": (float(np.ravel(lo)[0]), float(np.ravel(hi)[0]), float(np.ravel(point)[0]))
        }
    return out


def group_truth(scores, target, groups):
    pred = scores.argmax(axis=1)
    key = pred if groups is None else groups
    frame = pd.DataFrame({"g": key, "ok": pred == target})
    return frame.groupby("g", sort=True)["ok"].mean().to_numpy()


def table(records):
    frame = pd.DataFrame(records)
    lines = []
    for (pool, n), cell in frame.groupby(["pool", "n"], sort=False):
        # Per run: a synthetic pool is drawn anew for each --seed, so runs of
        # several seeds pooled here may have different truths.
        truth = cell["truth"].to_numpy()
        gt = np.array(cell["group_truth"].tolist())
        ref = {}
        for m in [m for m in PEERS + PRIORS if m in cell]:
            a = np.array(cell[m].map(lambda r: r["overall"]).tolist())
            ref[m] = a
        width = {m: np.mean(a[:, 1] - a[:, 0]) for m, a in ref.items()}
        rmse_mean = np.sqrt(np.mean((ref["wilson"][:, 2] - truth) ** 2))
        for m, a in ref.items():
            cover = np.mean((a[:, 0] <= truth) & (truth <= a[:, 1]))
            rmse = np.sqrt(np.mean((a[:, 2] - truth) ** 2))
            row = {
                "pool": pool,
                "n": n,
                "method": m,
                "runs": len(a),
                "coverage": cover,
                "width": width[m],
                "/ppi++": width[m] / width["ppi++"],
                "/wilson": width[m] / width["wilson"],
                "rmse_x100": 100 * rmse,
                "/label_mean": rmse / rmse_mean,
            }
            if m in PRIORS:
                lo = np.array(cell[m].map(lambda r: r["lower"]).tolist())
                hi = np.array(cell[m].map(lambda r: r["upper"]).tolist())
                held = (lo <= gt) & (gt <= hi)
                cov = held.mean(axis=0)
                worst = held[np.arange(len(gt)), np.argmin(gt, axis=1)].mean()
                row.update(
                    {
                        "group_cov": cov.mean(),
                        "group_cov_min": cov.min(),
                        "worst_group_cov": worst,
                        "group_width": np.mean(hi - lo),
                    }
                )
            lines.append(row)
    return pd.DataFrame(lines)


def rst(frame, command):
    """The user guide's coverage table: the calibrated prior beside the peers."""
    cal = frame[frame["method"] == "calibrated"].set_index(["pool", "n"])
    cov = frame.pivot_table(index=["pool", "n"], columns="method", values="coverage")
    lines = [
        '.. list-table:: 95 % intervals of ``prior="calibrated"``, n random labels '
        f"(``{command}``)",
        "   :header-rows: 1",
        "",
        "   * - pool",
        "     - n",
        "     - runs",
        "     - overall coverage",
        "     - width / PPI++",
        "     - width / Wilson",
        "     - RMSE / label mean",
        "     - PPI++ coverage",
        "     - group coverage (mean, lowest)",
        "     - least accurate group's coverage",
    ]
    for (pool, n), r in cal.iterrows():
        role = " (tuning)" if pool in TUNING else ""
        lines += [
            f"   * - {pool}{role}",
            f"     - {n}",
            f"     - {r['runs']}",
            f"     - {r['coverage']:.3f}",
            f"     - {r['/ppi++']:.2f}",
            f"     - {r['/wilson']:.2f}",
            f"     - {r['/label_mean']:.2f}",
            f"     - {cov.loc[(pool, n), 'ppi++']:.3f}",
            f"     - {r['group_cov']:.3f}, {r['group_cov_min']:.3f}",
            f"     - {r['worst_group_cov']:.3f}",
        ]
    return "\n".join(lines) + "\n"


def headline_rows(frame):
    """The page's table as (columns, rows, formats): the calibrated prior, the peers
    and the other priors run."""
    cov = frame.pivot_table(index=["pool", "n"], columns="method", values="coverage", sort=False)
    cal = frame[frame["method"] == "calibrated"].set_index(["pool", "n"])
    others = [p for p in PRIORS[1:] if p in set(frame["method"])]
    columns = [
        "pool",
        "n",
        "runs",
        "coverage: calibrated",
        "PPI++",
        "Wilson",
        *others,
        "width / PPI++",
        "width / Wilson",
        "RMSE / label mean",
        "groups: mean",
        "groups: lowest",
        "least accurate group",
    ]
    formats = {"coverage: calibrated": ".3f", "PPI++": ".3f", "Wilson": ".3f"}
    formats.update({c: ".2f" for c in columns[6:]})
    rows = []
    for (pool, n), r in cal.iterrows():
        c = cov.loc[(pool, n)].reindex(PEERS + PRIORS)
        role = " (tuning)" if pool in TUNING else ""
        rows.append(
            [f"{pool}{role}", int(n), int(r["runs"]), r["coverage"], c["ppi++"], c["wilson"]]
            + [c[p] for p in others]
            + [r["/ppi++"], r["/wilson"], r["/label_mean"]]
            + [r["group_cov"], r["group_cov_min"], r["worst_group_cov"]]
        )
    return columns, rows, formats


def markdown(frame):
    """The benchmarks page's table (as ``--save`` stores it)."""
    columns, rows, formats = headline_rows(frame)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = (
            format(v, formats[c]) if c in formats else str(v)
            for c, v in zip(columns, row, strict=True)
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=list(POOLS))
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budgets", type=int, nargs="+", default=[20, 50, 100, 200, 500])
    ap.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the labeled rows (runs of different seeds can be pooled)",
    )
    ap.add_argument(
        "--priors",
        nargs="+",
        default=list(PRIORS),
        choices=PRIORS,
        help="the skassess priors to run (the peers always run)",
    )
    ap.add_argument("--out", default=None, help="JSON lines file the runs are appended to")
    ap.add_argument("--table", default=None, help="print the table of a JSON lines file")
    ap.add_argument("--rst", default=None, help="with --table: also write the user guide's table")
    ap.add_argument("--markdown", action="store_true", help="with --table: the page's table")
    ap.add_argument(
        "--save",
        metavar="NAME",
        default=None,
        help="with --table: write the page's table to benchmarks/results/NAME.json",
    )
    ap.add_argument(
        "--command",
        default=None,
        help="with --save: the command that made the runs (stored beside the table)",
    )
    args = ap.parse_args()
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    if args.table:
        records = [json.loads(line) for line in open(args.table)]
        frame = table(records)
        print(frame.round(3).to_string(index=False))
        if args.markdown:
            print(markdown(frame))
        if args.save:
            from _results import save

            columns, rows, formats = headline_rows(frame)
            commits = sorted({r.get("commit", "unknown") for r in records})
            save(
                args.save,
                columns,
                rows,
                formats=formats,
                command=args.command,
                commit=", ".join(commits),
            )
        if args.rst:
            runs = frame["runs"].max()
            command = f"python benchmarks/bench_headline.py --runs {runs}"
            pathlib.Path(args.rst).write_text(rst(frame, command))
        return
    sink = open(args.out, "a") if args.out else None
    from _results import current_commit

    measured = current_commit()
    for name, (scores, target, groups) in pools(args.pools, args.seed).items():
        truth = float(np.mean(scores.argmax(axis=1) == target))
        gt = group_truth(scores, target, groups)
        role = "tuning" if name in TUNING else "checking"
        print(
            f"\n{name} ({role}): {len(target):,} rows, {scores.shape[1]} classes, "
            f"{len(gt)} groups, accuracy {truth:.4f}, mean top-1 confidence "
            f"{scores.max(axis=1).mean():.4f}",
            flush=True,
        )
        rng = np.random.default_rng(args.seed)
        records = []
        for n in args.budgets:
            for r in range(args.runs):
                rows = rng.choice(len(target), n, replace=False)
                rec = {
                    "pool": name,
                    "n": n,
                    "run": r,
                    "truth": truth,
                    "group_truth": gt.tolist(),
                    "seed": args.seed,
                    "commit": measured,
                    **one_run(scores, target, groups, rows, r, args.priors),
                }
                records.append(rec)
                if sink:
                    sink.write(json.dumps(rec) + "\n")
                    sink.flush()
            t = table([x for x in records if x["n"] == n])
            print(t.drop(columns=["pool"]).round(3).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()

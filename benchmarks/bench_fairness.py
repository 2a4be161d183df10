"""Fairness assessment experiments of Ji, Smyth, Steyvers (NeurIPS 2020), thesis Tables 4.2-4.4.

Usage::

    python benchmarks/bench_fairness.py --tables 4.2 --runs 100 --n-jobs 2
    python benchmarks/bench_fairness.py --tables 4.3 4.4
    python benchmarks/bench_fairness.py --tables curves --runs 20
    python benchmarks/bench_fairness.py --tables 4.3 --rows "Compas-R gender" --first-seed 100

Reads the model scores in ``../shared/data/fairness`` (Adult race and sex,
ProPublica recidivism race and sex). The privileged group (White, Male,
Caucasian, Male) is compared with all other rows. In each run the labeled set
is ``n_L`` random rows with at least one row per group (the thesis's
protocol); the ground truth is the difference on the whole file. Prints
markdown tables of MAE x 100 (or coverage %) beside the thesis's numbers, the
standard error of the BC MAE over the runs, and the wall-clock time of each
table. Run ``r`` uses seed ``first_seed + r`` for both the labeled set and the
sampler, so a second batch of runs (``--first-seed 100``) is independent of the
first.
"""

import argparse
import pathlib
import time
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from skassess.calibration import BayesianGroupMetrics, HierarchicalBetaCalibrator

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared/data/fairness"
SETS = {
    "Adult race": ("adult_race", "income-per-year", "race", "White"),
    "Adult gender": ("adult_sex", "income-per-year", "sex", "Male"),
    "Compas-R race": ("propublica-recidivism_race", "two_year_recid", "race", "Caucasian"),
    "Compas-R gender": ("propublica-recidivism_sex", "two_year_recid", "sex", "Male"),
}
MODELS = {"MLP": "MultiLayerPerceptron", "LR": "LR", "RF": "RandomForest", "GNB": "GaussianNB"}
METHODS = {"Freq": "frequentist", "BB": "beta-binomial", "BC": "bayesian-calibration"}
UNLABELED = "expected"  # BayesianGroupMetrics(unlabeled=...); set by --unlabeled
FIRST_SEED = 0  # seed of the first run; set by --first-seed
ROWS = None  # restrict Tables 4.2 / 4.3 to these data sets; set by --rows
# Thesis numbers: (Freq, BB, BC); None where the thesis prints a dash.
THESIS_42 = {
    ("MLP", "Adult race"): (16.5, 18.5, 3.9), ("MLP", "Adult gender"): (19.7, 17.4, 5.1),
    ("MLP", "Compas-R race"): (31.5, 21.0, 4.2), ("MLP", "Compas-R gender"): (33.7, 21.6, 5.0),
    ("LR", "Adult race"): (16.4, 18.7, 2.9), ("RF", "Adult race"): (16.5, 18.2, 3.2),
    ("GNB", "Adult race"): (17.6, 18.9, 3.6),
}
THESIS_43 = {
    "Adult race": (None, 12.5, 5.8), "Adult gender": (16.3, 14.3, 4.3),
    "Compas-R race": (None, 7.6, 2.5), "Compas-R gender": (10.0, 9.5, 1.9),
}


def load(name, model):
    file, label, attribute, privileged = SETS[name]
    frame = pd.read_csv(DATA / f"{file}_scores.csv.gz", index_col=0)
    groups = np.where(frame[attribute] == privileged, privileged, "rest")
    return frame[f"score_{MODELS[model]}"].to_numpy(), frame[label].to_numpy(), groups, privileged


def labeled_rows(groups, n_labeled, seed):
    """n_labeled random rows, at least one per group (the thesis's protocol)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(groups))
    first = [order[np.flatnonzero(groups[order] == g)[0]] for g in np.unique(groups)]
    rest = order[~np.isin(order, first)]
    return np.concatenate([first, rest])[:n_labeled]


def truth(s, y, groups, privileged, metric):
    pred = s > 0.5
    def rate(mask):
        if metric == "accuracy":
            return np.mean(pred[mask] == y[mask])
        cond = y[mask] == (1 if metric == "tpr" else 0)
        return np.mean(pred[mask][cond])
    return rate(groups == privileged) - rate(groups != privileged)


def make_estimator(short, metrics, privileged, seed, unlabeled):
    calibrator = None
    if short == "BC-NH":  # the thesis's non-hierarchical ablation
        calibrator = HierarchicalBetaCalibrator(hierarchical=False, random_state=seed)
    method = "bayesian-calibration" if short == "BC-NH" else METHODS[short]
    return BayesianGroupMetrics(method, metrics=metrics, calibrator=calibrator,
                                privileged=privileged, unlabeled=unlabeled, random_state=seed)


def one_run(s, y, groups, privileged, n_labeled, seed, metrics, methods, unlabeled):
    """{(method, metric): (mean, lower, upper) of Delta}, plus R-hat / ESS of the BC fits."""
    rows = labeled_rows(groups, n_labeled, seed)
    y_obs = np.full(len(y), -1)
    y_obs[rows] = y[rows]
    out = {"rhat": 1.0, "ess": np.inf}
    for short in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # R-hat/ESS are recorded below
            est = make_estimator(short, metrics, privileged, seed, unlabeled).fit(
                s, y_obs, groups=groups)
        table = est.differences()
        for metric in metrics:
            row = table.loc[metric].iloc[0]
            out[short, metric] = (row["mean"], row["lower"], row["upper"])
        if est.calibrator_ is not None:
            out["rhat"] = max(out["rhat"], est.calibrator_.rhat_.max())
            out["ess"] = min(out["ess"], est.calibrator_.ess_.min())
    return out


def experiment(name, model, n_labeled, metrics, runs, n_jobs, methods=("Freq", "BB", "BC")):
    """Per (method, metric): MAE x 100, undefined runs, coverage %; worst R-hat / ESS."""
    s, y, groups, privileged = load(name, model)
    results = Parallel(n_jobs=n_jobs)(
        delayed(one_run)(s, y, groups, privileged, n_labeled, seed, metrics, methods, UNLABELED)
        for seed in range(FIRST_SEED, FIRST_SEED + runs)
    )
    summary = {"rhat": max(r["rhat"] for r in results), "ess": min(r["ess"] for r in results)}
    for metric in metrics:
        true = truth(s, y, groups, privileged, metric)
        for short in methods:
            est = np.array([r[short, metric] for r in results], dtype=np.float64)
            err = np.abs(est[:, 0] - true)
            valid = err[~np.isnan(err)]
            summary[short, metric] = {
                "mae": 100 * np.mean(valid),
                "se": 100 * np.std(valid, ddof=1) / np.sqrt(len(valid)),
                "undefined": int(np.isnan(est[:, 0]).sum()),
                "coverage": 100 * np.mean((est[:, 1] <= true) & (true <= est[:, 2])),
            }
    return summary


def fmt(value, undefined=0):
    if value is None:
        return "—"
    text = f"{value:.1f}"
    return text + f" ({undefined} undefined)" if undefined else text


def print_mae_row(label, r, thesis, metric):
    cells = " | ".join(fmt(r[m, metric]["mae"], r[m, metric]["undefined"])
                       for m in ("Freq", "BB", "BC"))
    print(f"| {label} | {cells} | {r['BC', metric]['se']:.1f} | "
          f"{' / '.join(fmt(v) for v in thesis)} | "
          f"{r['rhat']:.3f} | {r['ess']:.0f} |", flush=True)


def table_42(runs, n_jobs):
    print("\n### Table 4.2: MAE x 100 of Delta accuracy, n_L = 10\n")
    print("| model | data | Freq | BB | BC | BC SE | thesis Freq / BB / BC | max R-hat "
          "| min ESS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (model, name), thesis in THESIS_42.items():
        if ROWS and name not in ROWS:
            continue
        r = experiment(name, model, 10, ("accuracy",), runs, n_jobs)
        print_mae_row(f"{model} | {name}", r, thesis, "accuracy")


def table_43(runs, n_jobs):
    print("\n### Table 4.3: MAE x 100 of Delta TPR, n_L = 200 (MLP)\n")
    print("| data | Freq | BB | BC | BC SE | thesis Freq / BB / BC | max R-hat | min ESS |")
    print("|---|---|---|---|---|---|---|---|")
    for name, thesis in THESIS_43.items():
        if ROWS and name not in ROWS:
            continue
        r = experiment(name, "MLP", 200, ("tpr",), runs, n_jobs)
        print_mae_row(name, r, thesis, "tpr")


def table_44(runs, n_jobs):
    print("\n### Table 4.4: coverage (%) of 95 % intervals of Delta accuracy (MLP), BC / BB\n")
    sizes = (10, 20, 40, 100)
    print("| data | " + " | ".join(f"n_L = {n}" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name in SETS:
        cells = []
        for n in sizes:
            r = experiment(name, "MLP", n, ("accuracy",), runs, n_jobs, methods=("BB", "BC"))
            cells.append(f"{r['BC', 'accuracy']['coverage']:.0f} / "
                         f"{r['BB', 'accuracy']['coverage']:.0f}")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def curves(runs, n_jobs):
    sizes = (10, 20, 50, 100, 200, 500, 1000)
    methods = ("Freq", "BB", "BC", "BC-NH")
    metrics = ("accuracy", "tpr", "fpr")
    print("\n### MAE x 100 against n_L (MLP): Freq / BB / BC / BC-NH (non-hierarchical)\n")
    print("| data | metric | " + " | ".join(f"n_L = {n}" for n in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for name in SETS:
        results = [experiment(name, "MLP", n, metrics, runs, n_jobs, methods) for n in sizes]
        for metric in metrics:
            cells = [" / ".join(f"{r[m, metric]['mae']:.1f}" for m in methods) for r in results]
            print(f"| {name} | {metric} | " + " | ".join(cells) + " |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=["4.2", "4.3", "4.4"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--unlabeled", choices=["expected", "sampled"], default="expected")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rows", nargs="+", choices=list(SETS), default=None,
                        help="data sets of Tables 4.2 and 4.3 to run (default: all)")
    args = parser.parse_args()
    global UNLABELED, FIRST_SEED, ROWS
    UNLABELED, FIRST_SEED, ROWS = args.unlabeled, args.first_seed, args.rows
    tables = {"4.2": table_42, "4.3": table_43, "4.4": table_44, "curves": curves}
    for t in args.tables:
        start = time.perf_counter()
        tables[t](args.runs, args.n_jobs)
        print(f"\n(Table {t}: {time.perf_counter() - start:.0f} s, {args.runs} runs)", flush=True)


if __name__ == "__main__":
    main()

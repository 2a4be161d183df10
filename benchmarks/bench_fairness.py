"""Fairness assessment experiments of Ji, Smyth, Steyvers (NeurIPS 2020), thesis Tables 4.2-4.4.

Usage::

    python benchmarks/bench_fairness.py --tables 4.2 --runs 100 --n-jobs 2
    python benchmarks/bench_fairness.py --tables 4.3 4.4
    python benchmarks/bench_fairness.py --tables curves --runs 20
    python benchmarks/bench_fairness.py --tables 4.3 --rows "Compas-R gender" --first-seed 100
    python benchmarks/bench_fairness.py --tables prior --runs 50
    python benchmarks/bench_fairness.py --tables floor

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

``--tables prior`` chooses the calibrator's ``prior_scale`` on held-out data
(the bank file, which no thesis table uses) by the coverage of the 95 %
intervals of Delta accuracy, then reports coverage and MAE on the thesis's
MLP rows with the chosen scale. ``--tables floor`` prints the error BC would
have if every row were labeled for the calibration but none for the metric:
the beta map fitted by maximum likelihood on the whole file, its expected
values put in eq. 4.3 for every row. What remains is the map family's misfit.
"""

import argparse
import pathlib
import time
import warnings

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed

from skassess.calibration import BayesianGroupMetrics, HierarchicalBetaCalibrator

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared/data/fairness"
SETS = {
    "Adult race": ("adult_race", "income-per-year", "race", "White"),
    "Adult gender": ("adult_sex", "income-per-year", "sex", "Male"),
    "Compas-R race": ("propublica-recidivism_race", "two_year_recid", "race", "Caucasian"),
    "Compas-R gender": ("propublica-recidivism_sex", "two_year_recid", "sex", "Male"),
}
HELD_OUT = {"Bank age": ("bank_age", "y", "age", "adult")}  # for --tables prior only
MODELS = {"MLP": "MultiLayerPerceptron", "LR": "LR", "RF": "RandomForest", "GNB": "GaussianNB"}
METHODS = {"Freq": "frequentist", "BB": "beta_binomial", "BC": "bayesian_calibration"}
UNLABELED = "expected"  # BayesianGroupMetrics(unlabeled=...); set by --unlabeled
FIRST_SEED = 0  # seed of the first run; set by --first-seed
EPS = None  # the calibrator's score clipping; None: its default (1e-3); set by --eps
P_POOLED = None  # BC's p_pooled; None: the estimator's default; set by --p-pooled
POINT = "median"  # the point estimate of Delta scored by the MAE; set by --point
ROWS = None  # restrict Tables 4.2 / 4.3 to these data sets; set by --rows
# Thesis numbers: (Freq, BB, BC); None where the thesis prints a dash.
THESIS_42 = {
    ("MLP", "Adult race"): (16.5, 18.5, 3.9),
    ("MLP", "Adult gender"): (19.7, 17.4, 5.1),
    ("MLP", "Compas-R race"): (31.5, 21.0, 4.2),
    ("MLP", "Compas-R gender"): (33.7, 21.6, 5.0),
    ("LR", "Adult race"): (16.4, 18.7, 2.9),
    ("RF", "Adult race"): (16.5, 18.2, 3.2),
    ("GNB", "Adult race"): (17.6, 18.9, 3.6),
}
THESIS_43 = {
    "Adult race": (None, 12.5, 5.8),
    "Adult gender": (16.3, 14.3, 4.3),
    "Compas-R race": (None, 7.6, 2.5),
    "Compas-R gender": (10.0, 9.5, 1.9),
}


def load(name, model):
    file, label, attribute, privileged = {**SETS, **HELD_OUT}[name]
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


def make_estimator(short, metrics, privileged, seed, unlabeled, prior_scale=1.0):
    calibrator = None
    if short == "BC-NH":  # the thesis's non-hierarchical ablation
        calibrator = HierarchicalBetaCalibrator(hierarchical=False, random_state=seed)
    elif prior_scale != 1.0 or EPS is not None:
        # random_state None: drawn from the estimator's, as with the default calibrator
        calibrator = HierarchicalBetaCalibrator(prior_scale=prior_scale)
    if calibrator is not None and EPS is not None:
        calibrator.set_params(eps=EPS)
    method = "bayesian_calibration" if short == "BC-NH" else METHODS[short]
    extra = {} if P_POOLED is None else {"p_pooled": P_POOLED}
    return BayesianGroupMetrics(
        method,
        metrics=metrics,
        calibrator=calibrator,
        privileged=privileged,
        unlabeled=unlabeled,
        random_state=seed,
        **extra,
    )


def one_run(
    s, y, groups, privileged, n_labeled, seed, metrics, methods, unlabeled, prior_scale=1.0
):
    """{(method, metric): (mean, lower, upper) of Delta}, plus R-hat / ESS of the BC fits."""
    rows = labeled_rows(groups, n_labeled, seed)
    y_obs = np.full(len(y), -1)
    y_obs[rows] = y[rows]
    out = {"rhat": 1.0, "ess": np.inf}
    for short in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # R-hat/ESS are recorded below
            est = make_estimator(short, metrics, privileged, seed, unlabeled, prior_scale).fit(
                s, y_obs, sensitive_features=groups
            )
        table = est.differences()
        for metric in metrics:
            row = table.loc[metric].iloc[0]
            out[short, metric] = (row[POINT], row["lower"], row["upper"])
        if est.calibrator_ is not None:
            out["rhat"] = max(out["rhat"], est.calibrator_.rhat_.max())
            out["ess"] = min(out["ess"], est.calibrator_.ess_.min())
    return out


def experiment(
    name, model, n_labeled, metrics, runs, n_jobs, methods=("Freq", "BB", "BC"), prior_scale=1.0
):
    """Per (method, metric): MAE x 100, undefined runs, coverage %; worst R-hat / ESS."""
    s, y, groups, privileged = load(name, model)
    results = Parallel(n_jobs=n_jobs)(
        delayed(one_run)(
            s, y, groups, privileged, n_labeled, seed, metrics, methods, UNLABELED, prior_scale
        )
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
    cells = " | ".join(
        fmt(r[m, metric]["mae"], r[m, metric]["undefined"]) for m in ("Freq", "BB", "BC")
    )
    print(
        f"| {label} | {cells} | {r['BC', metric]['se']:.1f} | "
        f"{' / '.join(fmt(v) for v in thesis)} | "
        f"{r['rhat']:.3f} | {r['ess']:.0f} |",
        flush=True,
    )


def table_42(runs, n_jobs):
    print("\n### Table 4.2: MAE x 100 of Delta accuracy, n_L = 10\n")
    print("| model | data | Freq | BB | BC | BC SE | thesis Freq / BB / BC | max R-hat | min ESS |")
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
            cells.append(
                f"{r['BC', 'accuracy']['coverage']:.0f} / {r['BB', 'accuracy']['coverage']:.0f}"
            )
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


def prior_study(runs, n_jobs):
    """Choose prior_scale on held-out data by coverage, then apply it to the thesis's rows."""
    scales = (0.25, 0.5, 1.0)
    sizes = (10, 40, 100)
    held_out = [("Bank age", "MLP"), ("Bank age", "LR")]
    print(
        "\n### prior_scale chosen on held-out data (bank file): BC coverage % / MAE x 100 "
        "of Delta accuracy\n"
    )
    print("| data | model | prior_scale | " + " | ".join(f"n_L = {n}" for n in sizes) + " |")
    print("|---|---|---|" + "---|" * len(sizes))
    deviation = {}
    for scale in scales:
        deviation[scale] = []
        for name, model in held_out:
            cells = []
            for n in sizes:
                r = experiment(name, model, n, ("accuracy",), runs, n_jobs, ("BC",), scale)
                coverage = r["BC", "accuracy"]["coverage"]
                deviation[scale].append(abs(coverage - 95))
                cells.append(f"{coverage:.0f} / {r['BC', 'accuracy']['mae']:.1f}")
            print(f"| {name} | {model} | {scale} | " + " | ".join(cells) + " |", flush=True)
    # The scale whose coverage is closest to 95 % on average; ties go to the wider prior.
    chosen = min(scales, key=lambda a: (np.mean(deviation[a]), -a))
    print(
        "\nMean |coverage - 95| per scale: "
        + ", ".join(f"{a}: {np.mean(d):.1f}" for a, d in deviation.items())
        + f"; chosen prior_scale = {chosen}"
    )
    if chosen == 1.0:
        print("That is the default: Table 4.4 holds its coverage on the thesis's rows.")
        return
    sizes = (10, 20, 40, 100)
    print(
        f"\n### Thesis rows (MLP) with prior_scale = {chosen}: BC coverage % / MAE x 100 of "
        "Delta accuracy\n"
    )
    print("| data | " + " | ".join(f"n_L = {n}" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name in SETS:
        cells = []
        for n in sizes:
            r = experiment(name, "MLP", n, ("accuracy",), runs, n_jobs, ("BC",), chosen)
            cells.append(
                f"{r['BC', 'accuracy']['coverage']:.0f} / {r['BC', 'accuracy']['mae']:.1f}"
            )
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def expected_rate(pred, p, metric):
    """A group's metric by eq. 4.3 with every row unlabeled: P(y = 1) = p."""
    if metric == "accuracy":
        return np.mean(pred * p + (1 - pred) * (1 - p))
    weight = p if metric == "tpr" else 1 - p
    return np.sum(pred * weight) / np.sum(weight)


def floor(runs, n_jobs):
    """|BC error| x 100 with the beta map fitted per group on every label of the file (MLP)."""
    from sklearn.linear_model import LogisticRegression

    metrics = ("accuracy", "tpr", "fpr")
    print("\n### Floor of BC's error: beta map fitted on all labels, |Delta error| x 100 (MLP)\n")
    print("| data | " + " | ".join(metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    eps = HierarchicalBetaCalibrator().eps if EPS is None else EPS
    for name in SETS:
        s, y, groups, privileged = load(name, "MLP")
        pred = (s > 0.5).astype(np.float64)
        clipped = np.clip(s, eps, 1 - eps)
        features = np.c_[np.log(clipped), -np.log1p(-clipped)]
        p = np.empty_like(s)
        for g in np.unique(groups):  # unpenalized logistic regression = beta calibration MLE
            rows = groups == g
            fit = LogisticRegression(C=np.inf).fit(features[rows], y[rows])
            p[rows] = fit.predict_proba(features[rows])[:, 1]
        cells = []
        for metric in metrics:
            est = expected_rate(
                pred[groups == privileged], p[groups == privileged], metric
            ) - expected_rate(pred[groups != privileged], p[groups != privileged], metric)
            cells.append(f"{100 * abs(est - truth(s, y, groups, privileged, metric)):.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=["4.2", "4.3", "4.4"])
    parser.add_argument("--runs", type=int, default=100)
    add_parallel_arguments(parser, n_jobs=2)
    parser.add_argument("--unlabeled", choices=["expected", "sampled"], default="expected")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--point",
        choices=["median", "mean"],
        default="median",
        help="posterior summary scored by the MAE (median: least expected "
        "absolute error; the thesis used the mean)",
    )
    parser.add_argument(
        "--p-pooled", type=float, default=None, help="BC's p_pooled (default: the estimator's)"
    )
    parser.add_argument(
        "--bc-method",
        choices=["bayesian_calibration", "calibrated"],
        default="bayesian_calibration",
        help="the BayesianGroupMetrics method of the BC columns (calibrated: "
        "the package's default)",
    )
    parser.add_argument(
        "--eps",
        type=float,
        default=None,
        help="score clipping of the calibrator (the thesis used 0.01)",
    )
    parser.add_argument(
        "--rows",
        nargs="+",
        choices=list(SETS),
        default=None,
        help="data sets of Tables 4.2 and 4.3 to run (default: all)",
    )
    add_save_argument(parser)
    args = parser.parse_args()
    use_parallel_backend(args)
    with saving_printed_tables(args.save):
        global UNLABELED, FIRST_SEED, ROWS, EPS, POINT, P_POOLED
        UNLABELED, FIRST_SEED, ROWS, EPS = args.unlabeled, args.first_seed, args.rows, args.eps
        POINT, P_POOLED = args.point, args.p_pooled
        METHODS["BC"] = args.bc_method
        print(f"BC columns: BayesianGroupMetrics(method={args.bc_method!r})")
        tables = {
            "4.2": table_42,
            "4.3": table_43,
            "4.4": table_44,
            "curves": curves,
            "prior": prior_study,
            "floor": floor,
        }
        for t in args.tables:
            start = time.perf_counter()
            tables[t](args.runs, args.n_jobs)
            print(
                f"\n(Table {t}: {time.perf_counter() - start:.0f} s, {args.runs} runs)", flush=True
            )


if __name__ == "__main__":
    main()

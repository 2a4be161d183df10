"""Stress suite of fairness BC: small files with known truth that the defaults never saw.

Usage::

    python benchmarks/bench_fairness_stress.py --runs 40 --n-jobs 2
    python benchmarks/bench_fairness_stress.py --kinds perfect flipped --runs 10

Each file has a large group ``A`` and a small group ``B`` (``--shares``: B's
share of the rows) of binary scores; ``n`` rows (``--sizes``); in each run
``n_L`` random rows are labeled, at least one per group. The truth is the
difference of accuracy ``A - B`` on the whole file (threshold 0.5). Kinds:

- ``moderate``: A calibrated, B's labels follow ``sigmoid(0.2 logit(s))``
  (B's accuracy 13-27 points lower);
- ``strong``: A calibrated and sharp, B's labels independent of its scores
  (accuracy 1/2; Delta 30-40);
- ``perfect``: scores 0 or 1 and always right (Delta = 0);
- ``near-perfect``: scores 0.02 or 0.98, right with probability 0.99;
- ``flipped``: calibrated scores given as P(class 0) by mistake.

Cells: coverage % of the 95 % interval of Delta accuracy / MAE x 100 of the
posterior median (the estimate of least expected absolute error), for the
method under test (``--method``: ``calibrated``, the default of
``BayesianGroupMetrics``, ``bayesian_calibration``, BC with the default
calibrator, or ``compare_groups`` on the calibrated
``BayesianAccuracy(grouping="external")``) and BB (Beta(1, 1) per group),
its MAE minus BB's with the standard error of that difference (both methods see the same labels in a
run, so the difference is paired), and the share of its fits that raised a
labels-versus-scores warning.

By default a cell is one file (fixed by kind, size and share) and the runs
differ in which rows are labeled. ``--vary-files`` draws a new file in every
run as well, so the coverage is over files of the kind, not over the label
draws of one file; the truth column is then the mean over the runs.
"""

import argparse
import itertools
import time
import warnings

import numpy as np
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed
from scipy.special import expit, logit

from skassess import BayesianAccuracy
from skassess.calibration import BayesianGroupMetrics
from skassess.exceptions import SkassessWarning
from skassess.metrics import compare_groups

KINDS = ("moderate", "strong", "perfect", "near-perfect", "flipped")
BC = "bayesian_calibration"
#: compare_groups on the calibrated BayesianAccuracy(grouping="external").
CG = "compare_groups"


def make_file(kind, n, share, seed):
    """Scores P(y = 1), labels and groups of one synthetic file."""
    rng = np.random.default_rng(seed)
    group = np.where(rng.random(n) < share, "B", "A")
    small = group == "B"
    if kind in ("perfect", "near-perfect"):
        y = (rng.random(n) < 0.4).astype(int)
        edge = 0.0 if kind == "perfect" else 0.02
        right = np.ones(n, bool) if kind == "perfect" else rng.random(n) < 0.99
        s = np.where(y == 1, 1 - edge, edge)
        s = np.where(right, s, 1 - s)
        return s, y, group
    s = rng.beta(0.6, 0.6, n) if kind == "strong" else rng.beta(1.0, 1.0, n)
    s = np.clip(s, 1e-3, 1 - 1e-3)
    p = s.copy()
    slope = {"moderate": 0.2, "strong": 0.0, "flipped": 1.0}[kind]
    p[small] = expit(slope * logit(s[small]))
    y = (rng.random(n) < p).astype(int)
    if kind == "flipped":
        s = 1 - s
    return s, y, group


def labeled_rows(group, n_labeled, rng):
    order = rng.permutation(len(group))
    first = [order[np.flatnonzero(group[order] == g)[0]] for g in ("A", "B")]
    rest = order[~np.isin(order, first)]
    return np.concatenate([first, rest])[:n_labeled]


def one_run(kind, n, share, n_labeled, run, options, vary_files=False, tested=BC):
    seed = [n, int(100 * share), KINDS.index(kind)] + ([1000 + run] if vary_files else [])
    s, y, group = make_file(kind, n, share, seed=seed)
    right = (s > 0.5) == y
    truth = right[group == "A"].mean() - right[group == "B"].mean()
    rng = np.random.default_rng([run, n, n_labeled])
    y_obs = np.full(n, -1)
    rows = labeled_rows(group, n_labeled, rng)
    y_obs[rows] = y[rows]
    out = {}
    for method in (tested, "beta_binomial"):
        if method == CG:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = BayesianAccuracy(grouping="external", random_state=run)
                est.fit(np.column_stack([1 - s, s]), y_obs, group_by=group)
                delta = compare_groups(est, "A", "B", random_state=run)
            lower, upper = delta.interval(0.95)
            out[method] = (lower <= truth <= upper, abs(np.median(delta.samples) - truth), False)
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            extra = options if method != "beta_binomial" else {}
            est = BayesianGroupMetrics(
                method, metrics=("accuracy",), privileged="A", random_state=run, **extra
            )
            est.fit(s, y_obs, sensitive_features=group)
        row = est.differences().iloc[0]
        warned = any(
            issubclass(w.category, SkassessWarning) and "labeled" in str(w.message) for w in caught
        )
        out[method] = (row["lower"] <= truth <= row["upper"], abs(row["median"] - truth), warned)
    return truth, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.1, 0.3])
    parser.add_argument("--labels", type=int, nargs="+", default=[10, 40])
    add_parallel_arguments(parser, n_jobs=1, backend="multiprocessing")
    parser.add_argument(
        "--method",
        choices=("calibrated", BC, CG),
        default="calibrated",
        help="the method compared with BB",
    )
    parser.add_argument(
        "--p-pooled", type=float, default=None, help="BC's p_pooled (default: the estimator's)"
    )
    parser.add_argument(
        "--unlabeled",
        choices=("expected", "sampled"),
        default=None,
        help="BC's unlabeled (default: the estimator's)",
    )
    parser.add_argument(
        "--vary-files",
        action="store_true",
        help="a new file in every run (coverage over files, not label draws)",
    )
    add_save_argument(parser)
    args = parser.parse_args()
    use_parallel_backend(args)
    with saving_printed_tables(args.save):
        options = {
            k: v
            for k, v in (("p_pooled", args.p_pooled), ("unlabeled", args.unlabeled))
            if v is not None
        }
        print(f"{args.runs} runs per cell; cells: coverage % / MAE x 100 of Delta accuracy (A - B)")
        name = "BC" if args.method == BC else args.method
        print(
            f"| kind | n | B share | n_L | true Δ × 100 | {name} | BB | {name} − BB MAE (SE) "
            f"| {name} warned % |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        worst = 100.0
        for kind, n, share, n_labeled in itertools.product(
            args.kinds, args.sizes, args.shares, args.labels
        ):
            start = time.perf_counter()
            results = Parallel(n_jobs=args.n_jobs)(
                delayed(one_run)(
                    kind, n, share, n_labeled, run, options, args.vary_files, args.method
                )
                for run in range(args.runs)
            )
            truth = np.mean([r[0] for r in results])
            cells, errors_of = [], {}
            for method in (args.method, "beta_binomial"):
                hits, errors, _ = (
                    np.array(v) for v in zip(*(r[1][method] for r in results), strict=True)
                )
                cells.append(f"{100 * hits.mean():.0f} / {100 * errors.mean():.1f}")
                errors_of[method] = errors
                if method == args.method:
                    worst = min(worst, 100 * hits.mean())
            excess = 100 * (errors_of[args.method] - errors_of["beta_binomial"])
            se = excess.std(ddof=1) / np.sqrt(len(excess)) if len(excess) > 1 else np.nan
            warned = np.mean([r[1][args.method][2] for r in results])
            print(
                f"| {kind} | {n} | {share:g} | {n_labeled} | {100 * truth:.1f} | {cells[0]} | "
                f"{cells[1]} | {excess.mean():+.1f} ({se:.1f}) | {100 * warned:.0f} |  "
                f"[{time.perf_counter() - start:.0f} s]",
                flush=True,
            )
        print(f"lowest {name} coverage: {worst:.0f} %")


if __name__ == "__main__":
    main()

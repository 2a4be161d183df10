"""skassess.meta against Elder et al. (AAAI 2021): leave-one-data-set-out over the library.

Reads the scenario records written by ``make_drift_scenarios.py`` and prints:

1. each predictor's MAE of the batch accuracy (percentage points) on linear-skew
   and nearest-neighbour drift, beside the paper's Table 5;
2. the interval cost C_alpha averaged over alpha = 0.50, 0.55, ..., 0.95 for the
   baselines (SE, bootstrap, intrinsic, each scaled by the normal quantile of
   the level or "TL"-calibrated on the other data sets' scenarios; a constant
   width calibrated on the other data sets) and the uncertainty model (UM),
   beside the paper's Tables 3/7 (the UM predicts errors in units of
   ``error_unit``: the batch's binomial standard error with a drift floor);
3. the coverage and mean width of the 95 % intervals of the UM and of the
   TL-calibrated baselines over every held-out batch;
4. a few labels on top: the UM's prediction and 95 % interval as a Beta prior
   (``PerformanceIntervalRegressor.beta_prior``'s recipe), updated with n = 10,
   20, 50 labels drawn at random from the batch (hypergeometric draws from its
   true accuracy, 20 per batch): MAE and 95 % coverage of the posterior,
   against the labels alone (uniform prior) and the label-free estimate alone.

Leave-one-data-set-out: for each data set, the UM is trained on the
linear-skew scenarios of all the others (``--train-drift both``: their
nearest-neighbour scenarios too) (80 % fit, 20 % per-level scale
calibration), then judged on the held-out set's linear-skew and
nearest-neighbour scenarios. Costs are averaged over scenarios within a data
set and then over data sets, as in the paper.

Usage: ``python benchmarks/bench_meta.py [--n-models 10] [--out results.csv]``
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from skassess.meta._interval import PRIOR_WEIGHT
from skassess.meta._quantile_model import (
    LEVELS,
    QuantileEnsemble,
    error_unit,
    fit_scales,
    interval_cost,
)
from skassess.meta._um_features import UM_FEATURES
from skassess.metrics._conjugate import robust_mixture_posterior

CACHE = Path.home() / ".cache" / "skassess" / "scenarios"
PREDICTORS = ("confidence", "crossval", "dropout", "meta_model")
PAPER_MAE = {
    "confidence": (4.38, 3.01),
    "crossval": (4.04, 2.94),
    "dropout": (4.70, 3.73),
    "meta_model": (3.84, 2.78),
}
PAPER_COST = {  # Table 7, LS->LS then LS->NN: SE, BS, I, SE(TL), BS(TL), C(TL), I(TL), UM
    "ls": {
        "confidence": (2.88, 2.38, 2.23, 2.13, 2.13, 2.11, 1.83, 1.46),
        "crossval": (2.57, 2.06, 1.72, 1.91, 1.91, 1.88, 1.67, 1.24),
        "dropout": (3.09, 2.50, 2.20, 2.13, 2.13, 2.10, 1.86, 1.38),
        "meta_model": (2.41, 1.89, None, 1.77, 1.77, 1.83, None, 1.33),
    },
    "nn": {
        "confidence": (1.97, 1.59, 1.39, 1.36, 1.36, 1.30, 1.26, 1.08),
        "crossval": (1.87, 1.41, 1.14, 1.25, 1.25, 1.20, 1.17, 1.00),
        "dropout": (2.48, 2.00, 1.48, 1.58, 1.58, 1.49, 1.29, 1.14),
        "meta_model": (1.75, 1.29, 1.15, 1.15, 1.16, None, None, 0.97),
    },
}
COST_COLUMNS = ("SE", "BS", "I", "SE (TL)", "BS (TL)", "C (TL)", "I (TL)", "UM")
Z = norm.ppf((1 + np.asarray(LEVELS)) / 2)  # target calibration: the normal quantile


def load():
    files = sorted(CACHE.glob("*.csv.gz"))
    if not files:
        sys.exit(f"No scenario files in {CACHE}; run make_drift_scenarios.py first.")
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True)


def half_widths(train, test, n_models, seed, n_estimators=150, features=UM_FEATURES):
    """Half-widths (n_test, n_levels) of every interval method, fitted without ``test``."""
    err_tr = train["error"].to_numpy()
    out = {}
    for col, name in (("se", "SE"), ("bootstrap", "BS"), ("intrinsic", "I")):
        base_te = test[col].to_numpy()[:, None]
        if np.isnan(base_te).all():
            continue
        out[name] = base_te * Z
        base_tr = train[col].to_numpy()
        out[f"{name} (TL)"] = base_te * fit_scales(err_tr, np.column_stack([base_tr] * len(LEVELS)))
    const = np.quantile(np.abs(err_tr), LEVELS)
    out["C (TL)"] = np.tile(const, (len(test), 1))
    rng = np.random.default_rng(seed)
    cal = rng.random(len(train)) < 0.2
    F_tr = train.loc[:, list(features)].to_numpy(dtype=np.float64)
    unit_tr = error_unit(train["prediction"], train["n_batch"])
    unit_te = error_unit(test["prediction"], test["n_batch"])[:, None]
    um = QuantileEnsemble(n_models=n_models, n_estimators=n_estimators, random_state=seed).fit(
        F_tr[~cal], np.abs(err_tr[~cal]) / unit_tr[~cal]
    )
    scales = fit_scales(err_tr[cal], um.predict(F_tr[cal]) * unit_tr[cal, None])
    q = um.predict(test.loc[:, list(features)].to_numpy(dtype=np.float64)) * unit_te * scales
    out["UM"] = np.maximum.accumulate(q, axis=1)
    return out


def few_labels(
    test, U, seed, ns=(10, 20, 50), draws=20, prior_levels=(0.5, 0.8, 0.95), shifts=(0.0, 0.1)
):
    """Posterior error and coverage after n random labels, with and without the UM prior.

    The Beta prior has the predicted accuracy as its mean and the standard
    deviation ``u_level / z_level`` (the UM's half-width at ``level`` over the
    normal quantile), for each of ``prior_levels``: fixed (``prior@L+labels``)
    and as the informative part of the robust mixture the library uses
    (``robust@L+labels``, prior weight ``PRIOR_WEIGHT``). ``shifts``: the
    label-free prediction is also moved this far from its value, up or down at
    random per batch, with the UM's width unchanged (a prediction wrong by more
    than the UM says), to see the prior fall back to the labels.
    """
    rng = np.random.default_rng(seed)
    j95 = LEVELS.index(0.95)
    out = []
    for (_, r), u in zip(test.iterrows(), U, strict=True):
        N = int(r["n_batch"])
        K = int(round(r["truth"] * N))
        for shift in shifts:
            m = r["prediction"] + shift * rng.choice([-1.0, 1.0])
            m = float(np.clip(m, 1e-3, 1 - 1e-3))
            priors = {"labels": (1.0, 1.0, None)}
            for level in prior_levels:
                sd = max(u[LEVELS.index(level)], 1e-4) / norm.ppf((1 + level) / 2)
                n0 = float(np.clip(m * (1 - m) / sd**2 - 1, 2, 1e4))
                priors[f"prior@{level:.2f}+labels"] = (m * n0, (1 - m) * n0, None)
                priors[f"robust@{level:.2f}+labels"] = (m * n0, (1 - m) * n0, PRIOR_WEIGHT)
            for n in ns:
                if n > N:
                    continue
                k = rng.hypergeometric(K, N - K, n, size=draws).astype(np.float64)
                for name, (a0, b0, w) in priors.items():
                    if w is None:
                        a, b = a0 + k, b0 + n - k
                    else:
                        post, _ = robust_mixture_posterior(
                            np.full(k.shape, a0), b0, k, n - k, prior_weight=w
                        )
                        a, b = post.alpha, post.beta
                    mean = a / (a + b)
                    lo, hi = beta_dist.ppf(0.025, a, b), beta_dist.ppf(0.975, a, b)
                    for mu, l_, h_ in zip(mean, lo, hi, strict=True):
                        out.append(
                            (
                                r["method"],
                                r["drift"],
                                shift,
                                n,
                                name,
                                abs(mu - r["truth"]),
                                l_ <= r["truth"] <= h_,
                            )
                        )
                out.append(
                    (
                        r["method"],
                        r["drift"],
                        shift,
                        n,
                        "label-free",
                        abs(m - r["truth"]),
                        abs(m - r["truth"]) <= u[j95],
                    )
                )
    return pd.DataFrame(
        out, columns=["method", "drift", "shift", "n", "estimate", "abs_error", "covered"]
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-models", type=int, default=10)
    ap.add_argument("--n-estimators", type=int, default=150)
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--train-drift",
        choices=["ls", "both"],
        default="ls",
        help="drift of the other data sets' scenarios the UM learns from (the paper: ls)",
    )
    ap.add_argument("--methods", nargs="*", default=list(PREDICTORS))
    ap.add_argument(
        "--exclude",
        nargs="*",
        default=[],
        metavar="TEXT",
        help="leave out the UM inputs whose names contain TEXT (an ablation: "
        "'peer _iw_' drops the Peers family)",
    )
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        features = [f for f in UM_FEATURES if not any(t in f for t in args.exclude)]
        print(f"UM inputs: {len(features)} of {len(UM_FEATURES)}")
        df = load()
        datasets = sorted(df["dataset"].unique())
        print(f"{len(datasets)} data sets: {', '.join(datasets)}")
        print(
            f"{len(df)} records, "
            f"{df.groupby(['dataset', 'drift', 'base', 'scenario']).ngroups} scenarios\n"
        )

        # 1. MAE
        print(
            "MAE of the predicted accuracy (points), mean over data sets "
            "(paper Table 5 in brackets)"
        )
        mae = (
            df.assign(ae=100 * df["error"].abs())
            .groupby(["method", "drift", "dataset"])["ae"]
            .mean()
            .groupby(["method", "drift"])
            .mean()
            .unstack("drift")
        )
        print("| predictor | linear skew | nearest neighbours |\n|---|---:|---:|")
        for m in mae.index:
            paper = PAPER_MAE.get(m, (None, None))
            fmt = [
                f"{mae.loc[m, d]:.2f}" + (f" ({p})" if p else "")
                for d, p in zip(("ls", "nn"), paper, strict=True)
            ]
            print(f"| {m} | {fmt[0]} | {fmt[1]} |")

        # 2-3. intervals, leave one data set out
        rows, cover, labels = [], [], []
        t0 = time.perf_counter()
        for k, held in enumerate(datasets):
            for method in args.methods:
                sub = df[df["method"] == method]
                train = sub[sub["dataset"] != held]
                if args.train_drift == "ls":
                    train = train[train["drift"] == "ls"]
                test = sub[sub["dataset"] == held]
                if train.empty or test.empty:
                    continue
                hw = half_widths(
                    train,
                    test,
                    args.n_models,
                    seed=k,
                    n_estimators=args.n_estimators,
                    features=features,
                )
                err = test["error"].to_numpy()
                for name, U in hw.items():
                    for drift in ("ls", "nn"):
                        sel = test["drift"].to_numpy() == drift
                        if not sel.any():
                            continue
                        cost = np.mean(
                            [interval_cost(err[sel], U[sel, j], a) for j, a in enumerate(LEVELS)]
                        )
                        rows.append((held, method, drift, name, 100 * cost))
                        j95 = LEVELS.index(0.95)
                        for e, u in zip(err[sel], U[sel, j95], strict=True):
                            cover.append((held, method, drift, name, abs(e) <= u, u))
                        if name == "UM":
                            labels.append(few_labels(test[sel], U[sel], seed=k))
        secs = time.perf_counter() - t0
        costs = pd.DataFrame(rows, columns=["dataset", "method", "drift", "interval", "cost"])
        table = (
            costs.groupby(["drift", "method", "interval", "dataset"])["cost"]
            .mean()
            .groupby(["drift", "method", "interval"])
            .mean()
            .unstack("interval")
        )
        for drift, title in (
            ("ls", "linear skew -> linear skew"),
            ("nn", "linear skew -> nearest neighbours"),
        ):
            print(f"\nC_alpha x 100, alpha 0.50-0.95, {title} (paper Table 7 in brackets)")
            print(
                "| predictor | "
                + " | ".join(COST_COLUMNS)
                + " | UM / best |\n|---|"
                + "---:|" * (len(COST_COLUMNS) + 1)
            )
            for m in args.methods:
                if (drift, m) not in table.index:
                    continue
                line = table.loc[(drift, m)]
                paper = PAPER_COST[drift][m]
                cells = []
                for c, p in zip(COST_COLUMNS, paper, strict=True):
                    v = line.get(c, np.nan)
                    cells.append("-" if np.isnan(v) else f"{v:.2f}" + (f" ({p})" if p else ""))
                best = min(v for c, v in line.items() if c != "UM" and np.isfinite(v))
                print(f"| {m} | " + " | ".join(cells) + f" | {line['UM'] / best:.2f} |")
        cov = pd.DataFrame(
            cover, columns=["dataset", "method", "drift", "interval", "covered", "width"]
        )
        print("\n95 % intervals over every held-out batch: coverage % / mean half-width (points)")
        summ = cov.groupby(["drift", "interval"]).agg(
            coverage=("covered", "mean"), width=("width", "mean"), n=("covered", "size")
        )
        print("| drift | interval | coverage % | half-width | batches |\n|---|---|---:|---:|---:|")
        for (drift, name), r in summ.iterrows():
            print(f"| {drift} | {name} | {100 * r.coverage:.1f} | {100 * r.width:.2f} | {r.n} |")
        lab = pd.concat(labels, ignore_index=True)
        print(
            "\nA few labels on top (UM prior + n random labels from the batch), "
            "MAE points / 95 % coverage %"
        )
        summ = lab.groupby(["method", "drift", "shift", "n", "estimate"]).agg(
            mae=("abs_error", "mean"), coverage=("covered", "mean")
        )
        print("| predictor | drift | shift | n | estimate | MAE | coverage % |")
        print("|---|---|---:|---:|---|---:|---:|")
        for (m, drift, shift, n, e), r in summ.iterrows():
            print(
                f"| {m} | {drift} | {shift:.2f} | {n} | {e} | {100 * r.mae:.2f} | "
                f"{100 * r.coverage:.1f} |"
            )
        print(f"\nLODO training and evaluation: {secs:.0f} s")
        if args.out:
            costs.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()

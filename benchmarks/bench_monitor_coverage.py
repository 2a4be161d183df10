"""Monitoring intervals where drift is: coverage by drift strength and black-box family.

For each data set of ``_tabular.EXTERNAL_DATASETS`` (never seen by the shipped
uncertainty model) and four black-box families (logistic regression, random
forest, histogram gradient boosting, MLP) trained on a random 40 % of the rows,
a ``PerformanceIntervalRegressor`` (pretrained UM) is fitted on another 30 %
(the labeled reference) and the remaining rows are cut into batches: 30 drawn
at random (no drift), linear skew along the two features a random forest ranks
first (the paper's 15 ratios) and 30 nearest-neighbour scenarios.

For every batch the script records the truth, the label-free prediction, the
uncertainty model's raw error quantiles, the drift classifiers' accuracies and
the number right among 20 random labels, in
``~/.cache/skassess/monitor-coverage/<data set>_<family>.csv.gz`` (an interrupted
run resumes; records are only valid for the shipped model they were made with,
so the folder name carries the hash of its boosters). It also writes each unit's reference and
batch scores as ``.npz`` for ``peer_cbpe.py``, which runs NannyML's CBPE on the
same batches in its own environment.

Printed, from the records and the package's own calibration
(the shipped scales per drift stratum):

- coverage of the 80 / 90 / 95 / 99 % label-free intervals by drift-strength
  tercile (the larger of the two drift classifiers' balanced accuracies,
  label-free) and by black-box family, with the mean half-width;
- the same by tercile of the true accuracy change ``|acc - reference|``;
- MAE of the label-free prediction, overall and where ``|Δacc| > 5`` points,
  beside CBPE's when ``peer_cbpe.py`` has been run;
- 20 labels per batch on top (the monitor's robust-mixture update): MAE ratio
  to the label-free MAE, and the coverage of its intervals.

Usage: ``python benchmarks/bench_monitor_coverage.py [--datasets ...] [--save monitor-coverage]``
"""

import argparse
import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from scipy.stats import beta as beta_dist
from scipy.stats import norm
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS, load_tabular, split_rows  # noqa: E402

from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor  # noqa: E402
from skassess.meta._error_levels import error_quantiles, probability_below  # noqa: E402
from skassess.meta._interval import beta_prior_from  # noqa: E402
from skassess.meta._pretrained import _read  # noqa: E402
from skassess.meta._quantile_model import (  # noqa: E402
    calibrate_quantiles,
    drift_strength,
    error_unit,
    fit_stratified_scales,
)
from skassess.meta._scenarios import BASE_MODELS  # noqa: E402
from skassess.meta._um_features import UM_FEATURES  # noqa: E402
from skassess.meta.drift import LinearSkewSplit, NearestNeighborsSplit  # noqa: E402
from skassess.metrics import robust_mixture_posterior  # noqa: E402

LEVELS = (0.8, 0.9, 0.95, 0.99)
N_LABELS = 20
#: The alert threshold's distance below the reference accuracy, and the accuracy change
#: that counts as large.
DROP = 0.05
FAMILIES = {
    "linear": BASE_MODELS["lr"],
    "random forest": BASE_MODELS["rf"],
    "gradient boosting": HistGradientBoostingClassifier(max_iter=200),
    "mlp": make_pipeline(
        SimpleImputer(),
        StandardScaler(),
        MLPClassifier((64,), max_iter=500, early_stopping=True),
    ),
}


def cache_dir():
    """The records' folder, named by the shipped boosters (their scales are applied later)."""
    boosters = json.dumps(_read("meta_model")["model"], sort_keys=True)
    digest = hashlib.sha256(boosters.encode()).hexdigest()
    return Path.home() / ".cache" / "skassess" / f"monitor-coverage-{digest[:10]}"


def collect(name, family, seed=0):
    """One unit's records (and its scores for CBPE), cached."""
    stem = f"{name}_{family.replace(' ', '-')}"
    out = cache_dir() / f"{stem}.csv.gz"
    if out.exists():
        return pd.read_csv(out)
    X, y, _ = load_tabular(name, max_rows=6000)
    rng = np.random.default_rng(seed)
    tr, ref, rest = split_rows(len(y), rng)
    model = clone(FAMILIES[family])
    for key in model.get_params():
        if key.endswith("random_state"):
            model.set_params(**{key: seed})
    model.fit(X[tr], y[tr])
    pir = PerformanceIntervalRegressor(PerformancePredictor(model), random_state=seed).fit(
        X[ref], y[ref]
    )
    ref_acc = float(np.mean(model.predict(X[ref]) == y[ref]))
    Xr, yr = X[rest], y[rest]
    imp = RandomForestClassifier(100, random_state=0).fit(Xr, yr).feature_importances_
    size = max(50, len(rest) // 6)
    splits = [
        ("none", [rng.choice(len(rest), size, replace=False) for _ in range(30)]),
        (
            "linear skew",
            [
                b
                for _, b in LinearSkewSplit(
                    [int(i) for i in np.argsort(imp)[::-1][:2]], random_state=seed
                ).split(Xr)
            ],
        ),
        (
            "nearest neighbours",
            [b for _, b in NearestNeighborsSplit(30, random_state=seed).split(Xr)],
        ),
    ]
    records, scores = [], {"ref_scores": model.predict_proba(X[ref]), "ref_y": y[ref]}
    t0 = time.perf_counter()
    for drift, batches in splits:
        for b, batch in enumerate(batches):
            if batch.size < 2 * N_LABELS:
                continue
            pred = model.predict(Xr[batch])
            correct = pred == yr[batch]
            res = pir.predict_batch(Xr[batch])
            F = np.array([[res.features[k] for k in UM_FEATURES]])
            raw = pir.uncertainty_model_.predict(F)[0] * error_unit(res.accuracy, batch.size)
            pick = rng.choice(batch.size, N_LABELS, replace=False)
            rec = {
                "dataset": name,
                "family": family,
                "drift": drift,
                "batch": b,
                "n_batch": int(batch.size),
                "truth": float(correct.mean()),
                "reference_accuracy": ref_acc,
                "predicted": res.accuracy,
                "k_labels": int(correct[pick].sum()),
            }
            rec.update({f"raw_q{j}": float(v) for j, v in enumerate(raw)})
            rec.update(
                {k: float(res.features[k]) for k in ("drift_x_accuracy", "drift_z_accuracy")}
            )
            records.append(rec)
            key = f"{drift.replace(' ', '-')}_{b}"
            scores[f"{key}_scores"] = model.predict_proba(Xr[batch])
            scores[f"{key}_y"] = yr[batch]
    df = pd.DataFrame(records)
    df["seconds_per_batch"] = (time.perf_counter() - t0) / len(df)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out.with_suffix("").with_suffix(".npz"), **scores)
    df.to_csv(out, index=False)
    return df


def with_cbpe(df):
    """The records with CBPE's estimates (``peer_cbpe.py``), NaN where it has not run."""
    frames = []
    for (name, family), g in df.groupby(["dataset", "family"], sort=False):
        path = cache_dir() / f"{name}_{family.replace(' ', '-')}.cbpe.csv"
        if path.exists():
            g = g.merge(pd.read_csv(path), on=["drift", "batch"], how="left", validate="1:1")
        frames.append(g)
    return pd.concat(frames, ignore_index=True)


ALERT_COLUMNS = (
    "method",
    "unit",
    "delay",
    "missed stream",
    "sensitivity",
    "false alarms",
    "chunks above",
)


def alerts(ev, threshold_drop=DROP, n_before=30, probability=0.9):
    """A stream per unit: 30 batches without drift, then its drifted batches under the threshold.

    The threshold is the reference accuracy minus ``threshold_drop``; the
    drop is at chunk 30. Returns, per method, the detection delay (chunks
    after the drop until the first alert), the share of chunks below the
    threshold that alert, and the false alarms per 100 chunks at or above it.
    """
    rows = []
    for (name, family), g in ev.groupby(["dataset", "family"], sort=False):
        t = g["reference_accuracy"].iloc[0] - threshold_drop
        before = g[g["drift"] == "none"].head(n_before)
        after = g[(g["drift"] != "none") & (g["truth"] < t)]
        if len(after) < 5:
            continue
        stream = pd.concat([before, after])
        below = (stream["truth"] < t).to_numpy()
        fired = {"skassess": stream["p_below"].to_numpy() >= probability}
        if "cbpe" in stream and stream["cbpe"].notna().all():
            fired["CBPE (its alert)"] = stream["cbpe_alert"].astype(bool).to_numpy()
            fired["CBPE (estimate below threshold)"] = (stream["cbpe"] < t).to_numpy()
        for method, f in fired.items():
            post = f[len(before) :]
            rows.append(
                {
                    "method": method,
                    "unit": f"{name}/{family}",
                    "delay": int(np.argmax(post)) if post.any() else np.nan,
                    "missed stream": not post.any(),
                    "sensitivity": post.mean(),
                    "false alarms": f[~below].sum(),
                    "chunks above": (~below).sum(),
                }
            )
    return pd.DataFrame(rows, columns=list(ALERT_COLUMNS))


def strengths(df):
    """``drift_strength`` of every record."""
    cols = df[["drift_x_accuracy", "drift_z_accuracy"]].to_dict("records")
    return np.array([drift_strength(c) for c in cols])


def calibrated(df, pir):
    """Every record's calibrated quantiles at the UM's levels, by the package's calibration."""
    raw = df[[c for c in df.columns if c.startswith("raw_q")]].to_numpy()
    feats = df[["drift_x_accuracy", "drift_z_accuracy"]].to_dict("records")
    return np.array(
        [
            calibrate_quantiles(r, drift_strength(f), pir.scales_, pir.drift_edges_)
            for r, f in zip(raw, feats, strict=True)
        ]
    )


def labeled_interval(m, q, k, n, level, prior_weight=0.9):
    a0, b0 = beta_prior_from(m, q)
    post, _ = robust_mixture_posterior(a0, b0, k, n - k, prior_weight=prior_weight)
    a, b = float(post.alpha[0]), float(post.beta[0])
    lo, hi = beta_dist.interval(level, a, b)
    return a / (a + b), lo, hi


def evaluate(df, Q):
    """Per record: label-free error and coverage at LEVELS, and the same with 20 labels."""
    out = df[["dataset", "family", "drift", "truth", "reference_accuracy", "predicted"]].copy()
    out["strength"] = strengths(df)
    out["change"] = (df["truth"] - df["reference_accuracy"]).abs()
    out["error"] = df["predicted"] - df["truth"]
    out["p_below"] = [
        float(probability_below(m, q, r - DROP)[0])
        for m, q, r in zip(df["predicted"], Q, df["reference_accuracy"], strict=True)
    ]
    if "cbpe" in df:
        out["cbpe"], out["cbpe_alert"] = df["cbpe"], df["cbpe_alert"]
        out["cbpe_error"] = df["cbpe"] - df["truth"]
        for a in LEVELS:
            h = norm.ppf((1 + a) / 2) * df["cbpe_sampling_error"]
            out[f"ccov_{a}"] = np.abs(out["cbpe_error"]) <= h
            out[f"chalf_{a}"] = h
    for a in LEVELS:
        h = np.array([float(error_quantiles(q, a)) for q in Q])
        out[f"half_{a}"] = h
        out[f"cov_{a}"] = np.abs(out["error"]) <= h
    lab = [
        [labeled_interval(m, q, k, N_LABELS, a) for a in LEVELS]
        for m, q, k in zip(df["predicted"], Q, df["k_labels"], strict=True)
    ]
    out["labeled_error"] = [r[0][0] for r in lab] - df["truth"]
    for j, a in enumerate(LEVELS):
        lo = np.array([r[j][1] for r in lab])
        hi = np.array([r[j][2] for r in lab])
        out[f"lcov_{a}"] = (lo <= df["truth"]) & (df["truth"] <= hi)
        out[f"lhalf_{a}"] = (hi - lo) / 2
    return out


def coverage_table(ev, by, title, prefix="cov"):
    print(f"\n{title}")
    cols = " | ".join(f"{int(100 * a)} %" for a in LEVELS)
    print(f"| {by} | batches | {cols} | half-width at 95 % (points) |")
    print("|---|---|" + "---|" * len(LEVELS) + "---|")
    for key, g in ev.groupby(by, observed=True, sort=False):
        cov = " | ".join(f"{100 * g[f'{prefix}_{a}'].mean():.1f}" for a in LEVELS)
        half = {"cov": "half", "lcov": "lhalf", "ccov": "chalf"}[prefix]
        print(f"| {key} | {len(g)} | {cov} | {100 * g[f'{half}_0.95'].mean():.2f} |")


SCENARIOS = Path.home() / ".cache" / "skassess" / "scenarios"


def library_lodo(pir, n_strata):
    """Nearest-neighbour scenarios of the library, leave-one-data-set-out.

    The shipped boosters (trained on the library's linear-skew scenarios)
    give every nearest-neighbour scenario's raw quantiles; for each data set,
    the stratified scales are fitted on the other data sets' scenarios and
    applied to its own, the recipe of ``train_pretrained_um.py``.
    """
    files = sorted(SCENARIOS.glob("*_nn_*.csv.gz"))
    if not files:
        return None
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    df = df[df["method"] == "meta_model"].reset_index(drop=True)
    F = df.loc[:, list(UM_FEATURES)].to_numpy(dtype=np.float64)
    raw = pir.uncertainty_model_.predict(F) * error_unit(df["prediction"], df["n_batch"])[:, None]
    strength = strengths(df)
    Q = np.empty_like(raw)
    for name in df["dataset"].unique():
        out = (df["dataset"] == name).to_numpy()
        edges, scales = fit_stratified_scales(
            df.loc[~out, "error"].abs(), raw[~out], strength[~out], n_strata
        )
        Q[out] = [
            calibrate_quantiles(r, s, scales, edges)
            for r, s in zip(raw[out], strength[out], strict=True)
        ]
    ev = pd.DataFrame(
        {
            "dataset": df["dataset"],
            "family": df["base"].map({"lr": "linear", "rf": "random forest"}),
            "strength": strength,
        }
    )
    for a in LEVELS:
        h = np.array([float(error_quantiles(q, a)) for q in Q])
        ev[f"half_{a}"] = h
        ev[f"cov_{a}"] = df["error"].abs() <= h
    return ev


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(EXTERNAL_DATASETS))
    ap.add_argument("--families", nargs="*", default=list(FAMILIES))
    add_save_argument(ap)
    args = ap.parse_args()
    frames = []
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for name in args.datasets:
            for family in args.families:
                frames.append(collect(name, family))
                print(f"  {name} / {family}: {len(frames[-1])} batches", file=sys.stderr)
    df = with_cbpe(pd.concat(frames, ignore_index=True))
    has_cbpe = "cbpe" in df and df["cbpe"].notna().all()
    # any fitted regressor carries the package's calibration of the shipped model
    X, y, _ = load_tabular(args.datasets[0], max_rows=600)
    pir = PerformanceIntervalRegressor(
        PerformancePredictor(clone(BASE_MODELS["lr"]).fit(X, y)), random_state=0
    ).fit(X, y)
    Q = calibrated(df, pir)
    ev = evaluate(df, Q)
    ev["drift strength"] = pd.qcut(ev["strength"], 3, labels=["low", "middle", "high"])
    ev["accuracy change"] = pd.qcut(ev["change"], 3, labels=["small", "middle", "large"])
    with saving_printed_tables(args.save):
        print(
            f"Label-free intervals on {df.dataset.nunique()} data sets the uncertainty model "
            f"never saw, {len(df)} batches ({', '.join(args.families)})"
        )
        coverage_table(ev, "drift strength", "Coverage (%) by drift-strength tercile")
        coverage_table(ev, "family", "Coverage (%) by black-box family")
        coverage_table(ev, "drift", "Coverage (%) by drift type")
        coverage_table(ev, "accuracy change", "Coverage (%) by tercile of the true |Δacc|")
        if has_cbpe:
            coverage_table(
                ev, "drift strength", "CBPE's band (± z sampling errors): coverage (%)", "ccov"
            )
        big = ev["change"] > DROP
        print("\nPoint error (MAE, points)")
        print("| batches | label-free | CBPE | label-free ÷ CBPE | with 20 labels | ÷ label-free |")
        print("|---|---|---|---|---|---|")
        for label, g in (("all", ev), ("Δacc beyond ±5 points", ev[big])):
            m0 = 100 * g["error"].abs().mean()
            m1 = 100 * g["labeled_error"].abs().mean()
            mc = 100 * g["cbpe_error"].abs().mean() if has_cbpe else np.nan
            print(
                f"| {label} ({len(g)}) | {m0:.2f} | {mc:.2f} | {m0 / mc:.2f} | {m1:.2f} | "
                f"{m1 / m0:.2f} |"
            )
        # the oracle: the label-free prediction and the 20 labels' share combined with the
        # weights that minimize the squared error in each drift tercile, fitted on the truth
        share = df["k_labels"] / N_LABELS
        oracle = np.empty(len(ev))
        for _, idx in ev.groupby("drift strength", observed=True).groups.items():
            e0 = (ev.loc[idx, "predicted"] - ev.loc[idx, "truth"]).to_numpy()
            e1 = (share[idx] - ev.loc[idx, "truth"]).to_numpy()
            w = np.clip(np.sum(e1 * (e1 - e0)) / max(np.sum((e1 - e0) ** 2), 1e-12), 0, 1)
            oracle[ev.index.get_indexer(idx)] = np.abs(w * e0 + (1 - w) * e1)
        ev["oracle_error"] = oracle
        for label, g in (("all", ev), ("Δacc beyond ±5 points", ev[big])):
            print(
                f"oracle with 20 labels ({label}): MAE {100 * g['oracle_error'].mean():.2f}, "
                f"{g['oracle_error'].mean() / g['error'].abs().mean():.2f}× the label-free MAE"
            )
        wins = ev.groupby("dataset").apply(
            lambda g: g["error"].abs().mean() <= g.get("cbpe_error", g["error"]).abs().mean()
        )
        print(f"data sets where skassess's MAE ≤ CBPE's: {int(wins.sum())} of {len(wins)}")
        coverage_table(
            ev, "drift strength", "With 20 labels a batch: coverage (%) by drift tercile", "lcov"
        )
        coverage_table(ev, "family", "With 20 labels a batch: coverage (%) by family", "lcov")
        lib = library_lodo(pir, max(1, len(pir.drift_edges_) + 1))
        if lib is not None:
            lib["drift strength"] = pd.qcut(lib["strength"], 3, labels=["low", "middle", "high"])
            print(
                f"\nThe library's nearest-neighbour scenarios, leave-one-data-set-out: "
                f"{lib.dataset.nunique()} data sets, {len(lib)} scenarios"
            )
            coverage_table(lib, "drift strength", "Coverage (%) by drift-strength tercile")
            coverage_table(lib, "family", "Coverage (%) by black-box family")
        al = alerts(ev)
        print(
            "\nAlerts: per unit a stream of 30 batches without drift, then its drifted batches "
            "whose accuracy is under the threshold (reference accuracy - 5 points); skassess "
            f"alerts at P(below) ≥ 0.9. {al['unit'].nunique()} streams."
        )
        print(
            "| method | median delay (chunks) | streams never alerted | share of drop chunks "
            "alerted | false alarms per 100 chunks above the threshold |"
        )
        print("|---|---|---|---|---|")
        for method, g in al.groupby("method", sort=False):
            fa = 100 * g["false alarms"].sum() / g["chunks above"].sum()
            print(
                f"| {method} | {g['delay'].median():.0f} | {int(g['missed stream'].sum())} | "
                f"{100 * g['sensitivity'].mean():.0f} % | {fa:.1f} |"
            )
        cb = (
            f"; CBPE {1000 * df['cbpe_seconds_per_batch'].median():.0f} ms per batch"
            if has_cbpe
            else ""
        )
        print(
            f"\nfeatures and interval per batch: median {df['seconds_per_batch'].median():.2f} s "
            f"(batches of {int(df['n_batch'].median())} rows){cb}"
        )


if __name__ == "__main__":
    main()

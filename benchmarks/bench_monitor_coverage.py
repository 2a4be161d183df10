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

Each unit's reference also fits ``uncertainty_model="recalibrated"``, whose
one factor (cached in ``<unit>.recalibrated.json``) multiplies the shipped
scales; and each unit gets a monitoring stream (``<unit>.stream.csv.gz``):
30 chunks drawn at random from the rest, then 30 drawn toward the rows the
black box is least sure of, so that its true accuracy falls by about 10
points at a known chunk.

Printed, from the records, for the shipped scales ("pretrained") and the
recalibrated ones:

- coverage of the 80 / 90 / 95 / 99 % label-free intervals by drift-strength
  tercile (the larger of the two drift classifiers' balanced accuracies,
  label-free) and by black-box family, with the mean half-width;
- the same by tercile of the true accuracy change ``|acc - reference|``;
- MAE of the label-free prediction, overall and where ``|Δacc| > 5`` points,
  beside CBPE's when ``peer_cbpe.py`` has been run;
- 20 labels per batch on top (the monitor's posterior): MAE ratio
  to the label-free MAE, and the coverage of its intervals;
- on the streams: streams detected, the delay from the drop to the first
  alert, and false alarms per 100 chunks whose accuracy is above the
  threshold (the reference accuracy minus 5 points), beside CBPE's; and the
  best per-chunk and sequential (moving-average) rules at 2 false alarms per
  100, their thresholds chosen on the truth (``_alert_rules.py``);
- the library's leave-one-data-set-out check of the stratified scales, and
  the wall seconds per batch beside CBPE's.

With ``--inputs scores`` the monitor sees each batch's scores alone, as
``skassess monitor`` does (``PerformancePredictor`` on the scores, the shipped
scales of that case); the batches, streams and CBPE's files are the same.

Usage: ``python benchmarks/bench_monitor_coverage.py [--inputs scores] [--save monitor-coverage]``
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
from _alert_rules import best_rule, sequential_at_false_alarms
from _results import add_save_argument, saving_printed_tables
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
from skassess.meta._chunk_posterior import ChunkPosterior  # noqa: E402
from skassess.meta._error_levels import error_quantiles, probability_below  # noqa: E402
from skassess.meta._pretrained import _read  # noqa: E402
from skassess.meta._quantile_model import (  # noqa: E402
    calibrate_quantiles,
    drift_strength,
    error_unit,
    fit_common_scale,
    fit_stratified_scales,
)
from skassess.meta._scenarios import BASE_MODELS  # noqa: E402
from skassess.meta._um_features import UM_FEATURES  # noqa: E402
from skassess.meta.drift import LinearSkewSplit, NearestNeighborsSplit  # noqa: E402

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
    """The records' folder, named by the shipped boosters (their scales are applied later)
    and the default predictor, whose estimates the records hold."""
    boosters = json.dumps(_read("meta_model")["model"], sort_keys=True)
    digest = hashlib.sha256(boosters.encode()).hexdigest()
    method = PerformancePredictor().method
    return Path.home() / ".cache" / "skassess" / f"monitor-coverage-{digest[:10]}-{method}"


#: What the monitor sees of a batch: the black box's features and scores, or its scores alone
#: (as ``skassess monitor`` does).
INPUTS = ("features", "scores")


def unit_file(name, family, suffix, inputs="features"):
    """A unit's cached file: ``<data set>_<family>[.scores]<suffix>`` in :func:`cache_dir`.

    The records of a monitor that sees the scores alone carry ``.scores``; the
    batches' scores (``.npz``) and CBPE's files are the same for both.
    """
    tag = ".scores" if inputs == "scores" else ""
    return cache_dir() / f"{name}_{family.replace(' ', '-')}{tag}{suffix}"


def unit_factors(df, edges, inputs="features"):
    """Each record's recalibration factor: its unit's (one cached fit), of its drift stratum."""
    units = df[["dataset", "family"]].drop_duplicates().itertuples(index=False)
    factors = {(d, f): recalibration(d, f, inputs=inputs)["factors"] for d, f in units}
    stratum = np.searchsorted(edges, strengths(df), side="right")
    return np.array(
        [
            factors[u][s]
            for u, s in zip(zip(df["dataset"], df["family"], strict=True), stratum, strict=True)
        ]
    )


def unit_setup(name, family, seed):
    """The unit's rows (training, reference, rest), its fitted black box and the row generator."""
    X, y, _ = load_tabular(name, max_rows=6000)
    rng = np.random.default_rng(seed)
    tr, ref, rest = split_rows(len(y), rng)
    model = clone(FAMILIES[family])
    for key in model.get_params():
        if key.endswith("random_state"):
            model.set_params(**{key: seed})
    model.fit(X[tr], y[tr])
    return X, y, ref, rest, model, rng


def seen(model, X, inputs):
    """``(predictor, rows)``: the unfitted predictor and the rows ``X`` as the monitor sees
    them, the black box's features (the predictor carries it) or its scores alone."""
    if inputs == "scores":
        return PerformancePredictor(classes=model.classes_), model.predict_proba(X)
    return PerformancePredictor(model), X


def fitted_monitor(model, X, y, seed, inputs="features", **params):
    """The unit's interval regressor (shipped UM) on the reference, and the reference accuracy.

    With ``inputs="scores"`` it sees the black box's scores alone.
    """
    accuracy = float(np.mean(model.predict(X) == y))
    predictor, X = seen(model, X, inputs)
    pir = PerformanceIntervalRegressor(predictor, random_state=seed, **params).fit(X, y)
    return pir, accuracy


def recalibration(name, family, seed=0, inputs="features"):
    """The unit's ``recalibration_factor_`` (``uncertainty_model="recalibrated"``), cached,
    with the fit's process CPU and wall seconds."""
    out = unit_file(name, family, ".recalibrated.json", inputs)
    if out.exists():
        rec = json.loads(out.read_text())
        if "factors" in rec and "cpu_seconds" in rec:  # one factor per drift stratum
            return rec
    X, y, ref, _, model, _ = unit_setup(name, family, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    pir, _ = fitted_monitor(
        model,
        X[ref],
        y[ref],
        seed,
        inputs,
        uncertainty_model="recalibrated",
        progress=False,
    )
    rec = {
        "factors": pir.recalibration_factor_.tolist(),
        "n_scenarios": len(pir.scenarios_),
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec))
    return rec


def collect(name, family, seed=0, inputs="features"):
    """One unit's records (and its scores for CBPE), cached."""
    out = unit_file(name, family, ".csv.gz", inputs)
    if out.exists():
        return pd.read_csv(out)
    X, y, ref, rest, model, rng = unit_setup(name, family, seed)
    pir, ref_acc = fitted_monitor(model, X[ref], y[ref], seed, inputs)
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
            rec = {"dataset": name, "family": family, "drift": drift, "batch": b}
            rec.update(
                reference_accuracy=ref_acc, **_record(pir, model, Xr, yr, batch, rng, inputs)
            )
            records.append(rec)
            key = f"{drift.replace(' ', '-')}_{b}"
            scores[f"{key}_scores"] = model.predict_proba(Xr[batch])
            scores[f"{key}_y"] = yr[batch]
    df = pd.DataFrame(records)
    df["seconds_per_batch"] = (time.perf_counter() - t0) / len(df)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(unit_file(name, family, ".npz"), **scores)
    df.to_csv(out, index=False)
    return df


#: The stream: chunks before the drop, after it, and the accuracy drop aimed at.
STREAM = {"before": 30, "after": 30, "drop": 0.10}


def _record(pir, model, X, y, rows, rng, inputs="features"):
    """What one batch's record holds: truth, prediction, raw quantiles, drift, 20 labels."""
    correct = model.predict(X[rows]) == y[rows]
    res = pir.predict_batch(seen(model, X[rows], inputs)[1])
    F = np.array([[res.features[k] for k in UM_FEATURES]])
    raw = pir.uncertainty_model_.predict(F)[0] * error_unit(res.accuracy, rows.size)
    pick = rng.choice(rows.size, N_LABELS, replace=False)
    rec = {
        "n_batch": int(rows.size),
        "truth": float(correct.mean()),
        "predicted": res.accuracy,
        "k_labels": int(correct[pick].sum()),
    }
    rec.update({f"raw_q{j}": float(v) for j, v in enumerate(raw)})
    rec.update({k: float(res.features[k]) for k in ("drift_x_accuracy", "drift_z_accuracy")})
    return rec


def drop_weights(confidence, correct, drop):
    """Row weights ``exp(-t * confidence)``, ``t`` such that the accuracy falls by ``drop``.

    Traffic moves toward the rows the black box is least sure of (a covariate
    shift in its scores, so visible without labels); ``t`` is the smallest
    that reaches the drop, or 50 when none does.
    """
    base = correct.mean()

    def acc(t):
        w = np.exp(-t * (confidence - confidence.max()))
        return np.sum(w * correct) / np.sum(w)

    lo, hi = 0.0, 50.0
    if acc(hi) > base - drop:
        lo = hi
    for _ in range(60):
        if hi - lo < 1e-3:
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if acc(mid) > base - drop else (lo, mid)
    w = np.exp(-hi * (confidence - confidence.max()))
    return w / w.sum()


def collect_stream(name, family, seed=0, inputs="features"):
    """One unit's monitoring stream: ``STREAM["before"]`` chunks at random, then a known drop.

    After the drop, chunks are drawn with :func:`drop_weights`, so the true
    accuracy falls by about ``STREAM["drop"]``. Cached like :func:`collect`,
    with the scores for ``peer_cbpe.py``.
    """
    out = unit_file(name, family, ".stream.csv.gz", inputs)
    if out.exists():
        return pd.read_csv(out)
    X, y, ref, rest, model, rng = unit_setup(name, family, seed)
    pir, ref_acc = fitted_monitor(model, X[ref], y[ref], seed, inputs)
    Xr, yr = X[rest], y[rest]
    P = model.predict_proba(Xr)
    w = drop_weights(P.max(axis=1), model.predict(Xr) == yr, STREAM["drop"])
    size = max(50, len(rest) // 6)
    records, scores = [], {"ref_scores": model.predict_proba(X[ref]), "ref_y": y[ref]}
    for j in range(STREAM["before"] + STREAM["after"]):
        p = None if j < STREAM["before"] else w
        rows = rng.choice(len(rest), size, replace=False, p=p)
        rec = {"dataset": name, "family": family, "drift": "chunk", "batch": j}
        rec.update(reference_accuracy=ref_acc, **_record(pir, model, Xr, yr, rows, rng, inputs))
        records.append(rec)
        scores[f"chunk_{j}_scores"] = P[rows]
        scores[f"chunk_{j}_y"] = yr[rows]
    df = pd.DataFrame(records)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(unit_file(name, family, ".stream.npz"), **scores)
    df.to_csv(out, index=False)
    return df


def with_cbpe(df, kind=""):
    """The records with CBPE's estimates (``peer_cbpe.py``), NaN where it has not run.

    ``kind`` is ``""`` for the batches and ``".stream"`` for the streams.
    """
    frames = []
    for (name, family), g in df.groupby(["dataset", "family"], sort=False):
        path = unit_file(name, family, f"{kind}.cbpe.csv")
        if path.exists():
            g = g.merge(pd.read_csv(path), on=["drift", "batch"], how="left", validate="1:1")
        frames.append(g)
    return pd.concat(frames, ignore_index=True)


ALERT_COLUMNS = (
    "method",
    "unit",
    "delay",
    "detected",
    "below alerted",
    "chunks below",
    "false alarms",
    "chunks above",
)


def alerts(evs, probability=0.9):
    """Detection on each unit's stream (:func:`collect_stream`): the drop is at chunk ``before``.

    The threshold is the reference accuracy minus ``DROP``. Per method and
    unit: the delay (chunks from the drop to the first alert at or after
    it), whether it alerted after the drop at all, the alerts on chunks whose
    true accuracy is below the threshold, and on chunks whose true accuracy
    is at or above it (false alarms).
    """
    rows = []
    ev = evs["pretrained"]
    for (name, family), g in ev.groupby(["dataset", "family"], sort=False):
        t = g["reference_accuracy"].iloc[0] - DROP
        fired = {"skassess": g["p_below"] >= probability}
        fired["skassess (recalibrated)"] = (
            evs["recalibrated"].loc[g.index, "p_below"] >= probability
        )
        fired["skassess + 20 labels a chunk"] = g["lp_below"] >= probability
        # the point estimate below the threshold (P(below) >= 0.5), as CBPE's estimate
        fired["skassess (estimate below threshold)"] = g["p_below"] >= 0.5
        fired["skassess + 20 labels (estimate below threshold)"] = g["lp_below"] >= 0.5
        if "cbpe" in g and g["cbpe"].notna().all():
            fired["CBPE (its alert)"] = g["cbpe_alert"].astype(bool)
            fired["CBPE (estimate below threshold)"] = g["cbpe"] < t
        above = (g["truth"] >= t).to_numpy()
        for method, f in fired.items():
            f = f.to_numpy()
            post = f[STREAM["before"] :]
            rows.append(
                {
                    "method": method,
                    "unit": f"{name}/{family}",
                    "delay": int(np.argmax(post)) if post.any() else np.nan,
                    "detected": bool(post.any()),
                    "below alerted": int(f[~above].sum()),
                    "chunks below": int((~above).sum()),
                    "false alarms": int(f[above].sum()),
                    "chunks above": int(above.sum()),
                }
            )
    return pd.DataFrame(rows, columns=list(ALERT_COLUMNS))


def width_ratio(ev):
    """Per drift tercile: the median ratio of the 95 % half-widths, skassess's to CBPE's
    ``z`` sampling errors, beside both coverages at 95 %."""
    print("\nThe 95 % band's width beside CBPE's (± z sampling errors), by drift tercile")
    print(
        "| drift strength | batches | median half-width ÷ CBPE's | skassess coverage at 95 % | "
        "CBPE coverage at 95 % |"
    )
    print("|---|---|---|---|---|")
    for key, g in ev.groupby("drift strength", observed=True, sort=False):
        ratio = (g["half_0.95"] / g["chalf_0.95"]).median()
        print(
            f"| {key} | {len(g)} | {ratio:.2f} | {100 * g['cov_0.95'].mean():.1f} | "
            f"{100 * g['ccov_0.95'].mean():.1f} |"
        )


def false_alarms(ev, st, probability=0.9):
    """Where the label-free alerts on chunks above the threshold fall: before the drop, or
    after it on chunks whose accuracy fell but stayed above the threshold."""
    t = st["reference_accuracy"] - DROP
    above = (st["truth"] >= t).to_numpy()
    post = (st["batch"] >= STREAM["before"]).to_numpy()
    fired = (ev["p_below"] >= probability).to_numpy()
    margin = 100 * (st["truth"] - t).to_numpy()
    print(
        f"\nFalse alarms of the label-free alert (P(below) ≥ {probability:g}): chunks above the "
        "threshold, before the drop and after it"
    )
    print(
        "| chunks | above the threshold | alerted | median accuracy above the threshold of the "
        "alerted (points) |"
    )
    print("|---|---|---|---|")
    for label, part in (("before the drop", ~post), ("after the drop", post)):
        sel = above & part
        hit = sel & fired
        med = f"{np.median(margin[hit]):.1f}" if hit.any() else "-"
        print(f"| {label} | {int(sel.sum())} | {int(hit.sum())} | {med} |")


def best_at_false_alarms(ev, has_cbpe, limit=2.0, more=None):
    """Per score, the most stream chunks below the threshold alerted at <= ``limit``
    false alarms per 100 chunks above it, over every alert threshold (chosen on the truth).

    ``more`` maps further scores' names to their values, one per chunk.
    """
    t = ev["reference_accuracy"] - DROP
    above = (ev["truth"] >= t).to_numpy()
    scores = {
        "skassess: P(below)": ev["p_below"],
        "skassess + 20 labels a chunk: P(below)": ev["lp_below"],
        "skassess: threshold - estimate": t - ev["predicted"],
        **(more or {}),
    }
    if has_cbpe:
        scores["CBPE: threshold - estimate"] = t - ev["cbpe"]
    print(
        f"\nStream chunks below the threshold alerted at most {limit:g} false alarms per 100 "
        "chunks above it, the alert threshold chosen on the truth"
    )
    print("| score | chunks below alerted | false alarms per 100 | alert threshold |")
    print("|---|---|---|---|")
    for name, score in scores.items():
        det, fa, _, _, cut = best_rule(score.to_numpy(), above, None, 0, limit)
        print(f"| {name} | {det} of {int((~above).sum())} | {fa:.1f} | {cut:.3f} |")


def alerts_by_probability(ev, st, probabilities=(0.8, 0.9, 0.95, 0.975)):
    """The label-free alert at each ``alert_probability``, beside CBPE's alert: the chunks
    below the threshold alerted, the false alarms, the streams detected and the delay."""
    t = st["reference_accuracy"] - DROP
    above = (st["truth"] >= t).to_numpy()
    fired = {f"skassess, P(below) ≥ {q:g}": (ev["p_below"] >= q).to_numpy() for q in probabilities}
    if "cbpe_alert" in st and st["cbpe"].notna().all():
        fired["CBPE (its alert)"] = st["cbpe_alert"].astype(bool).to_numpy()
    print("\nThe label-free alert at each alert probability, beside CBPE's alert")
    print(
        "| alert | chunks below the threshold alerted | false alarms per 100 chunks above it "
        "| streams detected | median delay (chunks) |"
    )
    print("|---|---|---|---|---|")
    streams = st.groupby(["dataset", "family"], sort=False).indices.values()
    for name, f in fired.items():
        post = [f[i][STREAM["before"] :] for i in streams]
        delays = [int(np.argmax(p)) for p in post if p.any()]
        print(
            f"| {name} | {int(f[~above].sum())} of {int((~above).sum())} | "
            f"{100 * f[above].sum() / max(above.sum(), 1):.1f} | {len(delays)} of {len(post)} | "
            f"{np.median(delays) if delays else np.nan:.0f} |"
        )


def false_alarms_by_stream(ev, st, probability=0.9):
    """The streams with a false alarm of the label-free alert: where the accuracy ended up
    after the drop, and how far skassess's and CBPE's estimates were from it there."""
    t = st["reference_accuracy"] - DROP
    above = st["truth"] >= t
    fired = ev["p_below"] >= probability
    post = st["batch"] >= STREAM["before"]
    print(
        f"\nThe streams with a false alarm (P(below) ≥ {probability:g}): after the drop, the "
        "mean accuracy above the threshold and the mean error of each estimate"
    )
    print(
        "| stream | chunks below alerted | false alarms | accuracy after the drop - threshold "
        "(points) | skassess's error after the drop (points) | CBPE's error after the drop "
        "(points) |"
    )
    print("|---|---|---|---|---|---|")
    for (name, family), g in st.groupby(["dataset", "family"], sort=False):
        i = g.index
        fa = int((fired[i] & above[i]).sum())
        if not fa:
            continue
        p = i[post[i].to_numpy()]
        cbpe = 100 * (st.loc[p, "cbpe"] - st.loc[p, "truth"]).mean() if "cbpe" in st else np.nan
        print(
            f"| {name} / {family} | {int((fired[i] & ~above[i]).sum())} of "
            f"{int((~above[i]).sum())} | {fa} | {100 * (st.loc[p, 'truth'] - t[p]).mean():+.1f} | "
            f"{100 * (st.loc[p, 'predicted'] - st.loc[p, 'truth']).mean():+.1f} | {cbpe:+.1f} |"
        )


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


def labeled_posterior(m, q, k, n, n_batch):
    """The monitor's posterior of a batch of ``n_batch`` rows after ``k`` right of ``n``
    labels: the label-free prediction as the prior (``PerformanceMonitor``'s update)."""
    return ChunkPosterior(m, q, n_batch, k, n - k)


def labeled_interval(m, q, k, n, n_batch, level):
    post = labeled_posterior(m, q, k, n, n_batch)
    lo, hi = post.interval(level)
    return post.mean(), lo, hi


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
    sizes = df["n_batch"].to_numpy()
    out["lp_below"] = [
        labeled_posterior(m, q, k, N_LABELS, size).cdf(r - DROP)
        for m, q, k, r, size in zip(
            df["predicted"], Q, df["k_labels"], df["reference_accuracy"], sizes, strict=True
        )
    ]
    lab = [
        [labeled_interval(m, q, k, N_LABELS, size, a) for a in LEVELS]
        for m, q, k, size in zip(df["predicted"], Q, df["k_labels"], sizes, strict=True)
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


def unit_table(ev, title):
    """Coverage per unit, the data set named with its reference's rows, with the mean error
    of the label-free estimate and of CBPE's, and the reference's accuracy minus that of
    the unit's batches drawn at random (drift ``"none"``): what the reference's own sample
    puts into every estimate learned from it."""
    refs = {}
    for name in ev["dataset"].unique():
        n = len(load_tabular(name, max_rows=6000)[1])
        refs[name] = len(split_rows(n, np.random.default_rng(0))[1])
    print(f"\n{title}")
    print(
        "| unit | batches | 80 % | 90 % | 95 % | half-width at 95 % (points) | mean error "
        "(points) | CBPE's mean error (points) | reference - undrifted batches (points) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (d, f), g in ev.groupby(["dataset", "family"], sort=False):
        cov = " | ".join(f"{100 * g[f'cov_{a}'].mean():.1f}" for a in (0.8, 0.9, 0.95))
        cbpe = 100 * g["cbpe_error"].mean() if "cbpe_error" in g else np.nan
        luck = 100 * (g["reference_accuracy"].iloc[0] - g.loc[g["drift"] == "none", "truth"].mean())
        print(
            f"| {d} ({refs[d]}) / {f} | {len(g)} | {cov} | {100 * g['half_0.95'].mean():.2f} | "
            f"{100 * g['error'].mean():+.2f} | {cbpe:+.2f} | {luck:+.2f} |"
        )


def stream_regimes(es, sizes):
    """The stream chunks before and after the drop: label-free coverage and width, and the
    MAE label-free and with 20 labels a chunk (the monitor's posterior)."""
    print(
        "\nStream chunks before and after the drop: label-free coverage (%), the 95 % "
        "half-width, the chunk's own sampling error at 95 %, and the MAE label-free and with "
        f"{N_LABELS} labels a chunk"
    )
    print(
        "| chunks | n | 80 % | 90 % | 95 % | half-width at 95 % (points) | sampling error at "
        f"95 % (points) | MAE (points) | MAE with {N_LABELS} labels | ÷ label-free |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    after = es["batch"].to_numpy() >= STREAM["before"]
    sampling = norm.ppf(0.975) * np.sqrt(es["truth"] * (1 - es["truth"]) / sizes)
    for label, mask in (("before the drop", ~after), ("after the drop", after)):
        g = es[mask]
        cov = " | ".join(f"{100 * g[f'cov_{a}'].mean():.1f}" for a in (0.8, 0.9, 0.95))
        m0, m1 = 100 * g["error"].abs().mean(), 100 * g["labeled_error"].abs().mean()
        print(
            f"| {label} | {len(g)} | {cov} | {100 * g['half_0.95'].median():.2f} | "
            f"{100 * np.median(sampling[mask]):.2f} | {m0:.2f} | {m1:.2f} | {m1 / m0:.2f} |"
        )


def oracle_by_tercile(ev, Q, df):
    """The bound of a factor per drift tercile: one factor each, fitted on the batches' truth.

    Each tercile's factor multiplies the recalibrated quantiles and is the
    one (of a grid 0.2-5) whose coverage is closest to the level at the worst
    of ``LEVELS``; the coverage by tercile and by family under these factors
    is what no recalibration by a factor per drift stratum can beat.
    """
    err = (df["predicted"] - df["truth"]).abs().to_numpy()
    H = np.array([[float(error_quantiles(q, a)) for a in LEVELS] for q in Q])
    grid = np.exp(np.linspace(np.log(0.2), np.log(5.0), 400))
    factor = np.ones(len(df))
    for t in ev["drift strength"].cat.categories:
        m = (ev["drift strength"] == t).to_numpy()
        worst = [np.max(np.abs((err[m, None] <= f * H[m]).mean(axis=0) - LEVELS)) for f in grid]
        factor[m] = grid[int(np.argmin(worst))]
    oracle = ev[["drift strength", "family"]].copy()
    for j, a in enumerate(LEVELS):
        oracle[f"cov_{a}"] = err <= factor * H[:, j]
        oracle[f"half_{a}"] = factor * H[:, j]
    print(
        "\nThe bound: a factor per drift tercile fitted on the batches' truth ("
        + ", ".join(
            f"{t} {factor[(ev['drift strength'] == t).to_numpy()][0]:.2f}"
            for t in ev["drift strength"].cat.categories
        )
        + " times the recalibrated quantiles)"
    )
    coverage_table(oracle, "drift strength", "Coverage (%) by drift-strength tercile, the bound")
    coverage_table(oracle, "family", "Coverage (%) by black-box family, the bound")


SCENARIOS = Path.home() / ".cache" / "skassess" / "scenarios"


def library_lodo(pir, n_strata):
    """Nearest-neighbour scenarios of the library, leave-one-data-set-out (None when
    ``make_drift_scenarios.py`` made none with the regressor's predictor).

    The shipped boosters (trained on the library's linear-skew scenarios)
    give every nearest-neighbour scenario's raw quantiles; for each data set,
    the stratified scales are fitted on the other data sets' scenarios and
    applied to its own, the recipe of ``train_pretrained_um.py``.
    """
    files = sorted(SCENARIOS.glob("*_nn_*.csv.gz"))
    if not files:
        return None
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    df = df[df["method"] == pir.predictor_.method].reset_index(drop=True)
    if df.empty:  # the scenarios were made without the default predictor
        return None
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
    ap.add_argument(
        "--inputs",
        choices=INPUTS,
        default="features",
        help="what the monitor sees of a batch: the black box's features and scores, or its "
        "scores alone (as skassess monitor does)",
    )
    add_save_argument(ap)
    args = ap.parse_args()
    frames, streams = [], []
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for name in args.datasets:
            for family in args.families:
                frames.append(collect(name, family, inputs=args.inputs))
                streams.append(collect_stream(name, family, inputs=args.inputs))
                print(f"  {name} / {family}: {len(frames[-1])} batches", file=sys.stderr)
    df = with_cbpe(pd.concat(frames, ignore_index=True))
    has_cbpe = "cbpe" in df and df["cbpe"].notna().all()
    # any fitted regressor carries the package's calibration of the shipped model (for
    # a monitor that sees features, or the scores alone)
    X, y, _ = load_tabular(args.datasets[0], max_rows=600)
    pir, _ = fitted_monitor(clone(BASE_MODELS["lr"]).fit(X, y), X, y, 0, args.inputs)
    Q = calibrated(df, pir)
    # "recalibrated": each unit's factor (fitted on its own reference) times the shipped scales
    factor = unit_factors(df, pir.drift_edges_, args.inputs)
    evs = {
        "pretrained": evaluate(df, Q),
        "recalibrated": evaluate(df, Q * factor[:, None]),
    }
    for ev in evs.values():
        ev["drift strength"] = pd.qcut(ev["strength"], 3, labels=["low", "middle", "high"])
        ev["accuracy change"] = pd.qcut(ev["change"], 3, labels=["small", "middle", "large"])
    ev = evs["pretrained"]
    with saving_printed_tables(args.save):
        print(
            f"Label-free intervals on {df.dataset.nunique()} data sets the uncertainty model "
            f"never saw, {len(df)} batches ({', '.join(args.families)})"
        )
        for um, e in evs.items():
            coverage_table(e, "drift strength", f"{um}: coverage (%) by drift-strength tercile")
            coverage_table(e, "family", f"{um}: coverage (%) by black-box family")
            coverage_table(e, "drift", f"{um}: coverage (%) by drift type")
            coverage_table(
                e, "accuracy change", f"{um}: coverage (%) by tercile of the true |Δacc|"
            )
        unit_table(
            ev,
            "pretrained: coverage (%) by data set (reference rows) and family; the mean error "
            "is the estimate minus the truth",
        )
        if has_cbpe:
            coverage_table(
                ev, "drift strength", "CBPE's band (± z sampling errors): coverage (%)", "ccov"
            )
        print(
            "\nThe recalibration factors per unit (low / middle / high drift stratum), beside "
            "the best single factor for its batches (fitted on their truth)"
        )
        print("| unit | factors | best factor for its batches | fit (CPU s) | fit (wall s) |")
        print("|---|---|---|---|---|")
        for (d, f), g in df.groupby(["dataset", "family"], sort=False):
            r = recalibration(d, f, inputs=args.inputs)
            best = fit_common_scale(g["predicted"] - g["truth"], Q[g.index])
            own = " / ".join(f"{x:.2f}" for x in r["factors"])
            print(
                f"| {d} / {f} | {own} | {best:.2f} | {r['cpu_seconds']:.0f} | {r['seconds']:.0f} |"
            )
        oracle_by_tercile(evs["recalibrated"], Q * factor[:, None], df)
        big = ev["change"] > DROP
        print("\nPoint error (MAE, points)")
        print(
            "| batches | label-free | CBPE | label-free ÷ CBPE | with 20 labels (pretrained) "
            "| ÷ label-free | with 20 labels (recalibrated) | ÷ label-free |"
        )
        print("|---|---|---|---|---|---|---|---|")
        re = evs["recalibrated"]
        for label, g, r in (("all", ev, re), ("Δacc beyond ±5 points", ev[big], re[big])):
            m0 = 100 * g["error"].abs().mean()
            m1 = 100 * g["labeled_error"].abs().mean()
            m2 = 100 * r["labeled_error"].abs().mean()
            mc = 100 * g["cbpe_error"].abs().mean() if has_cbpe else np.nan
            print(
                f"| {label} ({len(g)}) | {m0:.2f} | {mc:.2f} | {m0 / mc:.2f} | {m1:.2f} | "
                f"{m1 / m0:.2f} | {m2:.2f} | {m2 / m0:.2f} |"
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
        print(
            "\nReference line: the label-free prediction and the 20 labels' share, weighted "
            "per drift tercile to minimize the squared error on the truth"
        )
        print("| batches | MAE (points) | ÷ label-free |")
        print("|---|---|---|")
        for label, g in (("all", ev), ("Δacc beyond ±5 points", ev[big])):
            print(
                f"| {label} ({len(g)}) | {100 * g['oracle_error'].mean():.2f} | "
                f"{g['oracle_error'].mean() / g['error'].abs().mean():.2f} |"
            )
        wins = ev.groupby("dataset").apply(
            lambda g: g["error"].abs().mean() <= g.get("cbpe_error", g["error"]).abs().mean()
        )
        print(f"data sets where skassess's MAE ≤ CBPE's: {int(wins.sum())} of {len(wins)}")
        for um, e in evs.items():
            coverage_table(
                e,
                "drift strength",
                f"{um}, 20 labels a batch: coverage (%) by drift tercile",
                "lcov",
            )
            coverage_table(e, "family", f"{um}, 20 labels a batch: coverage (%) by family", "lcov")
        lib = (
            library_lodo(pir, max(1, len(pir.drift_edges_) + 1))
            if args.inputs == "features"
            else None
        )
        if lib is not None:
            lib["drift strength"] = pd.qcut(lib["strength"], 3, labels=["low", "middle", "high"])
            print(
                f"\nThe library's nearest-neighbour scenarios, leave-one-data-set-out: "
                f"{lib.dataset.nunique()} data sets, {len(lib)} scenarios"
            )
            coverage_table(lib, "drift strength", "Coverage (%) by drift-strength tercile")
            coverage_table(lib, "family", "Coverage (%) by black-box family")
        st = with_cbpe(pd.concat(streams, ignore_index=True), ".stream")
        Qs = calibrated(st, pir)
        fs = unit_factors(st, pir.drift_edges_, args.inputs)
        al = alerts(
            {
                "pretrained": evaluate(st, Qs),
                "recalibrated": evaluate(st, Qs * fs[:, None]),
            }
        )
        before = st["batch"] < STREAM["before"]
        realized = (
            st[~before].groupby(["dataset", "family"])["truth"].mean()
            - st[before].groupby(["dataset", "family"])["truth"].mean()
        )
        print(
            f"\nAlerts: {al['unit'].nunique()} streams (one per unit) of "
            f"{STREAM['before']} chunks at random, then {STREAM['after']} drawn toward the rows "
            f"the black box is least sure of (true accuracy change: median "
            f"{100 * realized.median():+.1f} points, range {100 * realized.min():+.1f} to "
            f"{100 * realized.max():+.1f}). Threshold: reference accuracy - "
            f"{100 * DROP:.0f} points; skassess alerts at P(below) ≥ 0.9."
        )
        print(
            "| method | streams detected | median delay (chunks) | chunks below the "
            "threshold alerted | false alarms per 100 chunks above the threshold |"
        )
        print("|---|---|---|---|---|")
        for method, g in al.groupby("method", sort=False):
            fa = 100 * g["false alarms"].sum() / max(g["chunks above"].sum(), 1)
            print(
                f"| {method} | {int(g['detected'].sum())} of {len(g)} | "
                f"{g['delay'].median():.0f} | {int(g['below alerted'].sum())} of "
                f"{int(g['chunks below'].sum())} | {fa:.1f} |"
            )
        # one width for every chunk: the median chunk's quantiles, about the chunk's estimate
        one_width = np.tile(np.median(Qs, axis=0), (len(Qs), 1))
        best_at_false_alarms(
            evaluate(st, Qs),
            has_cbpe,
            more={
                "skassess (recalibrated): P(below)": evaluate(st, Qs * fs[:, None])["p_below"],
                "skassess, the median chunk's width for every chunk: P(below)": evaluate(
                    st, one_width
                )["p_below"],
            },
        )
        print(f"\nWall seconds per batch (median; batches of {int(df['n_batch'].median())} rows)")
        print("| method | seconds per batch |")
        print("|---|---|")
        print(f"| skassess: features and every level | {df['seconds_per_batch'].median():.3f} |")
        if has_cbpe:
            print(f"| CBPE: estimate | {df['cbpe_seconds_per_batch'].median():.3f} |")
        false_alarms(evaluate(st, Qs), st)
        false_alarms_by_stream(evaluate(st, Qs), st)
        if has_cbpe:
            width_ratio(ev)
        alerts_by_probability(evaluate(st, Qs), st)
        es = evaluate(st, Qs).assign(batch=st["batch"])
        stream_regimes(es, st["n_batch"].to_numpy())
        t = es["reference_accuracy"] - DROP
        sequential_at_false_alarms(
            es,
            {
                "skassess: P(below)": es["p_below"],
                "skassess: threshold - estimate": t - es["predicted"],
                **({"CBPE: threshold - estimate": t - es["cbpe"]} if has_cbpe else {}),
            },
            t,
            STREAM["before"],
        )


if __name__ == "__main__":
    main()

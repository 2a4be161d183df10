"""NannyML's CBPE on the batches of ``bench_monitor_coverage.py`` (a benchmark peer).

Run it with an interpreter that has ``nannyml`` (its pins conflict with
skassess's, so it lives in its own environment)::

    python -m venv ~/venv-nannyml && ~/venv-nannyml/bin/pip install nannyml statsmodels
    ~/venv-nannyml/bin/python benchmarks/peer_cbpe.py ~/.cache/skassess/monitor-coverage-*/

For each unit's ``.npz`` and ``.stream.npz`` (the reference scores and labels,
and every batch's or chunk's scores and labels), CBPE is fitted on the
reference, cut into 10 chunks for its thresholds (NannyML's default: 3
standard deviations of the reference chunks),
and estimates the accuracy of every batch, each batch one chunk. Writes
``<unit>.cbpe.csv`` beside the records: the estimate, its confidence band
(NannyML's ``± 3`` sampling errors), its alert, and the seconds the estimate
took per batch (wall and process CPU). Imports nothing from skassess.
"""

import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("NML_DISABLE_USAGE_LOGGING", "1")  # no analytics calls from a benchmark

import nannyml as nml  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def frame(scores, y, day0, days):
    K = scores.shape[1]
    df = pd.DataFrame({f"p{k}": scores[:, k] for k in range(K)})
    df["y_pred"] = scores.argmax(axis=1)
    df["y_true"] = y
    df["timestamp"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(day0 + days, unit="D")
    return df


def run(npz):
    data = np.load(npz)
    S, y = data["ref_scores"], data["ref_y"]
    K = S.shape[1]
    ref = frame(S, y, 0, np.arange(len(y)) % 10)
    keys = sorted({k.rsplit("_", 1)[0] for k in data.files if not k.startswith("ref_")})
    keys = sorted(keys, key=lambda k: (k.rsplit("_", 1)[0], int(k.rsplit("_", 1)[1])))
    batches = [
        frame(data[f"{k}_scores"], data[f"{k}_y"], 100 + j, np.zeros(len(data[f"{k}_y"]), int))
        for j, k in enumerate(keys)
    ]
    if K == 2:
        kw = {"y_pred_proba": "p1", "problem_type": "classification_binary"}
    else:
        kw = {
            "y_pred_proba": {k: f"p{k}" for k in range(K)},
            "problem_type": "classification_multiclass",
        }
    cbpe = nml.CBPE(
        metrics=["accuracy"],
        y_pred="y_pred",
        y_true="y_true",
        timestamp_column_name="timestamp",
        chunk_period="D",
        **kw,
    )
    t0 = time.perf_counter()
    cbpe.fit(ref)
    fit_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    res = cbpe.estimate(pd.concat(batches, ignore_index=True)).filter(period="analysis")
    est_s, est_cpu = time.perf_counter() - t0, time.process_time() - c0
    df = res.to_df()
    acc = df["accuracy"]
    out = pd.DataFrame(
        {
            "key": keys,
            "cbpe": acc["value"].to_numpy(),
            "cbpe_lower": acc["lower_confidence_boundary"].to_numpy(),
            "cbpe_upper": acc["upper_confidence_boundary"].to_numpy(),
            "cbpe_sampling_error": acc["sampling_error"].to_numpy(),
            "cbpe_alert": acc["alert"].to_numpy(),
            "cbpe_lower_threshold": acc["lower_threshold"].to_numpy(),
        }
    )
    out["drift"] = [k.rsplit("_", 1)[0].replace("-", " ") for k in keys]
    out["batch"] = [int(k.rsplit("_", 1)[1]) for k in keys]
    out["cbpe_fit_seconds"] = fit_s
    out["cbpe_seconds_per_batch"] = est_s / len(keys)
    out["cbpe_cpu_seconds_per_batch"] = est_cpu / len(keys)
    return out.drop(columns="key")


def main():
    folder = Path(sys.argv[1])
    warnings.simplefilter("ignore")
    for npz in sorted(folder.glob("*.npz")):
        target = npz.with_suffix(".cbpe.csv")
        if target.exists():
            continue
        out = run(npz)
        out.to_csv(target, index=False)
        print(f"{npz.stem}: {len(out)} batches, {out['cbpe_seconds_per_batch'].iloc[0]:.3f} s each")


if __name__ == "__main__":
    main()

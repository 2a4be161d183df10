"""Labels on a monitored stream: 0, 4 or 20 a chunk, drawn at random, by ``query``, by an oracle.

The streams are ``bench_monitor_coverage.py``'s (one per data set of
``_tabular.EXTERNAL_DATASETS`` and black-box family: 30 chunks at random, then
30 drawn toward the rows the black box is least sure of, the accuracy falling
by about 10 points; cached, made on first use). Each chunk's estimate is the
monitor's posterior (``ChunkPosterior``: the label-free prediction as the
prior, the chunk's labels on top); the threshold is the reference accuracy
minus 5 points, and a chunk alerts at ``P(below) >= 0.9``.

A budget of ``b`` labels a chunk (``b × 60`` a stream) is spent four ways:

- **random**: ``b`` rows of each chunk at random;
- **query, as the chunks arrive**: when chunk ``j`` arrives, ``b`` labels go
  where :meth:`PerformanceMonitor.query`'s rule (``allocate_labels``) sends
  them among the chunks so far, on their current posteriors;
- **query, backfill**: the whole stream's budget in ``b`` rounds of 60 labels,
  each round by the same rule on the posteriors after the rounds before;
- **oracle, decisions**: one label at a time to the chunk whose alert
  decision the truth says is wrong (its posterior mean farthest from the
  truth first), and, once none is wrong, to the chunk whose mean is farthest
  from the truth;
- **oracle, error**: one label at a time to the chunk whose posterior mean is
  farthest from the truth.

The oracles know each chunk's true accuracy, so they show what this number of
labels can do when every one goes where it is needed: where they do not beat
label-free, labels of this number cannot help.

Inside a chunk the rows are drawn uniformly (each chunk's labels are a random
sample of it, as the monitor requires). Printed per policy and budget, over
``--runs`` draws of the labels: the MAE and RMSE over all chunks, the MAE over the chunks
whose label-free prediction is off by more than 5 points, the chunks below
the threshold alerted, the false alarms per 100 chunks above it, the streams
detected and the median delay from the drop to the first alert (chunks),
beside CBPE's alert when ``peer_cbpe.py`` has run on the streams.

Usage::

    python benchmarks/bench_monitor_labels.py [--inputs scores] [--runs 5] [--n-jobs 2]
        [--uncertainty-model recalibrated] [--save monitor-labels]
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import add_save_argument, saving_printed_tables
from joblib import Parallel, delayed
from sklearn.base import clone
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS, load_tabular  # noqa: E402
from bench_monitor_coverage import (  # noqa: E402
    DROP,
    FAMILIES,
    INPUTS,
    STREAM,
    calibrated,
    collect_stream,
    fitted_monitor,
    unit_factors,
    unit_file,
    with_cbpe,
)

from skassess.meta._chunk_posterior import ChunkPosterior  # noqa: E402
from skassess.meta._chunks import allocate_labels  # noqa: E402
from skassess.meta._scenarios import BASE_MODELS  # noqa: E402

ALERT = 0.9
LEVEL = 0.95
BUDGETS = (4, 20)
POLICIES = (
    "random",
    "query, as the chunks arrive",
    "query, backfill",
    "oracle, decisions",
    "oracle, error",
)


def chunk_correct(name, family, n_chunks):
    """Each stream chunk's rows: whether the black box is right on each (from the scores file)."""
    data = np.load(unit_file(name, family, ".stream.npz"))
    return [
        data[f"chunk_{j}_scores"].argmax(axis=1) == data[f"chunk_{j}_y"] for j in range(n_chunks)
    ]


class Stream:
    """One stream's chunks: the label-free prediction, the labels drawn so far, the posteriors."""

    def __init__(self, g, Q, correct, rng):
        self.m = g["predicted"].to_numpy()
        self.Q = Q
        self.truth = g["truth"].to_numpy()
        self.t = float(g["reference_accuracy"].iloc[0]) - DROP
        self.rows = [rng.permutation(c.size) for c in correct]  # the order rows get labeled
        self.correct = correct
        self.k = np.zeros(len(correct), dtype=int)
        self.post = [self._posterior(j) for j in range(len(correct))]

    def _posterior(self, j):
        c = self.correct[j][self.rows[j][: self.k[j]]]
        return ChunkPosterior(self.m[j], self.Q[j], self.correct[j].size, c.sum(), c.size - c.sum())

    def label(self, j, n=1):
        self.k[j] = min(self.k[j] + n, self.correct[j].size)
        self.post[j] = self._posterior(j)

    def table(self, upto=None):
        """The columns ``allocate_labels`` reads, for the chunks before ``upto``."""
        post = self.post[:upto]
        bounds = np.array([p.interval(LEVEL) for p in post])
        return pd.DataFrame(
            {"mean": [p.mean() for p in post], "lower_95": bounds[:, 0], "upper_95": bounds[:, 1]}
        )

    def left(self, upto=None):
        return np.array([c.size for c in self.correct[:upto]]) - self.k[:upto]

    def result(self):
        mean = np.array([p.mean() for p in self.post])
        p_below = np.array([p.cdf(self.t) for p in self.post])
        return mean, p_below >= ALERT


def spend(stream, policy, b):
    n = len(stream.correct)
    if policy == "random":
        for j in range(n):
            stream.label(j, b)
    elif policy == "query, as the chunks arrive":
        for j in range(n):
            taken = allocate_labels(stream.table(j + 1), stream.left(j + 1), b, LEVEL, stream.t)
            for i in np.flatnonzero(taken):
                stream.label(i, taken[i])
    elif policy == "query, backfill":
        for _ in range(b):
            taken = allocate_labels(stream.table(), stream.left(), n, LEVEL, stream.t)
            for i in np.flatnonzero(taken):
                stream.label(i, taken[i])
    else:  # the oracles
        below = stream.truth < stream.t
        for _ in range(b * n):
            mean, alert = stream.result()
            off = np.abs(mean - stream.truth)
            if policy == "oracle, decisions":
                off = off + np.where(alert != below, 1.0, 0.0)
            off[stream.left() == 0] = -np.inf
            stream.label(int(np.argmax(off)))
    return stream.result()


def run_unit(g, Q, correct, seed):
    """Every policy and budget on one stream, one draw of the labels: a record per chunk."""
    out = []
    cells = [("none", 0)] + [(p, b) for b in BUDGETS for p in POLICIES]
    for policy, b in cells:
        rng = np.random.default_rng([seed, len(out)])
        stream = Stream(g, Q, correct, rng)
        mean, alert = spend(stream, policy, b) if b else stream.result()
        out.append(
            pd.DataFrame(
                {
                    "policy": policy,
                    "budget": b,
                    "run": seed,
                    "unit": f"{g['dataset'].iloc[0]}/{g['family'].iloc[0]}",
                    "chunk": np.arange(len(mean)),
                    "truth": stream.truth,
                    "threshold": stream.t,
                    "free_error": stream.m - stream.truth,
                    "error": mean - stream.truth,
                    "alert": alert,
                    "labels": stream.k,
                }
            )
        )
    return pd.concat(out, ignore_index=True)


def decisions(df):
    """Detections, false alarms per 100 chunks above, streams detected, median delay."""
    below = df["truth"] < df["threshold"]
    per_stream = []
    for _, s in df.groupby(["unit", "run"]):
        post = s["alert"].to_numpy()[STREAM["before"] :]
        per_stream.append(int(np.argmax(post)) if post.any() else np.nan)
    delays = np.array(per_stream, dtype=float)
    return {
        "below alerted (%)": 100 * df.loc[below, "alert"].mean(),
        "false alarms per 100": 100 * df.loc[~below, "alert"].mean(),
        "streams detected (%)": 100 * np.mean(~np.isnan(delays)),
        "median delay": np.nanmedian(delays) if (~np.isnan(delays)).any() else np.nan,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(EXTERNAL_DATASETS))
    ap.add_argument("--families", nargs="*", default=list(FAMILIES))
    ap.add_argument("--runs", type=int, default=5, help="draws of the labels per stream")
    ap.add_argument(
        "--inputs",
        choices=INPUTS,
        default="features",
        help="what the monitor sees: the black box's features and scores, or its scores alone",
    )
    ap.add_argument(
        "--uncertainty-model",
        choices=["pretrained", "recalibrated"],
        default="pretrained",
        help="the shipped scales, or each unit's recalibrated on its reference",
    )
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        units = [(d, f) for d in args.datasets for f in args.families]
        frames = Parallel(n_jobs=args.n_jobs)(
            delayed(collect_stream)(*u, inputs=args.inputs) for u in units
        )
    st = with_cbpe(pd.concat(frames, ignore_index=True), ".stream")
    X, y, _ = load_tabular(args.datasets[0], max_rows=600)
    pir, _ = fitted_monitor(clone(BASE_MODELS["lr"]).fit(X, y), X, y, 0, args.inputs)
    Q = calibrated(st, pir)
    if args.uncertainty_model == "recalibrated":
        Q = Q * unit_factors(st, pir.drift_edges_, args.inputs)[:, None]
    jobs = []
    for (d, f), g in st.groupby(["dataset", "family"], sort=False):
        correct = chunk_correct(d, f, len(g))
        assert np.allclose([c.mean() for c in correct], g["truth"]), (d, f)
        jobs += [(g, Q[g.index], correct, run) for run in range(args.runs)]
    with threadpool_limits(1):
        res = pd.concat(
            Parallel(n_jobs=args.n_jobs)(delayed(run_unit)(*a) for a in jobs), ignore_index=True
        )
    off = res["free_error"].abs() > 0.05
    n_off = int(off[(res["budget"] == 0) & (res["run"] == 0)].sum())
    n_streams = res["unit"].nunique()
    n_below = int((st["truth"] < st["reference_accuracy"] - DROP).sum())
    with saving_printed_tables(args.save):
        print(
            f"\nLabels on {n_streams} streams of {STREAM['before'] + STREAM['after']} chunks "
            f"(median {int(st['n_batch'].median())} rows; the monitor sees "
            f"{'the scores alone' if args.inputs == 'scores' else 'features and scores'}"
            f"{', recalibrated' if args.uncertainty_model == 'recalibrated' else ''}; "
            f"{n_below} chunks below the threshold, "
            f"{n_off} whose label-free "
            f"prediction is off by more than 5 points), {args.runs} draws of the labels each. "
            f"Threshold: reference accuracy - {100 * DROP:.0f} points; alert at P(below) ≥ {ALERT}."
        )
        print(
            "| labels a chunk | policy | MAE (points) | RMSE (points) | MAE where label-free is "
            "off by > 5 points | chunks below alerted (%) | false alarms per 100 chunks above "
            "| streams detected (%) | median delay (chunks) |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for (b, policy), g in res.groupby(["budget", "policy"], sort=False):
            d = decisions(g)
            print(
                f"| {b} | {policy} | {100 * g['error'].abs().mean():.2f} | "
                f"{100 * np.sqrt(np.mean(g['error'] ** 2)):.2f} | "
                f"{100 * g.loc[off[g.index], 'error'].abs().mean():.2f} | "
                f"{d['below alerted (%)']:.1f} | {d['false alarms per 100']:.1f} | "
                f"{d['streams detected (%)']:.0f} | {d['median delay']:.0f} |"
            )
        if "cbpe" in st and st["cbpe"].notna().all():
            cb = st.assign(
                truth=st["truth"],
                threshold=st["reference_accuracy"] - DROP,
                alert=st["cbpe_alert"].astype(bool),
                unit=st["dataset"] + "/" + st["family"],
                run=0,
                error=st["cbpe"] - st["truth"],
            )
            d = decisions(cb)
            off0 = res.loc[(res["budget"] == 0) & (res["run"] == 0), "free_error"].abs() > 0.05
            print(
                f"| 0 | CBPE (its alert) | {100 * cb['error'].abs().mean():.2f} | "
                f"{100 * np.sqrt(np.mean(cb['error'] ** 2)):.2f} | "
                f"{100 * cb['error'].abs().to_numpy()[off0.to_numpy()].mean():.2f} | "
                f"{d['below alerted (%)']:.1f} | {d['false alarms per 100']:.1f} | "
                f"{d['streams detected (%)']:.0f} | {d['median delay']:.0f} |"
            )


if __name__ == "__main__":
    main()

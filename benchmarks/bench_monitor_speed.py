"""The monitor's CPU per chunk beside NannyML CBPE's, on the same chunks, in one run.

The chunks are the monitoring streams of ``bench_monitor_coverage.py`` (one
per data set of ``_tabular.EXTERNAL_DATASETS`` and black-box family, 60 chunks
each; cached, made on first use): the black box's scores of the reference and
of each chunk, as ``skassess monitor`` reads them from scores files.
``PerformanceMonitor(level=(0.8, 0.9, 0.95, 0.99), threshold=...)`` is
fitted on the reference and predicts the 60 chunks in one call; its process
CPU and wall time per chunk are recorded. NannyML's CBPE runs on copies of
the same files in its own environment (``peer_cbpe.py`` through
``--cbpe-python``, default ``~/venv-nannyml/bin/python``), its estimate of
the 60 chunks timed the same way, per chunk.

The share of the monitor's CPU spent in the drift classifiers (the
nearest-neighbour classifiers telling a chunk from the reference) is read off a
profile of one unit's prediction (``cProfile``, whose overhead the share
shares): the rest, per chunk, is what any cheaper drift feature leaves.

Usage::

    python benchmarks/bench_monitor_speed.py [--save monitor-speed]
"""

import argparse
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _results import add_save_argument, saving_printed_tables
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _tabular import EXTERNAL_DATASETS  # noqa: E402
from bench_monitor_coverage import DROP, FAMILIES, collect_stream, unit_file  # noqa: E402

from skassess.meta import PerformanceMonitor  # noqa: E402

LEVELS = (0.8, 0.9, 0.95, 0.99)


def stream_of(name, family):
    data = np.load(unit_file(name, family, ".stream.npz"))
    keys = sorted(
        (k[: -len("_scores")] for k in data.files if k.startswith("chunk_") and "scores" in k),
        key=lambda k: int(k.rsplit("_", 1)[1]),
    )
    S = np.vstack([data[f"{k}_scores"] for k in keys])
    chunk = np.repeat(np.arange(len(keys)), [len(data[f"{k}_y"]) for k in keys])
    return data["ref_scores"], data["ref_y"], S, chunk


def timed_monitor(name, family):
    S_ref, y_ref, S, chunk = stream_of(name, family)
    reference = float(np.mean(S_ref.argmax(axis=1) == y_ref))
    monitor = PerformanceMonitor(
        level=LEVELS, threshold=reference - DROP, random_state=0, progress=False
    ).fit(S_ref, y_ref)
    t0, c0 = time.perf_counter(), time.process_time()
    table = monitor.predict(S, chunk_by=chunk)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return (
        {
            "unit": f"{name}/{family}",
            "chunks": len(table),
            "rows": int(np.median(table["n_rows"])),
            "cpu": cpu / len(table),
            "wall": wall / len(table),
        },
        monitor,
        S,
        chunk,
    )


def drift_share(monitor, S, chunk):
    """The share of the prediction's profiled time inside the drift classifiers."""
    prof = cProfile.Profile()
    prof.runcall(monitor.predict, S, chunk_by=chunk)
    stats = pstats.Stats(prof)
    total = max(v[3] for v in stats.stats.values())
    drift = sum(v[3] for k, v in stats.stats.items() if k[2] == "_drift_neighbors")
    if drift == 0:
        raise RuntimeError("the profile shows no _drift_neighbors call: was it renamed?")
    return drift / total


def cbpe_times(units, python):
    """CBPE's wall and CPU seconds per chunk on each unit's stream files (``peer_cbpe.py``)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, family in units:
            shutil.copy(unit_file(name, family, ".stream.npz"), tmp)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        script = Path(__file__).parent / "peer_cbpe.py"
        subprocess.run([python, str(script), tmp], check=True, env=env, capture_output=True)
        out = {}
        for name, family in units:
            f = Path(tmp) / unit_file(name, family, ".stream.cbpe.csv").name
            df = pd.read_csv(f)
            out[f"{name}/{family}"] = (
                df["cbpe_cpu_seconds_per_batch"].iloc[0],
                df["cbpe_seconds_per_batch"].iloc[0],
            )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(EXTERNAL_DATASETS))
    ap.add_argument("--families", nargs="*", default=list(FAMILIES))
    ap.add_argument("--cbpe-python", default=str(Path.home() / "venv-nannyml" / "bin" / "python"))
    add_save_argument(ap)
    args = ap.parse_args()
    units = [(d, f) for d in args.datasets for f in args.families]
    rows = []
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for u in units:
            collect_stream(*u)
        for u in units:
            rec, monitor, S, chunk = timed_monitor(*u)
            rows.append(rec)
            print(f"  {rec['unit']}: {rec['cpu']:.3f} s of CPU a chunk", file=sys.stderr)
        share = drift_share(monitor, S, chunk)
    cbpe = cbpe_times(units, args.cbpe_python)
    df = pd.DataFrame(rows)
    df["cbpe_cpu"] = [cbpe[u][0] for u in df["unit"]]
    df["cbpe_wall"] = [cbpe[u][1] for u in df["unit"]]
    load = os.getloadavg()[0]
    with saving_printed_tables(args.save):
        print(
            f"\nSeconds per chunk (median over {len(df)} streams of {int(df['chunks'].median())} "
            f"chunks, median {int(df['rows'].median())} rows a chunk, scores only; levels "
            f"{', '.join(f'{a:g}' for a in LEVELS)}, one thread; load average {load:.1f})"
        )
        print("| method | CPU s per chunk | wall s per chunk | CPU ÷ CBPE's |")
        print("|---|---|---|---|")
        m_cpu, m_wall = df["cpu"].median(), df["wall"].median()
        c_cpu, c_wall = df["cbpe_cpu"].median(), df["cbpe_wall"].median()
        print(f"| skassess: PerformanceMonitor.predict | {m_cpu:.4f} | {m_wall:.4f} | "
              f"{m_cpu / c_cpu:.1f} |")  # fmt: skip
        print(
            f"| skassess without its drift classifiers ({100 * share:.0f} % of the profile) | "
            f"{m_cpu * (1 - share):.4f} | | {m_cpu * (1 - share) / c_cpu:.1f} |"
        )
        print(f"| CBPE: estimate | {c_cpu:.4f} | {c_wall:.4f} | 1.0 |")


if __name__ == "__main__":
    main()

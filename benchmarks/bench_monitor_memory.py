"""Peak memory of ``skassess monitor`` on a stream bigger than its chunks.

Usage::

    python benchmarks/bench_monitor_memory.py --rows 14000000 --days 14

Writes a stream of ``--rows`` rows of two-class scores over ``--days`` daily
CSV files (about 1 GiB at 14 million rows; ids, two scores, an empty label
and a time per row) and a labeled reference of 20,000 rows, then runs
``skassess monitor REFERENCE STREAM --chunk-column time --period D`` in a
child process and prints its peak resident memory (``ru_maxrss``), its CPU
time (user + system) and its wall time, with the load average. With
``--in-memory`` it also runs the same command with ``--query 1``, which
reads the whole stream into memory to pick rows from it.
"""

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from _results import Table


def write_stream(folder, n_rows, n_days, seed=0):
    """The reference and the stream's daily files; returns the stream's bytes."""
    rng = np.random.default_rng(seed)
    p = rng.beta(8, 2, 20_000)
    pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(p.size)],
            "score_dog": p,
            "score_cat": 1 - p,
            "label": np.where(rng.random(p.size) > p, "cat", "dog"),
        }
    ).to_csv(folder / "reference.csv", index=False)
    stream = folder / "stream"
    stream.mkdir()
    per_day = n_rows // n_days
    for day in range(n_days):
        shift = 0.0 if day < n_days // 2 else 2.0  # the second half drifts
        p = rng.beta(8 - shift, 2 + shift, per_day)
        seconds = np.sort(rng.uniform(0, 86399, per_day)).astype(np.int64)
        start = pd.Timestamp("2026-01-01") + pd.Timedelta(days=day)
        frame = pd.DataFrame(
            {
                "id": np.char.add(f"d{day}-", np.arange(per_day).astype(str)),
                "score_dog": np.round(p, 6),
                "score_cat": np.round(1 - p, 6),
                "label": "",
                "time": (start + pd.to_timedelta(seconds, unit="s")).strftime("%Y-%m-%d %H:%M:%S"),
            }
        )
        frame.to_csv(stream / f"day{day:03d}.csv", index=False)
    return sum(f.stat().st_size for f in stream.iterdir())


def run(command):
    """Peak RSS (MB), CPU seconds and wall seconds of ``command`` in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return after.ru_maxrss / 1024, cpu, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=14_000_000)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--in-memory", action="store_true")
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        t0 = time.perf_counter()
        size = write_stream(folder, args.rows, args.days)
        print(
            f"stream: {args.rows:,} rows in {args.days} files, {size / 2**30:.2f} GiB "
            f"(written in {time.perf_counter() - t0:.0f} s)"
        )
        base = [
            sys.executable, "-m", "skassess", "monitor", str(folder / "reference.csv"),
            str(folder / "stream"), "--chunk-column", "time", "--period", "D", "--quiet",
            "--csv", str(folder / "table.csv"),
        ]  # fmt: skip
        modes = [("chunk by chunk", base)]
        if args.in_memory:
            modes.append(("in memory (--query 1)", [*base, "--query", "1"]))
        table = Table(
            ["stream", "reading", "peak memory (MB)", "CPU s", "wall s", "load (1 min)"],
            formats={"peak memory (MB)": ",.0f", "CPU s": ".0f", "wall s": ".0f"},
        )
        stream = f"{args.rows:,} rows, {args.days} files, {size / 2**30:.2f} GiB"
        for name, command in modes:
            peak, cpu, wall = run(command)
            # RUSAGE_CHILDREN's peak is the largest child's so far: in-memory runs last
            table.add([stream, name, peak, cpu, wall, f"{os.getloadavg()[0]:.1f}"])
        table.save(args.save, caption="Peak resident memory of the skassess monitor process.")


if __name__ == "__main__":
    main()

"""Speed and crash safety of the command and the labeling session.

* ``assess`` on a 10-million-row Parquet file with 10 classes: wall time and
  peak memory of the ``skassess assess`` process (goal < 30 s, < 2 GB);
* ``assess`` on a CSV file of 1 GB (streamed in batches), and ``label`` on it
  (which holds the pool in memory);
* the wait between two items of ``skassess label`` with its default settings
  (the calibrated prior) on a 1-million-item pool, against the number of labels
  up to 10,000, beside the fsync floor (goal: median <= 50 ms, p99 <= 200 ms);
* SIGKILL of a scripted labeling session at random moments: labels lost,
  duplicated, and whether the query sequence equals an uninterrupted run.

    python benchmarks/bench_session.py [--rows 10000000] [--pool 1000000] [--labels 10000]
        [--kills 200]
        [--csv-bytes 1e9] [--skip assess csv step kills]
"""

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _results import Table

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.session import LabelingSession

#: The SIGKILL test's assessor: the informative prior's conjugate updates, whose
#: refits are fast enough for hundreds of kills.
INFORMATIVE = BayesianAccuracy(prior="informative")

#: The measurements of this run, for ``--save``: (what, measured).
FOUND = []


def record(what, measured):
    """Print one measurement and keep it for the saved table."""
    print(f"{what}: {measured}", flush=True)
    FOUND.append([what, measured])


def make_parquet(path, n_rows, n_classes=10, seed=0, block=1_000_000):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, n_rows, block):
        n = min(block, n_rows - start)
        logits = rng.normal(size=(n, n_classes)) * 3
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        cols = {"id": np.arange(start, start + n).astype(str)}
        for k in range(n_classes):
            cols[f"score_c{k}"] = p[:, k]
        true = (rng.uniform(size=n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
        label = np.where(rng.uniform(size=n) < 0.001, [f"c{t}" for t in true], None)
        table = pa.table({**cols, "label": pa.array(label, type=pa.string())})
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def run_command(argv, label):
    """A ``skassess`` command in a fresh process: time inside, wall time, peak memory."""
    code = (
        "import resource, sys, time; from skassess.cli import main; "
        "t = time.perf_counter();"
        f" rc = main({argv!r});"
        " print('seconds', time.perf_counter() - t);"
        " print('maxrss_mb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    wall = time.perf_counter() - t
    stats = dict(
        line.split()
        for line in out.splitlines()
        if line.split() and line.split()[0] in ("seconds", "maxrss_mb")
    )
    record(
        label,
        f"{float(stats['seconds']):.1f} s inside, {wall:.1f} s with start-up; peak memory "
        f"{float(stats['maxrss_mb']):,.0f} MB",
    )


def run_assess(path, label):
    out_json = str(Path(path).with_suffix(".json"))
    run_command(["assess", str(path), "--quiet", "--json", out_json], f"assess, {label}")


def bench_assess(n_rows):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.parquet"
        t = time.perf_counter()
        make_parquet(path, n_rows)
        print(
            f"wrote {n_rows:,} rows ({path.stat().st_size / 1e6:.0f} MB Parquet) in "
            f"{time.perf_counter() - t:.0f} s"
        )
        run_assess(path, f"{n_rows:,} rows x 10 classes, Parquet")


def make_csv(path, n_bytes, n_classes=10, seed=1, block=500_000):
    """A CSV of at least ``n_bytes``: id, 10 class scores (8 decimals), sparse labels."""
    rng = np.random.default_rng(seed)
    start = 0
    while not path.exists() or path.stat().st_size < n_bytes:
        logits = rng.normal(size=(block, n_classes)) * 3
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        frame = pd.DataFrame(p, columns=[f"score_c{k}" for k in range(n_classes)])
        frame.insert(0, "id", np.arange(start, start + block).astype(str))
        true = (rng.uniform(size=block)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
        frame["label"] = np.where(
            rng.uniform(size=block) < 0.001, pd.Series(true).map(lambda t: f"c{t}"), ""
        )
        frame.to_csv(path, mode="a", header=start == 0, index=False, float_format="%.8f")
        start += block
    return start


def bench_csv(n_bytes):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.csv"
        t = time.perf_counter()
        n_rows = make_csv(path, n_bytes)
        print(
            f"wrote {n_rows:,} rows ({path.stat().st_size / 1e9:.2f} GB CSV) in "
            f"{time.perf_counter() - t:.0f} s"
        )
        size = f"{n_rows:,} rows x 10 classes, {path.stat().st_size / 1e9:.2f} GB CSV"
        run_assess(path, size)
        # label holds the pool in memory: a new session, 20 labels from a command, resume
        oracle = Path(tmp) / "oracle.py"
        oracle.write_text("import sys\nfor line in sys.stdin:\n    print('c0', flush=True)\n")
        base = [
            "label",
            str(path),
            "--session",
            str(Path(tmp) / "s.sqlite"),
            "--no-progress",
            "--oracle-command",
            f"{sys.executable} {oracle}",
        ]
        run_command([*base, "--budget", "20"], f"label (new session, 20 labels), {size}")
        run_command([*base, "--budget", "40"], f"label (resumed, 20 more labels), {size}")


def fsync_floor(folder, n=50):
    """Median seconds of one small write and fsync in ``folder`` (a commit's floor)."""
    times = []
    with open(Path(folder) / "fsync.probe", "wb") as f:
        for _ in range(n):
            t = time.perf_counter()
            f.write(b"x" * 128)
            f.flush()
            os.fsync(f.fileno())
            times.append(time.perf_counter() - t)
    return float(np.median(times))


def bench_step(n_pool, n_labels=10_000, bands=(100, 500, 1000, 2000, 5000, 10_000)):
    """The wait between two items of ``skassess label`` with its default settings.

    The command's own assessor (task estimate, Thompson sampling, the calibrated
    prior) on a pool of ``n_pool`` items of 10 classes, driven through the
    command's keyboard loop by a reader that answers at once: each wait is from
    an answer to the next prompt (commit, the posterior's update, the status
    line, the next item). Printed per band of labels, beside the fsync floor.
    """
    import contextlib
    import io

    from skassess.cli._keyboard import interactive
    from skassess.cli._label import DEFAULTS, _assessor

    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.full(10, 0.3), size=n_pool)
    wrong = rng.uniform(size=n_pool) < 0.2
    truth = (scores.argmax(axis=1) + wrong * rng.integers(1, 10, n_pool)) % 10
    classes = [f"c{k}" for k in range(10)]

    class Pool:  # the scores file's table, as the command holds it
        ids = np.arange(n_pool).astype(str)
        display = pd.DataFrame(index=range(n_pool))

    Pool.scores = scores

    class File:
        classes = [f"c{k}" for k in range(10)]

    assessor = _assessor({**DEFAULTS, "seed": 0}, File, None)
    # on the disk of the working directory, as a user's session file is
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as tmp:
        floor = fsync_floor(tmp)
        t = time.perf_counter()
        session = LabelingSession(
            Path(tmp) / "s.sqlite", scores, assessor=assessor, classes=classes
        )
        record(f"open a new session on {n_pool:,} items", f"{time.perf_counter() - t:.2f} s")
        waits, cpus, shown = [], [], io.StringIO()
        last = [time.perf_counter()]
        last_cpu = [time.process_time()]

        def read(prompt):
            waits.append(time.perf_counter() - last[0])
            cpus.append(time.process_time() - last_cpu[0])
            if len(waits) > n_labels:
                raise EOFError
            if len(waits) in bands:
                part = np.array(waits[-min(len(waits), 100) :]) * 1e3
                print(
                    f"  ... {len(waits) - 1:,} labels: the last 100 waits median "
                    f"{np.median(part):.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )
            item = shown.getvalue().rsplit("item ", 1)[1].split()[0]
            shown.seek(0)
            shown.truncate()
            answer = classes[truth[int(item)]]
            last[0] = time.perf_counter()
            last_cpu[0] = time.process_time()
            return answer

        with contextlib.redirect_stdout(shown):
            interactive(session, Pool, classes, None, None, None, read=read)
        session.close()
    ms = np.array(waits[1:]) * 1e3  # the first wait is the session's start
    cpu = np.array(cpus[1:]) * 1e3
    what = (
        f"`skassess label`'s step (process CPU; wall) between two items (its defaults) on "
        f"{n_pool:,} items, fsync floor {floor * 1e3:.1f} ms, load {os.getloadavg()[0]:.1f}"
    )
    lo = 0
    for hi in bands:
        part, busy = ms[lo:hi], cpu[lo:hi]
        if len(part):
            record(
                f"{what}: labels {lo:,}-{hi:,}",
                f"CPU median {np.median(busy):.1f} ms, p99 {np.percentile(busy, 99):.1f} ms; "
                f"wall median {np.median(part):.1f} ms, p99 {np.percentile(part, 99):.1f} ms, "
                f"max {part.max():.1f} ms",
            )
        lo = hi
    record(
        f"{what}: all {len(ms):,} labels",
        f"CPU median {np.median(cpu):.1f} ms, p99 {np.percentile(cpu, 99):.1f} ms; "
        f"wall median {np.median(ms):.1f} ms, p99 {np.percentile(ms, 99):.1f} ms",
    )


def bench_kills(n_kills, budget=600, seed=0):
    from skassess.datasets import load_fashion_mnist_scores

    data = load_fashion_mnist_scores()

    def oracle(row):
        time.sleep(0.002)
        return None if row % 7 == 0 else int(data.target[row])

    def assessor():
        return ActiveAssessor(INFORMATIVE, task="least_accurate", random_state=3)

    def columns(frame):
        return frame[["kind", "row", "label"]].fillna(-1).to_numpy().tolist()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with LabelingSession(tmp / "ref.sqlite", data.scores, assessor=assessor()) as s:
            s.run(oracle, budget, progress=False)
            reference = columns(s.events())
        rng = np.random.default_rng(seed)
        kills = lost = duplicated = mismatched = 0
        committed = 0
        while True:
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    with LabelingSession(tmp / "k.sqlite", data.scores, assessor=assessor()) as s:
                        s.run(oracle, budget - s.n_labeled, progress=False)
                    code = 0
                finally:
                    os._exit(code)
            if kills < n_kills:
                time.sleep(rng.uniform(0, 0.15))
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            kills += os.WIFSIGNALED(status)
            events, _, _ = LabelingSession.read_events(tmp / "k.sqlite")
            n = int((events["kind"] == "label").sum())
            lost += max(committed - n, 0)
            duplicated += int(events["row"].duplicated().sum())
            mismatched += columns(events) != reference[: len(events)]
            committed = n
            if not os.WIFSIGNALED(status) and kills >= n_kills:
                break
        final = columns(LabelingSession.read_events(tmp / "k.sqlite")[0]) == reference
    record(
        f"SIGKILL at random moments: {kills} kills over a {budget}-label session "
        f"({len(reference)} events with skips)",
        f"labels lost {lost}, duplicated {duplicated}, prefix mismatches {mismatched}, "
        f"final sequence equal to the uninterrupted run: {final}",
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--pool", type=int, default=1_000_000)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--labels", type=int, default=10_000, help="labels of the step test")
    parser.add_argument("--csv-bytes", type=float, default=1e9)
    parser.add_argument("--skip", nargs="*", default=[], choices=["assess", "csv", "step", "kills"])
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    print(f"rusage before: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if "step" not in args.skip:
        bench_step(args.pool, args.labels)
    if "kills" not in args.skip and hasattr(os, "fork"):
        bench_kills(args.kills)
    if "assess" not in args.skip:
        bench_assess(args.rows)
    if "csv" not in args.skip:
        bench_csv(args.csv_bytes)
    if args.save:
        table = Table(["what", "measured"])
        for row in FOUND:
            table.add(row)
        table.save(args.save, caption="2 cores, 24 GiB; one process.")


if __name__ == "__main__":
    main()

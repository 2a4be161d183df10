"""The README's PerformanceIntervalRegressor.fit on an idle and on a busy machine.

Native thread pools (OpenMP in the gradient boosters, BLAS) start one thread per
core; on cores that other processes keep busy, those threads wait on each other.
skassess's fits run them at one thread. This times the README tour's fit with
``--busy`` other processes spinning (default: one per core), and prints the
prediction so that runs can be compared.

    python benchmarks/bench_threads.py [--busy 2]
"""

import argparse
import multiprocessing as mp
import os
import time

from _results import Table


def spin():
    while True:
        pass


def tour():
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    from skassess.meta import PerformanceIntervalRegressor, PerformancePredictor

    X, y = load_digits(return_X_y=True)
    model = LogisticRegression(max_iter=5000).fit(X[:600], y[:600])
    start = time.perf_counter()
    pir = PerformanceIntervalRegressor(PerformancePredictor(model), random_state=0, progress=False)
    pir.fit(X[600:1200], y[600:1200])
    seconds = time.perf_counter() - start
    return seconds, pir.predict(X[1200:]).round(3).to_dict()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--busy",
        type=int,
        default=os.cpu_count(),
        help="processes spinning meanwhile (default: one per core)",
    )
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    table = Table(["machine", "fit (s)", "prediction"], formats={"fit (s)": ".1f"})
    seconds, prediction = tour()
    table.add(["idle", seconds, str(prediction)])
    workers = [mp.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for w in workers:
        w.start()
    try:
        seconds, prediction = tour()
    finally:
        for w in workers:
            w.terminate()
    table.add([f"{args.busy} other processes spinning", seconds, str(prediction)])
    table.save(
        args.save,
        caption="The README tour's `PerformanceIntervalRegressor.fit`; the same prediction "
        "on both lines shows that the busy machine changes the time only.",
    )


if __name__ == "__main__":
    main()

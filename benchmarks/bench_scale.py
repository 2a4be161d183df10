"""Time and peak memory at production sizes: many rows, many classes, many groups.

Prints one line per case: seconds, the peak extra memory of the call
(tracemalloc: numpy reports its arrays to it) and, where the old algorithm's
size is known, the memory it needed as a ratio.

* ``bgm``: ``BayesianGroupMetrics(method="bayesian_calibration")`` on n rows
  (2 groups, 200 labels, 2000 draws). Drawing every unlabeled row's calibrated
  probability needed n_draws x n floats.
* ``confusion``: ``BayesianConfusionMatrix`` and ``BayesianMisclassificationCost``
  at K classes (200,000 rows, 5,000 labels): ``summary()`` + ``overall_interval()``.
  Drawing the whole matrix needed n_draws x K x K floats.
* ``hierarchical``: ``HierarchicalBetaCalibrator`` at 100 groups and 2000 labels,
  NUTS (mici) on one and two processes on ``--seeds`` simulated data sets,
  with R-hat and multi-chain ESS; emcee with a fixed number of steps as the
  baseline. Timed without tracemalloc; the memory printed is the largest
  resident size of the process (and workers) so far.
* ``emcee``: ``HierarchicalBetaCalibrator`` with its default ``EmceeSampler``
  (chains grown until R-hat <= 1.01 and ESS >= 400) at a few groups, the
  size of a fairness file: seconds per fit, steps stored per chain (every
  second step from 10 groups on, to bound memory), R-hat, ESS.

    python benchmarks/bench_scale.py              # every case, the sizes of the issue
    python benchmarks/bench_scale.py --quick      # smaller sizes
    python benchmarks/bench_scale.py --case bgm
    python benchmarks/bench_scale.py --case emcee --seeds 5
"""

import argparse
import resource
import time
import tracemalloc
import warnings

import numpy as np
from _results import Table
from scipy.special import expit

GIB = 2**30

#: The measurements of this run, for ``--save``.
FOUND = []


def record(case, size, seconds, memory_mib, note):
    """Print one measurement and keep it for the saved table."""
    print(f"{case:<14} {size:<28} {seconds:8.2f} s  {memory_mib:8.0f} MiB  {note}", flush=True)
    FOUND.append([case, size, seconds, memory_mib, note])


def measure(call, trace=True):
    """(result, seconds, peak extra bytes) of ``call()``.

    ``trace=False`` times the call without tracemalloc (which slows code that makes
    many small Python objects, like a sampler's loop) and returns the peak resident
    memory of the process and its workers instead.
    """
    if not trace:
        start = time.perf_counter()
        result = call()
        seconds = time.perf_counter() - start
        rss = sum(
            resource.getrusage(who).ru_maxrss
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return result, seconds, rss * 1024
    tracemalloc.start()
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, seconds, peak


def bench_bgm(sizes, n_draws=2000):
    from skassess.calibration import BayesianGroupMetrics

    for n in sizes:
        rng = np.random.default_rng(0)
        s = rng.beta(2, 2, n)
        g = rng.integers(0, 2, n)
        y = np.full(n, -1, dtype=np.int64)
        lab = rng.choice(n, 200, replace=False)
        y[lab] = rng.random(200) < s[lab]
        est = BayesianGroupMetrics("bayesian_calibration", n_draws=n_draws, random_state=0)
        est, sec, peak = measure(lambda est=est, s=s, y=y, g=g: est.fit(s, y, sensitive_features=g))
        old = n_draws * (n - 200) * 8
        acc = est.summary().loc["accuracy"]
        record(
            "bgm",
            f"n = {n:,}",
            sec,
            peak / 2**20,
            f"drawing every row would need {old / GIB:.1f} GiB ({old / peak:,.0f}x); "
            f"accuracy[0] {acc['mean'].iloc[0]:.3f} [{acc['lower'].iloc[0]:.3f}, "
            f"{acc['upper'].iloc[0]:.3f}]",
        )


def bench_confusion(sizes, n_rows=200_000, n_labels=5000, n_draws=4000):
    from skassess.metrics import BayesianConfusionMatrix, BayesianMisclassificationCost

    for K in sizes:
        rng = np.random.default_rng(0)
        logits = rng.normal(size=(n_rows, K))
        logits[np.arange(n_rows), rng.integers(0, K, n_rows)] += 4.0
        X = np.exp(logits)
        X /= X.sum(axis=1, keepdims=True)
        del logits
        y = np.full(n_rows, -1)
        lab = rng.choice(n_rows, n_labels, replace=False)
        y[lab] = np.where(
            rng.random(n_labels) < 0.7, X[lab].argmax(axis=1), rng.integers(0, K, n_labels)
        )
        three_levels = rng.choice([0.0, 1.0, 5.0], size=(K, K))
        np.fill_diagonal(three_levels, 0.0)
        cases = [
            ("confusion", BayesianConfusionMatrix(random_state=0)),
            ("cost 0-1", BayesianMisclassificationCost(random_state=0)),
            ("cost 3 lv", BayesianMisclassificationCost(cost_matrix=three_levels, random_state=0)),
        ]
        for name, est in cases:
            est.fit(X, y)

            def call(est=est):
                return est.summary(), est.overall_interval(n_draws=n_draws)

            (_, (lo, hi)), sec, peak = measure(call)
            old = n_draws * K * K * 8
            record(
                name,
                f"K = {K:,}",
                sec,
                peak / 2**20,
                f"drawing the matrix would need {old / GIB:.1f} GiB ({old / peak:,.0f}x); "
                f"overall [{lo:.4f}, {hi:.4f}]",
            )


def _hierarchical_data(n_groups=100, n_labels=2000, seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), n_labels // n_groups)
    s = rng.beta(2, 2, len(g))
    shift = rng.normal(0.0, 0.5, n_groups)
    y = (rng.random(len(g)) < expit(1.3 * np.log(s / (1 - s)) + shift[g])).astype(int)
    return s, y, g


def bench_hierarchical(n_groups, n_labels, emcee_steps, seeds):
    from skassess.calibration import EmceeSampler, HierarchicalBetaCalibrator, NUTSSampler

    cases = [(seed, f"nuts n_jobs={j}", NUTSSampler(n_jobs=j)) for j in (1, 2) for seed in seeds]
    cases += [
        (seeds[0], f"emcee {k} steps", EmceeSampler(n_steps=k, max_steps=k)) for k in emcee_steps
    ]
    for seed, name, sampler in cases:
        s, y, g = _hierarchical_data(n_groups, n_labels, seed)
        cal = HierarchicalBetaCalibrator(random_state=0, sampler=sampler)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cal, sec, peak = measure(
                lambda cal=cal, s=s, y=y, g=g: cal.fit(s, y, group_by=g), trace=False
            )
        record(
            f"hierarchical, {name}",
            f"G = {n_groups}, {n_labels} labels, seed {seed}",
            sec,
            peak / 2**20,
            f"max RSS; draws per chain {len(cal.draws_) // sampler.n_chains}, R-hat max "
            f"{cal.rhat_.max():.3f}, ESS min {cal.ess_.min():.0f} ({len(cal.rhat_)} monitored)",
        )


def bench_emcee(sizes, seeds):
    from skassess.calibration import EmceeSampler, HierarchicalBetaCalibrator

    for n_groups, n_labels in sizes:
        for seed in seeds:
            s, y, g = _hierarchical_data(n_groups, n_labels, seed)
            sampler = EmceeSampler(progress=False)
            cal = HierarchicalBetaCalibrator(random_state=seed, sampler=sampler)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                cal.fit(s, y, group_by=g)
                sec = time.perf_counter() - start
            n_walkers = max(16, 4 * cal.draws_.shape[1] * cal.draws_.shape[2])
            record(
                "emcee",
                f"G = {n_groups}, {n_labels} labels, seed {seed}",
                sec,
                float("nan"),
                f"steps stored per chain {len(cal.draws_) // (sampler.n_chains * n_walkers)}, "
                f"R-hat max {cal.rhat_.max():.3f}, ESS min {cal.ess_.min():.0f}",
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--case", choices=["bgm", "confusion", "hierarchical", "emcee"], action="append"
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument(
        "--seeds", type=int, default=5, help="simulated data sets for the hierarchical case"
    )
    parser.add_argument(
        "--emcee-steps",
        type=int,
        default=300,
        help="steps of the emcee baseline in the hierarchical case (0: skip it)",
    )
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = parser.parse_args()
    cases = args.case or ["bgm", "confusion", "hierarchical"]
    try:
        run_cases(args, cases)
    finally:  # what was measured is kept, even when a later case fails
        if args.save and FOUND:
            print()
            table = Table(
                ["case", "size", "seconds", "memory (MiB)", "note"],
                formats={"seconds": ".2f", "memory (MiB)": ",.0f"},
            )
            for row in FOUND:
                table.add(row)
            table.save(
                args.save,
                caption="2 cores; memory: the call's peak extra memory (tracemalloc), or the "
                "process's largest resident size where the note says max RSS.",
            )


def run_cases(args, cases):
    if "bgm" in cases:
        bench_bgm([10**4, 10**5] if args.quick else [10**5, 10**6, 10**7])
    if "confusion" in cases:
        bench_confusion([100] if args.quick else [100, 1000])
    if "hierarchical" in cases:
        emcee = [args.emcee_steps] if args.emcee_steps else []
        if args.quick:
            bench_hierarchical(20, 400, emcee, range(min(args.seeds, 2)))
        else:
            bench_hierarchical(100, 2000, emcee, range(args.seeds))
    if "emcee" in (args.case or []):
        bench_emcee([(2, 200), (10, 400)], range(args.seeds))


if __name__ == "__main__":
    main()

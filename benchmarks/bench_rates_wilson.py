"""Where the calibrated rate's interval is wider than Wilson's: the labels-alone intervals beside.

Reads the run records of ``bench_rates_calibrated.py`` (``--out`` files) and,
in each cell (pool, rate, n) where the calibrated interval is on average
wider than Wilson's, sets both beside the labels-alone intervals that hold
their level whatever the scores say: Clopper-Pearson's (exact: at least 95 %
for every rate) and the uniform prior's equal-tailed Beta interval (the
labels-alone posterior the calibrated model falls back on). Each run's
count of labeled rows where the rate's condition holds (``m``) and its
successes (``k``) are read back from its Wilson interval.

Reported per cell: mean ``m``; the calibrated width over Wilson's, over
Clopper-Pearson's and over the uniform prior's; and the coverage of each
interval of the pool's rate in the same runs. A calibrated interval no wider
than Clopper-Pearson's is inside what an interval that holds whatever the
scores may need: Wilson's is narrower than that because its coverage at a
few rows dips below the level for some rates.

    python benchmarks/bench_rates_wilson.py a.jsonl b.jsonl --save rates-wilson
"""

import argparse
import json

import numpy as np
import pandas as pd
from _results import Table
from scipy import stats

Z = stats.norm.ppf(0.975)


def wilson(k, m):
    ci = stats.binomtest(int(k), int(m)).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


def counts(lower, upper, point, n):
    """``(k, m)`` of a Wilson interval ``(lower, upper)`` of ``k / m = point``, ``m <= n``."""
    for m in range(1, n + 1):
        k = round(point * m)
        if abs(k / m - point) > 1e-9:
            continue
        lo, hi = wilson(k, m)
        if abs(lo - lower) < 1e-6 and abs(hi - upper) < 1e-6:
            return k, m
    return None


def labels_alone(k, m):
    """Clopper-Pearson's and the uniform prior's 95 % intervals of ``k`` of ``m``."""
    cp = stats.binomtest(k, m).proportion_ci(0.95, method="exact")
    return (cp.low, cp.high), tuple(stats.beta.ppf([0.025, 0.975], 1 + k, 1 + m - k))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", help="bench_rates_calibrated.py's --out files")
    ap.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    args = ap.parse_args()
    records = [json.loads(line) for path in args.records for line in open(path)]
    frame = pd.DataFrame(records)
    table = Table(
        [
            "pool",
            "rate",
            "n",
            "runs",
            "m: mean",
            "width / Wilson",
            "/ Clopper-Pearson",
            "/ uniform prior",
            "coverage: calibrated",
            "Wilson",
            "Clopper-Pearson",
            "uniform prior",
        ],
        formats={
            "m: mean": ".1f",
            "width / Wilson": ".2f",
            "/ Clopper-Pearson": ".2f",
            "/ uniform prior": ".2f",
            "coverage: calibrated": ".2f",
            "Wilson": ".2f",
            "Clopper-Pearson": ".2f",
            "uniform prior": ".2f",
        },
    )
    for (pool, metric, n), cell in frame.groupby(["pool", "metric", "n"], sort=False):
        rows = []
        for _, r in cell.iterrows():
            lo, hi, point = r["wilson"]["overall"]
            if not np.isfinite(point):
                continue
            found = counts(lo, hi, point, int(n))
            if found is None:
                raise ValueError(f"no (k, m) gives run {r['run']}'s Wilson interval in {pool}")
            k, m = found
            cp, uniform = labels_alone(k, m)
            cal = r["calibrated"]["overall"][:2]
            rows.append((m, r["truth"], cal, (lo, hi), cp, uniform))
        if not rows:
            continue
        width = {
            name: np.mean([r[i][1] - r[i][0] for r in rows])
            for i, name in ((2, "cal"), (3, "wilson"), (4, "cp"), (5, "uniform"))
        }
        if width["cal"] <= width["wilson"]:
            continue

        def cover(i, rows=rows):
            return np.mean([r[i][0] <= r[1] <= r[i][1] for r in rows])

        table.add(
            [
                pool,
                metric,
                int(n),
                len(rows),
                np.mean([r[0] for r in rows]),
                width["cal"] / width["wilson"],
                width["cal"] / width["cp"],
                width["cal"] / width["uniform"],
                cover(2),
                cover(3),
                cover(4),
                cover(5),
            ]
        )
    table.save(
        args.save,
        caption="The cells where the calibrated interval is wider than Wilson's, "
        "beside the labels-alone intervals that hold whatever the scores say.",
    )


if __name__ == "__main__":
    main()

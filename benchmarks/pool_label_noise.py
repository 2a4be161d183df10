"""The label-noise benchmark's coverage pooled over its cells, with the Wilson interval.

A cell of ``bench_label_noise.py`` holds 10 to 40 runs, so its coverage is
known to about ±4 to ±7 points. This reads its result files and pools the runs
of every cell that shares a pool, a slip kind and a design (one annotator and
no repeats, or two or three annotators with 10 or 30 % of the items labeled
twice), per method: the share of the runs whose 95 % interval held the
accuracy, its Wilson interval, the range of the cells' coverage, and the mean
share of the predicted classes covered. The last rows pool every pool.

Usage::

    python benchmarks/pool_label_noise.py --save label-noise-pooled
"""

import argparse
import re

import pandas as pd
from _results import Table, add_save_argument, load
from scipy import stats

RESULTS = ("label-noise", "label-noise-svhn", "label-noise-synthetic")


def cells(name):
    """The result file's rows as a frame, with the runs of each cell (from its caption)."""
    record = load(name)
    runs = re.search(r"(\d+) runs a cell", record["caption"])
    if runs is None:
        raise ValueError(f"results/{name}.json: its caption names no 'N runs a cell'.")
    frame = pd.DataFrame(record["rows"], columns=record["columns"])
    frame["runs"] = int(runs.group(1))
    return frame


def pooled(frame):
    hits = (frame["coverage 95 %"] * frame["runs"]).round().sum()
    runs = frame["runs"].sum()
    ci = stats.binomtest(int(hits), int(runs)).proportion_ci(0.95, method="wilson")
    return [
        len(frame),
        int(runs),
        hits / runs,
        f"[{ci.low:.2f}, {ci.high:.2f}]",
        f"{frame['coverage 95 %'].min():.2f}-{frame['coverage 95 %'].max():.2f}",
        (frame["classes covered"] * frame["runs"]).sum() / runs,
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", nargs="+", default=list(RESULTS))
    add_save_argument(ap)
    args = ap.parse_args()
    frame = pd.concat([cells(name) for name in args.results], ignore_index=True)
    frame["design"] = frame["annotators"].map(
        lambda a: "one annotator, no repeats" if int(a) == 1 else "10-30 % repeats"
    )
    table = Table(
        [
            "pool",
            "slips",
            "design",
            "method",
            "cells",
            "runs",
            "coverage 95 %",
            "Wilson 95 %",
            "cells' range",
            "classes covered",
        ],
        formats={"coverage 95 %": ".3f", "classes covered": ".2f"},
    )
    keys = ["pool", "slips", "design", "method"]
    for key, g in frame.groupby(keys, sort=False):
        table.add([*key, *pooled(g)])
    for (design, method), g in frame.groupby(["design", "method"], sort=False):
        table.add(["all pools", "all", design, method, *pooled(g)])
    table.save(
        args.save,
        caption="Coverage of the overall accuracy's 95 % interval, the runs of the cells of "
        f"{', '.join(args.results)} pooled (slip rates 0-10 %)",
    )


if __name__ == "__main__":
    main()

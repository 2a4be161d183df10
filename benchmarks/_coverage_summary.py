"""The user guide's table of how far each interval holds, read from the result files.

Each row names the interval, then one or more parts: a label and the cells of
result files it summarizes (a column, and the rows that count). A part shows
the lowest and highest coverage over its cells, and how many are below 90 %.
``render_pages.py`` writes the table into ``docs/user_guide/intervals.md``.
"""

import re
from dataclasses import dataclass, field

from _results import RESULTS, load


@dataclass
class Part:
    label: str
    sources: list  # (result name, column, {column: allowed values})
    #: "coverage": lowest-highest and the cells under 90 %; "cells": the values are
    #: summaries of cells (the count is not of cells); "p": p-values of a test;
    #: "sum": a count summed
    kind: str = "coverage"


@dataclass
class Row:
    interval: str
    parts: list
    where: str
    page: str
    notes: list = field(default_factory=list)


def _number(value):
    """A cell's coverage as a number: the first number of a text cell ('99 / 98')."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    match = re.search(r"-?\d+(\.\d+)?", str(value))
    return float(match.group()) if match else None


def _values(name, column, where):
    if not (RESULTS / f"{name}.json").exists():
        raise FileNotFoundError(name)
    record = load(name)
    col = {c: i for i, c in enumerate(record["columns"])}
    out = []
    for row in record["rows"]:
        if all(row[col[c]] in allowed for c, allowed in (where or {}).items()):
            value = _number(row[col[column]])
            if value is not None:
                out.append(value)
    return out


def _cell(part):
    values = []
    for name, column, where in part.sources:
        values += _values(name, column, where)
    if not values:
        raise ValueError(f"no cell for {part.label!r}")
    if part.kind == "p":
        return f"{part.label}: smallest p {min(values):.3f} over {len(values)}"
    if part.kind == "sum":
        return f"{part.label}: {sum(values):.0f}"
    if max(values) <= 1.0:
        values = [100 * v for v in values]
    low, high = min(values), max(values)
    below = sum(v < 90 for v in values)
    low_text = f"**{_pct(low)}**" if low < 90 else _pct(low)
    tail = f", {below} of {len(values)} cells under 90" if below else f", {len(values)} cells"
    if part.kind == "cells":
        tail = ""
    return f"{part.label}: {low_text}-{_pct(high)}{tail}"


def _pct(value):
    return f"{value:.1f}".removesuffix(".0")


def table(rows):
    """The markdown table of ``rows``; raises FileNotFoundError naming a missing file."""
    lines = [
        "| interval | coverage % of the 95 % intervals (lowest-highest) | where | page |",
        "|---|---|---|---|",
    ]
    for row in rows:
        cells = "; ".join(_cell(part) for part in row.parts)
        lines.append(
            f"| {row.interval} | {cells} | {row.where} | [{row.page}]"
            f"(../benchmarks/{row.page}.md) |"
        )
    return "\n".join(lines) + "\n"


CAL = {"prior": ["calibrated"]}
#: The designs of ActiveAssessor (not random labels, not PPI++).
ACTIVE = {"method": ["calibrated-active", "calibrated-thompson", "calibrated-thompson-bins"]}

#: The rows of the user guide's table, in its order.
ROWS = [
    Row(
        'overall accuracy, `prior="calibrated"` (the default)',
        [Part("overall", [("headline", "coverage: calibrated", None)])],
        "the headline pools, real and synthetic (the tuning halves marked), 20-2,000 random "
        "labels; beside PPI++ and Wilson in the same runs; the cell under 90: 2,000 labels "
        "of Compas's 2,056 rows, where 56 unlabeled rows are left to estimate",
        "headline",
    ),
    Row(
        'each group\'s accuracy, `prior="calibrated"`',
        [
            Part("mean over groups", [("headline", "groups: mean", None)]),
            Part("lowest group", [("headline", "groups: lowest", None)]),
            Part("least accurate group", [("headline", "least accurate group", None)]),
        ],
        "the same runs; the group farthest from the shared map is pulled toward it "
        "(partial pooling): where every group must be held, use each group's labels alone "
        '(`prior="uniform"`, `BayesianGroupMetrics(method="beta_binomial")`)',
        "headline",
    ),
    Row(
        "each class's accuracy on SVHN and Fashion-MNIST (mean over classes)",
        [
            Part(
                "random labels",
                [
                    ("per-group", "coverage %", {"method": ["default"]}),
                ],
            ),
            Part(
                "Thompson sampling",
                [("per-group", "coverage %", {"method": ["default+TS"]})],
            ),
        ],
        "20-100 labels, random or chosen by Thompson sampling (the default refitted after "
        "every label); the 100-class synthetic pool and the oracle that bounds what any "
        "estimator can do for its least accurate class are on the same page",
        "active",
    ),
    Row(
        "the least accurate of 100 classes, three spreads below the map "
        "(`BayesianAccuracy()`'s departure check; `worst_group`)",
        [
            Part("once flagged", [("worst-group", "its coverage: flagged", None)]),
            Part("all runs", [("worst-group", "all runs", None)]),
            Part(
                "the minimum over classes",
                [("worst-group", "minimum over classes: coverage", None)],
            ),
            Part(
                "the class ranked last",
                [("worst-group", "class ranked last: coverage", None)],
            ),
        ],
        "two to ten random labels a class; the flag is raised in few runs at two labels a "
        "class (the shares are on the page); unflagged, the class is pulled toward the map, "
        "as by the oracle that knows the pool's map and spread",
        "active",
    ),
    Row(
        'TPR, FPR, PPV, NPV, `prior="calibrated"` (the default)',
        [
            Part("overall", [("rates", "coverage: calibrated", None)]),
            Part("mean over groups", [("rates", "groups: mean", None)]),
            Part("lowest group", [("rates", "groups: lowest", None)]),
            Part("differences", [("rates", "difference", None)]),
        ],
        "the fairness files' models and four synthetic binary pools made to break the map, "
        "20-500 labels; beside PPI++ and Wilson",
        "rates",
    ),
    Row(
        "difference of two groups (`compare_groups`, the command; `BayesianGroupMetrics()`)",
        [
            Part(
                "compare_groups",
                [
                    (name, "coverage: compare_groups", None)
                    for name in (
                        "group-differences",
                        "group-differences-tpr",
                        "group-differences-fpr",
                    )
                ],
            ),
            Part(
                "BayesianGroupMetrics",
                [
                    (name, "coverage: BayesianGroupMetrics", None)
                    for name in (
                        "group-differences",
                        "group-differences-tpr",
                        "group-differences-fpr",
                    )
                ],
            ),
        ],
        "the two largest groups of held-out fairness files, 10-100 labels; accuracy, TPR, FPR",
        "group-differences",
    ),
    Row(
        "difference of accuracy between two groups whose scores are calibrated differently "
        "(`compare_groups`)",
        [
            Part(
                "compare_groups",
                [("fairness-stress-compare-groups-1", "compare_groups", None)],
            ),
        ],
        "the stress suite's small files, 10 and 40 labels; short where the small group's "
        "labels ignore its scores and it has one to three labels: there use "
        "`BayesianGroupMetrics()` (its row below)",
        "fairness",
    ),
    Row(
        'overall accuracy, classes, pairs of classes and expected cost, `prior="calibrated"`',
        [
            Part("cost", [("coverage-cost", "cost", CAL)]),
            Part("accuracy", [("coverage-cost", "accuracy", CAL)]),
            Part("classes", [("coverage-cost", "classes", CAL)]),
            Part("pairs", [("coverage-cost", "pairs", CAL)]),
        ],
        "SVHN and Fashion-MNIST, a cost matrix drawn once, 50-1,000 labels",
        "coverage",
    ),
    Row(
        'the same, `prior="uniform"` and `prior="informative"`',
        [
            Part("uniform: overall", [("coverage-cost", "accuracy", {"prior": ["uniform"]})]),
            Part(
                "informative: classes",
                [("coverage-cost", "classes", {"prior": ["informative"]})],
            ),
        ],
        "the same runs: the uniform prior's overall interval ignores the scores of groups "
        "without labels; the informative prior trusts scores that are not calibrated",
        "coverage",
    ),
    Row(
        'confusion-matrix cells, `prior="calibrated"`',
        [
            Part("all cells", [("coverage-confusion", "all cells", CAL)]),
            Part("diagonal", [("coverage-confusion", "diagonal", CAL)]),
            Part("off-diagonal", [("coverage-confusion", "off-diagonal", CAL)]),
        ],
        "SVHN and Fashion-MNIST, 20-1,000 labels, read on the pool's grid of whole rows; the "
        "informative prior's cells follow its accuracy",
        "coverage",
    ),
    Row(
        "ECE (`BayesianCalibrationError`)",
        [Part("ECE", [("coverage-ece", "coverage %", None)])],
        "four synthetic and 17 real models, 50-1,000 labels; short at 50 labels when a "
        "model's miscalibration shows in few labels",
        "coverage",
    ),
    Row(
        "Δ of a metric between two groups, `BayesianGroupMetrics()` (calibrated)",
        [
            Part(
                "the thesis's files",
                [("fairness-calibrated-2", f"n_L = {n}", None) for n in (10, 20, 40, 100)],
            ),
            Part(
                "stress suite",
                [
                    ("fairness-stress-1", "calibrated", None),
                    ("fairness-stress-extremes-1", "calibrated", None),
                ],
            ),
        ],
        "Adult and ProPublica, 10-100 labels; small files whose small group is calibrated "
        "differently or not at all, 10 and 40 labels; the labels-only Beta-binomial beside",
        "fairness",
    ),
    Row(
        "Δ accuracy of two models (`BayesianModelComparison().pairwise()`)",
        [
            Part(
                "lowest cell to highest mean",
                [
                    ("model-comparison-1", "lowest", {"method": ["default"]}),
                    ("model-comparison-1", "coverage: mean", {"method": ["default"]}),
                ],
                kind="cells",
            ),
            Part(
                "cells under 90",
                [("model-comparison-1", "cells < 0.90", {"method": ["default"]})],
                kind="sum",
            ),
            Part(
                "cells",
                [("model-comparison-1", "cells", {"method": ["default"]})],
                kind="sum",
            ),
        ],
        "four pairs of models on each of the five fairness files and a synthetic "
        "three-class pool, 20-500 random labels; beside PPI++ and the paired label mean",
        "model-comparison",
    ),
    Row(
        "the hierarchical calibrator's parameters",
        [Part("ranks uniform (chi-square)", [("sbc-1", "p (uniform)", None)], kind="p")],
        "simulation-based calibration over the prior; no parameter rejected at 0.05 / 8",
        "calibrator",
    ),
    Row(
        "`ActiveTester()`: accuracy and macro F1",
        [
            Part(
                "accuracy",
                [
                    (f"many-metrics-oos-{i}", "cover acc", {"method": ["final"]})
                    for i in range(1, 5)
                ],
            ),
            Part(
                "macro F1",
                [(f"many-metrics-oos-{i}", "cover F1", {"method": ["final"]}) for i in range(1, 5)],
            ),
        ],
        "SVHN, Fashion-MNIST and two synthetic pools its defaults were not chosen on, "
        "50-400 labels, 25 runs a cell; normal intervals from the delta method",
        "many-metrics",
    ),
    Row(
        "the planned width's band (`plan_labels`, `skassess plan`; accuracy, from labels)",
        [Part("its 90 % band held the realised mean width", [("planning", "band held", None)])],
        "20 pilots of 50 random labels a pool, 100-500 labels planned; a rate's plan has no band",
        "planning",
    ),
    Row(
        "the overall accuracy under optional stopping (stop once the interval is narrow)",
        [
            Part(
                "the credible interval at the stop",
                [("stopping-width-1", "credible coverage", None)],
            ),
            Part(
                "`anytime_accuracy_interval` at every step",
                [("stopping-width-1", "anytime coverage", None)],
            ),
        ],
        "Fashion-MNIST and SVHN, labels in a random order, 10 at a time, the default "
        "refitted after each batch",
        "designs",
    ),
    Row(
        'TPR and PPV, `prior="calibrated"`, labels drawn by a design of the user\'s own '
        "and given their `design_weight`",
        [
            Part("weighted", [("design-rates-1", "coverage: weighted", None)]),
            Part("the same labels unweighted", [("design-rates-1", "unweighted", None)]),
        ],
        "the peers' active-inference design on the positive class's score, four fairness "
        "files and a synthetic pool whose map no shift or slope follows, 100 and 300 "
        "labels, 20 runs a cell",
        "designs",
    ),
    Row(
        'overall accuracy and classes, `prior="calibrated"`, labels chosen by `ActiveAssessor`',
        [
            Part(
                "overall",
                [
                    (
                        "active-designs-1",
                        "coverage",
                        ACTIVE,
                    )
                ],
            ),
            Part(
                "lowest group",
                [
                    (
                        "active-designs-1",
                        "group_cov_min",
                        ACTIVE,
                    )
                ],
            ),
        ],
        "Fashion-MNIST, 50-200 labels, 20 runs a cell; Thompson sampling by class "
        '(`skassess label`\'s default), by confidence bin, and `"variance"` (design-weighted)',
        "designs",
    ),
    Row(
        'TPR and PPV, `prior="calibrated"`, labels chosen by `ActiveAssessor`',
        [
            Part(
                "overall",
                [("active-rates-1", "coverage", {"method": ["thompson", "thompson-bins"]})],
            ),
            Part(
                "mean over groups",
                [("active-rates-1", "group_cov", {"method": ["thompson"]})],
            ),
        ],
        "the Adult and COMPAS MLPs, groups by the sensitive attribute, 50-200 labels, "
        "20 runs a cell",
        "designs",
    ),
]

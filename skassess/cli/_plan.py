"""``skassess plan``: how many labels for an interval of a given width."""

import numpy as np

from ..metrics import plan_labels
from ._common import add_file_arguments, dump_json, file_options, open_scores, print_table


def add_parser(sub):
    p = sub.add_parser(
        "plan",
        help="how many labels an accuracy interval of a given width needs",
        description=(
            "The expected width of the overall-accuracy interval (the calibrated prior's) at "
            "several label budgets, and the budget for a target width: from the scores "
            "alone, or from the labels already in the file."
        ),
    )
    add_file_arguments(p, groups=False)
    opts = p.add_argument_group("plan")
    opts.add_argument("--width", type=float, help="target width of the interval, e.g. 0.02")
    opts.add_argument(
        "--n-labels",
        type=int,
        nargs="+",
        metavar="N",
        help="budgets to show (default: 20, 50, ..., 5000)",
    )
    opts.add_argument("--level", type=float, default=0.95, help="credible level (0.95)")
    opts.add_argument("--json", metavar="FILE", help="write the plan as JSON ('-': stdout)")
    p.set_defaults(func=run)


def run(args):
    if args.width is not None and not 0 < args.width < 1:
        raise ValueError(f"--width must be in (0, 1); got {args.width!r}.")
    sf = open_scores(args.scores, file_options(args))
    scores, labels = [], []
    for chunk in sf.iter_chunks():
        scores.append(chunk.scores)
        labels.append(chunk.labels)
    X, y = np.concatenate(scores), np.concatenate(labels)
    plan = plan_labels(X, y, width=args.width, n_labels=args.n_labels, level=args.level)
    n_have = int((y >= 0).sum())
    basis = (
        "the scores, taken as calibrated (no label yet)"
        if plan.source == "scores"
        else f"the {n_have:,} labels in the file"
    )
    if args.json != "-":
        print(
            f"{args.scores}: {len(y):,} rows, {n_have:,} labeled. Expected width of the "
            f"{args.level:.0%} interval of the accuracy, from {basis}:"
        )
        print_table("Plan", plan.table.set_index("n_labels"))
        if plan.n_needed is not None:
            more = max(plan.n_needed - n_have, 0)
            print(
                f"Labels for a width of {args.width:g}: {plan.n_needed:,} in all "
                f"({more:,} more), labeled at random."
            )
    if args.json:
        dump_json(
            {
                "rows": len(y),
                "labeled": n_have,
                "level": args.level,
                "source": plan.source,
                "residual_sd": plan.residual_sd,
                "n_needed": plan.n_needed,
                "table": plan.table.to_dict("records"),
            },
            args.json,
        )
    return 0

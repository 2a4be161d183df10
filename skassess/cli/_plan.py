"""``skassess plan``: how many labels for an interval of a given width."""

import numpy as np

from ..metrics import plan_labels
from ._common import dump_json, file_options, open_scores, print_table


def run(args):
    if args.width is not None and not 0 < args.width < 1:
        raise ValueError(f"--width must be in (0, 1); got {args.width!r}.")
    if args.simulations < 2:
        raise ValueError(f"--simulations must be at least 2; got {args.simulations!r}.")
    sf = open_scores(args.scores, file_options(args))
    scores, labels = [], []
    for chunk in sf.iter_chunks():
        scores.append(chunk.scores)
        labels.append(chunk.labels)
    X, y = np.concatenate(scores), np.concatenate(labels)
    n_classes = X.shape[1] if X.ndim == 2 else 2  # one column: the positive class's score
    if args.metric != "accuracy" and n_classes != 2:
        raise ValueError(
            f"--metric {args.metric} is a binary rate (class 1 positive); {args.scores} has "
            f"{n_classes} classes. Plan the accuracy (the default) instead."
        )
    n_have = int((y >= 0).sum())
    if args.metric != "accuracy" and args.n_labels and min(args.n_labels) < n_have:
        raise ValueError(
            f"--n-labels of a rate must be at least the {n_have:,} labels in {args.scores} "
            f"(a budget counts them); got {args.n_labels}."
        )
    plan = plan_labels(
        X,
        y,
        width=args.width,
        n_labels=args.n_labels,
        level=args.level,
        metric=args.metric,
        n_simulations=args.simulations,
        random_state=args.seed,
    )
    basis = (
        "the scores, taken as calibrated (no label yet)"
        if plan.source == "scores"
        else f"the {n_have:,} labels in the file"
    )
    what = "accuracy" if args.metric == "accuracy" else f"{args.metric.upper()} (simulated)"
    if args.json != "-":
        print(
            f"{args.scores}: {len(y):,} rows, {n_have:,} labeled. Expected width of the "
            f"{args.level:.0%} interval of the {what}, from {basis}:"
        )
        # The band's columns only where there is a band (accuracy, from labels).
        print_table("Plan", plan.table.set_index("n_labels").dropna(axis=1, how="all"))
        if plan.n_needed is not None:
            more = max(plan.n_needed - n_have, 0)
            likely = ""
            if plan.n_needed_range is not None:
                likely = " (likely {:,} to {:,})".format(*plan.n_needed_range)
            print(
                f"Labels for a width of {args.width:g}: {plan.n_needed:,} in all "
                f"({more:,} more){likely}, labeled at random."
            )
        print(_caveat(plan.source, n_have, banded=plan.table["width_lower"].notna().any()))
    if args.json:
        dump_json(
            {
                "rows": len(y),
                "labeled": n_have,
                "level": args.level,
                "metric": plan.metric,
                "source": plan.source,
                "residual_sd": plan.residual_sd,
                "n_needed": plan.n_needed,
                "n_needed_range": plan.n_needed_range,
                "dispersion": plan.dispersion,
                # NaN (no band) as null: JSON has no NaN.
                "table": plan.table.astype(object)
                .where(plan.table.notna(), None)
                .to_dict("records"),
            },
            args.json,
        )
    return 0


def _caveat(source, n_have, banded=False):
    """What the plan rests on, and how far to trust it (see the user guide's planning)."""
    if source == "scores":
        return (
            "The plan takes the scores as calibrated; where they are not, the real width "
            "can be several times narrower or wider. Label a random pilot of about 50 rows "
            "and plan again."
        )
    if banded:
        # How often the band holds the realised width: user guide, How many labels.
        return (
            f"The plan follows the map fitted to {n_have:,} labels; width_lower to "
            "width_upper is where the width is likely to fall while that map is still "
            "uncertain. Plan again as labels come in."
        )
    if n_have < 200:  # from 200 pilot labels the plans were within about 0.8-1.2
        # A rate's plan (no band): one 50-label pilot planned 0.63-1.47 of the realised
        # width on the benchmarks' checking pools (accuracy's, before its band: 0.62-1.23):
        # 1 / 0.62 = 1.6, 1 / 1.47 = 0.68.
        return (
            f"The plan follows the map fitted to {n_have:,} labels, itself uncertain with "
            "so few: the real width can be up to 1.6 times the plan, or a third smaller. "
            "Plan again as labels come in."
        )
    return f"The plan follows the map fitted to {n_have:,} labels; plan again as labels come in."

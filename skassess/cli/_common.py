"""Options and helpers the subcommands share."""

import json

import numpy as np
import pandas as pd

from ..session import ScoresFile

#: The priors of the accuracy the commands offer, and their help text.
PRIOR_CHOICES = ("calibrated", "hierarchical", "informative", "uniform")
PRIOR_HELP = (
    "calibrated (default): the scores through a calibration map whose trust the labels "
    "set; hierarchical: the classes' (groups') accuracies share a prior learned from the "
    "labels, ignoring the scores; informative: the scores as they are; uniform: Beta(1, 1) "
    "per class (group)"
)

FILE_OPTIONS = (
    "id_column",
    "score_columns",
    "classes",
    "label_column",
    "group_columns",
    "display_columns",
    "sep",
    "sum_tolerance",
)


def add_file_arguments(parser, *, groups=True, display=False, several=False):
    """The scores file and how its columns are read (None = auto-detect).

    ``several``: one file or more (one per model, for a model comparison).
    """
    if several:
        parser.add_argument(
            "scores",
            metavar="SCORES",
            nargs="+",
            help="scores file: CSV (.csv, .csv.gz, .tsv) or Parquet (.parquet); with "
            "--task compare_models, one file per model, with the same items (matched by "
            "id) and classes",
        )
    else:
        parser.add_argument(
            "scores",
            metavar="SCORES",
            help="scores file: CSV (.csv, .csv.gz, .tsv) or Parquet (.parquet)",
        )
    cols = parser.add_argument_group("columns of SCORES (auto-detected when not given)")
    cols.add_argument(
        "--id-column",
        metavar="COL",
        help="item ids (default: a column named id, item_id, row_id, key or uid; "
        "else the row number)",
    )
    cols.add_argument(
        "--score-columns",
        nargs="+",
        metavar="COL",
        help="one column per class, in class order, or one P(class 1) column "
        "(default: the columns named score_<class>, or one named score)",
    )
    cols.add_argument(
        "--classes",
        nargs="+",
        metavar="NAME",
        help="class names (default: the score columns' <class> suffixes)",
    )
    cols.add_argument(
        "--label-column",
        metavar="COL",
        help="true labels, empty = unlabeled (default: a column named label, y, "
        "y_true, true_label, target or truth; '' for none)",
    )
    if groups:
        cols.add_argument(
            "--group",
            dest="group_columns",
            action="append",
            metavar="COL",
            help="a group / sensitive-attribute column (repeat for several)",
        )
    if display:
        cols.add_argument(
            "--display",
            dest="display_columns",
            action="append",
            metavar="COL",
            help="a column shown with each item (repeatable)",
        )
    cols.add_argument("--sep", help="CSV delimiter (default: found from the header)")
    cols.add_argument(
        "--sum-tolerance",
        type=float,
        metavar="T",
        help="how far class scores may sum from 1 (default 0.01)",
    )


def file_options(args):
    """The column options given on the command line (None = not given)."""
    return {k: getattr(args, k, None) for k in FILE_OPTIONS}


def open_scores(path, options):
    given = {k: v for k, v in options.items() if v is not None}
    return ScoresFile(path, **given)


def print_table(title, frame, digits=4):
    print(f"{title}:")
    if frame.empty:
        print("  (none)\n")
        return
    with pd.option_context(
        "display.width", 140, "display.max_columns", 20, "display.max_rows", 200
    ):
        shown = frame.round(digits)
        for col in ("n_labeled", "rows", "labeled"):
            # counts are whole unless weighted: shown as integers then
            if col in shown and pd.api.types.is_float_dtype(shown[col]):
                values = shown[col].to_numpy()
                if np.all(np.isfinite(values) & (values == np.round(values))):
                    shown[col] = shown[col].astype(np.int64)
        print(shown.to_string(), "\n")


def dump_json(obj, path):
    """Write ``obj`` as JSON to ``path`` (``"-"``: stdout), stamped with the package version."""
    from .. import __version__

    if isinstance(obj, dict):
        obj = {"skassess_version": __version__, **obj}
    text = json.dumps(obj, indent=2, default=_json_default)
    if path == "-":
        print(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")

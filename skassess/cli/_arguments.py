"""The ``skassess`` command's arguments: every subcommand's grammar, and nothing heavy.

The parser is built from the standard library alone, so a mistyped flag or a
``--help`` is answered before NumPy, pandas or scikit-learn are imported; the
subcommand's module (``skassess.cli._<command>``) is imported to run it. The
choices the library defines elsewhere are repeated here as literals
(``tests/cli/test_arguments.py`` checks that they agree).
"""

import argparse

from ._label_arguments import label_arguments

__all__ = ["COMMANDS", "build_parser"]

#: The subcommands, in the order of the help, each run by ``skassess.cli._<name>.run``.
COMMANDS = (
    "demo",
    "example",
    "assess",
    "plan",
    "label",
    "serve",
    "label-studio",
    "monitor",
    "export",
    "report",
    "migrate",
)

PRIOR_CHOICES = ("calibrated", "hierarchical", "informative", "uniform")
PRIOR_HELP = (
    "calibrated (default): the scores through a calibration map whose trust the labels "
    "set; hierarchical: the classes' (groups') accuracies share a prior learned from the "
    "labels, ignoring the scores; informative: the scores as they are; uniform: Beta(1, 1) "
    "per class (group)"
)
#: ``skassess.session.META_METHODS``
META_METHODS = ("confidence", "atc", "doc", "calibrated_scores", "meta_model", "combined")
#: ``skassess.samplers.STRATEGY_NAMES``
STRATEGY_NAMES = (
    "bayes_ucb",
    "epsilon_greedy",
    "lucb",
    "multiple_play",
    "random",
    "thompson",
    "top_two",
    "variance",
)
#: ``skassess.samplers``' tasks, and the comparison of models' sessions
LABEL_TASKS = (
    "estimate",
    "least_accurate",
    "most_accurate",
    "least_calibrated",
    "most_costly",
    "compare",
    "compare_models",
)
#: The rates a labeling session or a plan estimates per group.
GROUP_METRICS = ("accuracy", "tpr", "fnr", "tnr", "fpr", "ppv", "npv")
#: ``ActiveModelSelector``'s strategies; the first is the default.
MODEL_STRATEGIES = ("top_two", "disagreement", "random")


def _label(sub):
    # ``label`` and ``serve``: one session's settings, two ways of labeling
    label_arguments(sub, LABEL_TASKS, STRATEGY_NAMES, MODEL_STRATEGIES, GROUP_METRICS)


def _serve(sub):
    pass  # built with ``label`` (its parser holds the same session settings)


_label_studio = _serve  # built with ``label`` too


def build_parser():
    """The ``skassess`` argument parser, its subcommand in ``args.command``."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="skassess", description="Bayesian assessment of black-box classifiers."
    )
    parser.add_argument("--version", action="version", version=f"skassess {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        globals()[f"_{name.replace('-', '_')}"](sub)
    return parser


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


def _demo(sub):
    demo = sub.add_parser(
        "demo",
        help="assess a real model from a few labels (bundled data)",
        description=(
            "Label a random few rows of a bundled real data set, treat the rest as "
            "unlabeled, print the posterior of the model's accuracy and calibration, "
            "and write a Bayesian reliability diagram."
        ),
    )
    demo.add_argument(
        "--dataset",
        choices=("fashion-mnist", "adult"),
        default="fashion-mnist",
        help="fashion-mnist: an MLP on 10,000 test images, grouped by predicted class; "
        "adult: a scikit-learn MLP on 10,054 people, grouped by race (White vs other)",
    )
    demo.add_argument("--n-labels", type=int, default=200, help="labels to reveal (200)")
    demo.add_argument(
        "--prior",
        choices=PRIOR_CHOICES,
        default="calibrated",
        help="prior of the group accuracies: calibrated (default; the scores through a "
        "calibration map learned from the labels), hierarchical (the groups share a "
        "Beta learned from the labels), informative (the scores as they are) or uniform",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the labeled rows (0)")
    demo.add_argument(
        "--output", default="skassess_reliability.png", help="PNG of the reliability diagram"
    )


def _example(sub):
    p = sub.add_parser(
        "example",
        help="write an example scores file to try assess and label on",
        description="Write example_scores.csv (2,000 Fashion-MNIST images scored by an MLP, "
        "100 of them labeled) and example_labels.csv (every true label, an oracle for "
        "label --oracle) into a directory.",
    )
    p.add_argument("--directory", default=".", help="where to write them (.)")


def _assess(sub):
    p = sub.add_parser(
        "assess",
        help="posterior accuracy, calibration and group differences of a scores file",
        description="Read a scores file (labeled and unlabeled rows), print the posterior "
        "accuracy per predicted class and per group, the overall accuracy, ECE and cost "
        "with credible intervals, and each group's difference from the best group with "
        "P(delta > 0) and the ROPE probabilities. The file is read in batches.",
    )
    add_file_arguments(p)
    opts = p.add_argument_group("assessment")
    opts.add_argument("--prior", choices=PRIOR_CHOICES, default="calibrated", help=PRIOR_HELP)
    opts.add_argument("--level", type=float, default=0.95, help="credible level (0.95)")
    opts.add_argument(
        "--rope",
        type=float,
        default=0.05,
        help="half-width of the region of practical equivalence (0.05)",
    )
    opts.add_argument(
        "--decision-probability",
        type=float,
        default=0.95,
        metavar="P",
        help="a difference's decision (worse, equivalent, better) needs this posterior "
        "probability, else it is 'undecided' (0.95)",
    )
    opts.add_argument("--n-bins", type=int, default=10, help="confidence bins of the ECE (10)")
    opts.add_argument(
        "--cost-matrix",
        metavar="CSV",
        help="K x K costs C[true, predicted], no header: adds the expected cost",
    )
    opts.add_argument("--seed", type=int, default=0, help="seed of the posterior draws (0)")
    opts.add_argument(
        "--annotations",
        metavar="CSV",
        help="labels that name their annotators, who may slip: one row per item and "
        "annotator, with id, annotator and label columns (an item labeled by several "
        "annotators has several rows); the estimates then model the slips, and tables "
        "of the annotators' accuracy and agreement are added. The scores file must "
        "then label no row",
    )
    opts.add_argument(
        "--annotator-prior",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="with --annotations: a 95%% prior interval of each annotator's accuracy "
        "(default 0.85 0.999)",
    )
    opts.add_argument(
        "--meta",
        nargs="+",
        choices=META_METHODS,
        metavar="METHOD",
        help="also predict the accuracy of the unlabeled rows from the labeled "
        "ones, allowing for drift between them (skassess.meta; methods: "
        f"{', '.join(META_METHODS)}; confidence, meta_model and combined with a "
        "prediction interval)",
    )
    parts = p.add_argument_group(
        "partitions (SCORES may be a quoted glob, e.g. 'scores/day=*/part-*.parquet': one "
        "data set split into files with the same columns)"
    )
    parts.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="read the files on a local Dask cluster of N worker processes "
        '(pip install "skassess[dask]")',
    )
    parts.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="read the files on the Dask cluster of this scheduler (e.g. tcp://host:8786)",
    )
    out = p.add_argument_group("output")
    out.add_argument("--report", metavar="HTML", help="write the HTML report here")
    out.add_argument("--json", metavar="FILE", help="write the results as JSON ('-': stdout)")
    out.add_argument("--quiet", action="store_true", help="print no tables")


def _plan(sub):
    p = sub.add_parser(
        "plan",
        help="how many labels an interval of a given width needs",
        description=(
            "The expected width of the overall interval of the accuracy or a binary rate "
            "(the calibrated prior's) at several label budgets, and the budget for a target "
            "width: from the scores alone, or from the labels already in the file. A rate's "
            "widths are simulated (--simulations labelings per budget)."
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
        help="budgets to show, labels in the file included (default: 20, 50, ..., 5000; "
        "a rate's from the labels in the file on)",
    )
    opts.add_argument("--level", type=float, default=0.95, help="credible level (0.95)")
    opts.add_argument(
        "--metric",
        choices=GROUP_METRICS,
        type=str.lower,
        default="accuracy",
        help="the overall metric planned for (default accuracy); a binary rate (tpr, fnr, "
        "tnr, fpr, ppv, npv: class 1 positive) needs a binary scores file",
    )
    opts.add_argument(
        "--simulations",
        type=int,
        default=20,
        metavar="N",
        help="simulated labelings per budget of a binary rate (20)",
    )
    opts.add_argument("--seed", type=int, default=0, help="seed of a rate's simulations (0)")
    opts.add_argument("--json", metavar="FILE", help="write the plan as JSON ('-': stdout)")


def _monitor(sub):
    p = sub.add_parser(
        "monitor",
        help="accuracy over time of a deployed model, per chunk, with alerts",
        description="Learn from a labeled reference scores file how the black box's "
        "scores relate to its accuracy, then predict the accuracy of every chunk of a "
        "stream of scores files (a day, an hour, a batch, or N rows) without labels, "
        "with intervals that allow for drift; the stream's labels, where given, update "
        "their chunk. With --threshold, a chunk raises an alert when its accuracy is "
        "below the threshold with probability >= --alert-probability.",
    )
    add_file_arguments(p, groups=False)
    p.add_argument(
        "stream",
        metavar="STREAM",
        nargs="+",
        help="scores files of the monitored period, or directories of them (read in "
        "name order); the same columns as SCORES, which is the labeled reference",
    )
    chunks = p.add_argument_group("chunks")
    chunks.add_argument(
        "--chunk-column",
        metavar="COL",
        help="the column that names each row's chunk (a batch, or a time with --period)",
    )
    chunks.add_argument(
        "--period",
        metavar="FREQ",
        help="cut the times of --chunk-column into periods: D (day), h (hour), W, M",
    )
    chunks.add_argument(
        "--chunk-size", type=int, metavar="N", help="chunks of N rows (default: one per file)"
    )
    opts = p.add_argument_group("monitoring")
    opts.add_argument(
        "--level",
        type=float,
        nargs="+",
        default=[0.8, 0.95],
        help="interval levels, any in (0, 1) (0.8 0.95)",
    )
    opts.add_argument(
        "--metric",
        choices=["accuracy", "ppv", "npv"],
        type=str.lower,
        default="accuracy",
        help="what is monitored: the accuracy, or for a binary model the precision of its "
        "positive predictions (ppv) or of its negative ones (npv); the positive class is "
        "the second score column (accuracy)",
    )
    opts.add_argument("--threshold", type=float, help="alert when the metric falls below this")
    opts.add_argument(
        "--alert-probability",
        type=float,
        default=0.9,
        metavar="P",
        help="an alert needs P(metric < threshold) >= P (0.9)",
    )
    opts.add_argument(
        "--method",
        choices=[m for m in META_METHODS if m in ("combined", "meta_model", "confidence")],
        default="combined",
        help="the label-free predictor (combined)",
    )
    opts.add_argument(
        "--uncertainty-model",
        choices=["pretrained", "recalibrated"],
        default="pretrained",
        help="the shipped interval model, or the same refitted to drift simulated inside "
        "the reference (about a minute longer) (pretrained)",
    )
    opts.add_argument(
        "--query",
        type=int,
        default=0,
        metavar="N",
        help="list N rows to label next, where a label moves the answer most",
    )
    opts.add_argument("--seed", type=int, default=0, help="seed (0)")
    lab = p.add_argument_group("labeling")
    lab.add_argument(
        "--session",
        metavar="FILE",
        help="label stream rows where they move the answer most, one by one at the "
        "keyboard (or from --oracle), each committed to FILE before the next (created, "
        "or resumed with the same reference, stream and options); its labels update "
        "their chunks. The file holds data only",
    )
    lab.add_argument(
        "--budget",
        type=int,
        metavar="N",
        help="with --session: stop when the session holds N labels (default: no limit)",
    )
    lab.add_argument(
        "--oracle",
        metavar="CSV",
        help="with --session: take the labels from this CSV (an id column and a label "
        "column) instead of the keyboard; a row it does not label is skipped",
    )
    out = p.add_argument_group("output")
    out.add_argument("--csv", metavar="FILE", help="write the per-chunk table as CSV")
    out.add_argument(
        "--raw-csv",
        action="store_true",
        help="with --csv: write the cells as they are: by default a text cell that a "
        "spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a ' before it",
    )
    out.add_argument("--plot", metavar="PNG", help="draw the timeline (needs matplotlib)")
    out.add_argument("--json", metavar="FILE", help="write the results as JSON ('-': stdout)")
    out.add_argument(
        "--report",
        metavar="HTML",
        help="write a self-contained HTML report: the timeline, the chunks, the alerts, "
        "the labels (needs matplotlib)",
    )
    out.add_argument("--quiet", action="store_true", help="print no tables")


def _export(sub):
    p = sub.add_parser(
        "export",
        help="write a labeling session's labels (CSV) and posterior (JSON)",
        description="Write the labels of a session file as CSV (id, label, time, ...) and, "
        "given its scores file with --scores (checked against the SHA-256 the session "
        "stores), the posterior and the task's answer as JSON. The command reads only the "
        "files named on its command line.",
    )
    p.add_argument("session", metavar="SESSION", help="the session file")
    p.add_argument("--labels", metavar="CSV", help="labels CSV (default: SESSION.labels.csv)")
    p.add_argument(
        "--raw-csv",
        action="store_true",
        help="write the labels CSV's cells as they are: by default a text cell that a "
        "spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a ' before it",
    )
    p.add_argument(
        "--posterior",
        metavar="JSON",
        help="posterior JSON (default: SESSION.posterior.json; '-': stdout); needs --scores",
    )
    p.add_argument(
        "--scores",
        metavar="FILE",
        nargs="+",
        help="the session's scores file, for the posterior (a model comparison's: each "
        "model's file, in the session's order)",
    )


def _report(sub):
    p = sub.add_parser(
        "report",
        help="write the HTML report of a scores file (and of a labeling session)",
        description="Assess a scores file and write one self-contained HTML file: forest "
        "plots per group, group differences, the reliability diagram, the settings and the "
        "data's SHA-256; with --session, the session's labels count too and the labeling "
        "history shows how the answer converged.",
    )
    add_file_arguments(p)
    p.add_argument("--session", metavar="FILE", help="a labeling session of this file")
    p.add_argument(
        "-o",
        "--output",
        default="skassess_report.html",
        metavar="HTML",
        help="the report (skassess_report.html)",
    )
    p.add_argument(
        "--prior",
        choices=PRIOR_CHOICES,
        default="calibrated",
        help="prior of the accuracies (as in assess)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the posterior draws (0)")


def _migrate(sub):
    p = sub.add_parser(
        "migrate",
        help="convert an older session file (format 1 or 2) to the current format",
        description="Format 2 session files record no annotators; this converts one to "
        "format 3, whose labels may name their annotator (the old file is kept as "
        "SESSION.format2). Format 1 files stored the assessor as a Python pickle, which "
        "runs code when loaded, so skassess refuses to open them; if you made the file "
        "yourself, --trust-pickle converts it once (kept as SESSION.format1). Never "
        "convert a format-1 file you received from someone else.",
    )
    p.add_argument("session", metavar="SESSION", help="the session file of format 1 or 2")
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="format 1 only: you vouch that the file is yours and safe to load",
    )

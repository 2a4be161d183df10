"""The ``skassess label`` command's arguments."""


def label_arguments(sub, tasks, strategies, model_strategies, metrics):
    """The ``label`` subcommand's arguments (the choices as ``_arguments`` lists them)."""
    from ._arguments import add_file_arguments

    p = sub.add_parser(
        "label",
        help="label items one by one, chosen to answer a question fast (resumable)",
        description="An active labeling session. Each answer is committed to the session "
        "file (SQLite) before the next item is shown; running the same command again "
        "resumes where it stopped, with the same next item. With --oracle the labels come "
        "from a file instead of the keyboard.",
    )
    add_file_arguments(p, display=True, several=True)
    s = p.add_argument_group("session")
    session_settings(s, tasks, strategies, model_strategies, metrics)
    label_only(s)
    p = sub.add_parser(
        "serve",
        help="label in the browser, several annotators at once (a local web app)",
        description="A labeling session served as web pages: each annotator opens it in a "
        "browser, sees the item the sampler asks for (an image from --items, a text "
        "column, the --display columns), the model's prediction and the classes as "
        "buttons with keyboard keys, and the estimate so far. Labels name their "
        "annotator and go into the same crash-safe session file as skassess label's. "
        'Needs: pip install "skassess[web]".',
    )
    add_file_arguments(p, display=True)
    p.set_defaults(anytime=False)  # no anytime-valid interval: labels that may slip
    s = p.add_argument_group("session")
    session_settings(s, tasks, strategies, model_strategies, metrics)
    serve_only(p.add_argument_group("server"))
    p = sub.add_parser(
        "label-studio",
        help="Label Studio both ways: the next items as tasks, its annotations back",
        description="tasks: the next items the session's sampler asks for, as Label Studio "
        "tasks (JSON) with the model's prediction as a pre-annotation and the sampler's "
        "order as the data field priority (sort on it, descending), and the project's "
        "labeling config. import: a Label Studio JSON export's annotations into the "
        "session, each under its annotator (repeats kept, conflicts named). export: the "
        "session's labels in Label Studio's export format.",
    )
    p.add_argument("action", choices=("tasks", "import", "export"), help="what to do")
    add_file_arguments(p, display=True)
    p.set_defaults(anytime=False)
    s = p.add_argument_group("session")
    session_settings(s, tasks, strategies, model_strategies, metrics)
    ls = p.add_argument_group("Label Studio")
    ls.add_argument("--next", type=int, default=50, metavar="K", help="tasks: how many (50)")
    ls.add_argument(
        "--image-url",
        metavar="URL",
        help="tasks: each item's image URL, {id} standing for its id "
        "(e.g. '/data/local-files/?d=images/{id}.png')",
    )
    ls.add_argument("--text-column", metavar="COL", help="tasks: a --display column as the text")
    ls.add_argument("--config", metavar="XML", help="tasks: also write the labeling config here")
    ls.add_argument(
        "--out", metavar="JSON", help="tasks, export: the file written ('-': standard output)"
    )
    ls.add_argument("--export", metavar="JSON", help="import: the Label Studio JSON export")


def session_settings(s, tasks, strategies, model_strategies, metrics):
    """The session's file and settings, shared by ``label`` and ``serve``."""
    s.add_argument(
        "--session",
        required=True,
        metavar="FILE",
        help="the session file (created, or resumed if it exists); it holds data "
        "only and is checked whole on opening, so a colleague's file is safe",
    )
    s.add_argument(
        "--task",
        choices=tasks,
        type=lambda text: text.replace("-", "_"),
        help="what the labels are for (default estimate); least_accurate: find "
        "the least accurate group; compare: compare --compare A B; compare_models: "
        "find the most accurate of several models, one SCORES file per model "
        "(ActiveModelSelector)",
    )
    s.add_argument(
        "--strategy",
        choices=sorted({*strategies, *model_strategies}),
        help="how the next item is chosen (default thompson; lucb for "
        "least_accurate, most_accurate and compare sessions started with "
        "--stop-probability; compare_models: top_two, disagreement or random, "
        "default top_two)",
    )
    s.add_argument("--compare", nargs=2, metavar=("A", "B"), help="the two groups to compare")
    s.add_argument(
        "--metrics",
        nargs="+",
        metavar="NAME",
        help="estimate these metrics instead of a group task (accuracy, macro_f1; "
        "precision, recall, f1 for every class) with ActiveTester: each item is "
        "drawn with a probability by its expected effect on the estimates and "
        "weighted by it, so the estimates stay unbiased; no skipping, no --group",
    )
    s.add_argument(
        "--metric",
        choices=metrics,
        type=str.lower,
        help="what the estimate task estimates per group and overall (default "
        "accuracy); a binary rate (tpr, fnr, tnr, fpr, ppv, npv: class 1 positive) "
        "needs a binary scores file and --task estimate, and takes any --strategy "
        "of that task but variance",
    )
    s.add_argument(
        "--confidence-bins",
        type=int,
        metavar="N",
        help="estimate task without --group: group the items by N equal-count bins "
        "of their top-1 confidence instead of by predicted class, so the labels go "
        "where the model's answer is uncertain and the interval of the accuracy (or "
        "of --metric's rate) of all items narrows faster (the table then shows the "
        "bins; e.g. 10)",
    )
    s.add_argument("--rope", type=float, help="ROPE half-width of --compare (0.05)")
    s.add_argument("--seed", type=int, help="seed of the query sequence (default: drawn, stored)")
    s.add_argument(
        "--budget",
        type=int,
        metavar="N",
        help="stop when the session holds N labels (default: no limit)",
    )
    s.add_argument(
        "--stop-probability",
        type=float,
        metavar="P",
        help="stop when the answer has probability >= P (e.g. 0.95: P(least "
        "accurate group) or P(comparison region)) and, for least_accurate, "
        "most_accurate and compare, anytime-valid intervals at level P confirm "
        "it: a stopped answer is then wrong with probability <= 1 - P",
    )
    s.add_argument(
        "--stop-width",
        type=float,
        metavar="W",
        help="stop when every group's 95%% interval is at most W wide",
    )


def label_only(s):
    """``skassess label``'s own flags: how the labels come, and what is printed."""
    s.add_argument(
        "--anytime",
        action="store_true",
        help="also print an anytime-valid 95%% interval of the accuracy of all "
        "items, from this session's labels in the order they were drawn: it "
        "holds however and whenever the session is stopped. Needs items drawn "
        "uniformly at random (--strategy random, the default with --anytime) "
        "and skips unrelated to whether the model is right",
    )
    oracle = s.add_mutually_exclusive_group()
    oracle.add_argument(
        "--oracle",
        metavar="CSV",
        help="non-interactive: labels from a CSV with the id and label "
        "columns (ids it lacks are skipped)",
    )
    oracle.add_argument(
        "--oracle-command",
        metavar="CMD",
        help="non-interactive: a program that reads one JSON item per line "
        "on its standard input and writes one line per item: a class name or "
        "number, an empty line or 'skip', or 'quit'",
    )
    s.add_argument(
        "--annotator",
        metavar="NAME",
        help="who gives this run's labels: each label is stored with its annotator, a "
        "row labeled by another annotator may be labeled again, and the estimate "
        "models the annotators' slips (a session names the annotator of every label "
        "or of none)",
    )
    s.add_argument(
        "--repeat-share",
        type=float,
        default=0.0,
        metavar="S",
        help="with --annotator: the share of the session's labels that are second "
        "labels of items another annotator labeled, chosen where a second label "
        "narrows the estimate most (e.g. 0.1; default 0)",
    )
    s.add_argument(
        "--no-progress", action="store_true", help="no progress line (--oracle, --oracle-command)"
    )
    s.add_argument("--report", metavar="HTML", help="write the HTML report when the run ends")


def serve_only(s):
    """``skassess serve``'s own flags: what an item shows, who labels, where it listens."""
    s.add_argument(
        "--items",
        metavar="DIR",
        help="a folder of the items' images, one file per id: ID.png, ID.jpg, ID.jpeg, "
        "ID.gif or ID.webp (only files inside it are served)",
    )
    s.add_argument(
        "--item-column",
        metavar="COL",
        help="a column of the scores file shown as the item's text",
    )
    s.add_argument(
        "--annotators",
        nargs="+",
        metavar="NAME",
        help="who may label; needed with --host beyond this machine, where each gets a "
        "link with a token (printed at the start). On this machine without it, anyone "
        "who gives a name",
    )
    s.add_argument(
        "--repeat-share",
        type=float,
        default=0.0,
        metavar="S",
        help="the share of the labels that are second labels of items another "
        "annotator labeled, where a second label narrows the estimate most (default 0)",
    )
    s.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1: this machine only)",
    )
    s.add_argument("--port", type=int, default=8765, help="the port (default 8765)")

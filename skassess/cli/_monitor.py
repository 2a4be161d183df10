"""``skassess monitor``: a deployed black box's accuracy over time, chunk by chunk."""

from ..session import META_METHODS, monitor_files
from ._common import add_file_arguments, dump_json, file_options, print_table


def add_parser(sub):
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
    opts.add_argument("--threshold", type=float, help="alert when the accuracy falls below this")
    opts.add_argument(
        "--alert-probability",
        type=float,
        default=0.9,
        metavar="P",
        help="an alert needs P(accuracy < threshold) >= P (0.9)",
    )
    opts.add_argument(
        "--method",
        choices=[m for m in META_METHODS if m in ("meta_model", "confidence")],
        default="meta_model",
        help="the label-free predictor (meta_model)",
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
    out = p.add_argument_group("output")
    out.add_argument("--csv", metavar="FILE", help="write the per-chunk table as CSV")
    out.add_argument("--plot", metavar="PNG", help="draw the timeline (needs matplotlib)")
    out.add_argument("--json", metavar="FILE", help="write the results as JSON ('-': stdout)")
    out.add_argument("--quiet", action="store_true", help="print no tables")
    p.set_defaults(func=run)


def _check(args):
    for level in args.level:
        if not 0 < level < 1:
            raise ValueError(f"--level must be in (0, 1); got {level:g}.")
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise ValueError(f"--threshold must be in [0, 1]; got {args.threshold:g}.")
    if not 0 < args.alert_probability < 1:
        raise ValueError(f"--alert-probability must be in (0, 1); got {args.alert_probability:g}.")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise ValueError(f"--chunk-size must be a positive integer; got {args.chunk_size}.")
    if args.query < 0:
        raise ValueError(f"--query must be 0 or more; got {args.query}.")


def run(args):
    _check(args)
    result = monitor_files(
        args.scores,
        args.stream,
        file_options=file_options(args),
        chunk_column=args.chunk_column,
        period=args.period,
        chunk_size=args.chunk_size,
        level=tuple(args.level),
        threshold=args.threshold,
        alert_probability=args.alert_probability,
        method=args.method,
        uncertainty_model=args.uncertainty_model,
        query=args.query,
        random_state=args.seed,
        progress=not args.quiet,
    )
    table = result.table
    if not args.quiet:
        ref = result.reference
        print(
            f"Reference {ref['file']}: {ref['labeled']:,} labeled rows, accuracy "
            f"{ref['accuracy']:.4f}. Stream: {int(table['n_rows'].sum()):,} rows in "
            f"{len(table)} chunks, {int(table['n_labeled'].sum()):,} labeled.\n"
        )
        shown = [c for c in table.columns if not c.startswith("predicted_")]
        shown = [c for c in shown if c not in ("drift_features", "prior_weight")]
        print_table("Accuracy per chunk (label-free, or with the chunk's labels)", table[shown])
        if args.threshold is not None:
            alerts = table.index[table["alert"]]
            print(
                f"Alerts (P(accuracy < {args.threshold:g}) >= {args.alert_probability:g}): "
                + (", ".join(str(k) for k in alerts) if len(alerts) else "none")
                + "\n"
            )
        if args.query:
            print_table("Rows to label next", result.to_label)
    if args.csv:
        table.to_csv(args.csv)
    if args.json:
        dump_json(result.to_dict(), args.json)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from ..meta import MonitorDisplay

        disp = MonitorDisplay(table, threshold=args.threshold).plot(name="accuracy over time")
        disp.figure_.set_size_inches(9, 4.5)
        disp.figure_.tight_layout()
        disp.figure_.savefig(args.plot, dpi=120)
        if not args.quiet:
            print(f"Wrote the timeline to {args.plot}")
    return 0

"""``skassess monitor``: a deployed black box's accuracy over time, chunk by chunk."""

import sys
from pathlib import Path

from ..session import (
    LabelingSession,
    monitor_files,
    read_stream,
    stream_monitor,
    stream_result,
)
from ._common import dump_json, file_options, print_table
from ._csv_out import write_csv
from ._keyboard import interactive, status_line
from ._oracle import read_oracle


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
    if args.budget is not None and args.budget < 0:
        raise ValueError(f"--budget must be 0 or more; got {args.budget}.")
    if args.session is not None and args.query:
        raise ValueError(
            "--query lists rows to label without a session; with --session the rows are "
            "asked for one at a time, each chosen after the labels before it."
        )
    if args.session is None:
        for flag, value in (("--budget", args.budget), ("--oracle", args.oracle)):
            if value is not None:
                raise ValueError(f"{flag} labels through a session: give --session FILE too.")


def _settings(args):
    return {
        "chunk_column": args.chunk_column,
        "period": args.period,
        "chunk_size": args.chunk_size,
        "level": tuple(args.level),
        "metric": args.metric,
        "threshold": args.threshold,
        "alert_probability": args.alert_probability,
        "method": args.method,
        "uncertainty_model": args.uncertainty_model,
    }


def _with_session(args):
    """Label the stream in a crash-safe session, then the result with its labels."""
    from ..meta import ActiveMonitor

    settings = _settings(args)
    data = read_stream(
        args.scores,
        args.stream,
        file_options=file_options(args),
        chunk_column=args.chunk_column,
        period=args.period,
        chunk_size=args.chunk_size,
    )
    ids = data.rows["id"]
    repeated = ids.duplicated()
    if repeated.any():
        i = int(repeated.to_numpy().argmax())
        first = int((ids == ids.iloc[i]).to_numpy().argmax())
        raise ValueError(
            f"--session names each label by its row's id, and the id {ids.iloc[i]!r} is in "
            f"{data.rows['file'].iloc[first]} and {data.rows['file'].iloc[i]}; give the "
            "stream's rows unique ids (--id-column)."
        )
    monitor = stream_monitor(
        data.scores.shape[1],
        **{k: v for k, v in settings.items() if k not in ("chunk_column", "period")},
        random_state=args.seed,
        # stored with the session, which a resumed run must match: --quiet does not change it
        progress=True,
    )
    info = {"reference": data.reference_file, "stream": data.files, "classes": data.classes}
    path = Path(args.session)
    with LabelingSession(
        path,
        data.scores,
        data.labels,
        assessor=ActiveMonitor(monitor, random_state=args.seed),
        fit_params={
            "reference": data.reference_scores,
            "reference_labels": data.reference_labels,
            "chunk_by": data.chunk_by,
        },
        ids=data.ids,
        info=info,
        classes=data.classes,
    ) as session:
        print(
            f"Session {path}: {'resumed' if session.resumed else 'new'}; "
            f"{session.n_labeled} labels so far."
        )
        left = len(data.ids) if args.budget is None else max(args.budget - session.n_labeled, 0)
        try:
            if args.oracle:
                codes = read_oracle(args.oracle, data.ids, data.classes, args.id_column)
                session.run(
                    lambda row: None if codes[row] < 0 else int(codes[row]),
                    left,
                    progress=not args.quiet,
                )
            elif left:  # the keyboard loop shows a row's id, display columns and scores
                interactive(session, data, data.classes, args.budget, None, None)
        except KeyboardInterrupt:
            print(
                f"\nInterrupted: saved {session.n_labeled} labels in {path}; run the same "
                "command to resume.",
                file=sys.stderr,
            )
            raise SystemExit(130) from None
        print(status_line(session, args.budget, final=True) + "\n")
        sampler = session.assessor_
        return stream_result(data, sampler.monitor_, sampler.summary(), [])


def run(args):
    _check(args)
    if args.session is not None:
        result = _with_session(args)
    else:
        result = monitor_files(
            args.scores,
            args.stream,
            file_options=file_options(args),
            **_settings(args),
            query=args.query,
            random_state=args.seed,
            progress=not args.quiet,
        )
    table = result.table
    name = args.metric if args.metric == "accuracy" else args.metric.upper()
    if not args.quiet:
        ref = result.reference
        print(
            f"Reference {ref['file']}: {ref['labeled']:,} labeled rows, {name} "
            f"{ref['accuracy']:.4f}. Stream: {int(table['n_rows'].sum()):,} rows in "
            f"{len(table)} chunks, {int(table['n_labeled'].sum()):,} labeled.\n"
        )
        shown = [c for c in table.columns if not c.startswith("predicted_")]
        shown = [c for c in shown if c != "drift_features"]
        print_table(
            f"{name[0].upper()}{name[1:]} per chunk (label-free, or with the chunk's labels)",
            table[shown],
        )
        if args.threshold is not None:
            alerts = table.index[table["alert"]]
            print(
                f"Alerts (P({name} < {args.threshold:g}) >= {args.alert_probability:g}): "
                + (", ".join(str(k) for k in alerts) if len(alerts) else "none")
                + "\n"
            )
        if args.query:
            print_table("Rows to label next", result.to_label)
    if args.csv:
        write_csv(table, args.csv, raw=args.raw_csv)
    if args.json:
        dump_json(result.to_dict(), args.json)
    if args.report:
        from ..session import write_monitor_report

        facts = {
            "stream": ", ".join(args.stream),
            "chunks": (
                f"column {args.chunk_column}" + (f", period {args.period}" if args.period else "")
                if args.chunk_column
                else f"{args.chunk_size} rows"
                if args.chunk_size
                else "one per file"
            ),
            "predictor": args.method,
            "seed": args.seed,
        }
        if args.session:
            facts["labeling session"] = args.session
        write_monitor_report(result, args.report, settings=facts)
        if not args.quiet:
            print(f"Wrote the report to {args.report}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from ..meta import MonitorDisplay

        disp = MonitorDisplay(table, threshold=args.threshold, metric=name)
        disp.plot(name=f"{name} over time")
        disp.figure_.set_size_inches(9, 4.5)
        disp.figure_.tight_layout()
        disp.figure_.savefig(args.plot, dpi=120, bbox_inches="tight")
        if not args.quiet:
            print(f"Wrote the timeline to {args.plot}")
    return 0

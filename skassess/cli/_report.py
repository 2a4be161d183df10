"""``skassess report``: the HTML report of a scores file, with a labeling session's labels."""

import time
from pathlib import Path

from ..exceptions import SessionError
from ..session import LabelingSession, assess_file, write_report
from ._common import file_options, open_scores
from ._names import session_group_names
from ._stored import check_classes, checked_scores_paths, read_session

#: Why a session's report shows no calibration error.
ACTIVE_CALIBRATION_NOTE = (
    "The session chose its items with unequal chances within a group, so the labels in "
    "a confidence bin are not a random sample of the bin, and a bin's accuracy from "
    "them would be biased. The ECE and the reliability diagram are not shown; skassess "
    "assess on the scores file with labels drawn at random gives them."
)
#: How a session's report estimates the calibration error.
STRATIFIED_CALIBRATION_NOTE = (
    "The session labeled its groups at unequal rates, each group's items at random. "
    "Each label is therefore weighted by its group's rows over its group's labels, so "
    "the bins and the ECE are not biased towards the groups labeled most; a bin's "
    "interval is as wide as its effective number of labels allows."
)


def session_report(session, sf, output, *, seed, prior="calibrated", started=None):
    """Assessment of ``sf`` with the labels of an open ``session``, and its history."""
    rows, labels = session.labeled_rows()
    labels_given = (
        {"annotations": session.annotations()[["row", "annotator", "label"]].astype({"label": int})}
        if session.annotated
        else {"extra_labels": (rows, labels.astype(int))}
    )
    history = session.history()
    if session.group_names is not None:
        history["group"] = [session.group_names[int(g)] for g in history["group"]]
    design_groups = session.design_groups()
    result = assess_file(
        None,
        scores_file=sf,
        prior=prior,
        random_state=seed,
        **labels_given,
        design_groups=design_groups,
        progress=True,
    )
    if design_groups is None:
        result.without_calibration(ACTIVE_CALIBRATION_NOTE)
    else:
        result.calibration_note = STRATIFIED_CALIBRATION_NOTE
    info = session.info
    result.history = history
    result.session = {
        "file": str(session.path),
        "labels": len(rows),
        "skipped": len(session.assessor_.skipped_),
        "settings": info.get("settings", {}),
    }
    write_report(result, output, progress=True, started=started)
    return result


def run(args):
    started = time.perf_counter()
    options = file_options(args)
    if args.session is None:
        sf = open_scores(args.scores, options)
        result = assess_file(
            None, scores_file=sf, prior=args.prior, random_state=args.seed, progress=True
        )
        write_report(result, args.output, progress=True, started=started)
    else:
        _, info = read_session(args.session)
        if info.get("settings", {}).get("task") == "compare_models":
            raise SessionError(
                f"{args.session} is a comparison of models; the HTML report assesses one "
                "model. Use skassess export for each model's posterior."
            )
        stored = info.get("options", {})
        options = {k: stored.get(k) if v is None else v for k, v in options.items()}
        checked_scores_paths(args.session, info, [args.scores])
        sf = open_scores(args.scores, options)
        check_classes(args.session, info, sf.classes)
        table = sf.read()
        group = table.groups[sf.group_columns[0]].to_numpy() if sf.group_columns else None
        with LabelingSession(
            args.session,
            table.scores,
            table.labels,
            group_by=group,
            ids=table.ids,
            group_names=session_group_names(info.get("settings", {}), group, sf),
            read_only=True,
        ) as s:
            session_report(s, sf, args.output, prior=args.prior, seed=args.seed, started=started)
    print(f"Wrote the report to {Path(args.output)}")
    return 0

"""``skassess export``: a session's labels as CSV and its posterior as JSON."""

from pathlib import Path

from ..session import LabelingSession
from ._common import dump_json
from ._label import open_pool
from ._names import named_groups, session_group_names
from ._stored import check_classes, checked_scores_paths, read_session


def add_parser(sub):
    p = sub.add_parser(
        "export",
        help="write a labeling session's labels (CSV) and posterior (JSON)",
        description="Write the labels of a session file as CSV (id, label, time, ...) and, "
        "re-reading the session's scores file (checked against its stored SHA-256), the "
        "posterior and the task's answer as JSON.",
    )
    p.add_argument("session", metavar="SESSION", help="the session file")
    p.add_argument("--labels", metavar="CSV", help="labels CSV (default: SESSION.labels.csv)")
    p.add_argument(
        "--posterior",
        metavar="JSON",
        help="posterior JSON (default: SESSION.posterior.json; '-': stdout)",
    )
    p.add_argument(
        "--scores",
        metavar="FILE",
        nargs="+",
        help="the scores file, if it moved since the session started (a model "
        "comparison's: each model's file, in the session's order)",
    )
    p.set_defaults(func=run)


def run(args):
    path = Path(args.session)
    events, info = read_session(path)
    # the files are checked before anything is written
    paths = checked_scores_paths(path, info, args.scores)
    classes = info.get("classes")
    labels = events[events["kind"] == "label"].copy()
    if classes is not None:
        labels["label"] = [classes[int(k)] for k in labels["label"]]
    labels = labels.rename(columns={"item_id": "id"})[["id", "label", "time", "step", "row"]]
    models = info.get("settings", {}).get("task") == "compare_models"
    sf = open_pool(paths, info.get("options", {}), models=models)
    check_classes(path, info, sf.classes)
    table = sf.read()
    group = table.groups[sf.group_columns[0]].to_numpy() if sf.group_columns else None
    with LabelingSession(
        path,
        table.scores,
        table.labels,
        group_by=group,
        ids=table.ids,
        group_names=session_group_names(info.get("settings", {}), group, sf),
        read_only=True,
    ) as session:
        out_labels = args.labels or f"{path}.labels.csv"
        labels.to_csv(out_labels, index=False)
        print(f"wrote {len(labels)} labels to {out_labels}")
        summary = named_groups(session.summary(), session.assessor_, sf)
        answer = session.answer()
        out = {
            "session": str(path),
            "scores": paths[0] if len(paths) == 1 else paths,
            "sha256": info.get("sha256"),
            "settings": info.get("settings"),
            "n_labeled_in_session": session.n_labeled,
            "n_labeled_in_file": int((table.labels >= 0).sum()),
            "answer": answer,
            "posterior": summary.reset_index().to_dict(orient="records"),
            "skipped": [str(table.ids[r]) for r in session.assessor_.skipped_],
        }
    out_post = args.posterior or f"{path}.posterior.json"
    dump_json(out, out_post)
    if out_post != "-":
        print(f"wrote the posterior to {out_post}")
    return 0

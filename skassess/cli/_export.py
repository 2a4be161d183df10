"""``skassess export``: a session's labels as CSV and its posterior as JSON."""

from pathlib import Path

from ..exceptions import SessionError
from ..session import LabelingSession
from ._common import dump_json
from ._csv_out import write_csv
from ._label import open_pool
from ._names import named_groups, session_group_names
from ._stored import check_classes, checked_scores_paths, read_session, scores_hint


def run(args):
    path = Path(args.session)
    events, info = read_session(path)
    # the files are checked before anything is written; a stored path is never opened
    if args.posterior is not None and not args.scores:
        raise SessionError(f"{path}: the posterior needs the scores file: {scores_hint(info)}.")
    paths = checked_scores_paths(path, info, args.scores) if args.scores else None
    classes = info.get("classes")
    labels = events[events["kind"] == "label"].copy()
    if classes is not None:
        labels["label"] = [classes[int(k)] for k in labels["label"]]
    columns = ["id", "label", "time", "step", "row"]
    if labels["annotator"].notna().any():  # labels with their annotators, repeats included
        columns.insert(2, "annotator")
    labels = labels.rename(columns={"item_id": "id"})[columns]
    out_labels = args.labels or f"{path}.labels.csv"
    if paths is None:
        _write_labels(labels, out_labels, args.raw_csv)
        print(f"no posterior written: {scores_hint(info)}.")
        return 0
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
        _write_labels(labels, out_labels, args.raw_csv)
        summary = named_groups(session.assessor_.summary(), session.assessor_, sf)
        answer = session.answer()
        out = {
            "session": str(path),
            "scores": paths[0] if len(paths) == 1 else paths,
            "sha256": info.get("sha256"),
            "settings": info.get("settings"),
            "n_labeled_in_session": session.n_labeled,
            "n_labeled_in_file": int((table.labels >= 0).sum()),
            "overall": overall_records(session.assessor_),
            "answer": answer,
            "posterior": summary.reset_index().to_dict(orient="records"),
            "skipped": [str(table.ids[r]) for r in session.assessor_.skipped_],
        }
        est = session.assessor_.estimator_
        if session.annotated and hasattr(est, "annotator_names_"):
            out["annotators"] = est.annotator_summary().reset_index().to_dict(orient="records")
            out["agreement"] = est.annotator_agreement().reset_index().to_dict(orient="records")
    out_post = args.posterior or f"{path}.posterior.json"
    dump_json(out, out_post)
    if out_post != "-":
        print(f"wrote the posterior to {out_post}")
    return 0


def _write_labels(labels, path, raw):
    write_csv(labels, path, index=False, raw=raw)
    print(f"wrote {len(labels)} labels to {path}")


def overall_records(assessor, level=0.95):
    """The session's overall estimates as ``skassess assess --json`` gives them.

    Records of ``metric``, ``mean``, ``lower`` and ``upper`` (the ``level``
    interval): the working estimator's overall metric, each model's accuracy in
    a comparison of models (with ``model``), or each metric of a test.
    """
    from ..metrics import BayesianCalibrationError, BayesianMisclassificationCost
    from ..samplers import ActiveModelSelector

    est = getattr(assessor, "estimator_", None)
    if hasattr(est, "overall_interval") and not isinstance(assessor, ActiveModelSelector):
        lower, upper = est.overall_interval(level)
        if isinstance(est, BayesianCalibrationError):
            name = "ECE"  # the names of skassess assess's overall table
        elif isinstance(est, BayesianMisclassificationCost):
            name = "expected cost"
        else:
            name = getattr(est, "metric", "accuracy")
        return [{"metric": name, "mean": est.overall_mean(), "lower": lower, "upper": upper}]
    try:
        table = assessor.summary(level)
    except ValueError:  # a test with no drawn label yet
        return []
    if isinstance(assessor, ActiveModelSelector):
        return [
            {"metric": "accuracy", "model": str(key), **_interval(row["mean"], row)}
            for key, row in table.iterrows()
        ]
    return [
        {"metric": str(key), **_interval(row["estimate"], row)} for key, row in table.iterrows()
    ]


def _interval(mean, row):
    return {"mean": mean, "lower": row["lower"], "upper": row["upper"]}

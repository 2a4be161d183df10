"""``skassess label-studio``: the next items as Label Studio tasks, its annotations back."""

import json
import sys
from pathlib import Path

from ..exceptions import SessionError
from ..samplers import ActiveAssessor
from ..session import (
    label_studio_config,
    label_studio_export,
    label_studio_tasks,
    read_label_studio_export,
)
from ._common import dump_json
from ._label import needs_group_task, open_session, prepare


def _check(args, fixed):
    needs_group_task(fixed, "label-studio")
    if args.action == "import" and args.export is None:
        raise ValueError("label-studio import needs --export FILE (Label Studio's JSON export).")
    if args.action != "import" and args.export is not None:
        raise ValueError("--export is the file label-studio import reads.")
    if args.next < 1:
        raise ValueError(f"--next must be at least 1; got {args.next}.")
    if args.image_url is not None and "{id}" not in args.image_url:
        raise ValueError(
            f"--image-url must hold {{id}}, where each item's id goes; got {args.image_url!r}."
        )


def run(args):
    path = Path(args.session)
    sf, table, group, assessor, info, fixed = prepare(args, path, _check)
    if args.text_column is not None and args.text_column not in table.display.columns:
        raise ValueError(
            f"--text-column {args.text_column!r} is not a --display column; add --display "
            f"{args.text_column}."
        )
    classes = list(sf.classes)
    notes = None
    if args.action == "import":  # read and checked before the session is opened
        notes = read_label_studio_export(args.export, classes)
    read_only = args.action == "export"
    with open_session(path, sf, table, group, assessor, info, fixed, read_only) as session:
        if not isinstance(session.assessor_, ActiveAssessor):
            raise ValueError("label-studio works with an ActiveAssessor session (a group task).")
        if args.action == "tasks":
            tasks = label_studio_tasks(
                session,
                table,
                classes,
                args.next,
                image_url=args.image_url,
                text_column=args.text_column,
            )
            _write(tasks, args.out or f"{path}.tasks.json", f"{len(tasks)} tasks")
            if args.config:
                kind = "text" if args.text_column and not args.image_url else "image"
                Path(args.config).write_text(label_studio_config(classes, kind), encoding="utf-8")
                print(
                    f"wrote the labeling config to {args.config}",
                    file=sys.stderr if args.out == "-" else sys.stdout,
                )
        elif args.action == "export":
            tasks = label_studio_export(session, table, classes)
            _write(tasks, args.out or f"{path}.label-studio.json", f"{len(tasks)} labeled items")
        else:
            added = _import(session, table, notes)
            print(
                f"imported {added} labels ({len(notes) - added} already in the session, "
                f"{notes.attrs['cancelled']} skipped in Label Studio); the session holds "
                f"{session.n_labeled}."
            )
    return 0


def _import(session, table, notes):
    """Tell the session every new label of ``notes`` (id, annotator, label); all checked first."""
    if session.n_labeled and not session.annotated:
        raise SessionError(
            f"{session.path}: the session's labels name no annotator; Label Studio's do. "
            "Import into a new session file."
        )
    position = {str(item): row for row, item in enumerate(table.ids)}
    held = session.annotations()[["row", "annotator", "label"]]
    given = {(r, a): lab for r, a, lab in held.itertuples(index=False)}
    new = []
    for i, (item, who, code) in enumerate(notes.itertuples(index=False)):
        row = position.get(item)
        if row is None:
            raise ValueError(
                f"{notes.attrs['where']}: label {i + 1}: the id {item!r} is not in the scores file."
            )
        if (row, who) in given:
            if int(given[row, who]) != int(code):
                raise ValueError(
                    f"{notes.attrs['where']}: {who!r} labels item {item!r} otherwise than the "
                    "session holds; nothing was imported."
                )
            continue
        new.append((row, who, int(code)))
    for row, who, code in new:
        session.tell(row, code, annotator=who)
    return len(new)


def _write(tasks, out, what):
    if out == "-":
        dump_json(tasks, "-")
        return
    Path(out).write_text(json.dumps(tasks, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {what} to {out}")

"""Label Studio, both ways: the sampler's next items as tasks, its annotations back.

Label Studio's JSON task format (``data``, ``predictions``) and its JSON export
(``annotations`` with ``result``, ``completed_by`` and ``was_cancelled``), for a
classification project whose labeling config has one ``Choices`` control:

- :func:`label_studio_tasks`: the next items the sampler asks for, each with the
  black box's prediction as a pre-annotation and the sampler's order as the data
  field ``priority`` (sort on it, descending, in the Data Manager);
- :func:`label_studio_config`: the project's labeling config for the classes;
- :func:`read_label_studio_export`: the annotations of an export, one row per
  item and annotator, every id, class and annotator checked, repeats kept and
  conflicts named;
- :func:`label_studio_export`: a session's labels in the export's format.
"""

import json
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ._label_parser import LabelParser

__all__ = [
    "label_studio_config",
    "label_studio_export",
    "label_studio_tasks",
    "read_label_studio_export",
]

#: The control and object names of the labeling config (``from_name``, ``to_name``).
FROM_NAME, TO_NAME = "label", "item"
#: The largest export read, in bytes.
MAX_EXPORT_BYTES = 1 << 30


def label_studio_config(classes, kind="image"):
    """The labeling config (XML) of a classification project over ``classes``.

    Parameters
    ----------
    classes : sequence of str
    kind : {"image", "text"}, default="image"
        What a task's ``data`` shows: ``$image`` (a URL) or ``$text``.
    """
    if kind not in ("image", "text"):
        raise ValueError(f"kind must be 'image' or 'text'; got {kind!r}.")
    tag = "Image" if kind == "image" else "Text"
    choices = "".join(f'    <Choice value="{escape(str(c), quote=True)}"/>\n' for c in classes)
    return (
        "<View>\n"
        f'  <{tag} name="{TO_NAME}" value="${kind}"/>\n'
        f'  <Choices name="{FROM_NAME}" toName="{TO_NAME}" choice="single" showInline="true">\n'
        f"{choices}  </Choices>\n"
        "</View>\n"
    )


def label_studio_tasks(session, table, classes, n, *, image_url=None, text_column=None):
    """The sampler's next ``n`` items as Label Studio tasks, best first.

    Parameters
    ----------
    session : LabelingSession
    table : ScoresTable
        The pool's rows.
    classes : sequence of str
    n : int
        Tasks to make (fewer when fewer items are left).
    image_url : str, default=None
        The items' image URL, ``{id}`` standing for the item's id (e.g.
        ``"/data/local-files/?d=images/{id}.png"``): ``data["image"]``.
    text_column : str, default=None
        A display column of ``table`` given as ``data["text"]``.

    Returns
    -------
    tasks : list of dict
        ``data`` holds ``id`` (the item's id, which the import reads back),
        ``priority`` (``n`` for the first item down to 1: sort descending) and
        the item; ``predictions`` the black box's class and score.
    """
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int; got {n!r}.")
    rows = session.query_batch(int(n))
    tasks = []
    for rank, row in enumerate(rows):
        scores = np.asarray(table.scores[row], dtype=float)
        probs = np.array([1 - scores, scores]) if scores.ndim == 0 else scores
        k = int(np.argmax(probs))
        item_id = str(table.ids[row])
        data = {"id": item_id, "priority": len(rows) - rank}
        if image_url is not None:
            data["image"] = image_url.replace("{id}", item_id)
        if text_column is not None:
            data["text"] = str(table.display[text_column].iloc[row])
        tasks.append(
            {
                "data": data,
                "predictions": [
                    {
                        "model_version": "black box",
                        "score": float(probs[k]),
                        "result": [_choice(classes[k])],
                    }
                ],
            }
        )
    return tasks


def _choice(name):
    return {
        "from_name": FROM_NAME,
        "to_name": TO_NAME,
        "type": "choices",
        "value": {"choices": [str(name)]},
    }


def _annotator(completed_by, where):
    """The annotator's name: an export's ``completed_by`` (a user id, or a user record)."""
    if isinstance(completed_by, dict):
        for key in ("email", "username", "id"):
            value = completed_by.get(key)
            if value not in (None, ""):
                return str(value)
    elif isinstance(completed_by, int | str) and not isinstance(completed_by, bool):
        if str(completed_by).strip():
            return f"user {completed_by}" if isinstance(completed_by, int) else completed_by
    raise ValueError(f"{where}: completed_by names no annotator ({completed_by!r}).")


def read_label_studio_export(source, classes, *, from_name=None):
    """The labels of a Label Studio JSON export: one row per item and annotator.

    Parameters
    ----------
    source : path-like or list
        The export file (JSON, a list of tasks), or the tasks.
    classes : sequence of str
        The session's classes; a choice is read by :class:`LabelParser`.
    from_name : str, default=None
        The ``Choices`` control to read; None: the only ``choices`` result.

    Returns
    -------
    annotations : pandas.DataFrame
        Columns ``id`` (``data["id"]``), ``annotator`` (the user's email or
        id) and ``label`` (class index), in the export's order. An item
        labeled by several annotators has several rows (repeats); cancelled
        (skipped) annotations are left out, and counted in
        ``annotations.attrs["cancelled"]``.

    Raises
    ------
    ValueError
        Naming the task (its position and ``id``) and the annotation: a task
        without ``data["id"]``, a result that is not one choice of the
        classes, an annotator who gives one item two different labels
        (a conflict).
    """
    where = "the export"
    if not isinstance(source, list):
        path = Path(source)
        where = f"Label Studio export {path}"
        if path.stat().st_size > MAX_EXPORT_BYTES:
            raise ValueError(f"{where}: larger than {MAX_EXPORT_BYTES:,} bytes.")
        try:
            source = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{where}: not JSON ({exc}).") from exc
    if not isinstance(source, list):
        raise ValueError(f"{where}: a Label Studio JSON export is a list of tasks.")
    parser = LabelParser(list(classes))
    rows, cancelled, seen = [], 0, {}
    for i, task in enumerate(source):
        at = f"{where}: task {i + 1}"
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict) or data.get("id") in (None, ""):
            raise ValueError(f"{at} has no data.id (the item's id the tasks were made with).")
        item = str(data["id"])
        at = f"{at} (id {item!r})"
        for j, note in enumerate(task.get("annotations") or []):
            here = f"{at}, annotation {j + 1}"
            if not isinstance(note, dict):
                raise ValueError(f"{here} is not a record.")
            if note.get("was_cancelled"):
                cancelled += 1
                continue
            who = _annotator(note.get("completed_by"), here)
            choices = [
                r
                for r in note.get("result") or []
                if isinstance(r, dict)
                and r.get("type") == "choices"
                and (from_name is None or r.get("from_name") == from_name)
            ]
            if len(choices) != 1:
                raise ValueError(f"{here} holds {len(choices)} choices results; one is read.")
            picked = (choices[0].get("value") or {}).get("choices")
            if not isinstance(picked, list) or len(picked) != 1:
                raise ValueError(f"{here}: a result of one choice is read; got {picked!r}.")
            code = parser.parse(str(picked[0]), where=here)
            known = seen.get((item, who))
            if known is not None and known != code:
                raise ValueError(
                    f"{here}: {who!r} labels item {item!r} {classes[code]!r} here and "
                    f"{classes[known]!r} in another annotation; keep one in Label Studio."
                )
            if known is None:
                seen[item, who] = code
                rows.append((item, who, code))
    out = pd.DataFrame(rows, columns=["id", "annotator", "label"])
    out.attrs.update(where=where, cancelled=cancelled)
    return out


def label_studio_export(session, table, classes):
    """A session's labels in Label Studio's export format: a task per labeled item.

    Each task has ``data["id"]`` (the item's id) and an annotation per label,
    its ``completed_by`` the annotator's name and its ``result`` one choice.
    The format :func:`read_label_studio_export` reads.
    """
    notes = session.annotations()
    tasks = {}
    for row, annotator, label in zip(notes["row"], notes["annotator"], notes["label"], strict=True):
        item = str(table.ids[int(row)])
        task = tasks.setdefault(item, {"data": {"id": item}, "annotations": []})
        task["annotations"].append(
            {
                "completed_by": annotator,
                "was_cancelled": False,
                "result": [_choice(classes[int(label)])],
            }
        )
    return list(tasks.values())

"""A session's labels with their annotators: format 3, repeats, resume, undo, migration."""

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from skassess import ActiveAssessor
from skassess.cli import main
from skassess.exceptions import SessionError
from skassess.session import LabelingSession, migrate_session
from skassess.session._store import event_hash, settings_hash

#: A session written by format 2 (skassess 0.1): five labels and one skip on the
#: bundled Fashion-MNIST pool, ActiveAssessor(task="least_accurate", random_state=3).
FORMAT2 = Path(__file__).parent / "data" / "format2.sqlite"
FORMAT2_NEXT_QUERY = 4841


def _assessor():
    return ActiveAssessor(task="least_accurate", random_state=3)


def _slipped(label, rng, rate=0.1, n_classes=10):
    return int(label) if rng.random() > rate else (int(label) + 1) % n_classes


def _annotate(path, data, n=12, repeat_every=3, seed=0):
    """A session of ``n`` first labels by "ann", every ``repeat_every``-th repeated by "bob"."""
    rng = np.random.default_rng(seed)
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        for i in range(n):
            row = s.query()
            s.tell(row, int(data.target[row]), annotator="ann")
            if i % repeat_every == 0:
                s.tell(row, _slipped(data.target[row], rng), annotator="bob")
        return s.query(), s.summary(), s.annotations()


def test_annotated_session_resumes_with_the_same_estimate_and_query(tmp_path, data):
    path = tmp_path / "s.sqlite"
    query, summary, annotations = _annotate(path, data)
    assert len(annotations) == 16 and set(annotations["annotator"]) == {"ann", "bob"}
    with LabelingSession(path, data.scores) as s:
        assert s.annotated and s.n_labeled == 16
        assert s.query() == query
        assert s.summary().equals(summary)
        assert s.annotations().equals(annotations)
        events = s.events()
        assert events["annotator"].tolist() == annotations["annotator"].tolist()
        rows, _ = s.labeled_rows()  # each row once: its first label
        assert len(rows) == 12 == len(set(rows.tolist()))


def test_the_estimate_models_the_slips(tmp_path, data):
    """The annotated session's estimate is the assessor's under label noise, not the plain one."""
    path = tmp_path / "s.sqlite"
    _, summary, annotations = _annotate(path, data)
    direct = _assessor().fit(data.scores)
    direct.tell(
        annotations["row"].to_numpy(),
        annotations["label"].tolist(),
        annotator=annotations["annotator"].tolist(),
    )
    assert direct.summary().equals(summary)


def test_the_same_label_again_is_nothing_new_and_another_is_refused(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        row = s.query()
        s.tell(row, 1, annotator="ann")
        s.tell(row, 1, annotator="ann")
        assert s.n_labeled == 1
        with pytest.raises(ValueError, match="annotator 'ann' gave pool row"):
            s.tell(row, 2, annotator="ann")
        assert s.n_labeled == 1
        with pytest.raises(ValueError, match="pass annotator= to tell"):
            s.tell(s.query(), 1)
        for bad in ("", 3, "x" * 201):
            with pytest.raises(ValueError, match="annotator must be a name"):
                s.tell(row, 1, annotator=bad)
        assert s.n_labeled == 1


def test_an_unannotated_session_refuses_an_annotator(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        row = s.query()
        s.tell(row, 1)
        with pytest.raises(ValueError, match="told without annotators"):
            s.tell(s.query(), 1, annotator="ann")
        assert s.n_labeled == 1 and not s.annotated


def test_undo_takes_back_a_repeat(tmp_path, data):
    path, other = tmp_path / "s.sqlite", tmp_path / "t.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        for _ in range(4):
            row = s.query()
            s.tell(row, int(data.target[row]), annotator="ann")
        expected = (s.query(), s.summary())
        s.tell(row, (int(data.target[row]) + 1) % 10, annotator="bob")
        assert not s.summary().equals(expected[1])
        undone = s.undo()
        assert undone["annotator"] == "bob" and undone["row"] == row
        assert (s.query(), s.summary().to_dict()) == (expected[0], expected[1].to_dict())
    with LabelingSession(other, data.scores, assessor=_assessor()) as s:
        for _ in range(4):
            row = s.query()
            s.tell(row, int(data.target[row]), annotator="ann")
        assert s.summary().equals(expected[1])


def _rewrite(path, change):
    """Apply ``change(meta, events)`` to a session file and rewrite its checksum chain."""
    db = sqlite3.connect(path)
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    columns = [r[1] for r in db.execute("PRAGMA table_info(events)")]
    rows = db.execute("SELECT * FROM events ORDER BY seq")
    events = [dict(zip(columns, r, strict=True)) for r in rows]
    change(meta, events)
    previous = settings_hash(meta)
    for e in events:
        fields = [e[k] for k in ("seq", "kind", "row", "item_id", "label", "step", "time")]
        name = e.get("annotator") if isinstance(e.get("annotator"), str) else None
        e["hash"] = previous = event_hash(previous, *fields, e["cursor"], name)
        db.execute(
            "UPDATE events SET hash = ?, annotator = ? WHERE seq = ?",
            (e["hash"], e.get("annotator"), e["seq"]),
        )
    meta["head"] = json.dumps([len(events), previous], separators=(",", ":"))
    for k, v in meta.items():
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (v, k))
    db.commit()
    db.close()


@pytest.mark.parametrize(
    "forge, match",
    [
        (lambda events: events[1].update(annotator=events[0]["annotator"]), "a second time"),
        (lambda events: events[1].update(annotator=None), "a second time"),
        (lambda events: events[1].update(annotator=""), "annotator is not a name"),
        (lambda events: events[1].update(annotator=b"bob"), "annotator is not a name"),
    ],
)
def test_a_forged_annotator_is_refused_with_one_message(tmp_path, data, forge, match):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        row = s.query()
        s.tell(row, 1, annotator="ann")
        s.tell(row, 2, annotator="bob")
    _rewrite(path, lambda meta, events: forge(events))
    with pytest.raises(SessionError, match=match):
        LabelingSession(path, data.scores)


def test_a_format2_file_is_read_and_labeled_as_before(tmp_path, data):
    path = tmp_path / "old.sqlite"
    shutil.copy(FORMAT2, path)
    with LabelingSession(path, data.scores) as s:
        assert s.n_labeled == 5 and s.info == {"note": "written by format 2"}
        assert s.query() == FORMAT2_NEXT_QUERY
        assert s.events()["annotator"].isna().all()
        row = s.query()
        s.tell(row, int(data.target[row]))  # format 2 still takes labels without annotators
        with pytest.raises(SessionError, match=r"format 2.*skassess migrate"):
            s.tell(row, 1, annotator="ann")
        assert s.n_labeled == 6
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("2",)


def test_migrating_a_format2_file_keeps_every_event(tmp_path, data, capsys):
    path = tmp_path / "old.sqlite"
    shutil.copy(FORMAT2, path)
    with LabelingSession(path, data.scores, read_only=True) as s:
        before = s.events()
    assert main(["migrate", str(path)]) == 0  # data only: no --trust-pickle
    assert "old file is" in capsys.readouterr().out
    assert (tmp_path / "old.sqlite.format2").read_bytes() == FORMAT2.read_bytes()
    with LabelingSession(path, data.scores) as s:
        assert s.events().equals(before)
        assert s.query() == FORMAT2_NEXT_QUERY
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("3",)
    with pytest.raises(SessionError, match="format 3, not 1 or 2"):
        migrate_session(path)


def test_migrating_refuses_a_damaged_format2_file(tmp_path):
    path = tmp_path / "old.sqlite"
    shutil.copy(FORMAT2, path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE events SET label = '3' WHERE seq = 1")
        db.commit()
    with pytest.raises(SessionError, match="damaged"):
        migrate_session(path)
    assert not (tmp_path / "old.sqlite.format2").exists()

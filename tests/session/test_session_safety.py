"""Session files hold data, never code; a damaged file is refused whole, with one message."""

import base64
import json
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.cli import main
from skassess.exceptions import SessionError
from skassess.samplers import EpsilonGreedy, QueryStrategy
from skassess.session import LabelingSession, migrate_session
from skassess.session._spec import SpecError, encode_estimator, estimator_from_spec


def _assessor(**kw):
    kw.setdefault("task", "least_accurate")
    kw.setdefault("random_state", 3)
    return ActiveAssessor(**kw)


class _WritesMarker:
    """A pickle payload: loading it would create the marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


_V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, row INTEGER NOT NULL,
    item_id TEXT NOT NULL, label TEXT, step INTEGER NOT NULL, time REAL NOT NULL,
    cursor TEXT NOT NULL);
"""


def _write_v1(path, payload, info, data_sha256="0" * 64, events=()):
    """A session file as format 1 wrote it: the assessor pickled, base64, in meta."""
    db = sqlite3.connect(path)
    db.executescript(_V1_SCHEMA)
    meta = {
        "format": 1,
        "created": 1.7e9,
        "settings": {"task": "'least_accurate'"},
        "data_sha256": data_sha256,
        "assessor": base64.b64encode(pickle.dumps(payload)).decode("ascii"),
        "info": info,
    }
    db.executemany("INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()])
    db.executemany(
        "INSERT INTO events (kind, row, item_id, label, step, time, cursor) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        events,
    )
    db.commit()
    db.close()


def test_a_crafted_pickle_session_runs_nothing(tmp_path, data, capsys):
    """label, export, report --session and LabelingSession refuse it; no marker appears."""
    assert main(["example", "--directory", str(tmp_path)]) == 0
    scores = tmp_path / "example_scores.csv"
    marker = tmp_path / "marker"
    path = tmp_path / "crafted.sqlite"
    info = {"input": str(scores), "sha256": None, "options": {}, "settings": {}, "classes": None}
    _write_v1(path, _WritesMarker(marker), info)
    before = path.read_bytes()
    capsys.readouterr()
    calls = [
        [
            "label",
            str(scores),
            "--session",
            str(path),
            "--oracle",
            str(tmp_path / "example_labels.csv"),
            "--budget",
            "5",
            "--no-progress",
        ],
        ["export", str(path)],
        ["report", str(scores), "--session", str(path), "-o", str(tmp_path / "r.html")],
    ]
    for argv in calls:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "format 1" in err and "pickle" in err and "--trust-pickle" in err, err
        assert err.count("\n") == 1  # one line, no traceback
    with pytest.raises(SessionError, match="stores its assessor as a Python pickle"):
        LabelingSession(path, data.scores)
    with pytest.raises(SessionError, match="pickle"):
        LabelingSession.read_events(path)
    with pytest.raises(SessionError, match="trust_pickle=True"):
        migrate_session(path)
    assert not marker.exists()
    assert path.read_bytes() == before  # nothing written
    assert not (tmp_path / "r.html").exists()


def test_migrating_a_trusted_format1_file_keeps_every_label(tmp_path, data):
    ref = _assessor().fit(data.scores)
    from skassess.session._labeling import pool_fingerprint

    ids = np.arange(len(data.scores)).astype(str)
    events = []
    for step in range(1, 6):
        row = int(ref.query()[0])
        ref.tell([row], [data.target[row]])
        events.append(
            (
                "label",
                row,
                str(row),
                json.dumps(int(data.target[row])),
                step,
                1.7e9 + step,
                json.dumps(ref.cursor_),
            )
        )
    path = tmp_path / "old.sqlite"
    _write_v1(
        path,
        _assessor(),
        {"note": "x"},
        pool_fingerprint(data.scores, None, None, None, ids),
        events,
    )
    assert main(["migrate", str(path)]) == 2  # the flag is required
    assert main(["migrate", str(path), "--trust-pickle"]) == 0
    assert (tmp_path / "old.sqlite.format1").is_file()
    with LabelingSession(path, data.scores) as s:
        assert s.n_labeled == 5 and s.info == {"note": "x"}
        assert s.query() == int(ref.query()[0])  # the same query sequence
    with pytest.raises(SessionError, match="format 3, not 1 or 2"):
        migrate_session(path, trust_pickle=True)


def _session(path, data, n=6, skip=True):
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        for i in range(n):
            row = s.query()
            if skip and i == 2:
                s.skip(row)
            else:
                s.tell(row, int(data.target[row]))


def _damage_and_check(tmp_path, data, damage, match, capsys):
    """Damage a session; LabelingSession and the command refuse it, writing nothing."""
    path = tmp_path / "s.sqlite"
    _session(path, data)
    db = sqlite3.connect(path)
    damage(db, path)
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(SessionError, match=match) as err:
        LabelingSession(path, data.scores)
    assert str(path) in str(err.value)
    with pytest.raises(SessionError, match=match):
        LabelingSession.read_events(path)
    capsys.readouterr()
    assert main(["export", str(path)]) == 2
    out = capsys.readouterr().err
    assert out.startswith(f"skassess export: error: {path}: ") and out.count("\n") == 1, out
    assert out.isprintable() or out[:-1].isprintable()
    assert path.read_bytes() == before
    assert not (tmp_path / "s.sqlite.labels.csv").exists()
    return str(err.value)


def test_duplicated_event_is_refused(tmp_path, data, capsys):
    def damage(db, path):
        cols = "kind, row, item_id, label, step, time, cursor, hash"
        db.execute(f"INSERT INTO events ({cols}) SELECT {cols} FROM events WHERE seq = 2")

    msg = _damage_and_check(
        tmp_path, data, damage, "event 7 .* does not match its checksum", capsys
    )
    assert "damaged" in msg


def test_rewritten_label_is_refused(tmp_path, data, capsys):
    def damage(db, path):
        db.execute("UPDATE events SET label = '9' WHERE seq = 4")

    _damage_and_check(tmp_path, data, damage, "event 4 .* does not match its checksum", capsys)


def test_deleted_events_are_refused(tmp_path, data, capsys):
    _damage_and_check(
        tmp_path,
        data,
        lambda db, p: db.execute("DELETE FROM events WHERE seq=3"),
        "event 3 is missing",
        capsys,
    )


def test_deleted_last_event_is_refused(tmp_path, data, capsys):
    _damage_and_check(
        tmp_path,
        data,
        lambda db, p: db.execute("DELETE FROM events WHERE seq=6"),
        "holds 5 events but was last written with 6",
        capsys,
    )


def test_rewritten_settings_are_refused(tmp_path, data, capsys):
    def damage(db, path):
        db.execute("UPDATE meta SET value = '{\"input\": 1}' WHERE key = 'info'")

    _damage_and_check(tmp_path, data, damage, "event 1 .* does not match", capsys)


@pytest.mark.slow
def test_random_bytes_are_refused_or_harmless(tmp_path, data, capsys):
    """Random bytes anywhere: the file is refused with one line, or reads exactly as before.

    Bytes that land in unused space (free pages, page slack) change no data;
    everywhere else the file is refused. Never is a changed event read.
    """
    path = tmp_path / "s.sqlite"
    _session(path, data, n=40)
    original = path.read_bytes()
    reference, _, _ = LabelingSession.read_events(path)
    rng = np.random.default_rng(0)
    refused = 0
    for start in range(0, len(original) - 64, 512):
        blob = bytearray(original)
        blob[start : start + 64] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
        path.write_bytes(bytes(blob))
        try:
            events, _, _ = LabelingSession.read_events(path)
        except SessionError as exc:
            refused += 1
            assert str(exc).startswith(str(path)) and str(exc).isprintable()
            assert path.read_bytes() == bytes(blob)  # nothing written
            if start >= 4096:  # the schema (page 1) is whole: a session, damaged
                assert "the session file is damaged" in str(exc), str(exc)
            if refused == 1:
                capsys.readouterr()
                assert main(["export", str(path)]) == 2
                assert capsys.readouterr().err.count("\n") == 1
            continue
        assert events.equals(reference), start
    assert refused >= len(original) // 512 // 2


@pytest.mark.slow
@pytest.mark.parametrize("cut", [0.3, 0.7])
def test_truncated_file_is_refused(tmp_path, data, cut):
    path = tmp_path / "s.sqlite"
    _session(path, data, n=40)
    blob = path.read_bytes()
    path.write_bytes(blob[: int(len(blob) * cut) // 4096 * 4096 + 100])
    with pytest.raises(SessionError, match=str(path)):
        LabelingSession(path, data.scores)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a labeling process (POSIX only)")
def test_a_lost_wal_after_a_crash_loses_no_label(tmp_path, data):
    """Kill the labeling process, delete the -wal file: every committed label is there."""
    path = tmp_path / "s.sqlite"
    ready = tmp_path / "ready"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            s = LabelingSession(path, data.scores, assessor=_assessor())
            for _ in range(12):
                row = s.query()
                s.tell(row, int(data.target[row]))
            ready.touch()
            time.sleep(60)
        finally:
            os._exit(0)
    for _ in range(600):
        if ready.exists():
            break
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    for suffix in ("-wal", "-shm"):
        wal = tmp_path / f"s.sqlite{suffix}"
        if wal.exists():
            wal.unlink()
    with LabelingSession(path, data.scores) as s:
        assert s.n_labeled == 12


def test_spec_round_trip_and_foreign_classes(tmp_path, data):
    est = BayesianAccuracy(
        prior=np.array([[2.0, 1.0]] * 10), classes=tuple("abcdefghij"), missing_label=np.nan
    )
    a = ActiveAssessor(est, strategy=EpsilonGreedy(epsilon=0.3), compare=(1, 2), random_state=4)
    b = estimator_from_spec(json.loads(json.dumps(encode_estimator(a))))
    assert type(b) is ActiveAssessor and isinstance(b.strategy, EpsilonGreedy)
    assert b.compare == (1, 2) and b.strategy.epsilon == 0.3
    np.testing.assert_array_equal(b.estimator.prior, est.prior)
    assert np.isnan(b.estimator.missing_label) and b.estimator.classes == tuple("abcdefghij")
    # a class that is not skassess's is never imported
    for name in ("os.system", "subprocess.Popen", "builtins.eval"):
        with pytest.raises(SpecError, match="not one skassess rebuilds"):
            estimator_from_spec({"class": name, "params": {}})
    with pytest.raises(SpecError, match="not a stored parameter"):
        estimator_from_spec(
            {"class": "skassess.samplers.ActiveAssessor", "params": {"task": {"__reduce__": "x"}}}
        )

    class MyStrategy(QueryStrategy):
        def item_utilities(self, context, rng):
            return context.scores.max(axis=1)

    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor(strategy=MyStrategy())) as s:
        s.tell(s.query(), 0)
    with pytest.raises(SessionError, match="MyStrategy' is not one skassess rebuilds"):
        LabelingSession(path, data.scores)
    with LabelingSession(path, data.scores, assessor=_assessor(strategy=MyStrategy())) as s:
        assert s.n_labeled == 1


def test_a_blank_file_becomes_a_session_and_is_not_read_as_one(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with pytest.raises(SessionError, match="needs an assessor"):
        LabelingSession(path, data.scores)
    assert not path.exists()  # a session that cannot start leaves no file
    from skassess.session._store import SessionStore

    SessionStore(path).close()  # tables without settings, as a killed start leaves them
    with pytest.raises(SessionError, match="holds no session"):
        LabelingSession.read_events(path)
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        s.tell(s.query(), 0)
    assert len(LabelingSession.read_events(path)[0]) == 1
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(SessionError, match="no such session file"):
        LabelingSession.read_events(empty)


def test_copied_session_opens_elsewhere(tmp_path, data):
    """A file passed to a colleague (after close) opens and resumes there."""
    path = tmp_path / "s.sqlite"
    _session(path, data)
    other = tmp_path / "copy" / "s.sqlite"
    other.parent.mkdir()
    shutil.copy(path, other)
    with LabelingSession(other, data.scores) as s:
        assert s.n_labeled == 5 and len(s.assessor_.skipped_) == 1
    proc = subprocess.run(
        [sys.executable, "-m", "skassess", "export", str(other), "--scores", "/nonexistent.csv"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "not there" in proc.stderr


def test_migrating_a_crafted_file_even_when_trusted_builds_nothing_else(tmp_path):
    """The conversion's unpickler builds only skassess estimators and numpy arrays."""
    marker = tmp_path / "marker"
    path = tmp_path / "crafted.sqlite"
    _write_v1(path, _WritesMarker(marker), {})
    with pytest.raises(SessionError, match="names posix.system, which is neither a skassess"):
        migrate_session(path, trust_pickle=True)
    assert not marker.exists() and path.is_file()

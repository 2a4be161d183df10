"""The session file: SQLite in WAL mode, one transaction per label, one process at a time."""

import json
import sqlite3
import time
from pathlib import Path

from ..exceptions import SessionError, SessionLockedError

__all__ = ["FORMAT_VERSION", "SessionStore"]

FORMAT_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('label', 'skip')),
    row INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    label TEXT,
    step INTEGER NOT NULL,
    time REAL NOT NULL,
    cursor TEXT NOT NULL
);
"""


class SessionStore:
    """A session file, opened by one process.

    The file is locked for as long as it is open (SQLite's exclusive locking
    mode): a second process opening it gets :class:`SessionLockedError`. The
    lock dies with the process, so a killed session can be reopened at once.
    Each event (a label or a skip) is one committed transaction, synced to
    disk before :meth:`add` returns.

    Tables: ``meta`` (``format``, ``created``, ``settings``, ``data_sha256``,
    ``info`` as JSON) and ``events`` (``seq``, ``kind``, ``row``,
    ``item_id``, ``label`` as JSON, ``step``, ``time``, ``cursor``: the
    query generator's state after the event).
    """

    def __init__(self, path):
        self.path = Path(path)
        try:
            # timeout=0: a session open elsewhere is refused at once, not waited for.
            self._db = sqlite3.connect(self.path, timeout=0, isolation_level=None)
        except sqlite3.Error as exc:
            raise SessionError(f"{path}: cannot open the session file ({exc}).") from exc
        try:
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            self._db.execute("PRAGMA synchronous=FULL")
            # Take the lock now (exclusive mode keeps it until close).
            self._db.execute("BEGIN EXCLUSIVE")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            self._db.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise SessionLockedError(
                    f"{path}: the session is open in another process; close it there first."
                ) from exc
            raise SessionError(f"{path}: not a skassess session file ({exc}).") from exc
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise SessionError(f"{path}: not a skassess session file ({exc}).") from exc
        if mode.lower() != "wal":  # pragma: no cover - a file system without WAL support
            self._db.close()
            raise SessionError(f"{path}: the file system does not support SQLite's WAL mode.")
        fmt = self.get("format")
        if fmt is not None and int(fmt) != FORMAT_VERSION:
            self._db.close()
            raise SessionError(f"{path}: session format {fmt}; this skassess reads format "
                               f"{FORMAT_VERSION}.")

    # ------------------------------------------------------------------- meta
    @property
    def is_new(self):
        return self.get("format") is None

    def get(self, key, default=None):
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def create(self, **values):
        """Write the session's settings, in one transaction."""
        with self._transaction():
            self._db.execute("INSERT INTO meta VALUES ('format', ?)", (json.dumps(FORMAT_VERSION),))
            self._db.execute("INSERT INTO meta VALUES ('created', ?)", (json.dumps(time.time()),))
            self._db.executemany("INSERT INTO meta VALUES (?, ?)",
                                 [(k, json.dumps(v)) for k, v in values.items()])

    # ----------------------------------------------------------------- events
    def add(self, kind, row, item_id, label, step, cursor, when=None):
        """Commit one event; returns its time."""
        when = time.time() if when is None else when
        with self._transaction():
            self._db.execute(
                "INSERT INTO events (kind, row, item_id, label, step, time, cursor) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (kind, int(row), str(item_id), None if label is None else json.dumps(label),
                 int(step), when, json.dumps(cursor)),
            )
        return when

    def pop(self):
        """Delete the last event and return it (None if there is none)."""
        with self._transaction():
            last = self._db.execute(
                "SELECT seq, kind, row, item_id, label FROM events ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            if last is None:
                return None
            self._db.execute("DELETE FROM events WHERE seq = ?", (last[0],))
        return {"kind": last[1], "row": last[2], "item_id": last[3],
                "label": None if last[4] is None else json.loads(last[4])}

    def count(self, kind):
        """Number of events of one kind."""
        return self._db.execute("SELECT COUNT(*) FROM events WHERE kind = ?", (kind,)).fetchone()[0]

    def events(self):
        """Every event in order: dicts with kind, row, item_id, label, step, time, cursor."""
        rows = self._db.execute(
            "SELECT seq, kind, row, item_id, label, step, time, cursor FROM events ORDER BY seq"
        ).fetchall()
        return [
            {"seq": s, "kind": k, "row": r, "item_id": i,
             "label": None if lab is None else json.loads(lab), "step": st, "time": t,
             "cursor": json.loads(c)}
            for s, k, r, i, lab, st, t, c in rows
        ]

    def _transaction(self):
        return _Transaction(self._db)

    def close(self):
        self._db.close()


class _Transaction:
    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb):
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        return False

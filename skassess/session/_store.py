"""The session file: SQLite in WAL mode, one transaction per label, one process at a time.

Integrity: every event carries ``hash = sha256(previous hash + the event)``,
chained from a hash of the session's settings, and the ``meta`` table keeps
the number of events and the last hash (the *head*), written in the same
transaction as the event. On open the file is checked whole (SQLite's
``quick_check``, the settings, sequence numbers ``1..n`` without gaps, the
chain and the head), so random bytes, a duplicated, rewritten or deleted
event and a truncated file are each refused with one message, before
anything is written. The chain detects damage, not a forger: anyone can
recompute it.

Every commit is also copied into the main file (a checkpoint after each
transaction), so a session file whose ``-wal`` file is lost after a crash
still holds every committed label.
"""

import hashlib
import json
import os
import sqlite3
import stat
import time
from pathlib import Path

from ..exceptions import SessionError, SessionLockedError
from ..utils._validation import is_sha256
from ._stored_json import load_json

__all__ = ["FORMAT_VERSION", "SessionStore"]

FORMAT_VERSION = 3
#: Format 2 is format 3 without annotators: read, and written, as it is (a label that
#: names its annotator needs format 3: ``migrate_session``).
FORMATS = (2, 3)
#: The keys of ``meta`` that fix a session; their hash starts the event chain.
SETTINGS_KEYS = ("format", "created", "settings", "data_sha256", "assessor", "info")
EVENT_KINDS = ("label", "skip")

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
    cursor TEXT NOT NULL,
    hash TEXT NOT NULL,
    annotator TEXT
);
"""

_EVENT_COLUMNS = "seq, kind, row, item_id, label, step, time, cursor, hash"
#: The longest annotator name a session stores.
MAX_ANNOTATOR_CHARS = 200


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def settings_hash(meta):
    """The chain's start: a hash of the stored settings (their JSON texts)."""
    return hashlib.sha256(_canonical([[k, meta[k]] for k in SETTINGS_KEYS]).encode()).hexdigest()


def event_hash(previous, seq, kind, row, item_id, label, step, when, cursor, annotator=None):
    """``sha256(previous + event)``; ``label`` and ``cursor`` as their stored JSON texts.

    An event without an annotator hashes as format 2 wrote it.
    """
    fields = [seq, kind, row, item_id, label, step, repr(float(when)), cursor]
    body = _canonical(fields if annotator is None else [*fields, annotator])
    return hashlib.sha256((previous + body).encode()).hexdigest()


def _printable(text, limit=120):
    """A message from SQLite, safe to print (no control bytes), shortened."""
    text = "".join(c if c.isprintable() else "?" for c in str(text))
    return text if len(text) <= limit else text[:limit] + "..."


class SessionStore:
    """A session file, opened by one process.

    The file is locked for as long as it is open (SQLite's exclusive locking
    mode): a second process opening it gets :class:`SessionLockedError`. The
    lock dies with the process, so a killed session can be reopened at once.
    Each event (a label or a skip) is one committed transaction, synced to
    disk and copied into the main file before :meth:`add` returns.

    Tables: ``meta`` (``format``, ``created``, ``settings``, ``data_sha256``,
    ``assessor`` (the assessor's class and parameters), ``info`` and
    ``head``, as JSON) and ``events`` (``seq``, ``kind``, ``row``,
    ``item_id``, ``label`` as JSON, ``step``, ``time``, ``cursor``: the
    query generator's state after the event, ``hash``).

    Parameters
    ----------
    path : path-like
    create : bool, default=True
        Whether a missing or empty file becomes a new session file; False
        refuses it (reading a session).

    Raises
    ------
    SessionError
        If the file is not a session file, is damaged, or has another format
        (format 1 stored a pickle and is refused: see
        :func:`~skassess.session.migrate_session`).
    """

    def __init__(self, path, *, create=True, read_only=False):
        self.path = Path(path)
        self.read_only = read_only
        _check_kind(self.path)
        existed = self.path.is_file() and self.path.stat().st_size > 0
        #: Whether this open made the file (a session that then fails to start removes it).
        self.made_file = not self.path.exists()
        if not existed and (read_only or not create):
            raise SessionError(f"{path}: no such session file.")
        if not read_only:
            self._check_writable(existed)
        try:
            self._db = self._connect()
        except sqlite3.Error as exc:
            raise SessionError(
                f"{path}: cannot open the session file ({_printable(exc)})."
            ) from exc
        try:
            blank = self._open(existed, create)
        except SessionError:
            self._db.close()
            raise
        except sqlite3.OperationalError as exc:
            self._db.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise SessionLockedError(
                    f"{path}: the session is open in another process; close it there first."
                ) from exc
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise self._read_only_error(exc) from exc
            raise self._unreadable(exc) from exc
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if "malformed" in str(exc):
                raise self._damaged("SQLite finds it malformed (cut short or overwritten)") from exc
            raise self._unreadable(exc) from exc
        self._meta = {} if blank else self._read_meta()

    def _connect(self):
        # timeout=0: a session open elsewhere is refused at once, not waited for. Any one
        # thread may use the store (a server's workers take turns, under its lock).
        if not self.read_only or self._writable():
            return sqlite3.connect(
                self.path, timeout=0, isolation_level=None, check_same_thread=False
            )
        # A file that cannot be written (an immutable file, a read-only mount) cannot get
        # the shared-memory file WAL readers use; every commit is in the main file.
        uri = self.path.resolve().as_uri()
        return sqlite3.connect(
            f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )

    def _writable(self):
        folder = self.path.parent
        return os.access(self.path, os.W_OK) and os.access(folder if str(folder) else ".", os.W_OK)

    def _check_writable(self, existed):
        """Refuse, with the reason, a session file that cannot be written."""
        if existed and not os.access(self.path, os.W_OK):
            raise self._read_only_error("the file is not writable")
        folder = self.path.parent
        if not os.access(folder if str(folder) else ".", os.W_OK):
            raise self._read_only_error(f"its folder {folder} is not writable")

    def _read_only_error(self, why):
        return SessionError(
            f"{self.path}: the session file is read-only ({_printable(why, 80)}); labeling "
            "writes every answer to it. Make it writable, or copy it and label the copy "
            "(export and report read it as it is)."
        )

    def _open(self, existed, create):
        """Check the file and, unless read-only, set it up for writing; True if blank."""
        self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
        if self.read_only:
            self._db.execute("PRAGMA query_only=1")
            return self._check(False)
        # Reads only: a damaged file is refused unchanged. A file whose start
        # never finished (no tables, or tables without settings or events) holds
        # nothing to lose.
        try:
            blank = not existed or self._check(create)
        except sqlite3.DatabaseError as exc:
            if "locked" in str(exc) or "busy" in str(exc) or "not a database" in str(exc):
                raise
            raise self._damaged(f"its data cannot be read ({_printable(exc, 80)})") from exc
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":  # pragma: no cover - a file system without WAL support
            raise SessionError(f"{self.path}: the file system does not support SQLite's WAL mode.")
        self._db.execute("PRAGMA synchronous=FULL")
        # Checkpoint after every commit: the main file holds every label.
        self._db.execute("PRAGMA wal_autocheckpoint=1")
        # Take the lock now (exclusive mode keeps it until close).
        self._db.execute("BEGIN EXCLUSIVE")
        if blank:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
        self._db.execute("COMMIT")
        return blank

    # ---------------------------------------------------------------- checking
    def _unreadable(self, exc):
        """The error of a file SQLite opens but cannot read: damaged if it holds a
        session's tables, else not a session file."""
        if self._has_session_tables():
            return self._damaged(f"its data cannot be read ({_printable(exc)})")
        return SessionError(f"{self.path}: not a skassess session file ({_printable(exc)}).")

    def _has_session_tables(self):
        """Whether the file's schema names a session's tables (read only, nothing written)."""
        try:
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            db = sqlite3.connect(uri, uri=True, timeout=0)
            try:
                rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                return {"meta", "events"} <= {row[0] for row in rows}
            finally:
                db.close()
        except sqlite3.Error:
            return False

    def _damaged(self, what):
        return SessionError(
            f"{self.path}: the session file is damaged: {what}. It is not read; restore it "
            "from a copy, or start a new session file."
        )

    def _check(self, create):
        """Refuse a file that is not a whole, intact session of this format.

        Returns True for a blank file (tables without settings or events) that
        may become a new session (``create``).
        """
        db = self._db
        problems = [r[0] for r in db.execute("PRAGMA quick_check(5)").fetchall()]
        if problems != ["ok"]:
            raise self._damaged(
                f"SQLite's integrity check failed ({_printable('; '.join(problems))})"
            )
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and create:
            return True  # a database the run that created it left empty (killed at once)
        if not {"meta", "events"} <= tables:
            raise SessionError(
                f"{self.path}: not a skassess session file (no meta and events tables)."
            )
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        n_events = db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        if not meta and n_events == 0:
            if create:
                return True
            raise SessionError(
                f"{self.path}: holds no session (the run that created it "
                "stopped before writing its settings)."
            )
        if "format" not in meta:
            raise self._damaged(
                "its settings are missing (the file was cut short, or "
                "created by a run that never finished starting)"
            )
        fmt = self._json(meta["format"], "the format")
        if not isinstance(fmt, int) or isinstance(fmt, bool):
            raise self._damaged("its format is not a number")
        if fmt == 1:
            raise SessionError(
                f"{self.path}: a session file of format 1, which stores its assessor as a "
                "Python pickle; loading a pickle can run any code the file holds, so skassess "
                "no longer opens it. If you made this file yourself (trust it), convert it "
                f"once with `skassess migrate {self.path} --trust-pickle` (or "
                "skassess.session.migrate_session(path, trust_pickle=True)); otherwise start "
                "a new session file."
            )
        if fmt not in FORMATS:
            raise SessionError(
                f"{self.path}: session format {fmt!r}; this skassess reads formats "
                f"{FORMATS[0]} to {FORMATS[-1]}."
            )
        columns = {r[1] for r in db.execute("PRAGMA table_info(events)")}
        if ("annotator" in columns) != (fmt >= 3):
            raise self._damaged(f"its events table is not the one of format {fmt}")
        missing = [k for k in (*SETTINGS_KEYS, "head") if k not in meta]
        if missing:
            raise self._damaged(f"the settings lack {', '.join(missing)}")
        head = self._json(meta["head"], "the head")
        if not (isinstance(head, list) and len(head) == 2 and isinstance(head[0], int)):
            raise self._damaged("its head record is not readable")
        values = {k: self._json(meta[k], f"the settings' {k}") for k in SETTINGS_KEYS}
        shapes = {
            "created": isinstance(values["created"], int | float)
            and 0 <= values["created"] <= LATEST_TIME,
            "settings": isinstance(values["settings"], dict)
            and all(isinstance(v, str) for v in values["settings"].values()),
            "data_sha256": is_sha256(values["data_sha256"]),
            "assessor": isinstance(values["assessor"], dict),
            "info": isinstance(values["info"], dict),
        }
        wrong = [k for k, ok in shapes.items() if not ok]
        if wrong:
            raise self._damaged(f"the settings' {wrong[0]} is not of its kind")
        previous = settings_hash(meta)
        expected_seq, labeled = 1, {}
        for seq, kind, row, item_id, label, step, when, cursor, stored, annotator in db.execute(
            f"SELECT {_EVENT_COLUMNS}, {self._annotator_column(fmt)} FROM events ORDER BY seq"
        ):
            if seq != expected_seq:
                raise self._damaged(
                    f"event {expected_seq} is missing (the next stored event is {seq})"
                )
            if (
                not isinstance(row, int)
                or not isinstance(step, int)
                or not isinstance(when, float)
                or kind not in EVENT_KINDS
            ):
                raise self._damaged(f"event {seq} has values of the wrong type")
            if label is not None and not isinstance(
                self._json(label, f"event {seq}'s label"), int | float | str | bool
            ):
                raise self._damaged(f"event {seq}'s label is not one value")
            if kind == "label" and label is None:
                raise self._damaged(f"event {seq} is a label without one")
            if not isinstance(self._json(cursor, f"event {seq}'s cursor"), dict):
                raise self._damaged(f"event {seq}'s cursor is not a record")
            if row < 0:
                raise self._damaged(f"event {seq} names row {row}")
            if not 0 <= when <= LATEST_TIME:  # NaN too
                raise self._damaged(f"event {seq}'s time, {when!r}, is not a time")
            if annotator is not None and (
                kind != "label"
                or not isinstance(annotator, str)
                or not 0 < len(annotator) <= MAX_ANNOTATOR_CHARS
            ):
                raise self._damaged(f"event {seq}'s annotator is not a name")
            digest = event_hash(
                previous, seq, kind, row, item_id, label, step, when, cursor, annotator
            )
            if digest != stored:
                raise self._damaged(
                    f"event {seq} (a {kind} of item {_printable(item_id, 40)!r}) does not match "
                    "its checksum: it was changed, copied or inserted after it was written"
                )
            if kind == "label":
                # A row is labeled once, or once by each annotator (repeats).
                names = labeled.setdefault(row, set())
                if names and (annotator is None or None in names or annotator in names):
                    raise self._damaged(f"event {seq} labels row {row} a second time")
                names.add(annotator)
            previous, expected_seq = digest, expected_seq + 1
        if head != [expected_seq - 1, previous]:
            raise self._damaged(
                f"it holds {expected_seq - 1} events but was last written with {head[0]} "
                "(events were deleted, or the file is an older copy)"
            )
        return False

    @staticmethod
    def _annotator_column(fmt):
        return "annotator" if fmt >= 3 else "NULL"

    @property
    def format(self):
        """The file's format (2: no annotators; 3: labels may name their annotator)."""
        return json.loads(self._meta["format"]) if "format" in self._meta else FORMAT_VERSION

    def _json(self, text, what):
        try:
            return load_json(text, what)
        except ValueError as exc:
            raise self._damaged(str(exc)) from exc

    def _read_meta(self):
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    # ------------------------------------------------------------------- meta
    @property
    def is_new(self):
        return "format" not in self._meta

    def get(self, key, default=None):
        text = self._meta.get(key)
        return default if text is None else json.loads(text)

    def create(self, *, created=None, **values):
        """Write the session's settings, in one transaction."""
        created = time.time() if created is None else created
        meta = {"format": _canonical(FORMAT_VERSION), "created": _canonical(created)}
        meta.update({k: _canonical(v) for k, v in values.items()})
        missing = [k for k in SETTINGS_KEYS if k not in meta]
        if missing:
            raise ValueError(f"A new session needs {missing}.")
        meta["head"] = _canonical([0, settings_hash(meta)])
        with self._transaction("the session's settings"):
            self._db.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
        self._meta = meta

    # ----------------------------------------------------------------- events
    def _head(self):
        return json.loads(self._meta["head"])

    def _set_head(self, n, digest):
        text = _canonical([n, digest])
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'head'", (text,))
        return text

    def add(self, kind, row, item_id, label, step, cursor, when=None, annotator=None):
        """Commit one event (a label may name its annotator); returns its time."""
        if annotator is not None and self.format < 3:
            raise SessionError(
                f"{self.path}: a session file of format {self.format}, which records no "
                f"annotators; convert it once with `skassess migrate {self.path}` (or "
                "skassess.session.migrate_session(path)) to label with annotators."
            )
        when = float(time.time() if when is None else when)
        n, previous = self._head()
        seq = n + 1
        label_text = None if label is None else _canonical(label)
        cursor_text = _canonical(cursor)
        values = [seq, kind, int(row), str(item_id), label_text, int(step), when, cursor_text]
        digest = event_hash(previous, *values, annotator)
        columns, values = f"{_EVENT_COLUMNS}", [*values, digest]
        if annotator is not None:
            columns, values = f"{columns}, annotator", [*values, annotator]
        with self._transaction(f"this {kind}"):
            marks = ", ".join("?" * len(values))
            self._db.execute(f"INSERT INTO events ({columns}) VALUES ({marks})", values)
            head = self._set_head(seq, digest)
        self._meta["head"] = head
        return when

    def pop(self):
        """Delete the last event and return it (None if there is none)."""
        n, _ = self._head()
        if n == 0:
            return None
        with self._transaction("the undo"):
            last = self._db.execute(
                "SELECT seq, kind, row, item_id, label, "
                f"{self._annotator_column(self.format)} FROM events WHERE seq = ?",
                (n,),
            ).fetchone()
            before = self._db.execute("SELECT hash FROM events WHERE seq = ?", (n - 1,)).fetchone()
            previous = before[0] if before else settings_hash(self._meta)
            self._db.execute("DELETE FROM events WHERE seq = ?", (n,))
            head = self._set_head(n - 1, previous)
        self._meta["head"] = head
        return {
            "kind": last[1],
            "row": last[2],
            "item_id": last[3],
            "label": None if last[4] is None else json.loads(last[4]),
            "annotator": last[5],
        }

    def count(self, kind):
        """Number of events of one kind."""
        return self._db.execute("SELECT COUNT(*) FROM events WHERE kind = ?", (kind,)).fetchone()[0]

    def events(self):
        """Every event in order: dicts with kind, row, item_id, label, step, time, cursor
        and annotator (None: not named)."""
        rows = self._db.execute(
            "SELECT seq, kind, row, item_id, label, step, time, cursor, "
            f"{self._annotator_column(self.format)} FROM events ORDER BY seq"
        ).fetchall()
        return [
            {
                "seq": s,
                "kind": k,
                "row": r,
                "item_id": i,
                "label": None if lab is None else json.loads(lab),
                "step": st,
                "time": t,
                "cursor": json.loads(c),
                "annotator": a,
            }
            for s, k, r, i, lab, st, t, c, a in rows
        ]

    def _transaction(self, what):
        return _Transaction(self, what)

    @property
    def connection(self):
        """The SQLite connection to the file."""
        return self._db

    def write_error(self, exc, what):
        """The one-line error of a write SQLite refused (a full disk, a size limit)."""
        n = self._head()[0] if "head" in self._meta else 0
        reason = str(exc)
        if "full" in reason:
            why = "the disk is full"
        elif "I/O" in reason:
            why = "the disk refused the write (full, or the file at a size limit)"
        else:
            why = f"the write failed ({_printable(exc, 80)})"
        return SessionError(
            f"{self.path}: {why}: {what} was not recorded; the {n} events before it are "
            "kept. Free some space and run the same command to resume."
        )

    def close(self):
        self._db.close()

    def discard(self):
        """Close and delete a file this open made (with its -wal and -shm files)."""
        self.close()
        if self.made_file:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)


#: The latest time a session records, in seconds since 1970 (the end of the year 9999).
LATEST_TIME = 253402300799.0

_SPECIAL_FILES = {
    stat.S_ISDIR: "a folder",
    stat.S_ISFIFO: "a FIFO (named pipe)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def _check_kind(path):
    """Refuse a session path that is not a regular file (or a link to one), or missing."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise SessionError(
                f"{path}: a symbolic link to {_printable(os.readlink(path), 200)!r}, which "
                "does not exist; a session file is a regular file."
            ) from None
        return
    except OSError as exc:
        raise SessionError(f"{path}: cannot read the session file ({_printable(exc)}).") from exc
    for test, kind in _SPECIAL_FILES.items():
        if test(mode):
            link = " (through a symbolic link)" if path.is_symlink() else ""
            raise SessionError(f"{path}: {kind}{link}, not a session file; name a regular file.")


class _Transaction:
    """One write transaction; a write SQLite refuses is rolled back and named."""

    def __init__(self, store, what):
        self.store, self.db, self.what = store, store.connection, what

    def __enter__(self):
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            raise self.store.write_error(exc, self.what) from exc
        return self.db

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
                return False
            except sqlite3.Error as error:
                exc = error
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and "locked" not in str(exc):
            raise self.store.write_error(exc, self.what) from exc
        return False

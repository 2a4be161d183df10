"""What a labeling server keeps besides the labels: who holds which item, and its key.

Both live in the session file, outside the labels' checksum chain, in tables
of their own: ``web_reservations`` (one open item per annotator) and
``web_secret`` (the key that signs the annotators' cookies and forms). A
server killed and started again therefore shows each annotator the item it
showed before, and its cookies stay valid. Neither table is a label: the
chain, and every check of it, ignore them.
"""

import hashlib
import hmac
import secrets
import sqlite3

__all__ = ["WebState"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS web_reservations (
    annotator TEXT PRIMARY KEY,
    row INTEGER NOT NULL,
    nonce TEXT NOT NULL,
    repeat INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS web_secret (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    key TEXT NOT NULL
);
"""


class WebState:
    """The reservations and the signing key of a labeling server, in its session file.

    Parameters
    ----------
    connection : sqlite3.Connection
        The session file's connection (the server's one writer).
    """

    def __init__(self, connection):
        self.db = connection
        try:
            self.db.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self.db.execute(statement)
            row = self.db.execute("SELECT key FROM web_secret WHERE id = 1").fetchone()
            if row is None or not _is_key(row[0]):
                key = secrets.token_hex(32)
                self.db.execute("INSERT OR REPLACE INTO web_secret VALUES (1, ?)", (key,))
            else:
                key = row[0]
            self.db.execute("COMMIT")
        except sqlite3.Error:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self._key = bytes.fromhex(key)
        self.reserved = {}
        for annotator, row, nonce, repeat in self.db.execute(
            "SELECT annotator, row, nonce, repeat FROM web_reservations"
        ):
            if isinstance(annotator, str) and isinstance(row, int) and isinstance(nonce, str):
                self.reserved[annotator] = (row, nonce, bool(repeat))

    # ----------------------------------------------------------------- signing
    def sign(self, *parts):
        """An HMAC-SHA256 of the parts (hex), with the server's key."""
        message = "\x1f".join(str(p) for p in parts).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def verify(self, signature, *parts):
        """Whether ``signature`` is :meth:`sign` of the parts (in constant time)."""
        return isinstance(signature, str) and hmac.compare_digest(signature, self.sign(*parts))

    # ------------------------------------------------------------ reservations
    def reserve(self, annotator, row, repeat):
        """Hold ``row`` for ``annotator`` (a new nonce); returns the nonce."""
        nonce = secrets.token_hex(8)
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO web_reservations VALUES (?, ?, ?, ?)",
                (annotator, int(row), nonce, int(repeat)),
            )
        self.reserved[annotator] = (int(row), nonce, bool(repeat))
        return nonce

    def release(self, annotator):
        """Free ``annotator``'s item (labeled, skipped, or given up)."""
        with self.db:
            self.db.execute("DELETE FROM web_reservations WHERE annotator = ?", (annotator,))
        self.reserved.pop(annotator, None)

    def held_by_others(self, annotator):
        """The rows other annotators hold."""
        return {row for name, (row, _, _) in self.reserved.items() if name != annotator}


def _is_key(text):
    return isinstance(text, str) and len(text) == 64 and all(c in "0123456789abcdef" for c in text)

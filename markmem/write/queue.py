"""The compile queue in ``.markmem/state.db`` (local, not committed, recoverable from raw/).

A row names a raw line by file and byte range. Losing the database loses nothing:
:func:`recover` re-enqueues every raw line past the per-user compile checkpoint.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from ..model import RawEntry
from ..store import raw
from ..store.codec import Codec
from ..store.raw import Located

# ``seq`` is the rowid without AUTOINCREMENT: a new row still gets max(seq) + 1, above every row
# queued, so ``take`` stays first in, first out; AUTOINCREMENT only added a write to
# ``sqlite_sequence`` per row (~40% of an add()'s queue insert). A state.db made before keeps it.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue (
  seq INTEGER PRIMARY KEY,
  raw_id TEXT NOT NULL UNIQUE,
  user_id TEXT NOT NULL,
  path TEXT NOT NULL,
  start INTEGER NOT NULL,
  "end" INTEGER NOT NULL
);
"""


class Queue:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = str(path)  # every add() checks it is still there: os.path, not pathlib
        self._local = threading.local()

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None or not os.path.exists(self._file):
            if db is not None:
                db.close()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            self._local.db = db
        return db

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def enqueue(self, located: Sequence[Located]) -> None:
        rows = [(loc.raw_id, loc.user_id, loc.path, loc.start, loc.end) for loc in located]
        db = self._db()
        if len(rows) == 1:  # autocommit: one statement, one commit
            db.execute('INSERT OR IGNORE INTO queue(raw_id, user_id, path, start, "end") VALUES (?,?,?,?,?)', rows[0])
            return
        db.execute("BEGIN IMMEDIATE")  # one commit for the list, not one per row
        try:
            db.executemany('INSERT OR IGNORE INTO queue(raw_id, user_id, path, start, "end") VALUES (?,?,?,?,?)',
                           rows)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def take(self, limit: int) -> list[Located]:
        cur = self._db().execute(
            'SELECT path, start, "end", raw_id, user_id FROM queue ORDER BY seq LIMIT ?', (limit,)
        )
        return [Located(*row) for row in cur.fetchall()]

    def done(self, raw_ids: Sequence[str]) -> None:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        db.executemany("DELETE FROM queue WHERE raw_id = ?", [(r,) for r in raw_ids])
        db.execute("COMMIT")

    def drop_user(self, user_id: str) -> int:
        """Delete the user's rows with their bytes zeroed, and truncate the WAL (it held the user id)."""
        db = self._db()
        db.execute("PRAGMA secure_delete=ON")
        try:
            n = db.execute("DELETE FROM queue WHERE user_id = ?", (user_id,)).rowcount
        finally:
            db.execute("PRAGMA secure_delete=OFF")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return n

    def pending(self, user_id: str | None = None) -> int:
        if user_id is None:
            return int(self._db().execute("SELECT count(*) FROM queue").fetchone()[0])
        q = "SELECT count(*) FROM queue WHERE user_id = ?"
        return int(self._db().execute(q, (user_id,)).fetchone()[0])


def recover(root: Path, queue: Queue, codec: Codec) -> list[RawEntry]:
    """Enqueue raw lines past each user's checkpoint and return their entries. Caller holds the
    writer lock."""
    found: list[Located] = []
    entries: list[RawEntry] = []
    checkpoints: dict[str, dict[str, int]] = {}
    for uid, rel in raw.iter_files(root):
        if uid not in checkpoints:  # once per user (setdefault would read it once per file)
            checkpoints[uid] = raw.read_checkpoint(root, uid)
        cp = checkpoints[uid]
        start = cp.get(rel, 0)
        if (root / rel).stat().st_size <= start:
            continue
        for entry, s, e in raw.read_range(root, rel, start, None, codec, uid):
            found.append(Located(rel, s, e, entry.id, uid))
            entries.append(entry)
    if found:
        queue.enqueue(found)
    return entries

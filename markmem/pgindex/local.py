"""Each process's copies of users' PostgreSQL rows: one SQLite cache file per user.

A copy holds exactly what a split SQLite cache holds for the user (``index.cache``'s rows, FTS5,
neighbour context, vectors), built by the same code from the PostgreSQL rows, so the read path
(``read.search``, ``index.lexicon``, ``index.vectors``, ``read.pack``) runs on it unchanged and
ranks bit for bit as the SQLite backend does. Every search reads the user's generation row (one
round trip, ``_GEN``) and brings the copy up to date: a new ``born`` or ``rev`` rebuilds it, new
``added`` fetches the turns past its ``seq`` (``Cache.upsert_raw``: the neighbour links and FTS
rows as ``add()`` writes them), ``touch`` applies turns changed in place, ``claims_rev`` reloads
pages and claims. Vectors the read path embedded are written back (``sync.put_vectors``).

Copies live in a temporary folder per process and database (in ``/dev/shm`` when there is
one: in memory; deleted at exit); past
``MAX_COPIES`` users the least recently searched copy is deleted. A user deleted from
PostgreSQL loses the copy at their next search here, or at the next sweep (every
``SWEEP_SECONDS``, of every copy), whichever comes first.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
import time
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..index import lexicon, vecfile
from ..index import vectors as vector_index
from ..index.cache import _CLAIM_SQL, _PAGE_SQL, _RAW_SQL, Cache, _raw_row
from . import sync

MAX_COPIES = 4096  # users whose copies are kept per process
MAX_OPEN = 48  # copies with open SQLite connections
SWEEP_SECONDS = 10.0
_STRIPES = 64  # searches of one user in one process take turns (a copy is updated in place)
PUSH_AT = 32  # vectors embedded in a copy are written back to PostgreSQL this many at a time

Gen = tuple[int, int, int, int, int]  # born, rev, added, touch, claims_rev
_T_COLS = "t.id, t.seq, " + ", ".join(f"t.{c}" for c in sync.TURN_COLS)
# the generation row and the turns past the copy's seq, in one round trip
_GEN = ("SELECT (SELECT value FROM mm_meta WHERE key = 'epoch'), g.born, g.rev, g.added, g.touch, g.claims_rev, "
        f"{_T_COLS} FROM (SELECT 1) AS one LEFT JOIN mm_user_gen g ON g.user_id = %s "
        "LEFT JOIN mm_turns t ON t.user_id = g.user_id AND t.seq > %s ORDER BY t.seq")
_NONE = 2**62  # a seq past every turn
_TURNS = "SELECT id, seq, " + ", ".join(sync.TURN_COLS) + " FROM mm_turns WHERE user_id = %s"
_VECS = "SELECT kind, id, user_id, model, hash, vec FROM mm_vectors WHERE user_id = %s"  # binary: _vectors()
_VEC_SQL = "INSERT OR REPLACE INTO vectors(kind, id, user_id, model, hash, vec) VALUES (?,?,?,?,?,?)"


@dataclass
class Copy:
    path: Path
    gen: Gen
    seq: int = 0  # the highest turn seq loaded
    vec_pushed: int = 0  # the highest local vectors rowid PostgreSQL has
    cache: Cache | None = None

    def open(self) -> Cache:
        if self.cache is None:
            self.cache = Cache(self.path)
        return self.cache


class Store:
    """The copies of one database (by its ``mm_meta`` epoch), in one temporary folder."""

    def __init__(self, epoch: str) -> None:
        self.epoch = epoch
        base = _memory_folder()
        _remove_orphans(Path(base or tempfile.gettempdir()))
        self.folder = Path(tempfile.mkdtemp(prefix=f"markmem-pgindex-{os.getpid()}-", dir=base))
        atexit.register(shutil.rmtree, self.folder, True)
        self.copies: OrderedDict[str, Copy] = OrderedDict()
        self.lock = threading.Lock()
        self.names = itertools.count(1)
        self.swept = time.monotonic()
        self.empty = Cache(self.folder / "empty.db")
        self.empty.create()

    def stripe(self, user_id: str) -> threading.Lock:
        return _stripe(user_id)

    def keep(self, user_id: str, copy: Copy) -> None:
        """Remember a copy as the most recent; let the oldest go past the limits (never one whose
        user is being searched)."""
        with self.lock:
            self.copies[user_id] = copy
            self.copies.move_to_end(user_id)
            users = list(self.copies)
        for uid in users[:max(0, len(users) - MAX_COPIES)]:
            self._let_go(uid, delete=True)
        for uid in users[max(0, len(users) - MAX_COPIES):max(0, len(users) - MAX_OPEN)]:
            self._let_go(uid, delete=False)

    def _let_go(self, user_id: str, delete: bool) -> None:
        lock = self.stripe(user_id)
        if not lock.acquire(blocking=False):
            return
        try:
            with self.lock:
                copy = self.copies.pop(user_id, None) if delete else self.copies.get(user_id)
            if copy is not None and (delete or copy.cache is not None):
                _close(copy, delete, user_id)
        finally:
            lock.release()

    def drop(self, user_id: str) -> None:
        """Delete the user's copy and what was derived from it in memory (call under the stripe)."""
        with self.lock:
            copy = self.copies.pop(user_id, None)
        if copy is not None:
            _close(copy, True, user_id)
            lexicon.forget_user(user_id)
            vector_index.forget_user(user_id)

    def sweep(self, conn: Any) -> None:
        """Drop the copies of users deleted (or deleted and added again) in PostgreSQL."""
        self.swept = time.monotonic()
        with self.lock:
            born = {u: c.gen[0] for u, c in self.copies.items()}
        if not born:
            return
        live = dict(conn.execute("SELECT user_id, born FROM mm_user_gen WHERE user_id = ANY(%s)",
                                 (list(born),)).fetchall())
        for uid, b in born.items():
            if live.get(uid) != b:
                with self.stripe(uid):
                    self.drop(uid)


def _memory_folder() -> str | None:
    """``/dev/shm`` when there is one (the copies then live in memory: a user's words never reach
    the replica's disk), else the temporary folder."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def _remove_orphans(base: Path) -> None:
    """Delete the copies of processes that died without cleaning up (``kill -9``)."""
    for folder in base.glob("markmem-pgindex-*-*"):
        pid = folder.name.split("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _close(copy: Copy, delete: bool, user_id: str) -> None:
    cache, copy.cache = copy.cache, None
    if cache is not None:
        lexicon.forget(cache)
        vector_index.forget(cache)
        cache.retire()
    if delete:
        for suffix in ("", "-wal", "-shm"):
            Path(str(copy.path) + suffix).unlink(missing_ok=True)
        vecfile.forget_user_files(copy.path, user_id)  # what searches saved beside it (matrix, lexicon, graph)


_STORES: dict[str, Store] = {}
_STORES_LOCK = threading.Lock()


def _store(epoch: str) -> Store:
    with _STORES_LOCK:
        store = _STORES.get(epoch)
        if store is None:
            store = _STORES[epoch] = Store(epoch)
        return store


_LOCKS = [threading.Lock() for _ in range(_STRIPES)]
_EPOCHS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()  # connection -> its database's epoch


def _stripe(user_id: str) -> threading.Lock:
    """The user's lock. A stable hash (not ``hash()``, which changes per process): two users who
    share a stripe wait for each other, and a copy whose stripe is held is not let go until later,
    so which users share one must not change from run to run."""
    return _LOCKS[zlib.crc32(user_id.encode("utf-8")) % _STRIPES]


@contextmanager
def opened(conn: Any, user_id: str) -> Iterator[tuple[Cache, Copy | None, Store]]:
    """The user's up-to-date copy (the empty cache for a user with no rows), held for one search."""
    store = _STORES.get(_EPOCHS.get(conn, ""))
    if store is not None and time.monotonic() - store.swept > SWEEP_SECONDS:
        store.sweep(conn)
    with _stripe(user_id):
        copy = store.copies.get(user_id) if store is not None else None
        rows = conn.execute(_GEN, (user_id, _NONE if copy is None else copy.seq)).fetchall()
        epoch = str(rows[0][0])
        fetched: list[Any] | None = [r[6:] for r in rows if r[6] is not None]
        if store is None or store.epoch != epoch:  # this connection's first search (or another database)
            _EPOCHS[conn] = epoch
            store, fetched = _store(epoch), None
        if rows[0][1] is None:
            store.drop(user_id)
            yield store.empty, None, store
            return
        gen = tuple(int(v) for v in rows[0][1:6])
        copy = refresh(conn, store, user_id, gen, fetched)  # type: ignore[arg-type]
        yield copy.open(), copy, store


def refresh(conn: Any, store: Store, user_id: str, gen: Gen, fetched: list[Any] | None = None) -> Copy:
    """The user's copy brought to ``gen`` (call under the user's stripe); ``fetched``: the turns
    past the copy's seq, when the caller has read them."""
    with store.lock:
        copy = store.copies.get(user_id)
    if copy is not None and copy.gen[:2] == gen[:2]:
        cache = copy.open()
        if copy.gen[2] != gen[2] or fetched:
            _new_turns(conn, cache, copy, user_id, fetched)
        ok = copy.gen[3] == gen[3] or _touched(conn, cache, copy, user_id)
        if ok:
            if copy.gen[4] != gen[4]:
                _claims(conn, cache, user_id)
            copy.gen = gen
            store.keep(user_id, copy)
            return copy
    if copy is not None:
        store.drop(user_id)
    copy = _build(conn, store, user_id, gen)
    store.keep(user_id, copy)
    return copy


def _build(conn: Any, store: Store, user_id: str, gen: Gen) -> Copy:
    copy = Copy(store.folder / f"{user_id}.{next(store.names)}.db", gen)
    cache = copy.open()
    cache.create_bulk()
    turns = conn.execute(_TURNS + " ORDER BY seq", (user_id,)).fetchall()
    pages = conn.execute(f"SELECT {sync.PAGE_COLS} FROM mm_pages WHERE user_id = %s", (user_id,)).fetchall()
    claims = conn.execute(f"SELECT {sync.CLAIM_COLS} FROM mm_claims WHERE user_id = %s ORDER BY pos",
                          (user_id,)).fetchall()
    vecs = _vectors(conn, _VECS, (user_id,))
    with cache.tx() as db:
        db.executemany(_RAW_SQL, [_raw_row(sync.entry_of(user_id, r[0], r[2:]), r[13]) for r in turns])
        cache.link_all()
        db.executemany(_PAGE_SQL, pages)
        db.executemany(_CLAIM_SQL, claims)
        db.executemany(_VEC_SQL, [(*v[:5], sync.vec_blob(v[5])) for v in vecs])
    cache.finish_bulk()
    copy.seq = max((int(r[1]) for r in turns), default=0)
    copy.vec_pushed = _top_vector(cache)
    return copy


def _vectors(conn: Any, sql: str, params: tuple[Any, ...]) -> list[Any]:
    """Vector rows in binary form (pgvector's: a 4-byte header, then big-endian float32s)."""
    with conn.cursor(binary=True) as cur:
        return cur.execute(sql, params).fetchall()


def _top_vector(cache: Cache) -> int:
    return int(cache.db.execute("SELECT coalesce(max(rowid), 0) FROM vectors").fetchone()[0])


def _new_turns(conn: Any, cache: Cache, copy: Copy, user_id: str, fetched: list[Any] | None) -> None:
    """Turns added since the copy's ``seq``, written as ``add()`` writes them to a SQLite cache
    (their vectors are embedded by the next search, as a SQLite cache's are)."""
    rows = fetched if fetched is not None else conn.execute(
        _TURNS + " AND seq > %s ORDER BY seq", (user_id, copy.seq)).fetchall()
    if not rows:
        return
    with cache.tx():
        cache.upsert_raw([sync.entry_of(user_id, r[0], r[2:]) for r in rows])
        cache.mark_compiled([(user_id, r[0]) for r in rows if r[13]])
    copy.seq = max(int(r[1]) for r in rows)


_INDEXED = ("role", "speaker", "agent_id", "run_id", "content", "body", "occurred_at", "recorded_at", "valid_at",
            "metadata", "quarantined")  # a change here reshapes the FTS rows or links: rebuild


def _touched(conn: Any, cache: Cache, copy: Copy, user_id: str) -> bool:
    """Apply turns changed in place since the copy's ``touch``; False when one changed more than
    its file and compile state (the caller rebuilds the copy)."""
    rows = conn.execute(_TURNS + " AND touched > %s", (user_id, copy.gen[3])).fetchall()
    if not rows:
        return True
    marks = ",".join("?" * len(rows))
    local = {r["id"]: r for r in cache.rows(f"SELECT * FROM raw WHERE id IN ({marks})", [r[0] for r in rows])}
    updates = []
    for r in rows:
        mine = local.get(r[0])
        if mine is None:
            return False
        want = sync.entry_of(user_id, r[0], r[2:])
        row = _raw_row(want, r[13])
        if row[3:14] != tuple(mine[c] for c in _INDEXED):
            return False
        updates.append((want.path, int(r[13]), r[0]))
    with cache.tx() as db:
        db.executemany("UPDATE raw SET path = ?, compiled = ? WHERE id = ?", updates)
    return True


def _claims(conn: Any, cache: Cache, user_id: str) -> None:
    """The user's pages, claims and claim vectors, reloaded."""
    pages = conn.execute(f"SELECT {sync.PAGE_COLS} FROM mm_pages WHERE user_id = %s", (user_id,)).fetchall()
    claims = conn.execute(f"SELECT {sync.CLAIM_COLS} FROM mm_claims WHERE user_id = %s ORDER BY pos",
                          (user_id,)).fetchall()
    vecs = _vectors(conn, _VECS + " AND kind = 'claim'", (user_id,))
    with cache.tx() as db:
        db.execute("DELETE FROM claims WHERE user_id = ?", (user_id,))
        db.execute("DELETE FROM pages WHERE user_id = ?", (user_id,))
        db.execute("DELETE FROM vectors WHERE kind = 'claim'")
        db.executemany(_PAGE_SQL, pages)
        db.executemany(_CLAIM_SQL, claims)
        db.executemany(_VEC_SQL, [(*v[:5], sync.vec_blob(v[5])) for v in vecs])


def push_vectors(conn: Any, cache: Cache, copy: Copy, user_id: str, at_least: int = PUSH_AT) -> int:
    """Write back the vectors the read path embedded in the copy, once ``at_least`` are waiting
    (so replicas seldom embed a unit again; one that is lost with a copy is embedded again)."""
    rows = cache.db.execute("SELECT rowid, kind, id, model, hash, vec FROM vectors WHERE rowid > ? ORDER BY rowid",
                            (copy.vec_pushed,)).fetchall()
    if not rows or len(rows) < at_least:
        return 0
    sync.put_vectors(conn, user_id, copy.gen[0], [tuple(r[1:]) for r in rows])
    copy.vec_pushed = int(rows[-1][0])
    return len(rows)


def forget_user(conn: Any, user_id: str) -> None:
    """Drop this process's copy of the user now (the process that erased them)."""
    epoch = conn.execute("SELECT value FROM mm_meta WHERE key = 'epoch'").fetchone()
    store = None if epoch is None else _STORES.get(str(epoch[0]))
    if store is not None:
        with store.stripe(user_id):
            store.drop(user_id)

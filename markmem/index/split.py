"""The cache of an encrypted repo: a shared file plus one SQLite file per user.

The cache holds plaintext (FTS needs words). In one shared file, erasing a user's plaintext means
deleting their rows, merging the FTS segments and VACUUMing the whole file: O(cache), seconds at
100k memories. Here each user's rows (turns, pages, claims, vectors, FTS) live in
``.markmem/cache/u/<user>.db``, so crypto-shred closes that file's connections and unlinks it:
O(1), and no byte of the user's is left in a file the cache still uses.

The shared ``index.db`` keeps ``meta`` (head, layout, schema), ``problems``, pages that belong to
no user, and ``shards`` (which users have a file: a missing one means the cache is not ok).

Reads ask :meth:`SplitCache.user` for the user's file; it is re-checked by inode on every call, so
a file another process deleted (an erasure) or replaced (a reindex) is never read from again. A
user with no file reads from an empty in-memory stand-in. Writes go through the dispatching
methods; inside :meth:`SplitCache.tx` every file touched joins the transaction, which takes the
shared file's write lock first (one multi-file writer at a time: no lock-order deadlocks) and
commits the users' files before the shared one (the ``head`` it records is then never ahead).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..ids import validate_user_id
from ..model import Page, RawEntry
from . import schema
from .cache import TODO_ANY, Cache, PagesPlan, catch_up

T = TypeVar("T")


def _max_open() -> int:
    """User files kept open (per cache object); others are reopened when needed. A file open in
    WAL mode costs three descriptors per thread that uses it; reopening one costs ~1 ms (connect,
    pragmas, schema), which a compile of 100 users paid three times per user per batch when only
    32 stayed open. So: the descriptor limit over 24 (three per file for up to eight threads; 833
    files at a limit of 20,000, 42 at 1,024), at least 32 (the old fixed figure), at most 1,024."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):  # pragma: no cover - no resource module (Windows)
        return 32
    if soft == resource.RLIM_INFINITY:
        return 1024
    return max(32, min(1024, soft // 24))


MAX_OPEN = _max_open()


class SplitCache(Cache):
    layout = "split"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.folder = path.parent / "u"
        self._files: OrderedDict[str, tuple[Cache, int]] = OrderedDict()  # user -> (file, inode when opened)
        self._empty = Cache(Path(":memory:"))
        self._bulk: set[str] = set()
        self._paths: dict[str, str] = {}  # user -> file (validated once: every add() and read asks)

    # -- files ----------------------------------------------------------------------
    def file_of(self, user_id: str) -> Path:
        return self.folder / f"{validate_user_id(user_id)}.db"

    def user(self, user_id: str | None) -> Cache:
        """The user's file, with the turns add() left in ``raw_todo`` moved into ``raw`` first
        (:meth:`_catch_up`): every read of a user's rows comes here."""
        if user_id is None:
            return self
        shard = self._open(user_id)
        if shard is not self._empty:
            self._catch_up(user_id, shard)
        return shard

    def _catch_up(self, user_id: str, shard: Cache) -> None:
        """Index the turns add() deferred (``cache.catch_up``), if any: one indexed lookup when there
        are none. Outside a transaction it takes the file's write lock for it; inside this thread's
        :meth:`tx` (the file joined) it writes there; inside a read transaction it leaves them (that
        transaction's snapshot stands; the next call outside it indexes them)."""
        db = shard.db
        if db.execute(TODO_ANY).fetchone() is None:
            return
        if db.in_transaction:
            opened = getattr(self._local, "tx", None)
            if opened is not None and opened.get(user_id) is shard:
                catch_up(db)
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            catch_up(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _open(self, user_id: str) -> Cache:
        """The user's file as it is (``raw_todo`` left alone), or the empty stand-in."""
        path = self._paths.get(user_id)
        if path is None:
            if len(self._paths) >= 1 << 16:
                self._paths.clear()
            path = self._paths[user_id] = str(self.file_of(user_id))
        try:
            inode = os.stat(path).st_ino
        except FileNotFoundError:
            inode = None
        with self._lock:
            known = self._files.get(user_id)
            if known is not None and known[1] == inode:
                self._files.move_to_end(user_id)
                return known[0]
            if known is not None:  # deleted or replaced by another process: never read it again
                del self._files[user_id]
                known[0].retire()
            if inode is None:
                return self._empty
            shard = Cache(Path(path))
            _complete(shard)
            self._remember(user_id, shard, inode)
            return shard

    def _remember(self, user_id: str, shard: Cache, inode: int) -> None:
        """Keep the file open; past ``MAX_OPEN`` users the least recently used is let go (its
        connections close when the last code using it drops it): three descriptors per file per
        thread, and a server may see thousands of users. Call under ``_lock``."""
        self._files[user_id] = (shard, inode)
        self._files.move_to_end(user_id)
        while len(self._files) > MAX_OPEN:
            self._files.popitem(last=False)

    def users(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.db")) if self.folder.is_dir() else []

    def each(self) -> list[Cache]:
        return [self, *(self.user(u) for u in self.users())]

    def _writable(self, user_id: str, settle: bool = True) -> Cache:
        """The user's file, created if need be, inside the open :meth:`tx` if there is one; with
        ``settle``, the turns add() deferred are moved into ``raw`` first (so every other write
        sees them, and rows keep add order; add() itself passes False)."""
        shard = self._open(user_id)
        if shard is self._empty:
            path = self.file_of(user_id)
            shard = Cache(path)
            _create(shard)
            self.db.execute("INSERT OR IGNORE INTO shards(user_id) VALUES (?)", (user_id,))
            with self._lock:
                self._remember(user_id, shard, os.stat(path).st_ino)
        joined = self._join(user_id, shard)
        if settle:
            self._catch_up(user_id, joined)
        return joined

    def _join(self, user_id: str, shard: Cache) -> Cache:
        """The file to write through: inside :meth:`tx`, the one that joined it (it holds the
        write lock, even if ``MAX_OPEN`` let it go from the open files meanwhile)."""
        opened = getattr(self._local, "tx", None)
        if opened is None:
            return shard
        if user_id not in opened:
            shard.db.execute("BEGIN IMMEDIATE")
            opened[user_id] = shard
        return opened[user_id]

    def tx(self) -> _SplitTx:  # type: ignore[override]
        return _SplitTx(self)

    def ok(self) -> bool:
        if not super().ok():
            return False
        try:
            wanted = [str(r[0]) for r in self.db.execute("SELECT user_id FROM shards")]
        except sqlite3.DatabaseError:
            return False
        return all(self.file_of(u).exists() for u in wanted)

    def remove_files(self) -> None:
        with self._lock:
            files = list(self._files.values())
            self._files.clear()
        for shard, _inode in files:
            shard.retire()
        for path in self.folder.glob("*.db*") if self.folder.is_dir() else []:
            path.unlink(missing_ok=True)
        from . import vecfile  # numpy: not imported by a process that only writes
        vecfile.forget_all_files(self.folder / "index.db")  # the users' saved matrices (u/vec/)
        super().remove_files()

    def drop_user(self, user_id: str) -> dict[str, int]:
        """Close every connection to the user's file and delete it (with its WAL). Returns the rows
        it held. The caller holds the writer lock; a search of this user running in another thread
        at that moment fails, and later ones find no file."""
        shard = self.user(user_id)  # deferred turns counted as rows
        counts = {t: shard.count(t, user_id) for t in ("raw", "claims", "pages", "vectors")}
        with self._lock:
            known = self._files.pop(user_id, None)
        if known is not None:
            known[0].retire()
        path = self.file_of(user_id)
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        from . import vecfile  # numpy: not imported by a process that only writes
        vecfile.forget_user_files(path, user_id)
        self.db.execute("DELETE FROM shards WHERE user_id=?", (user_id,))
        return counts

    # -- writes, dispatched by user -------------------------------------------------------
    def upsert_raw(self, entries: Iterable[RawEntry], compiled: bool = False,
                   ready: Callable[[], None] | None = None, fresh: bool = False) -> None:
        """``fresh`` (add()'s new turns): stored in the user's ``raw_todo`` only
        (``Cache.defer_raw``); the next read or write of that user's file indexes them."""
        for uid, group in _by(entries, lambda e: e.user_id):
            if fresh:
                Cache.defer_raw(self._writable(uid, settle=False), group, compiled, ready)
            else:
                Cache.upsert_raw(self._writable(uid), group, compiled, ready, fresh)

    def bulk_raw(self, entries: Iterable[RawEntry], compiled: bool) -> None:
        for uid, group in _by(entries, lambda e: e.user_id):
            Cache.bulk_raw(self._bulk_file(uid), group, compiled)

    def bulk_pages(self, pages: Sequence[tuple[Page, str]]) -> None:
        for uid, group in _by(pages, lambda p: p[0].user_id):
            Cache.bulk_pages(self if uid is None else self._bulk_file(uid), group)

    def _bulk_file(self, user_id: str) -> Cache:
        if user_id not in self._bulk:
            shard = Cache(self.file_of(user_id))
            shard.create_bulk()
            shard.set_meta("layout", "user")
            self.db.execute("INSERT OR IGNORE INTO shards(user_id) VALUES (?)", (user_id,))
            self._bulk.add(user_id)
            with self._lock:
                self._remember(user_id, shard, os.stat(shard.path).st_ino)
        return self._join(user_id, self._open(user_id))

    def create_bulk(self) -> None:
        self._bulk = set()
        super().create_bulk()

    def link_all(self) -> None:
        Cache.link_all(self)
        for uid in self.users():
            Cache.link_all(self._join(uid, self._open(uid)))

    def close(self) -> None:
        """Close this thread's connections (the shared file's and every user file's)."""
        with self._lock:
            files = [f for f, _inode in self._files.values()]
        for shard in files:
            shard.close()
        self._empty.close()
        super().close()

    def finish_bulk(self) -> None:
        for uid in sorted(self._bulk):
            Cache.finish_bulk(self._open(uid))
        self._bulk = set()
        super().finish_bulk()  # the shared file's schema version last: an interrupted load is no cache

    def mark_compiled(self, raw_ids: Sequence[tuple[str, str]]) -> None:
        for uid, group in _by(raw_ids, lambda p: p[0]):
            Cache.mark_compiled(self._writable(uid), group)

    def set_quarantine(self, raw_id: str, reason: str | None, user_id: str | None = None) -> None:
        for uid in [user_id] if user_id else self.users():
            Cache.set_quarantine(self._writable(uid), raw_id, reason)

    def delete_raw(self, raw_ids: Sequence[tuple[str, str]]) -> None:
        for uid, group in _by(raw_ids, lambda p: p[0]):
            Cache.delete_raw(self._writable(uid), group)

    def plan_pages(self, pages: Iterable[tuple[Page, str]]) -> PagesPlan:
        plan = PagesPlan()
        for uid, group in _by(pages, lambda p: p[0].user_id):
            plan.parts[uid] = Cache.plan_pages(self.user(uid), group)
        return plan

    def apply_pages(self, plan: PagesPlan) -> None:
        for uid, part in plan.parts.items():
            Cache.apply_pages(self if uid is None else self._writable(uid), part)

    def delete_page(self, page_id: str) -> None:
        parts = page_id.split("/")
        uid = parts[1] if len(parts) > 2 and parts[0] == "u" else None
        if uid is None:
            Cache.delete_page(self, page_id)
        elif self.user(uid) is not self._empty:
            Cache.delete_page(self._writable(uid), page_id)

    def delete_user(self, user_id: str) -> dict[str, int]:
        counts = self.drop_user(user_id)
        self.clear_problems(f"wiki/u/{user_id}/")
        self.clear_problems(f"raw/u/{user_id}/")
        return counts

    # -- reads across users ---------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows from every file, concatenated (for lookups by id; not for aggregates)."""
        return [r for shard in self.each() for r in Cache.rows(shard, sql, params)]

    def count(self, table: str, user_id: str | None = None) -> int:
        if user_id is not None:
            return Cache.count(self.user(user_id), table, user_id)
        return sum(Cache.count(shard, table) for shard in self.each())


class _SplitTx:
    def __init__(self, cache: SplitCache) -> None:
        self.cache = cache

    def __enter__(self) -> sqlite3.Connection:
        db = self.cache.db
        db.execute("BEGIN IMMEDIATE")
        self.cache._local.tx = {}
        return db

    def __exit__(self, exc_type: object, *_: object) -> None:
        opened: dict[str, Cache] = self.cache._local.tx
        self.cache._local.tx = None
        verb = "ROLLBACK" if exc_type else "COMMIT"
        for shard in opened.values():
            shard.db.execute(verb)
        self.cache.db.execute(verb)


def _by(items: Iterable[T], key: Any) -> Iterator[tuple[Any, list[T]]]:
    groups: dict[Any, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return iter(groups.items())


def _create(shard: Cache) -> None:
    """The tables, triggers and schema version, in ONE transaction: a process killed mid-way
    leaves no half schema (some tables, not the rest) that every later write would fail on."""
    version = (f"INSERT OR REPLACE INTO meta(key, value) VALUES ('layout', 'user');"
               f"INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', '{int(schema.VERSION)}');")
    db = shard.db
    try:  # IF NOT EXISTS throughout: safe against a racing process
        db.executescript(f"BEGIN IMMEDIATE;{schema.DDL}\n{version}COMMIT;")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


_TABLES = re.findall(r"CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)", schema.TABLES)


def _complete(shard: Cache) -> None:
    """A user file a killed process created before its tables were all written (kill -9 between
    the file's creation and ``_create``, or, before ``_create`` was one transaction, inside it):
    create them, instead of failing every later write and read of that user with 'no such table'.
    A file with its tables but no schema version yet is left alone: a bulk rebuild writes the
    version last, and may be mid-way in another connection."""
    have = {r[0] for r in shard.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not have.issuperset(_TABLES):
        _create(shard)

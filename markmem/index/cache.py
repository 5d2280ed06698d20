"""The SQLite cache at ``.markmem/cache/index.db`` (WAL). Derived: deleting it loses nothing.

One connection per thread. A missing, corrupt or outdated cache is detected by :meth:`Cache.ok`
and rebuilt by ``index.rebuild``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Claim, Page, RawEntry
from . import schema
from .text import FTS_INSERT, claim_body, content_hash, link_turns, link_users, turn_body

FTS_SEGMENTS = 2  # see Cache.merge_claims_fts


class Cache:
    """One SQLite file. A repo's cache is one such file (``index.db``), or, for an encrypted repo,
    the shared file plus one file per user (``index.split.SplitCache``); either way, code that works
    on one user's rows asks :meth:`user` for the file that holds them."""

    layout = "one"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []  # every thread's, so :meth:`retire` can close them
        self.retired = False

    # -- connection -----------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            memory = str(self.path) == ":memory:"
            if not memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            if memory:  # the empty stand-in for a user with no file (see ``SplitCache.user``)
                conn.executescript(schema.DDL)
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                self._conns = [c for c in self._conns if c is not conn]

    def retire(self) -> None:
        """Close every thread's connection (the file is about to be deleted or replaced)."""
        self.retired = True
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:  # pragma: no cover - closing a connection in use by another thread
                pass

    def ok(self) -> bool:
        """True when the cache exists, opens, and has the current schema version and layout."""
        if not self.path.exists():
            return False
        try:
            rows = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'layout')").fetchall())
            return rows.get("schema") == str(schema.VERSION) and rows.get("layout", "one") == self.layout
        except sqlite3.DatabaseError:
            return False

    def create(self) -> None:
        """Drop everything and create the current schema (the file is replaced if corrupt)."""
        self.remove_files()
        self.db.executescript(schema.DDL)
        self.set_meta("layout", self.layout)
        self.set_meta("schema", str(schema.VERSION))

    def remove_files(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        from . import vecfile  # numpy: not imported by a process that only writes
        vecfile.forget_all_files(self.path)  # the matrices saved beside it were derived from it

    # -- users ----------------------------------------------------------------------
    def user(self, user_id: str | None) -> Cache:
        """The file that holds this user's rows: this one."""
        return self

    def each(self) -> list[Cache]:
        """Every file of the cache."""
        return [self]

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def tx(self) -> _Tx:
        return _Tx(self.db)

    # -- writes ---------------------------------------------------------------------
    def upsert_raw(self, entries: Iterable[RawEntry], compiled: bool = False,
                   ready: Callable[[], None] | None = None, fresh: bool = False) -> None:
        """Insert turns, relink their neighbours and index them, in one transaction (the caller's,
        if open): in autocommit each row and each neighbour update was a WAL commit of its own.
        ``ready`` is called before the commit (add() waits there for its raw fsync: the rows are
        written meanwhile, and shown only once the raw bytes are on disk); if it raises, nothing
        is written. ``fresh``: the caller knows no entry has a row yet (add()'s new ids), so the
        lookup of stored rows is skipped."""
        rows = [_raw_row(e, compiled) for e in entries]
        db = self.db
        if db.in_transaction:
            _insert_turns(db, rows, fresh)
            if ready is not None:
                ready()
            return
        with _Tx(db):
            _insert_turns(db, rows, fresh)
            if ready is not None:
                ready()

    def defer_raw(self, entries: Iterable[RawEntry], compiled: bool = False,
                  ready: Callable[[], None] | None = None) -> None:
        """Store add()'s new turns in ``raw_todo`` (one plain row each: no FTS, no neighbour links)
        in one transaction; :func:`catch_up` moves them into ``raw`` before the next read or write
        of this file (``SplitCache.user``). ``ready`` (add()'s wait for its raw fsync) is called
        first, before the transaction: the rows are a few statements, not worth overlapping with
        the fsync, and the file's write lock is then never held across a disk flush (a reader
        that finds deferred turns takes it to index them). If ``ready`` raises, nothing is written."""
        rows = [_raw_row(e, compiled) for e in entries]  # while the helper thread flushes
        if ready is not None:
            ready()
        db = self.db
        own = not db.in_transaction
        if len(rows) == 1:  # one statement: in autocommit it is its own transaction
            db.execute(_TODO_SQL, rows[0])
            return
        if own:
            db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(_TODO_SQL, rows)
        except BaseException:
            if own:
                db.execute("ROLLBACK")
            raise
        if own:
            db.execute("COMMIT")

    # -- bulk loading (rebuild) -----------------------------------------------------
    def create_bulk(self) -> None:
        """Like :meth:`create` but without the triggers: load with the ``bulk_*`` methods, then
        call :meth:`finish_bulk`, which indexes everything at once and installs the triggers."""
        self.remove_files()
        self.db.executescript(schema.TABLES)
        self.set_meta("layout", self.layout)

    def bulk_raw(self, entries: Iterable[RawEntry], compiled: bool) -> None:
        """Insert turns without neighbour links (see :meth:`finish_bulk`)."""
        self.db.executemany(_RAW_SQL, [_raw_row(e, compiled) for e in entries])

    def bulk_pages(self, pages: Sequence[tuple[Page, str]]) -> None:
        """Insert many pages (and their claims) into a fresh cache: no per-page delete."""
        db = self.db
        db.executemany(_PAGE_SQL, [_page_row(p, h) for p, h in pages])
        db.executemany(_CLAIM_SQL, [r for p, _h in pages for r in _claim_rows(p)])

    def link_all(self) -> None:
        """Link every user's turns to their neighbours (after :meth:`bulk_raw`)."""
        link_users(self.db)

    def finish_bulk(self) -> None:
        """Build the FTS indexes and ``user_gen``, install the triggers and, last, the schema
        version (so an interrupted load is seen as no cache at all). Call outside a transaction."""
        version = f"INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', '{int(schema.VERSION)}');"
        self.db.executescript(f"BEGIN IMMEDIATE;{schema.FINISH_BULK}{schema.TRIGGERS}{version}COMMIT;")

    def mark_compiled(self, raw_ids: Sequence[tuple[str, str]]) -> None:
        """Mark turns compiled: (user id, raw id) pairs."""
        self.db.executemany("UPDATE raw SET compiled=1 WHERE id=?", [(r,) for _u, r in raw_ids])

    def set_quarantine(self, raw_id: str, reason: str | None, user_id: str | None = None) -> None:
        self.db.execute("UPDATE raw SET quarantined=? WHERE id=?", (reason, raw_id))

    def delete_raw(self, raw_ids: Sequence[tuple[str, str]]) -> None:
        """Delete turns and their vectors: (user id, raw id) pairs."""
        rows = [(r,) for _u, r in raw_ids]
        self.db.executemany("DELETE FROM raw WHERE id=?", rows)
        self.db.executemany("DELETE FROM vectors WHERE id=? AND kind IN ('raw', 'turn')", rows)

    def upsert_page(self, page: Page, text_hash: str) -> None:
        """Write the page row and bring its claim rows in line, touching only the claims that
        differ: a compile adds or closes one or two claims of a page, and rewriting all of them
        (each an FTS delete + insert) was most of a batch's cache time."""
        self.apply_pages(self.plan_pages([(page, text_hash)]))

    def plan_pages(self, pages: Iterable[tuple[Page, str]]) -> PagesPlan:
        """What :meth:`upsert_page` would write for these pages, found with reads only, so it can
        run outside the transaction (the compiler plans while its commit runs in another thread).
        The claim rows must not change before :meth:`apply_pages` (the writer lock sees to that)."""
        plan = PagesPlan()
        db = self.db
        for page, text_hash in pages:
            plan.pages.append(_page_row(page, text_hash))
            rows = _claim_rows(page)
            old = {r[0]: r for r in db.execute(_CLAIM_SELECT, (page.id,))}
            ids = {r[0] for r in rows}
            plan.delete += [(i,) for i in old if i not in ids]  # rolled into an archive page, or removed
            for r in rows:
                was = old.get(r[0])
                if was == r:
                    continue
                if was is not None and was[8] == r[8]:  # same FTS body: update in place
                    plan.update.append((*r[1:], r[0]))
                else:
                    plan.delete.append((r[0],))  # also a row of this id on another page (a move)
                    plan.insert.append(r)
        return plan

    def apply_pages(self, plan: PagesPlan) -> None:
        """Write a plan: every delete before any insert (a claim moving to an archive page is
        deleted from the live page's rows and inserted with the archive's)."""
        db = self.db
        db.executemany(_PAGE_SQL, plan.pages)
        if plan.delete:
            db.executemany("DELETE FROM claims WHERE id=?", plan.delete)
        if plan.update:
            db.executemany(_CLAIM_UPDATE, plan.update)
        if plan.insert:
            db.executemany(_CLAIM_SQL, plan.insert)
        if plan.delete or plan.update or plan.insert:
            self.merge_claims_fts()

    def merge_claims_fts(self) -> None:
        """Merge ``claims_fts`` into one segment once it has more than ``FTS_SEGMENTS``. Each compile
        writes a small segment (and its deletes another); FTS5 reads every segment for every query
        term, so a claim lane over 18 segments of 158 claims cost 6x one over a merged index. A
        user's claim index is small (the merge is milliseconds); the scores do not change."""
        n = self.db.execute("SELECT count(DISTINCT segid) FROM claims_fts_idx").fetchone()[0]
        if n > FTS_SEGMENTS:
            self.db.execute("INSERT INTO claims_fts(claims_fts, rank) VALUES ('merge', -100000)")

    def delete_page(self, page_id: str) -> None:
        self.db.execute("DELETE FROM claims WHERE page_id=?", (page_id,))
        self.db.execute("DELETE FROM pages WHERE id=?", (page_id,))
        self.db.execute("DELETE FROM vectors WHERE kind='page' AND id=?", (page_id,))

    def delete_user(self, user_id: str) -> dict[str, int]:
        db = self.db
        counts = {}
        for table in ("raw", "claims", "pages", "vectors"):
            counts[table] = db.execute(f"DELETE FROM {table} WHERE user_id=?", (user_id,)).rowcount
        db.execute("DELETE FROM user_gen WHERE user_id=?", (user_id,))  # the id itself may be PII
        from . import vecfile  # numpy: not imported by a process that only writes
        vecfile.forget_user_files(self.path, user_id)
        self.clear_problems(f"wiki/u/{user_id}/")
        self.clear_problems(f"raw/u/{user_id}/")
        return counts

    def clear_problems(self, prefix: str) -> None:
        """Forget the problems recorded for paths under ``prefix`` (or ``file:line`` entries of a file)."""
        self.db.execute("DELETE FROM problems WHERE substr(path, 1, ?) = ?", (len(prefix), prefix))

    def set_problem(self, path: str, reason: str | None) -> None:
        if reason is None:
            self.db.execute("DELETE FROM problems WHERE path=?", (path,))
        else:
            self.db.execute("INSERT OR REPLACE INTO problems(path, reason) VALUES (?,?)", (path, reason))

    # -- reads ----------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, params)
        cols = [d[0] for d in cur.description or ()]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def count(self, table: str, user_id: str | None = None) -> int:
        if user_id is None:
            return int(self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        q = f"SELECT count(*) FROM {table} WHERE user_id=?"
        return int(self.db.execute(q, (user_id,)).fetchone()[0])


_RAW_SQL = (
    "INSERT INTO raw(id,user_id,path,role,speaker,agent_id,run_id,content,body,occurred_at,"
    "recorded_at,valid_at,metadata,quarantined,compiled,hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET compiled=max(compiled, excluded.compiled)"
)
_TODO_COLS = ("id,user_id,path,role,speaker,agent_id,run_id,content,body,occurred_at,recorded_at,valid_at,"
              "metadata,quarantined,compiled,hash")
_TODO_SQL = f"INSERT INTO raw_todo({_TODO_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
_TODO_ROWS = f"SELECT {_TODO_COLS} FROM raw_todo ORDER BY seq"
TODO_ANY = "SELECT 1 FROM raw_todo LIMIT 1"


def catch_up(db: sqlite3.Connection) -> bool:
    """Move the turns :meth:`Cache.defer_raw` left in ``raw_todo`` into ``raw``, in add order, as
    :meth:`Cache.upsert_raw` would have inserted them then: the same rowids, context, links and
    FTS rows (context and links are pure functions of the user's log, FTS5's statistics are sums).
    Call inside a write transaction. True when there were any."""
    rows = db.execute(_TODO_ROWS).fetchall()
    if not rows:
        return False
    _insert_turns(db, rows)
    db.execute("DELETE FROM raw_todo")
    return True


_ADDED_SQL = ("INSERT INTO user_gen(user_id, added) VALUES (?, ?) "
              "ON CONFLICT(user_id) DO UPDATE SET added = added + excluded.added")
_PAGE_SQL = (
    "INSERT OR REPLACE INTO pages(id,user_id,type,path,title,body,pinned,archived,created,updated,hash)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)
_CLAIM_SQL = (
    "INSERT OR REPLACE INTO claims(id,user_id,page_id,type,subject,predicate,value,text,body,provenance,"
    "confidence,valid_from,valid_until,recorded_at,closed_at,supersedes,superseded_by,sources,metadata,"
    "archived,hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_CLAIM_COLS = (
    "id,user_id,page_id,type,subject,predicate,value,text,body,provenance,confidence,valid_from,"
    "valid_until,recorded_at,closed_at,supersedes,superseded_by,sources,metadata,archived,hash"
)
_CLAIM_SELECT = f"SELECT {_CLAIM_COLS} FROM claims WHERE page_id=?"
_CLAIM_UPDATE = (
    "UPDATE claims SET " + ",".join(f"{c}=?" for c in _CLAIM_COLS.split(",")[1:]) + " WHERE id=?"
)


def _json(value: Any) -> str:
    return json.dumps(value) if value else ("{}" if isinstance(value, dict) else json.dumps(value))


def _raw_row(e: RawEntry, compiled: bool) -> tuple[Any, ...]:
    body = turn_body(e)
    return (e.id, e.user_id, e.path, e.role, e.speaker, e.agent_id, e.run_id, e.content,
            body, e.occurred_at, e.recorded_at, e.when, _json(e.metadata),
            e.quarantined, int(compiled), content_hash(body))


def _insert_turns(db: sqlite3.Connection, rows: list[tuple[Any, ...]], new_ids: bool = False) -> None:
    """Insert turn rows (a row already there only gains ``compiled``), link the users' turns around
    them, and add the new ones to ``raw_fts`` with their final context: each is indexed once, by a
    plain statement (see ``index.schema``). Reads and writes run in the caller's transaction, so
    another process's turns are either all seen or not yet written. ``new_ids``: no row can hold
    these ids yet (add()'s), so the lookup of stored rows is skipped."""
    present = {} if new_ids else _stored(db, [r[0] for r in rows])
    db.executemany(_RAW_SQL, rows)
    spans: dict[str, tuple[str, str]] = {}
    fresh: dict[str, str] = {}  # id -> user of the rows inserted now
    for r in rows:
        uid, at = present.get(r[0]) or (r[1], r[10])
        lo, hi = spans.get(uid, (at, at))
        spans[uid] = (min(lo, at), max(hi, at))
        if r[0] not in present:
            fresh.setdefault(r[0], r[1])
    added: dict[str, int] = {}
    for uid in fresh.values():
        added[uid] = added.get(uid, 0) + 1
    if len(added) == 1:  # one user (every add()): one statement, without executemany's setup
        db.execute(_ADDED_SQL, next(iter(added.items())))
    else:
        db.executemany(_ADDED_SQL, list(added.items()))  # user_gen, as a trigger per row counted it
    left = list(fresh.keys() - link_turns(db, spans, fresh.keys()))  # it indexes the turns it links
    for i in range(0, len(left), 500):  # quarantined turns: indexed, nobody's neighbours
        ids = left[i:i + 500]
        got = db.execute(f"SELECT rowid, body, context FROM raw WHERE id IN ({','.join('?' * len(ids))})", ids)
        db.executemany(FTS_INSERT, got.fetchall())


def _stored(db: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[str, str]]:
    """(user, recorded_at) as stored, of those of ``ids`` that have a row."""
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        out.update((r[0], (r[1], r[2])) for r in
                   db.execute(f"SELECT id, user_id, recorded_at FROM raw WHERE id IN ({marks})", chunk))
    return out


def _page_row(page: Page, text_hash: str) -> tuple[Any, ...]:
    return (page.id, page.user_id, page.type, page.path, page.title, page.body, int(page.pinned),
            int(page.archived), page.created, page.updated, text_hash)


def _claim_rows(page: Page) -> list[tuple[Any, ...]]:
    if page.type == "entity":  # relations restate fact claims: the graph lane reads them (read/graph.py)
        return []
    rows = []
    archived = int(page.archived)
    for c in page.claims:
        body, sources, metadata, text_hash = _claim_parts(c)
        rows.append((c.id, page.user_id, page.id, page.type, c.subject, c.predicate, c.value, c.text,
                     body, c.provenance, c.confidence, c.valid_from, c.valid_until, c.recorded_at,
                     c.closed_at, c.supersedes, c.superseded_by, sources, metadata, archived, text_hash))
    return rows


_PARTS_MAX = 1 << 15
_parts: OrderedDict[int, tuple[Claim, tuple[str, str, str, str]]] = OrderedDict()
_parts_lock = threading.Lock()


def _claim_parts(c: Claim) -> tuple[str, str, str, str]:
    """(FTS body, sources JSON, metadata JSON, body hash) of a claim, cached by identity (claims are
    frozen): a compile plans every claim of each page it touches, and most are unchanged since the
    previous batch (the same objects, from the page cache)."""
    hit = _parts.get(id(c))
    if hit is not None and hit[0] is c:
        return hit[1]
    body = claim_body(c)
    parts = (body, json.dumps(list(c.sources)), _json(c.metadata), content_hash(body))
    with _parts_lock:
        _parts[id(c)] = (c, parts)
        if len(_parts) > _PARTS_MAX:
            _parts.popitem(last=False)
    return parts


@dataclass
class PagesPlan:
    """Rows :meth:`Cache.apply_pages` writes (see :meth:`Cache.plan_pages`)."""

    pages: list[tuple[Any, ...]] = field(default_factory=list)
    delete: list[tuple[str]] = field(default_factory=list)
    update: list[tuple[Any, ...]] = field(default_factory=list)
    insert: list[tuple[Any, ...]] = field(default_factory=list)
    parts: dict[str | None, PagesPlan] = field(default_factory=dict)  # a split cache's, per user file


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")

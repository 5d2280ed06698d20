"""Write the PostgreSQL index: turns at ``add()``, a user's files after a compile or a forget.

Every function runs in the caller's connection, inside ``conn.transaction()`` (a savepoint when
the caller has a transaction open, so an ``add_turns`` commits with the caller's intake row).
A user's generation row is locked first (``_lock_users``, and add's ``_ADD_GEN``): adds, syncs and deletes of one user
take turns, and a user's turns commit in ``seq`` order.
"""

from __future__ import annotations

import json
import struct
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..ids import validate_user_id
from ..index.cache import _claim_rows, _page_row
from ..index.text import content_hash, turn_body, turn_text
from ..model import RawEntry
from ..ports import Embedder
from ..store import raw
from ..store.codec import Codec, PlainCodec
from ..store.pages import iter_page_files, page_loader
from ..store.repo import iter_ops
from .schema import TABLES

TURN_COLS = ("path", "role", "speaker", "agent_id", "run_id", "content", "body", "occurred_at", "recorded_at",
             "metadata", "quarantined", "compiled", "hash")
PAGE_COLS = "id, user_id, type, path, title, body, pinned, archived, created, updated, hash"  # cache._PAGE_SQL's
CLAIM_COLS = ("id, user_id, page_id, type, subject, predicate, value, text, body, provenance, confidence, valid_from, "
              "valid_until, recorded_at, closed_at, supersedes, superseded_by, sources, metadata, archived, hash")


def turn_row(e: RawEntry, compiled: bool) -> tuple[Any, ...]:
    """A turn's ``TURN_COLS``."""
    body = turn_body(e)
    return (e.path, e.role, e.speaker, e.agent_id, e.run_id, e.content, body, e.occurred_at,
            e.recorded_at, json.dumps(e.metadata or {}), e.quarantined, compiled, content_hash(body))


def entry_of(user_id: str, ident: str, row: Sequence[Any]) -> RawEntry:
    """The raw entry a ``TURN_COLS`` row was made from."""
    path, role, speaker, agent_id, run_id, content, _body, occurred_at, recorded_at, meta, quarantined = row[:11]
    return RawEntry(id=ident, user_id=user_id, role=role, content=content, recorded_at=recorded_at,
                    occurred_at=occurred_at, speaker=speaker, agent_id=agent_id, run_id=run_id,
                    metadata=json.loads(meta or "{}"), quarantined=quarantined, path=path)


# -- add() ------------------------------------------------------------------------------------
def add_turns(conn: Any, entries: Iterable[RawEntry]) -> int:
    """Index gated raw entries (not yet compiled, not yet in a repo file) in the caller's
    transaction: a search that sees the transaction committed sees them. Returns the rows added
    (an id indexed already is left alone). One statement per user (``_ADD``): the user's
    generation row is locked before the turns take their ``seq``."""
    by_user: dict[str, list[RawEntry]] = {}
    for e in entries:
        by_user.setdefault(validate_user_id(e.user_id), []).append(e)
    if len(by_user) > 1:
        with conn.transaction():
            return sum(_add(conn, uid, by_user[uid]) for uid in sorted(by_user))  # one lock order
    return sum(_add(conn, uid, es) for uid, es in by_user.items())


_TYPES = ("text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "boolean", "text")
_ADD_GEN = ("g AS (INSERT INTO mm_user_gen(user_id, added) VALUES (%s, %s) ON CONFLICT (user_id) "
            "DO UPDATE SET added = mm_user_gen.added + excluded.added RETURNING user_id)")
_ADD_TURNS = (
    "INSERT INTO mm_turns(user_id, id, seq, " + ", ".join(TURN_COLS) + ", in_repo) "
    "SELECT g.user_id, x.id, nextval('mm_seq'), " + ", ".join(f"x.{c}" for c in TURN_COLS) + ", false "
    "FROM g, unnest(%s::text[], " + ", ".join(f"%s::{t}[]" for t in _TYPES) + ") WITH ORDINALITY "
    "AS x(id, " + ", ".join(TURN_COLS) + ", n) ORDER BY x.n ON CONFLICT (user_id, id) DO NOTHING"
)
_ADD = f"WITH {_ADD_GEN} {_ADD_TURNS}"


def add_statement(uid: str, es: Sequence[RawEntry]) -> tuple[str, str, list[Any]]:
    """``add_turns`` for one user as parts of one statement: (its CTE, its final INSERT, their
    parameters), for a caller that sends its own CTEs with them (the cluster's intake: one
    round trip, one commit). The generation row is locked before the turns take their ``seq``."""
    rows = [turn_row(e, False) for e in es]
    cols = [list(c) for c in zip(*rows, strict=True)]
    return _ADD_GEN, _ADD_TURNS, [validate_user_id(uid), len(es), [e.id for e in es], *cols]


def _add(conn: Any, uid: str, es: list[RawEntry]) -> int:
    _cte, _insert, params = add_statement(uid, es)
    return max(conn.execute(_ADD, params).rowcount, 0)


# -- after a compile, a forget, or reindex ------------------------------------------------------
def sync_users(conn: Any, repo_root: str | Path, user_ids: Iterable[str], *, codec: Codec | None = None,
               embedder: Embedder | None = None, chunk: int = 200,
               compiled: Sequence[RawEntry] | None = None) -> dict[str, dict[str, int]]:
    """Bring the index up to date for these users from one shard repo's files (raw turns with
    their checkpoint and review decisions; pages and claims). Turns still in intake (added, not
    yet in a file) are kept. A user left with nothing is deleted. With ``embedder``, units
    without a stored vector of that model are embedded. Returns what changed, per user.

    ``chunk`` users at a time, in one transaction: their generation rows locked in user order,
    then a handful of statements for all of them (``_sync_many``), not a dozen per user.

    ``compiled``: a compile worker's batch (each entry with the raw file it was appended to, every
    one compiled by the batch's commit): the turns synced are those alone, not every raw file of
    the user (a compile adds and compiles turns, never removes or edits others), so the cost
    follows the batch, not the user's history. Pages and claims are read from the files as always."""
    root = Path(repo_root)
    codec = codec or PlainCodec()
    ops = _review_ops(root)
    uids = sorted({validate_user_id(u) for u in user_ids})
    batch: dict[str, list[RawEntry]] | None = None
    if compiled is not None:
        batch = {u: [] for u in uids}
        for e in compiled:
            batch[e.user_id].append(e)
    out: dict[str, dict[str, int]] = {}
    for j in range(0, len(uids), chunk):
        with conn.transaction():
            out.update(_sync_many(conn, root, uids[j:j + chunk], codec, ops, embedder, batch))
    return out


def users_of(repo_root: str | Path) -> list[str]:
    """Every user with a folder in the repo (raw/ or wiki/)."""
    root = Path(repo_root)
    found: set[str] = set()
    for base in (root / "raw" / "u", root / "wiki" / "u"):
        if base.is_dir():
            found.update(p.name for p in base.iterdir() if p.is_dir() and not p.is_symlink())
    return sorted(found)


def reindex(conn: Any, repo_root: str | Path, *, codec: Codec | None = None, embedder: Embedder | None = None,
            also: Iterable[str] = ()) -> dict[str, dict[str, int]]:
    """``sync_users`` for every user of the repo, and for ``also`` (users the index holds for
    this shard, e.g. ``indexed_users`` filtered by the shard map: one the repo no longer has is
    deleted from the index)."""
    return sync_users(conn, repo_root, {*users_of(repo_root), *also}, codec=codec, embedder=embedder)


def indexed_users(conn: Any) -> list[str]:
    """Every user the index holds."""
    return [str(r[0]) for r in conn.execute("SELECT user_id FROM mm_user_gen ORDER BY user_id")]


def delete_user(conn: Any, user_id: str) -> dict[str, int]:
    """Delete every row of the user (the generation row first: it serialises with adds and syncs).
    Returns the rows deleted per table."""
    validate_user_id(user_id)
    counts = {}
    with conn.transaction():
        for table in TABLES:
            counts[table] = conn.execute(f"DELETE FROM {table} WHERE user_id = %s", (user_id,)).rowcount
    from . import local  # this process's copy goes now; other processes' at their sweep

    local.forget_user(conn, user_id)
    return counts


def claim_owners(conn: Any, claim_id: str) -> list[str]:
    """The users whose index holds a claim with this id (one, but for a collision): an edit of a
    claim id goes to its owner's shard instead of looking in every shard repo."""
    return [str(r[0]) for r in conn.execute("SELECT DISTINCT user_id FROM mm_claims WHERE id = %s ORDER BY 1",
                                            (claim_id,))]


def user_rows(conn: Any, user_id: str) -> dict[str, int]:
    """Rows the index holds for the user, per table (``verify-erasure``: all zero after a forget)."""
    validate_user_id(user_id)
    return {t: int(conn.execute(f"SELECT count(*) FROM {t} WHERE user_id = %s", (user_id,)).fetchone()[0])
            for t in TABLES}


def _review_ops(root: Path) -> dict[str, str | None]:
    """raw id -> its quarantine after the review decisions (``index.rebuild.apply_review_ops``)."""
    return {str(op["raw_id"]): op["quarantine"] for op in iter_ops(root)
            if op.get("op") == "review" and "quarantine" in op and op.get("raw_id")}


def _file_turns(root: Path, uid: str, codec: Codec, ops: dict[str, str | None]) -> list[tuple[str, tuple[Any, ...]]]:
    """(id, ``TURN_COLS``) of the user's raw files, in file order (``index.rebuild``'s)."""
    out = []
    cp = raw.read_checkpoint(root, uid)
    for _uid, rel in raw.iter_files(root, uid):
        upto = cp.get(rel, 0)
        try:
            for e, _start, end in raw.read_range(root, rel, 0, None, codec, uid):
                row = turn_row(e, end <= upto)
                if e.id in ops:
                    row = (*row[:10], ops[e.id], *row[11:])
                out.append((e.id, row))
        except OSError:  # a symlink or an unreadable file: doctor's concern, as in rebuild
            continue
    return out


def _batch_row(e: RawEntry, ops: dict[str, str | None]) -> tuple[Any, ...]:
    """A compiled batch turn's ``TURN_COLS``, as ``_file_turns`` reads it back from its file."""
    row = turn_row(e, True)
    return (*row[:10], ops[e.id], *row[11:]) if e.id in ops else row


def _sync_many(conn: Any, root: Path, uids: list[str], codec: Codec, ops: dict[str, str | None],
               embedder: Embedder | None, batch: dict[str, list[RawEntry]] | None = None) -> dict[str, dict[str, int]]:
    with conn.pipeline():  # the lock and the three reads in one round trip, the writes in another
        return _sync_piped(conn, root, uids, codec, ops, embedder, batch)


def _sync_piped(conn: Any, root: Path, uids: list[str], codec: Codec, ops: dict[str, str | None],
                embedder: Embedder | None, batch: dict[str, list[RawEntry]] | None) -> dict[str, dict[str, int]]:
    locked = _lock_users(conn, uids)
    if batch is None:
        turns = conn.execute("SELECT user_id, id, " + ", ".join(TURN_COLS) + ", in_repo FROM mm_turns "
                             "WHERE user_id = ANY(%s)", (uids,))
    else:  # only the batch's turns
        pairs = [(u, e.id) for u in uids for e in batch[u]]
        turns = conn.execute("SELECT user_id, id, " + ", ".join(TURN_COLS) + ", in_repo FROM mm_turns "
                             "WHERE (user_id, id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                             ([u for u, _ in pairs], [i for _, i in pairs]))
    pages_cur = conn.execute(f"SELECT user_id, {PAGE_COLS} FROM mm_pages WHERE user_id = ANY(%s) "
                             "ORDER BY user_id, id", (uids,))
    claims_cur = conn.execute(f"SELECT user_id, {CLAIM_COLS} FROM mm_claims WHERE user_id = ANY(%s) "
                              "ORDER BY user_id, pos", (uids,))
    touch = {str(u): int(t) for u, t in locked.fetchall()}
    have, old_pages, old_claims = _grouped(turns), _grouped(pages_cur), _grouped(claims_cur)
    plan = _Plan()
    stats = {u: plan.user(root, u, codec, ops, have.get(u, []), old_pages.get(u, []), old_claims.get(u, []),
                          touch[u], None if batch is None else batch[u]) for u in uids}
    plan.apply(conn)
    for uid in plan.empty:
        delete_user(conn, uid)
    live = [u for u in uids if u not in plan.empty]
    _prune_vectors(conn, live)
    if embedder is not None:
        for uid in live:
            stats[uid]["embedded"] = embed_missing(conn, uid, embedder)
    return stats


def _lock_users(conn: Any, uids: list[str]) -> Any:
    """The users' generation rows, created if need be and locked in user order until the
    transaction ends: a cursor of (user_id, touch), fetched by the caller (pipeline mode)."""
    conn.execute("INSERT INTO mm_user_gen(user_id) SELECT unnest(%s::text[]) ON CONFLICT (user_id) DO NOTHING",
                 (uids,))
    return conn.execute("SELECT user_id, touch FROM mm_user_gen WHERE user_id = ANY(%s) ORDER BY user_id FOR UPDATE",
                        (uids,))


def _grouped(cur: Any) -> dict[str, list[tuple[Any, ...]]]:
    """A cursor's rows (the first column the user id) per user, that column dropped, in order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for row in cur.fetchall():
        out.setdefault(row[0], []).append(tuple(row[1:]))
    return out


class _Plan:
    """What ``_sync_many`` writes, gathered user by user, then sent in a few statements."""

    def __init__(self) -> None:
        self.gone: list[tuple[str, str]] = []
        self.new: list[tuple[Any, ...]] = []
        self.changed: list[tuple[Any, ...]] = []
        self.repaged: list[str] = []
        self.pages: list[tuple[Any, ...]] = []
        self.claims: list[tuple[Any, ...]] = []
        self.bumps: list[tuple[int, int, int, int, str]] = []
        self.empty: list[str] = []

    def user(self, root: Path, uid: str, codec: Codec, ops: dict[str, str | None], have_rows: list[tuple[Any, ...]],
             old_pages: list[tuple[Any, ...]], old_claims: list[tuple[Any, ...]], touch: int,
             batch: list[RawEntry] | None = None) -> dict[str, int]:
        """``batch``: these turns only (a compile's, now in files and compiled); else every raw file."""
        files = _file_turns(root, uid, codec, ops) if batch is None else [(e.id, _batch_row(e, ops)) for e in batch]
        have = {r[0]: (tuple(r[1:14]), r[14]) for r in have_rows}
        in_files = {i for i, _ in files}
        gone = [] if batch is not None else [i for i, (_row, in_repo) in have.items() if in_repo and i not in in_files]
        new = [(i, row) for i, row in files if i not in have]
        changed = [(i, row) for i, row in files if i in have and (have[i][0] != row or not have[i][1])]
        self.gone += [(uid, i) for i in gone]
        self.new += [(uid, i, *row, True) for i, row in new]
        self.changed += [(*row, touch + 1, uid, i) for i, row in changed]
        pages, claims = _file_pages(root, uid, codec)
        rewrite = not (old_pages == sorted(pages) and old_claims == claims)
        if rewrite:
            self.repaged.append(uid)
            self.pages += pages
            self.claims += [(k, *r) for k, r in enumerate(claims)]
        n_claims = max(len(claims), 1) if rewrite else 0
        if batch is None and not files and not pages and len(have) == len(gone):  # nothing left in files or intake
            self.empty.append(uid)
        elif gone or new or changed or n_claims:
            self.bumps.append((int(bool(gone)), len(new), int(bool(changed)), int(n_claims > 0), uid))
        return {"deleted": len(gone), "added": len(new), "changed": len(changed), "claims": n_claims}

    def apply(self, conn: Any) -> None:
        """One statement per kind of write, each row set sent as arrays (``unnest``): no statement
        per turn, page or claim for PostgreSQL to parse, plan and run."""
        with conn.cursor() as cur:
            if self.gone:
                cur.execute("DELETE FROM mm_turns WHERE (user_id, id) IN "
                            "(SELECT * FROM unnest(%s::text[], %s::text[]))",
                            ([u for u, _ in self.gone], [i for _, i in self.gone]))
            if self.new:
                cur.execute(_NEW_TURNS, _arrays(self.new, 2 + len(TURN_COLS) + 1))
            if self.changed:
                cur.execute(_CHANGED_TURNS, _arrays(_last_of_each(self.changed), len(TURN_COLS) + 3))
            if self.repaged:
                cur.execute("DELETE FROM mm_pages WHERE user_id = ANY(%s)", (self.repaged,))
                cur.execute("DELETE FROM mm_claims WHERE user_id = ANY(%s)", (self.repaged,))
                if self.pages:
                    cur.execute(_PAGES, _arrays(self.pages, len(_PAGE_TYPES)))
                if self.claims:
                    cur.execute(_CLAIMS, _arrays(self.claims, len(_CLAIM_TYPES)))
            if self.bumps:
                cur.execute("UPDATE mm_user_gen g SET rev = g.rev + x.r, added = g.added + x.a, touch = g.touch + x.t, "
                            "claims_rev = g.claims_rev + x.c FROM unnest(%s::int[], %s::int[], %s::int[], %s::int[], "
                            "%s::text[]) AS x(r, a, t, c, u) WHERE g.user_id = x.u", _arrays(self.bumps, 5))


def _arrays(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Rows as one list per column (``unnest``'s parameters)."""
    cols: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for k, value in enumerate(row):
            cols[k].append(value)
    return cols


def _last_of_each(changed: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One update per (user, turn), the last (as updates one after another would leave it)."""
    return list({(r[-2], r[-1]): r for r in changed}.values())


def _unnest(types: Sequence[str]) -> str:
    return "unnest(" + ", ".join(f"%s::{t}[]" for t in types) + ")"


_NEW_TURNS = (
    "INSERT INTO mm_turns(user_id, id, seq, " + ", ".join(TURN_COLS) + ", in_repo) "
    "SELECT x.user_id, x.id, nextval('mm_seq'), " + ", ".join(f"x.{c}" for c in TURN_COLS) + ", x.in_repo FROM "
    + _unnest(("text", "text", *_TYPES, "boolean")) + " WITH ORDINALITY AS x(user_id, id, "
    + ", ".join(TURN_COLS) + ", in_repo, n) ORDER BY x.n ON CONFLICT (user_id, id) DO NOTHING"
)
_CHANGED_TURNS = (
    "UPDATE mm_turns t SET " + ", ".join(f"{c} = x.{c}" for c in TURN_COLS) + ", in_repo = true, touched = x.touched "
    "FROM " + _unnest((*_TYPES, "bigint", "text", "text")) + " AS x(" + ", ".join(TURN_COLS)
    + ", touched, user_id, id) WHERE t.user_id = x.user_id AND t.id = x.id"
)
_PAGE_TYPES = ("text", "text", "text", "text", "text", "text", "integer", "integer", "text", "text", "text")
_PAGES = f"INSERT INTO mm_pages({PAGE_COLS}) SELECT * FROM {_unnest(_PAGE_TYPES)}"
_CLAIM_TYPES = ("integer", *["text"] * 10, "double precision", *["text"] * 8, "integer", "text")
_CLAIMS = f"INSERT INTO mm_claims(pos, {CLAIM_COLS}) SELECT * FROM {_unnest(_CLAIM_TYPES)}"


def _file_pages(root: Path, uid: str, codec: Codec) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The user's page rows and claim rows (in file order) as the cache makes them. Pages come
    through ``page_loader``: a page the compile just wrote (or an unchanged one read before) is
    the parsed object it remembered for that file's inode and times, not parsed again."""
    pages, claims = [], []
    load = page_loader(root, codec)
    for rel in iter_page_files(root, uid):
        try:
            page = load(rel[len("wiki/"):-len(".md")])
        except Exception:  # noqa: BLE001 - a malformed page is skipped, as rebuild does (doctor lists it)
            continue
        if page is None or page.path != rel or page.user_id != uid:
            continue
        pages.append(_page_row(page, content_hash(page.body)))
        claims += _claim_rows(page)
    return pages, claims


def _prune_vectors(conn: Any, uids: list[str]) -> None:
    """Vectors of units that are gone (or whose text changed: their hash no longer matches)."""
    if not uids:
        return
    conn.execute("DELETE FROM mm_vectors v WHERE v.user_id = ANY(%s) AND v.kind = 'turn' AND NOT EXISTS "
                 "(SELECT 1 FROM mm_turns t WHERE t.user_id = v.user_id AND t.id = v.id AND t.hash = v.hash)", (uids,))
    conn.execute("DELETE FROM mm_vectors v WHERE v.user_id = ANY(%s) AND v.kind = 'claim' AND NOT EXISTS "
                 "(SELECT 1 FROM mm_claims c WHERE c.user_id = v.user_id AND c.id = v.id AND c.hash = v.hash)",
                 (uids,))


# -- vectors ------------------------------------------------------------------------------------
class PgVector(bytes):
    """A vector in pgvector's binary form (dimension, a reserved word, big-endian float32s)."""


_READY: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()  # connections that can send one


def pg_vector(blob: bytes) -> PgVector:
    """The float32 blob the SQLite cache stores, as a pgvector binary value."""
    v = np.frombuffer(blob, np.float32)
    return PgVector(struct.pack(">HH", len(v), 0) + v.astype(">f4").tobytes())


def vec_blob(binary: bytes) -> bytes:
    """A pgvector value in binary form as the float32 blob the SQLite cache stores."""
    return np.frombuffer(binary, ">f4", offset=4).astype("<f4").tobytes()


def _binary_vectors(conn: Any) -> None:
    """Teach the connection to send :class:`PgVector` as pgvector's binary form (no text floats)."""
    if conn in _READY:
        return
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise RuntimeError("the vector extension is not installed (pgindex.schema.ensure creates it)")

    class _Dumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: Any) -> bytes:
            return bytes(obj)

    conn.adapters.register_dumper(PgVector, _Dumper)
    _READY[conn] = True


_PUT = (
    "WITH g AS (SELECT user_id FROM mm_user_gen WHERE user_id = %s AND (%s::bigint IS NULL OR born = %s) FOR SHARE) "
    "INSERT INTO mm_vectors(user_id, kind, id, model, hash, vec) SELECT g.user_id, %s, %s, %s, %s, %b FROM g "
    "ON CONFLICT (user_id, kind, id) DO UPDATE SET model = excluded.model, hash = excluded.hash, vec = excluded.vec"
)


def put_vectors(conn: Any, user_id: str, born: int | None, rows: Sequence[tuple[str, str, str, str, bytes]]) -> int:
    """Store (kind, id, model, hash, float32 blob) rows of the user, unless the user was deleted
    (``born``: the generation row they were computed for; None: any). Each row's statement
    share-locks the generation row first, so a ``delete_user`` running meanwhile deletes them."""
    if not rows:
        return 0
    _binary_vectors(conn)
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(_PUT, [(user_id, born, born, k, i, m, h, pg_vector(v)) for k, i, m, h, v in rows])
    return len(rows)


def embed_missing(conn: Any, uid: str, embedder: Embedder, batch: int = 512) -> int:
    """Embed the user's live units that have no vector of this model for their current text
    (the texts ``index.vectors`` embeds, with the same hashes)."""
    todo = conn.execute(
        "SELECT 'turn', t.id, t.content, t.speaker, t.hash FROM mm_turns t LEFT JOIN mm_vectors v ON "
        "v.user_id = t.user_id AND v.kind = 'turn' AND v.id = t.id WHERE t.user_id = %s AND t.quarantined IS NULL "
        "AND (v.id IS NULL OR v.model <> %s OR v.hash <> t.hash) "
        "UNION ALL SELECT 'claim', c.id, c.text, NULL, c.hash FROM mm_claims c LEFT JOIN mm_vectors v ON "
        "v.user_id = c.user_id AND v.kind = 'claim' AND v.id = c.id WHERE c.user_id = %s AND c.archived = 0 "
        "AND (v.id IS NULL OR v.model <> %s OR v.hash <> c.hash)", (uid, embedder.name, uid, embedder.name)).fetchall()
    rows = []
    for j in range(0, len(todo), batch):
        part = todo[j:j + batch]
        texts = [turn_text(c, s) if k == "turn" else c for k, _i, c, s, _h in part]
        vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
        for (k, i, _c, _s, h), v in zip(part, vecs, strict=True):
            rows.append((k, i, embedder.name, h, v.tobytes()))
    return put_vectors(conn, uid, None, rows)

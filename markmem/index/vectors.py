"""Vectors in the cache, and the per-user matrix that the read path searches in memory.

* Each live turn and claim gets one row in ``vectors`` (kind, id, model, hash, float32 blob).
  ``hash`` is the hash of the indexed body the vector was computed from, so unchanged text is
  never embedded twice; a different model re-embeds.
* Embedding is lazy and batched: never in ``add()``; at compile (``refresh``) and, for turns added
  since, at the next search of that user (``matrix``).
* The matrix is exact: one float32 ``(n, dim)`` array per (cache, model, user), searched with a
  numpy mat-vec product. Measured against sqlite-vec 0.1.9 (brute force, vec0): 10k x 256
  rows 0.28 ms vs 3.9 ms, 100k rows 3-12 ms vs 47 ms; and the CPython here cannot load SQLite
  extensions at all. The matrix is cached in memory and checked against the cache's ``epoch``
  and the user's ``user_gen`` counters: new rows are appended, any delete or change reloads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ..ports import Embedder
from . import vecfile
from .cache import Cache
from .text import turn_text

BATCH = 512
MAX_MATRICES = 32  # least recently used matrices beyond this are dropped

Stamp = tuple[str, int, int]  # (cache epoch, added, changed)


@dataclass
class Matrix:
    """Vectors of one user's live turns and claims. Rows are never reordered once appended."""

    stamp: Stamp
    dim: int
    kinds: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    data: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    n: int = 0
    raw_seen: int = 0  # highest raw rowid covered
    claim_seen: int = 0  # highest claims rowid covered
    # the turn rows by raw rowid (ascending), with their row: a search finds its candidates' rows
    # with one searchsorted, not a dict probe each (``read.vectors``), and checks their ids;
    # None when rows came without their rowids
    turn_rowid: np.ndarray | None = field(default_factory=lambda: np.zeros(0, np.int64))
    turn_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    saved: int = -1  # rows in the saved file (``index.vecfile``) this matrix matches; -1: none
    pos: Positions = field(init=False)  # (kind, id) -> row
    # turn_rowid -> turn_at as a dict, built once a warm process has asked ``ROWID_DICT_AFTER`` times
    # (a fresh process's first searches keep the searchsorted: no 10k-entry dict at load)
    _by_rowid: dict[int, int] | None = field(default=None, init=False, repr=False)
    _by_len: int = field(default=0, init=False, repr=False)  # turn_rowid entries the dict holds
    _asked: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self.pos = Positions(self.kinds, self.ids)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of every row with a unit-length query vector."""
        return np.einsum("ij,j->i", self.data[: self.n], query)

    def append(self, kinds: list[str], ids: list[str], vecs: np.ndarray, rowids: list[int] | np.ndarray | None = None,
               turns: np.ndarray | None = None) -> None:
        """Rows for these units; ``rowids``: each turn's raw rowid (anything for a claim); ``turns``:
        the positions of the turns among them, when known (a saved file's), else found from ``kinds``."""
        if not ids:
            return
        self._index_turns(kinds, rowids, turns)
        need = self.n + len(ids)
        if self.n == 0 and _adoptable(vecs, len(ids), self.dim):  # the first rows (a saved file's): used as they are
            self.data = vecs
        elif need > self.data.shape[0]:
            grown = np.zeros((max(need, 2 * self.data.shape[0], 256), self.dim), np.float32)
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        if self.data is not vecs:
            self.data[self.n:need] = vecs
        self.kinds += kinds
        self.ids += ids
        self.n = need


    def _index_turns(self, kinds: list[str], rowids: list[int] | np.ndarray | None, turns: np.ndarray | None) -> None:
        if self.turn_rowid is None:
            return
        if turns is None:
            turns = np.array([i for i, kind in enumerate(kinds) if kind == "turn"], np.int64)
        if not len(turns):
            return
        got = np.asarray(rowids, np.int64)[turns] if rowids is not None else np.zeros(0, np.int64)
        seq = np.concatenate([self.turn_rowid[-1:], got])
        if rowids is None or bool((seq[1:] <= seq[:-1]).any()):
            self.turn_rowid = None  # unknown or out of order: the dict serves
            return
        self.turn_rowid = np.append(self.turn_rowid, got)
        self.turn_at = np.append(self.turn_at, turns.astype(np.int64) + self.n)

    def turn_rows(self, rowids: list[int], ids: list[str]) -> np.ndarray | None:
        """The row of each turn given by (rowid, id), -1 where it has none (or the rowid holds
        another id: the id must match too); None when the rows are not indexed by rowid."""
        if self.turn_rowid is None:
            return None
        want = np.array(rowids, np.int64)
        n = len(self.turn_rowid)
        if n == 0:
            return np.full(len(want), -1, np.int64)
        i = np.minimum(np.searchsorted(self.turn_rowid, want), n - 1)
        at = self.turn_at[i]
        ok = self.turn_rowid[i] == want
        # the id itself, compared for these few rows only (no hash of every row's id at load: ~2-10 ms at 10k)
        mine = self.ids
        ok &= np.array([mine[a] == x for a, x in zip(at.tolist(), ids, strict=True)], bool)
        return np.where(ok, at, -1)

    def turn_rows_list(self, rowids: list[int], ids: list[str]) -> list[int] | None:
        """``turn_rows(rowids, ids).tolist()``: in a warm process from a dict of the turn rows by
        rowid (a few dozen lookups, not half a dozen numpy calls), the same rows."""
        if self.turn_rowid is None:
            return None
        if self._by_rowid is None:
            self._asked += 1
            if self._asked <= ROWID_DICT_AFTER:
                return self.turn_rows(rowids, ids).tolist()  # type: ignore[union-attr]
            self._by_rowid = {}
        by, n = self._by_rowid, len(self.turn_rowid)
        if self._by_len != n:  # rows appended since (rowids ascending: each one new)
            by.update(zip(self.turn_rowid[self._by_len:].tolist(), self.turn_at[self._by_len:].tolist(), strict=True))
            self._by_len = n
        if len(rowids) != len(ids):
            raise ValueError("turn_rows: rowids and ids differ in length")
        mine = self.ids
        return [a if a >= 0 and mine[a] == x else -1
                for r, x in zip(rowids, ids, strict=False) for a in (by.get(r, -1),)]  # lengths checked above


ROWID_DICT_AFTER = 8  # searches served by searchsorted before the rowid dict is built


class Positions:
    """``(kind, id) -> row`` of a matrix (``get``), indexed per kind on the first lookup of that kind and
    caught up as rows are appended: a fresh process's first search at 10k looks up claims and a few
    turns (the turns' rows are found by rowid), so the 10k turns' ids are not hashed at load. A later
    row of the same (kind, id) wins, as a dict updated row by row."""

    def __init__(self, kinds: list[str], ids: list[str]) -> None:
        self._kinds, self._ids = kinds, ids  # the matrix's own lists, appended to in place
        self._by: dict[str, dict[str, int]] = {}
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str], default: int | None = None) -> int | None:
        kind, ident = key
        n = len(self._ids)
        if self._seen.get(kind, -1) < n:  # set only once its dict holds every row before it
            with self._lock:
                by = self._by.setdefault(kind, {})
                start, kinds, ids = self._seen.get(kind, 0), self._kinds, self._ids
                by.update({ids[i]: i for i in range(start, n) if kinds[i] == kind})
                self._seen[kind] = max(n, start)
        return self._by[kind].get(ident, default)


def _adoptable(vecs: np.ndarray, n: int, dim: int) -> bool:
    """``vecs`` can be the matrix's data as it is, not copied: float32 rows of ``dim``, C order
    (read-only is fine: rows are never written in place, a later append copies into a grown array)."""
    return isinstance(vecs, np.ndarray) and vecs.dtype == np.float32 and vecs.shape == (n, dim) \
        and vecs.flags.c_contiguous


_MATS: OrderedDict[tuple[str, str, str], Matrix] = OrderedDict()
_LOCK = threading.Lock()


def stamp(cache: Cache, user_id: str) -> Stamp:
    row = cache.db.execute(
        "SELECT (SELECT value FROM meta WHERE key='epoch'), "
        "(SELECT added FROM user_gen WHERE user_id=?), (SELECT changed FROM user_gen WHERE user_id=?)",
        (user_id, user_id),
    ).fetchone()
    return (str(row[0]), int(row[1] or 0), int(row[2] or 0))


def matrix(cache: Cache, embedder: Embedder, user_id: str, now: Stamp | None = None) -> Matrix:
    """The user's up-to-date matrix: embeds what is missing first (lazily, in batches). ``now``: the
    user's stamp as the caller has just read it (``read.fts.snapshot``), else it is read here."""
    key = (str(cache.path), embedder.name, user_id)
    with _LOCK:
        if now is None:
            now = stamp(cache, user_id)
        m = _MATS.get(key)
        if m is None or m.stamp[0] != now[0] or m.stamp[2] != now[2]:
            m = _load(cache, embedder, user_id, now)
        elif m.stamp != now:
            _extend(cache, embedder, user_id, m, now)
        _save(cache, embedder, user_id, m)
        _MATS[key] = m
        _MATS.move_to_end(key)
        while len(_MATS) > MAX_MATRICES:
            _MATS.popitem(last=False)
        return m


def refresh(cache: Cache, embedder: Embedder | None, user_ids: list[str]) -> None:
    """Embed and load after a compile, so the next search finds the matrices ready."""
    if embedder is not None:
        for uid in user_ids:
            matrix(cache, embedder, uid)


def forget(cache: Cache) -> None:
    """Drop every in-memory matrix of this cache (after a rebuild, say)."""
    with _LOCK:
        for key in [k for k in _MATS if k[0] == str(cache.path)]:
            del _MATS[key]


def forget_user(user_id: str) -> None:
    """Drop the user's in-memory matrices (an erasure)."""
    with _LOCK:
        for key in [k for k in _MATS if k[2] == user_id]:
            del _MATS[key]


def forget_all() -> None:
    """Drop every in-memory matrix (tests; a process that swapped caches)."""
    with _LOCK:
        _MATS.clear()


# -- loading --------------------------------------------------------------------------
# One pass over the user's rows with their stored vector (if any); the text is read only for the
# rows that need embedding (``_texts``), so loading 100k stored vectors reads no content.
_TURNS = ("SELECT r.rowid, r.id, r.hash, v.hash, v.model, v.vec FROM raw r "
          "LEFT JOIN vectors v ON v.kind='turn' AND v.id=r.id "
          "WHERE r.user_id=? AND r.rowid>? AND r.quarantined IS NULL ORDER BY r.rowid")
_CLAIMS = ("SELECT c.rowid, c.id, c.hash, v.hash, v.model, v.vec FROM claims c "
           "LEFT JOIN vectors v ON v.kind='claim' AND v.id=c.id WHERE c.user_id=? AND c.rowid>? AND c.archived=0 "
           "ORDER BY c.rowid")


def _load(cache: Cache, embedder: Embedder, user_id: str, now: Stamp) -> Matrix:
    """The matrix from the saved file when it serves ``now`` (``index.vecfile``; rows added since
    are appended from SQLite), else from SQLite."""
    m = Matrix(now, embedder.dim, data=np.zeros((0, embedder.dim), np.float32))
    saved = vecfile.read(cache.path, user_id, embedder.name, embedder.dim, now) if SAVE else None
    if saved is not None:
        m.append(saved.kinds, saved.ids, saved.data, saved.rowids, saved.turns)
        m.raw_seen, m.claim_seen, m.stamp, m.saved = saved.raw_seen, saved.claim_seen, saved.stamp, m.n
        if m.stamp == now:
            return m
    _extend(cache, embedder, user_id, m, now)
    return m


SAVE = True  # False: never read or write the saved matrices (tests compare the two)
SAVE_AFTER = 256  # rows added since the file was written (at least; or an eighth) before it is rewritten


def _save(cache: Cache, embedder: Embedder, user_id: str, m: Matrix) -> None:
    """Write the matrix to its file when it has none or has outgrown it (see ``index.vecfile``)."""
    if not SAVE or m.turn_rowid is None or (m.saved >= 0 and m.n - m.saved < max(SAVE_AFTER, m.saved // 8)):
        return
    rowids = [-1] * m.n
    for rowid, at in zip(m.turn_rowid.tolist(), m.turn_at.tolist(), strict=True):
        rowids[at] = rowid
    vecfile.write(cache.path, user_id, embedder.name,
                  vecfile.Saved(m.stamp, m.kinds, m.ids, rowids, m.data[: m.n], m.raw_seen, m.claim_seen))
    m.saved = m.n


def _extend(cache: Cache, embedder: Embedder, user_id: str, m: Matrix, now: Stamp) -> None:
    db = cache.db
    turns = db.execute(_TURNS, (user_id, m.raw_seen)).fetchall()
    claims = db.execute(_CLAIMS, (user_id, m.claim_seen)).fetchall()
    units = [("turn", r[1]) for r in turns] + [("claim", c[1]) for c in claims]
    rows = turns + claims
    size = embedder.dim * 4
    good = [r[3] == r[2] and r[4] == embedder.name and r[5] is not None and len(r[5]) == size for r in rows]
    todo = [(kind, ident, r[2]) for (kind, ident), r, ok in zip(units, rows, good, strict=True) if not ok]
    fresh = _embed(cache, embedder, user_id, _texts(cache, todo))
    keep = [i for i, ok in enumerate(good) if ok or units[i] in fresh]  # a row deleted meanwhile is skipped
    if len(keep) == len(rows) and all(good):
        vecs = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32).reshape(len(rows), embedder.dim)
    elif keep:
        vecs = np.stack([np.frombuffer(rows[i][5], dtype=np.float32) if good[i] else fresh[units[i]] for i in keep])
    if keep:
        m.append([units[i][0] for i in keep], [units[i][1] for i in keep], vecs, [rows[i][0] for i in keep])
    m.raw_seen = max([m.raw_seen] + [r[0] for r in turns])
    m.claim_seen = max([m.claim_seen] + [c[0] for c in claims])
    m.stamp = now


def _texts(cache: Cache, todo: list[tuple[str, str, str]]) -> list[tuple[str, str, str, str]]:
    """(kind, id, text to embed, hash) for the rows without a usable stored vector."""
    out = []
    for kind, sql in (("turn", "SELECT id, content, speaker FROM raw WHERE id IN ({})"),
                      ("claim", "SELECT id, text, NULL FROM claims WHERE id IN ({})")):
        want = [(ident, h) for k, ident, h in todo if k == kind]
        for j in range(0, len(want), 900):
            part = want[j:j + 900]
            got = {i: (t, sp) for i, t, sp in cache.db.execute(sql.format(",".join("?" * len(part))),
                                                             [i for i, _h in part])}
            out += [(kind, i, turn_text(got[i][0], got[i][1]) if kind == "turn" else got[i][0], h)
                    for i, h in part if i in got]
    return out


def _embed(cache: Cache, embedder: Embedder, user_id: str, todo: list[tuple[str, str, str, str]]
           ) -> dict[tuple[str, str], np.ndarray]:
    out: dict[tuple[str, str], np.ndarray] = {}
    for i in range(0, len(todo), BATCH):
        part = todo[i:i + BATCH]
        vecs = np.asarray(embedder.embed([t[2] for t in part]), dtype=np.float32)
        rows = []
        for (kind, ident, _text, h), vec in zip(part, vecs, strict=True):
            out[(kind, ident)] = vec
            rows.append((kind, ident, user_id, embedder.name, h, vec.tobytes()))
        with cache.tx() as db:
            db.executemany("INSERT OR REPLACE INTO vectors(kind,id,user_id,model,hash,vec) VALUES (?,?,?,?,?,?)", rows)
    return out

"""An in-memory copy of one user's share of ``raw_fts``: BM25 that reproduces FTS5's ``bm25()``.

FTS5 ranks every row that matches a query (about 1.4 us a row: the per-row ``bm25()`` call
reads the row's sizes from ``raw_fts_docsize``) over every user's turns, and the owner and the
time filters are checked afterwards. The per-user index here scores only the user's own
matching turns, with numpy, in tens of microseconds, and gives *the same numbers*:

* tokens: ``porter unicode61 remove_diacritics 2`` splits ASCII text into runs of letters and
  digits, lower-cased, then Porter-stemmed (``read.stem``, checked against FTS5). Any
  whitespace-separated word holding a non-ASCII character is handed to FTS5 itself (a scratch
  in-memory FTS5 table with the same tokenizer and ``fts5vocab``), so Unicode folding,
  diacritics and categories are SQLite's own. Every document's token counts are checked
  against ``raw_fts_docsize`` when it is loaded: a mismatch disables the index for the user
  (searches then run in SQLite), it never ranks differently.
* statistics: the row count and token totals come from the FTS5 averages record (what
  ``bm25()`` reads); a term's row count is counted here when the cache holds this user alone,
  else read from ``fts5vocab`` (every user's rows count, as in FTS5).
* arithmetic: ``bm25()``'s expression, term by term in the query's order, in float64; a term's
  frequency adds the column weights instance by instance (body first), as ``xInst`` does.

Freshness: the index is checked against the cache's ``epoch`` and the user's ``user_gen``
counters on every search, inside one read transaction. A new turn is added, and the turns whose
neighbour context or answer link it changed are reloaded: ``index.text.relink_span`` says which
(the turns from the new ones' recording time on, plus ``NEIGHBOURS`` before). A deleted turn or
a changed text or quarantine (``user_gen.turns``) reloads the whole index, as does a new epoch.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field
from math import log
from typing import TYPE_CHECKING, Any

import numpy as np

from .cache import Cache
from .stem import stem
from .text import turn_speaker
from .userkeys import drop_user

if TYPE_CHECKING:
    from .topk import Scored

TOKENIZE = "porter unicode61 remove_diacritics 2"  # must equal raw_fts's (tests check)
K1 = 1.2
B = 0.75
MAX_INDEXES = 16  # least recently used per-user indexes beyond this are dropped
COMPACT_AT = 512  # changed turns (at least; or an eighth of all) before they fold into the base
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
logger = logging.getLogger("markmem.lexicon")

Stamp = tuple[str, int, int]  # (cache epoch, added, turns changed)
Info = tuple[str, str | None, str | None, str, int, int | None]  # a turn's ``light`` fields


# -- tokens ---------------------------------------------------------------------------------
class Tokens:
    """Term ids of texts, FTS5's way (see the module doc); ids are per index."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self._stems: dict[str, int] = {}  # raw ASCII token -> term id
        self._foreign: dict[str, tuple[int, ...]] = {}  # non-ASCII word -> term ids

    def term(self, term: str) -> int:
        i = self.ids.get(term)
        if i is None:
            i = self.ids[term] = len(self.ids)
        return i

    def ascii(self, token: str) -> int:
        i = self._stems.get(token)
        if i is None:
            i = self._stems[token] = self.term(stem(token))
        return i

    def text(self, text: str) -> list[int]:
        if text.isascii():
            toks = _ASCII_TOKEN.findall(text.lower())
            get = self._stems.get
            known = [get(t) for t in toks]
            if None in known:
                return [self.ascii(t) if o is None else o for o, t in zip(known, toks, strict=True)]
            return known  # type: ignore[return-value]
        out: list[int] = []
        words = text.split()  # whitespace always separates tokens in unicode61
        missing = [w for w in words if not w.isascii() and w not in self._foreign]
        if missing:
            for w, terms in zip(missing, fts5_tokens(missing), strict=True):
                self._foreign[w] = tuple(self.term(t) for t in terms)
        for w in words:
            if w.isascii():
                out += [self.ascii(t) for t in _ASCII_TOKEN.findall(w.lower())]
            else:
                out += self._foreign[w]
        return out

    def prefetch(self, texts: Iterable[str]) -> None:
        """Tokenize every non-ASCII word of ``texts`` in one scratch-table round."""
        missing = {w for t in texts if not t.isascii() for w in t.split()
                   if not w.isascii() and w not in self._foreign}
        if missing:
            words = sorted(missing)
            for w, terms in zip(words, fts5_tokens(words), strict=True):
                self._foreign[w] = tuple(self.term(t) for t in terms)


def query_terms(word: str) -> list[str]:
    """The FTS5 tokens of one query word (more than one: FTS5 matches it as a phrase)."""
    if word.isascii():
        return [stem(t) for t in _ASCII_TOKEN.findall(word.lower())]
    return list(fts5_tokens([word])[0])


_SCRATCH = threading.local()


def fts5_tokens(words: Sequence[str]) -> list[tuple[str, ...]]:
    """FTS5's own tokens for each text, from a scratch in-memory table with raw_fts's tokenizer."""
    db = getattr(_SCRATCH, "db", None)
    if db is None:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _SCRATCH.db = db
    db.execute("BEGIN")
    try:
        db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(words, 1))
        found: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in db.execute("SELECT term, doc, offset FROM v"):
            found.setdefault(doc, []).append((offset, term))
    finally:
        db.execute("ROLLBACK")
    return [tuple(t for _, t in sorted(found.get(i, ()))) for i in range(1, len(words) + 1)]


# -- FTS5's own numbers -----------------------------------------------------------------------
def varints(blob: bytes) -> list[int]:
    """SQLite varints (big-endian 7-bit groups; a 9th byte carries 8 bits), as FTS5 stores them."""
    if max(blob, default=0) < 0x80:
        return list(blob)
    out, i, n = [], 0, len(blob)
    while i < n:
        v = 0
        for k in range(9):
            c = blob[i]
            i += 1
            if k == 8:
                v = (v << 8) | c
                break
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        out.append(v)
    return out


def totals(db: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens in every column) of ``raw_fts``: the averages record ``bm25()`` reads."""
    row = db.execute("SELECT block FROM raw_fts_data WHERE id = 1").fetchone()
    return block_totals(None if row is None else row[0])


def block_totals(block: bytes | None) -> tuple[int, int]:
    """``totals`` from the averages record itself (the last answer is kept: searches read the same one)."""
    if not block:
        return 0, 0
    last = _LAST_TOTALS[0]  # one tuple: read whole, whatever another thread writes
    if last[0] == block:
        return last[1]
    v = varints(bytes(block))
    got = v[0], sum(v[1:])
    _LAST_TOTALS[0] = (bytes(block), got)
    return got


_LAST_TOTALS: list[tuple[bytes, tuple[int, int]]] = [(b"", (0, 0))]  # (the record, its totals)


# -- the per-user index -----------------------------------------------------------------------
@dataclass
class Lexicon:
    """One user's turns: postings per term (a CSR base plus recent changes), sizes, filters."""

    stamp: Stamp
    tokens: Tokens = field(default_factory=Tokens)
    n: int = 0
    rowid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    size: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # D: tokens in the row
    quarantined: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    valid_at: list[str] = field(default_factory=list)
    recorded_at: list[str] = field(default_factory=list)
    # what ranking reads of a turn (``light``): id, role, speaker, "Name: " head, question, answer
    # (a saved lexicon's decode each row when first read: ``lexstore.Rows``)
    info: MutableSequence[Info] = field(default_factory=list)
    pos: dict[int, int] = field(default_factory=dict)  # rowid -> doc
    raw_seen: int = 0
    # base postings (CSR by term id; docs ascending), and what replaced them since
    ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    # int32, or as ``lexstore`` saved them (uint8/uint16: widened term by term in ``postings``)
    doc: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    nb: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # instances in body
    nc: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # instances in context
    stale: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # base postings outdated
    any_stale: bool = False
    delta: dict[int, dict[int, tuple[int, int]]] = field(default_factory=dict)  # term -> doc -> (nb, nc)
    delta_terms: dict[int, list[int]] = field(default_factory=dict)  # doc -> its terms in delta
    total: int = 0  # tokens in all the user's rows (sum of ``size``)
    ok: bool = True  # False: a size disagreed with FTS5; the user's searches run in SQLite
    lock: threading.Lock = field(default_factory=threading.Lock)
    # derived, filled by searches (``topk``): phrase -> its bm25 terms at ``scored_at`` (stamp, totals)
    scored: dict[tuple[int, bool, float], Scored] = field(default_factory=dict)
    scored_at: tuple[Stamp, int, int] | None = None
    reads: int = 0  # rows ``light`` has read from a saved ``info`` (it is decoded whole past a quarter of it)

    # -- postings ---------------------------------------------------------------------------
    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(docs, body instances, context instances) of a term, docs ascending."""
        if term + 1 < len(self.ptr):
            a, b = int(self.ptr[term]), int(self.ptr[term + 1])
            docs, nb, nc = self.doc[a:b], self.nb[a:b], self.nc[a:b]
            if docs.dtype != np.int32 or nb.dtype != np.int32 or nc.dtype != np.int32:  # saved narrower (lexstore)
                docs, nb, nc = docs.astype(np.int32), nb.astype(np.int32), nc.astype(np.int32)
            if self.any_stale and b > a:
                keep = ~self.stale[docs]
                docs, nb, nc = docs[keep], nb[keep], nc[keep]
        else:
            docs = nb = nc = np.zeros(0, np.int32)
        extra = self.delta.get(term)
        if extra:
            d = np.fromiter(extra.keys(), np.int32, len(extra))
            cnt = np.array(list(extra.values()), np.int32).reshape(-1, 2)
            docs = np.concatenate([docs, d])
            nb = np.concatenate([nb, cnt[:, 0]])
            nc = np.concatenate([nc, cnt[:, 1]])
            order = np.argsort(docs, kind="stable")
            docs, nb, nc = docs[order], nb[order], nc[order]
        return docs, nb, nc

    # -- loading ----------------------------------------------------------------------------
    def _grow(self, need: int) -> None:
        if need <= len(self.rowid):
            return
        cap = max(need, 2 * len(self.rowid), 256)
        for name in ("rowid", "size", "quarantined", "stale"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def light(self, user_id: str, docs: Sequence[int], rowids: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """Rows as ``read.fts`` light rows (``TURN_COLS`` less what only a hit shows); ``rowids``:
        the docs' rowids when the caller has them."""
        info, valid_at = self.info, self.valid_at
        if type(info) is not list:  # a saved lexicon's rows, decoded one by one through a Python method
            self.reads += len(docs)
            settle = getattr(info, "settle", None)
            if settle is not None and self.reads * 4 > len(info):  # a warm process: read them as a list from now
                self.info = info = settle()
        if rowids is None:
            rowids = self.rowid[list(docs)].tolist() if len(docs) else []
        if len(docs) != len(rowids):
            raise ValueError("light: docs and rowids differ in length")
        # one comprehension (no append per row): ~40 rows a lane, every search
        return [{"rowid": rowid, "id": ident, "user_id": user_id, "role": role, "speaker": speaker,
                 "head": head, "valid_at": valid_at[d], "question": question, "answer": answer}
                for d, rowid in zip(docs, rowids, strict=False)  # lengths checked above
                for ident, role, speaker, head, question, answer in (info[d],)]

    def load(self, rows: list[tuple[Any, ...]]) -> None:
        """Build the base from rows of ``_ROW``."""
        tok = self.tokens
        tok.prefetch(t for r in rows for t in (r[1], r[2]))
        memo: dict[str, list[int]] = {}
        ib, ic = array("i"), array("i")
        lb, lc = array("i"), array("i")
        for _rowid, body, context, *_ in rows:
            t = tok.text(body)
            ib.extend(t)
            lb.append(len(t))
            k = len(ic)
            if context:
                for piece in context.split("\n"):
                    got = memo.get(piece)
                    if got is None:
                        got = memo[piece] = tok.text(piece)
                    ic.extend(got)
            lc.append(len(ic) - k)
        n = len(rows)
        self._grow(n)
        self.n = n
        self.rowid[:n] = [r[0] for r in rows]
        self.quarantined[:n] = [r[3] is not None for r in rows]
        self.valid_at = [r[4] for r in rows]
        self.recorded_at = [r[5] for r in rows]
        self.info = [_info(r) for r in rows]
        self.pos = {int(r[0]): i for i, r in enumerate(rows)}
        self.raw_seen = max(self.pos, default=0)
        nbody, nctx = np.frombuffer(lb, np.int32), np.frombuffer(lc, np.int32)
        self.size[:n] = nbody + nctx
        self.total = int(nbody.sum()) + int(nctx.sum())
        docs = np.arange(n, dtype=np.int64)
        self._set_base(np.frombuffer(ib, np.int32), np.repeat(docs, nbody), np.frombuffer(ic, np.int32),
                       np.repeat(docs, nctx))

    def _set_base(self, tb: np.ndarray, db: np.ndarray, tc: np.ndarray, dc: np.ndarray,
                  weights: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Postings from body and context instances (term, doc); with ``weights``, (term, doc)
        pairs come with their counts (``tb``/``db`` body, ``tc``/``dc`` context)."""
        n = max(self.n, 1)
        kb = tb.astype(np.int64) * n + db
        kc = tc.astype(np.int64) * n + dc
        if weights is None:  # count the instances: sort (term, doc, column) keys, measure the runs
            key = np.concatenate([kb * 2, kc * 2 + 1])
            key.sort()
            starts = np.flatnonzero(_first(key))
            counts = np.diff(np.append(starts, len(key))).astype(np.int32)
            key = key[starts]
        else:
            key = np.concatenate([kb * 2, kc * 2 + 1])
            counts = np.concatenate([weights[0], weights[1]]).astype(np.int32)
            order = np.argsort(key, kind="stable")
            key, counts = key[order], counts[order]
        col = (key & 1).astype(bool)
        pair = key >> 1
        first = _first(pair)
        group = np.cumsum(first) - 1
        keys = pair[first]
        nb = np.zeros(len(keys), np.int32)
        nc = np.zeros(len(keys), np.int32)
        nb[group[~col]] = counts[~col]
        nc[group[col]] = counts[col]
        term = keys // n
        self.doc = (keys % n).astype(np.int32)
        self.nb, self.nc = nb, nc
        self.ptr = np.searchsorted(term, np.arange(len(self.tokens.ids) + 1)).astype(np.int64)
        self.stale[: self.n] = False
        self.any_stale = False
        self.delta, self.delta_terms = {}, {}

    def upsert(self, rows: list[tuple[Any, ...]]) -> None:
        """Add new turns and re-index changed ones (same row shape as :meth:`load`)."""
        tok = self.tokens
        tok.prefetch(t for r in rows for t in (r[1], r[2]))
        for row in rows:
            rowid, body, context, quarantined, valid_at, recorded_at = row[:6]
            d = self.pos.get(int(rowid))
            if d is None:
                d = self.n
                self._grow(d + 1)
                self.n += 1
                self.rowid[d] = rowid
                self.pos[int(rowid)] = d
                self.valid_at.append(valid_at)
                self.recorded_at.append(recorded_at)
                self.info.append(_info(row))
                self.raw_seen = max(self.raw_seen, int(rowid))
            else:
                self.info[d] = _info(row)
                self.stale[d] = True
                self.any_stale = True
                for t in self.delta_terms.pop(d, ()):
                    self.delta[t].pop(d, None)
            self.quarantined[d] = quarantined is not None
            tb = tok.text(body)
            tc = tok.text(context) if context else []
            self.total += len(tb) + len(tc) - int(self.size[d])
            self.size[d] = len(tb) + len(tc)
            counts: dict[int, list[int]] = {}
            for t in tb:
                counts.setdefault(t, [0, 0])[0] += 1
            for t in tc:
                counts.setdefault(t, [0, 0])[1] += 1
            for t, (b, c) in counts.items():
                self.delta.setdefault(t, {})[d] = (b, c)
            self.delta_terms[d] = list(counts)
        if len(self.delta_terms) > max(COMPACT_AT, self.n // 8):
            self.compact()

    def compact(self) -> None:
        """Fold the recent changes into the base postings."""
        nterms = len(self.ptr) - 1
        term = np.repeat(np.arange(nterms, dtype=np.int64), np.diff(self.ptr))
        keep = ~self.stale[self.doc] if self.any_stale else np.ones(len(self.doc), bool)
        dt, dd, dnb, dnc = [], [], [], []
        for t, docs in self.delta.items():
            for d, (b, c) in docs.items():
                dt.append(t)
                dd.append(d)
                dnb.append(b)
                dnc.append(c)
        t_all = np.concatenate([term[keep], np.array(dt, np.int64)])
        d_all = np.concatenate([self.doc[keep].astype(np.int64), np.array(dd, np.int64)])
        b_all = np.concatenate([self.nb[keep], np.array(dnb, np.int32)])
        c_all = np.concatenate([self.nc[keep], np.array(dnc, np.int32)])
        hb, hc = b_all > 0, c_all > 0
        self._set_base(t_all[hb], d_all[hb], t_all[hc], d_all[hc], (b_all[hb], c_all[hc]))


def _first(a: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts (``a`` sorted)."""
    out = np.ones(len(a), bool)
    np.not_equal(a[1:], a[:-1], out=out[1:])
    return out


def _info(row: tuple[Any, ...]) -> tuple[str, str | None, str | None, str, int, int | None]:
    who = None if row[8] else turn_speaker(row[9] or "", None)
    return (row[6], row[7], row[8], f"{who}: " if who else "", row[10], row[11])


# -- the registry and freshness -----------------------------------------------------------------
_LEX: OrderedDict[tuple[str, str], Lexicon] = OrderedDict()
_LOCK = threading.Lock()
_ROW = "rowid, body, context, quarantined, valid_at, recorded_at, id, role, speaker, substr(content, 1, 80), " \
       "question, answer"


def stamp(db: sqlite3.Connection, user_id: str) -> Stamp:
    row = db.execute(
        "SELECT (SELECT value FROM meta WHERE key='epoch'), added, turns FROM user_gen WHERE user_id=?", (user_id,)
    ).fetchone()
    if row is None:
        epoch = db.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()
        return (str(epoch[0] if epoch else ""), 0, 0)
    return (str(row[0]), int(row[1] or 0), int(row[2] or 0))


def _fresh(cache: Cache, db: sqlite3.Connection, key: tuple[str, str], user_id: str) -> Lexicon | None:
    """The user's up-to-date index (call under ``_LOCK``, inside a read transaction); None while a
    user with more than ``SYNC_BUILD`` turns has no usable index: one is built in the background
    (:func:`_build_later`) and SQLite ranks until it is ready."""
    from . import lexstore

    now = stamp(db, user_id)
    lex = _LEX.get(key)
    if lex is None or lex.stamp[0] != now[0] or lex.stamp[2] != now[2]:
        lex = lexstore.load(cache.path, user_id, now)  # saved by an earlier process (or None)
        if lex is None and now[1] > SYNC_BUILD:
            _build_later(cache, key, user_id)
            return None
        if lex is None:
            lex = _build(db, user_id, now)
    if lex.stamp != now:
        _catch_up(db, lex, user_id)
        lex.stamp = now
    _keep(key, lex)
    if lexstore.due(cache.path, user_id, lex):
        lexstore.save(cache.path, user_id, lex)
    return lex


def _build(db: sqlite3.Connection, user_id: str, now: Stamp) -> Lexicon:
    lex = Lexicon(now)
    rows = db.execute(f"SELECT {_ROW} FROM raw WHERE user_id = ? ORDER BY rowid", (user_id,)).fetchall()
    lex.load(rows)
    lex.ok = _sizes_agree(db, lex, user_id, None)
    return lex


def _keep(key: tuple[str, str], lex: Lexicon) -> None:
    _LEX[key] = lex
    _LEX.move_to_end(key)
    while len(_LEX) > MAX_INDEXES:
        _LEX.popitem(last=False)


# Building an index costs ~80 us a turn (0.8 s at 10k turns). Up to this many rows (user_gen's
# ``added``: turns and claims) it is built by the search that needs it; above, by a background
# thread started when that search has returned (``start_pending``), so the first search of a big
# user costs what SQLite's ranking costs (a thread started at once would take the GIL from it).
SYNC_BUILD = 2_000
_PENDING: dict[tuple[str, str], tuple[Cache, str]] = {}
_BUILDING: dict[tuple[str, str], threading.Thread] = {}


def _build_later(cache: Cache, key: tuple[str, str], user_id: str) -> None:
    """Ask for the user's index to be built by :func:`start_pending` (call under ``_LOCK``)."""
    if key not in _BUILDING:
        _PENDING[key] = (cache, user_id)


def start_pending() -> None:
    """Start the builds searches asked for, one thread per user (``search`` calls it on return)."""
    if not _PENDING:
        return
    with _LOCK:
        for key, (cache, user_id) in list(_PENDING.items()):
            del _PENDING[key]
            if key not in _BUILDING:
                thread = threading.Thread(target=_work, args=(cache, key, user_id), name="markmem-lexicon",
                                          daemon=True)
                _BUILDING[key] = thread
                thread.start()


def _work(cache: Cache, key: tuple[str, str], user_id: str) -> None:
    try:
        db = cache.db  # this thread's own connection
        db.execute("BEGIN")
        try:
            lex = _build(db, user_id, stamp(db, user_id))
        finally:
            db.execute("COMMIT")
        with _LOCK:
            old = _LEX.get(key)
            keep = not cache.retired and (old is None or old.stamp[1] <= lex.stamp[1])
            if keep:
                _keep(key, lex)  # a stale one is caught up or rebuilt by the next search
        if keep:
            _save_built(cache, db, key, user_id, lex)
    except Exception as exc:  # the cache went away (closed, deleted, rebuilt): SQLite ranks
        logger.debug("lexicon build for a user failed: %s", exc)
    finally:
        cache.close()
        with _LOCK:
            _BUILDING.pop(key, None)


def _save_built(cache: Cache, db: sqlite3.Connection, key: tuple[str, str], user_id: str, lex: Lexicon) -> None:
    """Save a lexicon built in the background (``index.lexstore``) while it is still the user's
    current one: not dropped by an erasure meanwhile (``forget_user``), nor its user deleted."""
    from . import lexstore

    with _LOCK:  # a search may be catching it up meanwhile
        if _LEX.get(key) is lex and not cache.retired and lexstore.due(cache.path, user_id, lex) \
                and stamp(db, user_id) == lex.stamp:
            lexstore.save(cache.path, user_id, lex)


def wait_built(timeout: float | None = None) -> None:
    """Start what is pending and wait for the builds under way (benchmarks and tests)."""
    start_pending()
    with _LOCK:
        threads = list(_BUILDING.values())
    for thread in threads:
        thread.join(timeout)


Phrase = tuple[str, bool]  # (FTS5 term, body column only)


Seen = tuple[Stamp, tuple[int, int]]  # a stamp and ``totals`` read together (one statement)


def rank(cache: Cache, user_id: str, phrases: Sequence[Phrase], context_weight: float, as_of: str | None,
         known_at: str | None, limit: int, seen: Seen | None = None) -> list[dict[str, Any]] | None:
    """The user's top ``limit`` turns matching one of ``phrases`` (an OR query) that pass the
    filters (not quarantined; ``valid_at <= as_of``; ``recorded_at <= known_at``), best first,
    with ``-bm25(raw_fts, 1.0, context_weight)`` exactly as FTS5 computes it (``"bm25"``); ties
    by rowid. Light rows (see :meth:`Lexicon.light`). None when the index cannot answer for this
    user (the caller asks SQLite).

    ``seen``: the user's stamp and ``totals`` as the caller read them in one statement (a
    consistent snapshot, see ``read.fts.snapshot``). When the index is at that stamp and the
    cache holds this user's turns alone (every number ``bm25()`` needs is then in memory), no
    SQL runs; else the stamp is read again, inside a read transaction."""
    key = (str(cache.path), user_id)
    if seen is not None:
        now, sizes = seen
        with _LOCK:
            lex = _LEX.get(key)
            if lex is not None and lex.ok and lex.stamp == now and sizes[0] == lex.n:
                _LEX.move_to_end(key)
                return _score(cache.db, lex, user_id, phrases, context_weight, as_of, known_at, limit, sizes)
    db = cache.db
    own = not db.in_transaction
    if own:
        db.execute("BEGIN")
    try:
        with _LOCK:
            lex = _fresh(cache, db, key, user_id)
            if lex is None or not lex.ok:
                return None
            return _score(db, lex, user_id, phrases, context_weight, as_of, known_at, limit)
    finally:
        if own:
            db.execute("COMMIT")


def rows(cache: Cache, user_id: str, rowids: Sequence[int], as_of: str | None, known_at: str | None,
         now: Stamp) -> list[dict[str, Any]] | None:
    """Light rows of the user's turns by rowid (ascending), under ``rank``'s filters, from an index
    at stamp ``now``; None when there is none (the caller asks SQLite)."""
    with _LOCK:
        lex = _LEX.get((str(cache.path), user_id))
        if lex is None or not lex.ok or lex.stamp != now:
            return None
        pos, va, ra = lex.pos, lex.valid_at, lex.recorded_at
        docs, found = [], []
        for rowid in sorted(rowids):
            d = pos.get(rowid)
            if d is None or lex.quarantined[d]:
                continue
            if (as_of is not None and not va[d] <= as_of) or (known_at is not None and not ra[d] <= known_at):
                continue
            docs.append(d)
            found.append(rowid)
        return lex.light(user_id, docs, found)


def _score(db: sqlite3.Connection, lex: Lexicon, user_id: str, phrases: Sequence[Phrase], context_weight: float,
           as_of: str | None, known_at: str | None, limit: int,
           sizes: tuple[int, int] | None = None) -> list[dict[str, Any]] | None:
    """``rank``'s work on a fresh index; ``sizes``: ``totals(db)`` when the caller has read it.

    The phrases are scored in one pass (their postings end to end): every number is computed by
    the same float64 operations as a phrase at a time, and a row's phrase scores are added in
    the query's order (``np.add.at`` adds in index order), so the sums are bit for bit FTS5's."""
    nrow, ntok = totals(db) if sizes is None else sizes
    if nrow == 0 or lex.n == 0 or limit <= 0:
        return []
    alone = nrow == lex.n  # the cache holds this user's turns only: row counts are ours
    if alone and ntok != lex.total:
        lex.ok = False  # our token counts disagree with FTS5's: never rank differently
        return None
    avgdl = ntok / nrow
    from . import topk

    if topk.EARLY and alone and topk.worth(lex, phrases):  # the same rows and floats, scoring fewer postings
        return topk.rank(lex, user_id, phrases, context_weight, as_of, known_at, limit, (nrow, ntok))
    if topk.EARLY and alone:  # each phrase's terms as topk keeps them: the same floats as computed below
        lists = [s for s in topk.kept(lex, phrases, context_weight, (nrow, ntok)) if len(s.docs)]
        if not lists:
            return []
        if len(lists) == 1:
            return _best(lex, user_id, lists[0].docs, lists[0].score, as_of, known_at, limit)
        docs = np.concatenate([s.docs for s in lists])
        union = np.sort(docs)
        union = union[_first(union)]
        acc = np.zeros(len(union), np.float64)
        np.add.at(acc, np.searchsorted(union, docs), np.concatenate([s.score for s in lists]))  # the query's order
        return _best(lex, user_id, union, acc, as_of, known_at, limit)
    ids = lex.tokens.ids
    docs_l: list[np.ndarray] = []
    nb_l: list[np.ndarray] = []
    nc_l: list[np.ndarray] = []
    idfs: list[float] = []
    for term, body in phrases:
        tid = ids.get(term)
        if tid is None:
            continue
        docs, nb, nc = lex.postings(tid)
        if body:  # body instances only: the frequency is the body count (1.0 added per instance)
            has = nb > 0
            docs, nb = docs[has], nb[has]
            nc = np.zeros(len(docs), np.int32)
        if not len(docs):
            continue
        hits = len(docs) if alone else _row_count(db, term, body)
        idf = log((nrow - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        docs_l.append(docs)
        nb_l.append(nb)
        nc_l.append(nc)
        idfs.append(idf)
    if not docs_l:
        return []
    if len(docs_l) == 1:
        docs, nb, nc = docs_l[0], nb_l[0], nc_l[0]
        idf_at: np.ndarray | float = idfs[0]
    else:
        docs, nb, nc = np.concatenate(docs_l), np.concatenate(nb_l), np.concatenate(nc_l)
        idf_at = np.repeat(np.array(idfs, np.float64), [len(d) for d in docs_l])
    freq = _freq(nb, nc, context_weight)
    size = lex.size[docs]
    score = idf_at * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * size / avgdl)))  # bm25(), per phrase
    if len(docs_l) == 1:
        union, acc = docs, score
    else:
        union = np.sort(docs)
        union = union[_first(union)]
        acc = np.zeros(len(union), np.float64)
        np.add.at(acc, np.searchsorted(union, docs), score)  # in the query's order, row by row
    return _best(lex, user_id, union, acc, as_of, known_at, limit)


def _best(lex: Lexicon, user_id: str, union: np.ndarray, acc: np.ndarray, as_of: str | None, known_at: str | None,
          limit: int) -> list[dict[str, Any]]:
    """``_score``'s end: of the rows ``union`` (ascending) scoring ``acc``, the best ``limit`` passing the
    filters, ties by rowid, as light rows with ``bm25``."""
    gone = lex.quarantined[union]
    if as_of is not None or known_at is not None:
        va, ra = lex.valid_at, lex.recorded_at
        gone |= np.fromiter((not ((as_of is None or va[d] <= as_of) and (known_at is None or ra[d] <= known_at))
                             for d in union.tolist()), bool, len(union))
    if gone.any():
        keep = ~gone
        union, acc = union[keep], acc[keep]
    if len(acc) > limit:  # every row scoring at least the limit-th best (ties included)
        kth = np.partition(acc, len(acc) - limit)[len(acc) - limit]
        pick = np.flatnonzero(acc >= kth)
        union, acc = union[pick], acc[pick]
    best = sorted(zip((-acc).tolist(), lex.rowid[union].tolist(), union.tolist(), strict=True))[:limit]
    rows = lex.light(user_id, [d for _, _, d in best], [r for _, r, _ in best])
    for row, (score_, _, _) in zip(rows, best, strict=True):
        row["bm25"] = -score_
    return rows


_FREQ: dict[float, np.ndarray] = {}
_FREQ_MAX = 32


def _freq(nb: np.ndarray, nc: np.ndarray, weight: float) -> np.ndarray:
    """A phrase's frequency as ``bm25()`` adds it up: 1.0 per body instance, then ``weight``
    per context instance, one addition at a time (floating point: the order matters)."""
    table = _FREQ.get(weight)
    if table is None:
        rows = []
        for b in range(_FREQ_MAX):
            f = float(b)  # b additions of 1.0 from 0.0: exact (small integers), so the same float
            for _ in range(_FREQ_MAX):
                rows.append(f)
                f += weight
        table = _FREQ[weight] = np.array(rows, np.float64)
    code = nb * _FREQ_MAX + nc
    if int(code.max()) < len(table) and int(nc.max()) < _FREQ_MAX:
        return table.take(code)
    freq = np.empty(len(nb), np.float64)
    for i, (b, c) in enumerate(zip(nb.tolist(), nc.tolist(), strict=True)):
        f = 0.0
        for _ in range(b):
            f += 1.0
        for _ in range(c):
            f += weight
        freq[i] = f
    return freq


def _row_count(db: sqlite3.Connection, term: str, body: bool) -> int:
    """Rows of every user holding ``term`` (in the body column only, with ``body``): FTS5's nHit."""
    if body:
        sql = "SELECT doc FROM temp.raw_vocab_col WHERE term = ? AND col = 'body'"
        try:
            row = db.execute(sql, (term,)).fetchone()
        except sqlite3.OperationalError:  # a connection's first body-only count
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.raw_vocab_col USING fts5vocab(main, raw_fts, col)")
            row = db.execute(sql, (term,)).fetchone()
    else:
        row = db.execute("SELECT doc FROM raw_vocab WHERE term = ?", (term,)).fetchone()
    return int(row[0]) if row else 0


def _catch_up(db: sqlite3.Connection, lex: Lexicon, user_id: str) -> None:
    """New turns, and the older turns whose context or answer link they changed."""
    from .text import relink_span

    new = db.execute(f"SELECT {_ROW} FROM raw WHERE user_id = ? AND rowid > ? ORDER BY rowid",
                     (user_id, lex.raw_seen)).fetchall()
    if not new:
        return
    changed = relink_span(db, user_id, min(r[5] for r in new), lex.raw_seen, _ROW)
    rows = [r for r in changed if r[0] <= lex.raw_seen] + new
    lex.upsert(rows)
    if lex.ok:
        lex.ok = _sizes_agree(db, lex, user_id, [r[0] for r in rows])


def _sizes_agree(db: sqlite3.Connection, lex: Lexicon, user_id: str, rowids: list[int] | None) -> bool:
    """Every (given) document's token count equals FTS5's (``raw_fts_docsize``)."""
    if rowids is None:
        got = db.execute("SELECT d.id, d.sz FROM raw r JOIN raw_fts_docsize d ON d.id = r.rowid WHERE r.user_id = ?",
                         (user_id,)).fetchall()
    else:
        marks = ",".join("?" * len(rowids))
        got = db.execute(f"SELECT id, sz FROM raw_fts_docsize WHERE id IN ({marks})", rowids).fetchall()
    if len(got) != (lex.n if rowids is None else len(rowids)):
        return False
    for rowid, sz in got:
        if sum(varints(bytes(sz))) != lex.size[lex.pos[int(rowid)]]:
            return False
    return True


def forget(cache: Cache) -> None:
    """Drop every in-memory index of this cache."""
    with _LOCK:
        for key in [k for k in _LEX if k[0] == str(cache.path)]:
            del _LEX[key]


def forget_user(user_id: str) -> None:
    """Drop the user's in-memory indexes (an erasure: they hold the user's words)."""
    from . import lexstore

    with _LOCK:
        drop_user(user_id, _LEX, _PENDING)
    lexstore.forget_user(user_id)


def forget_all() -> None:
    from . import lexstore

    with _LOCK:
        _LEX.clear()
    lexstore.forget_all()

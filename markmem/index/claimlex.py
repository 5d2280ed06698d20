"""An in-memory copy of one user's ``claims_fts``: the claim lane's BM25 without SQLite.

The claim lane (``read.fts.claim_lane``) asks FTS5 for the user's live claims matching an OR of
the query's words, best ``bm25()`` first. That statement was the largest SQLite step left in a
warm search (~0.4-0.7 ms at 1,400 claims: FTS5 scores every matching row, then each is joined
and filtered). Here the user's claims are tokenized once (``lexicon.Tokens``: FTS5's tokens) and
scored with ``bm25()``'s own expression in float64, so the rows, their order and the ``bm25``
numbers are SQLite's, bit for bit:

* statistics: the row count and token total are FTS5's averages record (``claims_fts_data``
  id 1), read by the search's snapshot; a term's row count is counted here, which is FTS5's
  only while the cache file's claims are all this user's (the per-user file). When they are not
  (``cache_layout="one"`` with several users), or a claim's token count disagrees with
  ``claims_fts_docsize``, or a column holds a type SQL would compare differently, the index
  answers None and SQLite ranks.
* order: FTS5 scans matches by rowid and the ORDER BY keeps ties in scan order, so ties go by
  rowid, ascending.
* freshness: an index is used only at the stamp it was read at (cache epoch, the user's
  ``user_gen.changed``, the averages record): a claim inserted changes the record, one updated
  or deleted bumps ``changed``. A process's first ``SQL_FIRST`` claim searches of a user run in
  SQLite (~1 ms each at 1,400 claims); the index is read after them (~50 ms at 1,400 claims,
  most of it stemming words), so a short-lived process (a CLI call, a serverless handler) never
  reads it and a long-lived one reads it once.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import log
from typing import Any

import numpy as np

from .cache import Cache
from .lexicon import K1, B, Tokens, _first, block_totals, varints
from .userkeys import drop_user

Stamp = tuple[str, int, bytes]  # (cache epoch, user_gen.changed, claims_fts averages record)
MAX_INDEXES = 16
ENABLED = True  # False: the claim lane always asks SQLite (tests compare the two)
_COLS = "rowid, id, user_id, type, provenance, valid_from, sources, subject, valid_until, recorded_at, " \
        "closed_at, archived, body"


@dataclass
class ClaimIndex:
    """A user's claims (archived ones too: they count in FTS5's statistics) and their postings."""

    stamp: Stamp
    rows: list[tuple[Any, ...]] = field(default_factory=list)  # ``_COLS`` less body, by doc
    rowid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    size: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # term -> its postings in doc and tf
    doc: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # postings by term, docs ascending
    tf: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # instances in the doc
    nrow: int = 0
    ntok: int = 0
    ok: bool = True
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # the user's, not archived
    bounds: list[str] = field(default_factory=list)  # every valid_from and valid_until, sorted
    valid: tuple[int, np.ndarray] | None = None  # (window, live claims valid in it): see ``valid_at``
    terms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # term -> (docs, bm25 terms)

    def valid_at(self, now: str) -> np.ndarray:
        """The live claims valid at ``now`` (the current-time filter). Which claims pass changes only
        where ``now`` crosses a claim's ``valid_from`` or ``valid_until``, so the answer is kept for
        the window between two such boundaries."""
        window = bisect_right(self.bounds, now)
        kept = self.valid  # one tuple: read whole, whatever another thread writes
        if kept is not None and kept[0] == window:
            return kept[1]
        mask = self.live & np.fromiter((_current(r, None, None, now) for r in self.rows), bool, len(self.rows))
        self.valid = (window, mask)
        return mask


MAX_TERMS = 4096  # terms whose bm25 terms an index keeps (a claim lane reads a few a search)
_INDEXES: OrderedDict[tuple[str, str], ClaimIndex] = OrderedDict()
_ASKED: OrderedDict[tuple[str, str], int] = OrderedDict()  # claim searches SQLite answered, per user
SQL_FIRST = 8  # a process's first claim searches of a user that SQLite answers (see the module doc)
_LOCK = threading.Lock()


def rank(cache: Cache, user_id: str, terms: Sequence[str], limit: int, as_of: str | None, known_at: str | None,
         now: str, seen: Stamp) -> list[dict[str, Any]] | None:
    """The user's top ``limit`` live claims for an OR of ``terms`` (FTS5 terms, one token each)
    under the claim lane's time filters (``now``: the present, when neither ``as_of`` nor
    ``known_at`` is given), as ``read.fts.claim_lane`` rows with ``bm25``; None when the index
    cannot answer (the caller asks SQLite). ``seen``: the stamp the search read."""
    index = _index(cache, user_id, seen)
    if index is None or not index.ok:
        return None
    return _score(index, user_id, terms, limit, as_of, known_at, now)


def _index(cache: Cache, user_id: str, seen: Stamp) -> ClaimIndex | None:
    key = (str(cache.path), user_id)
    with _LOCK:
        got = _INDEXES.get(key)
        if got is not None and got.stamp == seen:
            _INDEXES.move_to_end(key)
            return got
        asked = _ASKED.get(key, 0)
        if got is None and asked < SQL_FIRST:  # a process's first claim searches: SQLite answers
            _ASKED[key] = asked + 1
            while len(_ASKED) > 10_000:
                _ASKED.popitem(last=False)
            return None
    index = _load(cache, user_id, seen)
    if index is None:
        return None
    with _LOCK:
        _INDEXES[key] = index
        _INDEXES.move_to_end(key)
        while len(_INDEXES) > MAX_INDEXES:
            _INDEXES.popitem(last=False)
    return index


def stamp_sql(user: str = "?1") -> str:
    """The columns of a stamp, for a snapshot statement (``read.fts.snapshot``)."""
    return f"(SELECT changed FROM user_gen WHERE user_id = {user}), (SELECT block FROM claims_fts_data WHERE id = 1)"


def _load(cache: Cache, user_id: str, seen: Stamp) -> ClaimIndex | None:
    """The index read in one read transaction; None when the stamp moved since the search read it
    (the search then asks SQLite; the next one reads the index)."""
    db = cache.db
    own = not db.in_transaction
    if own:
        db.execute("BEGIN")
    try:
        epoch, changed, block = db.execute(
            f"SELECT (SELECT value FROM meta WHERE key = 'epoch'), {stamp_sql()}", (user_id,)).fetchone()
        if (str(epoch), int(changed or 0), bytes(block or b"")) != seen:
            return None
        rows = db.execute(f"SELECT {_COLS} FROM claims WHERE user_id = ? ORDER BY rowid", (user_id,)).fetchall()
        sizes = dict(db.execute("SELECT d.id, d.sz FROM claims c JOIN claims_fts_docsize d ON d.id = c.rowid "
                                "WHERE c.user_id = ?", (user_id,)).fetchall())
    finally:
        if own:
            db.execute("COMMIT")
    return build(seen, rows, sizes, _tokens(cache, user_id))


def build(seen: Stamp, rows: list[tuple[Any, ...]], sizes: dict[int, bytes], tokens: Tokens | None = None
          ) -> ClaimIndex:
    """The index of ``rows`` (``_COLS``); ``sizes``: FTS5's docsize records by rowid, checked;
    ``tokens``: a tokenizer whose words are already stemmed (the user's turn lexicon's, copied)."""
    index = ClaimIndex(seen)
    index.nrow, index.ntok = block_totals(seen[2])
    tokens = tokens or Tokens()
    tokens.prefetch(r[-1] for r in rows)
    terms, docs, tfs = array("i"), array("i"), array("i")
    size = []
    for d, row in enumerate(rows):
        ids = tokens.text(row[-1])
        size.append(len(ids))
        counts: dict[int, int] = {}
        for t in ids:
            counts[t] = counts.get(t, 0) + 1
        terms.extend(counts)
        docs.extend([d] * len(counts))
        tfs.extend(counts.values())
        sz = sizes.get(row[0])
        if sz is None or sum(varints(bytes(sz))) != len(ids) or not _plain(row):
            index.ok = False
    order = np.argsort(np.frombuffer(terms, np.int32), kind="stable")  # by term, docs ascending within
    index.doc = np.frombuffer(docs, np.int32)[order].astype(np.int64)
    index.tf = np.frombuffer(tfs, np.int32)[order].astype(np.float64)
    by_term = np.frombuffer(terms, np.int32)[order]
    starts = np.flatnonzero(_first(by_term)).tolist()
    names = list(tokens.ids)  # a term's id is its place in the dict
    index.spans = {names[t]: (a, b) for t, a, b in zip(by_term[starts].tolist(), starts, [*starts[1:], len(order)],
                                                        strict=True)}
    index.rows = [r[:-1] for r in rows]
    index.live = np.array([r[11] == 0 for r in rows], bool)
    index.bounds = sorted({v for r in rows for v in (r[5], r[8]) if isinstance(v, str)})
    index.rowid = np.array([r[0] for r in rows], np.int64)
    index.size = np.array(size, np.float64)
    # the user's claims are all of the file's (FTS5's row counts are then ours) and their tokens agree
    index.ok = index.ok and index.nrow == len(rows) and index.ntok == sum(size)
    return index


def _tokens(cache: Cache, user_id: str) -> Tokens:
    """A copy of the user's turn lexicon's tokenizer when it is in memory (its words are stemmed
    already: stemming a thousand words costs ~30 ms), else a new one."""
    from . import lexicon

    out = Tokens()
    with lexicon._LOCK:
        lex = lexicon._LEX.get((str(cache.path), user_id))
        if lex is not None:
            out.ids, out._stems, out._foreign = dict(lex.tokens.ids), dict(lex.tokens._stems), \
                dict(lex.tokens._foreign)
    return out


def _plain(row: tuple[Any, ...]) -> bool:
    """The filtered columns compare in Python as in SQL: text or NULL dates, an integer flag."""
    return all(v is None or isinstance(v, str) for v in (row[5], row[8], row[9], row[10])) and isinstance(row[11], int)


def _score(index: ClaimIndex, user_id: str, terms: Sequence[str], limit: int, as_of: str | None,
           known_at: str | None, now: str) -> list[dict[str, Any]]:
    """``bm25()`` as FTS5 computes it: per phrase in the query's order, summed row by row."""
    if index.nrow == 0 or limit <= 0:
        return []
    avgdl = index.ntok / index.nrow
    docs_l, score_l = [], []
    kept = index.terms  # a term's docs and terms depend on the index alone: made once per index
    for term in terms:
        got = kept.get(term)
        if got is None:
            span = index.spans.get(term)
            if span is None:
                continue
            docs, tf = index.doc[span[0]:span[1]], index.tf[span[0]:span[1]]
            hits = len(docs)
            idf = log((index.nrow - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            size = index.size[docs]
            got = docs, idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * size / avgdl)))
            if len(kept) < MAX_TERMS:
                kept[term] = got
        docs_l.append(got[0])
        score_l.append(got[1])
    if not docs_l:
        return []
    if len(docs_l) == 1:
        union, acc = docs_l[0], score_l[0]
    else:
        docs = np.concatenate(docs_l)
        union = np.sort(docs)
        union = union[_first(union)]
        acc = np.zeros(len(union), np.float64)
        np.add.at(acc, np.searchsorted(union, docs), np.concatenate(score_l))  # in the query's order
    if as_of is None and known_at is None:
        keep = index.valid_at(now)[union]
    else:
        rows = index.rows
        keep = index.live[union] & np.fromiter((_current(rows[d], as_of, known_at, now) for d in union.tolist()),
                                               bool, len(union))
    union, acc = union[keep], acc[keep]
    if len(acc) > limit:  # every row scoring at least the limit-th best (ties included)
        kth = np.partition(acc, len(acc) - limit)[len(acc) - limit]
        pick = np.flatnonzero(acc >= kth)
        union, acc = union[pick], acc[pick]
    order = np.lexsort((index.rowid[union], -acc))[:limit]
    out = []
    for d, score in zip(union[order].tolist(), acc[order].tolist(), strict=True):
        row = index.rows[d]
        out.append({"id": row[1], "user_id": row[2], "type": row[3], "provenance": row[4], "valid_from": row[5],
                    "sources": row[6], "subject": row[7], "bm25": score})
    return out


def _current(row: tuple[Any, ...], as_of: str | None, known_at: str | None, now: str) -> bool:
    """``read.fts.claim_time``'s filters on one claim (``row``: ``_COLS``)."""
    valid_from, valid_until, recorded_at, closed_at = row[5], row[8], row[9], row[10]
    if as_of is None and known_at is None:
        return (valid_until is None or valid_until > now) and (valid_from is None or valid_from <= now)
    if as_of is not None and not ((valid_from is None or valid_from <= as_of)
                                  and (valid_until is None or valid_until > as_of)):
        return False
    return known_at is None or (recorded_at is not None and recorded_at <= known_at
                                and (closed_at is None or closed_at > known_at))


def forget_user(user_id: str) -> None:
    """Drop the user's indexes (an erasure: they hold the user's claims)."""
    with _LOCK:
        drop_user(user_id, _INDEXES, _ASKED)


def forget_all() -> None:
    with _LOCK:
        _INDEXES.clear()
        _ASKED.clear()

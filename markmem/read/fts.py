"""Lexical lanes over FTS5 (BM25): claims, raw turns, and the exact lane; filtered by user and time.

The turn lane ranks in memory (``index.lexicon``: FTS5's bm25() numbers over the user's own
turns) and asks SQLite only when that index cannot answer (``sql_turn_lane``).

Every lane returns light rows (what ranking needs; a turn's row also holds what its hit
shows, so a turn hit needs no second read); ``hydrate`` fetches full rows for the few claim
hits returned. The same time filters apply to every lane, so a vector-only candidate passes
through ``filtered`` before it may rank.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ids import now as utc_now
from ..index import claimlex, lexicon
from ..index.cache import Cache
from ..index.text import NEIGHBOURS
from .query import MAX_TERMS, phrase, quote
from .stem import stem

TURN_COLS = "r.rowid AS rowid, r.id AS id, r.user_id AS user_id, r.role AS role, r.speaker AS speaker, " \
            "substr(r.content, 1, 80) AS head, r.valid_at AS valid_at, r.question AS question, r.answer AS answer, " \
            "r.content AS content, r.path AS path, r.occurred_at AS occurred_at, r.metadata AS metadata"
CLAIM_COLS = "c.id AS id, c.user_id AS user_id, c.type AS type, c.provenance AS provenance, " \
             "c.valid_from AS valid_from, c.sources AS sources, c.subject AS subject"
Row = dict[str, Any]
PROBE_EXTRA = 0.25  # the turn lane looks up this share more than its limit (see turn_lane)


@dataclass(frozen=True)
class Snapshot:
    """What a search's freshness checks read, in one statement (so one consistent read): the
    cache epoch, the highest raw rowid, the user's ``user_gen`` counters, ``raw_fts``'s totals
    (``lexicon.totals``) and whether the user has a live claim."""

    epoch: str | None
    max_rowid: int
    gen: tuple[int, int, int] | None  # user_gen (added, changed, turns); None: no row yet
    fts_rows: int
    fts_tokens: int
    claims: bool
    claims_stamp: claimlex.Stamp | None = None  # what the in-memory claim lane compares

    def lexicon(self) -> lexicon.Seen:
        """The stamp (``lexicon.stamp``) and totals the lexicon compares."""
        if self.gen is None:
            return (str(self.epoch if self.epoch else ""), 0, 0), (self.fts_rows, self.fts_tokens)
        return (str(self.epoch), self.gen[0], self.gen[2]), (self.fts_rows, self.fts_tokens)

    def vectors(self) -> tuple[str, int, int]:
        """The stamp the vector matrix compares (``index.vectors.stamp``)."""
        added, changed, _ = self.gen or (0, 0, 0)
        return (str(self.epoch), added, changed)


_SNAPSHOT = (
    "SELECT (SELECT value FROM meta WHERE key = 'epoch'), (SELECT max(rowid) FROM raw), g.user_id, g.added, "
    "g.changed, g.turns, (SELECT block FROM raw_fts_data WHERE id = 1), "
    "EXISTS (SELECT 1 FROM claims WHERE user_id = ?1 AND archived = 0), "
    "(SELECT block FROM claims_fts_data WHERE id = 1) "
    "FROM (SELECT 1) LEFT JOIN user_gen g ON g.user_id = ?1"
)


def snapshot(cache: Cache, user_id: str) -> Snapshot:
    epoch, top, gen_user, added, changed, turns, block, claims, claim_block = \
        cache.db.execute(_SNAPSHOT, (user_id,)).fetchone()
    gen = None if gen_user is None else (int(added or 0), int(changed or 0), int(turns or 0))
    rows, tokens = lexicon.block_totals(block)
    return Snapshot(epoch, int(top or 0), gen, rows, tokens, bool(claims),
                    (str(epoch), int(changed or 0), bytes(claim_block or b"")))


def prune(cache: Cache, terms: Sequence[str], budget: int) -> tuple[str | None, list[str]]:
    """The turn lane's MATCH expression within a cost budget; and the terms it left out (see ``plan``)."""
    full, body, dropped = plan(cache, terms, budget)
    return match_of(full, body), dropped


def match_of(full: Sequence[str], body: Sequence[str]) -> str | None:
    """``"a" OR "b" OR body : "c"``: the turn lane's MATCH expression."""
    parts = [quote(w) for w in full] + ["body : " + quote(w) for w in body]
    return " OR ".join(parts) or None


def plan(cache: Cache, terms: Sequence[str], budget: int,
         snap: Snapshot | None = None) -> tuple[list[str], list[str], list[str]]:
    """The turn lane's terms within a cost budget: (matched anywhere, matched in the turn's own
    text only, left out).

    FTS5 computes BM25 for every matching row (~1 us each), so cost follows the terms' row
    counts; a query within ``budget`` is left alone. Otherwise a term in over half the rows (a
    speaker's name on every "Name: ..." line) goes: FTS5 floors its IDF at ~0, so it ranks
    nothing. The others are taken rarest first while the rows they match fit in ``budget``; a
    term that no longer fits is matched in the turn's own text only (not in its neighbours'
    context, ~1/5 of the rows), or left out if even that does not fit. The rarest term always
    stays. Counts come from ``raw_vocab``; a term it does not know counts as rare.
    """
    words = list(terms)
    if len(words) <= 1:
        return words[:MAX_TERMS], [], []
    stems = {w: stem(w) for w in words if w.isalnum()}
    if snap is None:
        total, epoch = cache.db.execute(
            "SELECT max(rowid), (SELECT value FROM meta WHERE key = 'epoch') FROM raw").fetchone()
    else:
        total, epoch = snap.max_rowid, snap.epoch
    df = term_counts(cache, set(stems.values()), total or 0, epoch)
    count = {w: df.get(stems.get(w, ""), 0) for w in words}
    if sum(count.values()) <= budget:
        return words[:MAX_TERMS], [], []
    body_share = 1.0 / (1 + 2 * NEIGHBOURS)
    full: list[str] = []
    body: list[str] = []
    spent = 0.0
    for w in sorted(words, key=lambda w: (count[w], words.index(w))):
        if full and 2 * count[w] > total:
            continue
        if not full or spent + count[w] <= budget:
            full.append(w)
            spent += count[w]
        elif spent + count[w] * body_share <= budget:
            body.append(w)
            spent += count[w] * body_share
    return ([w for w in words if w in full], [w for w in words if w in body],
            [w for w in words if w not in full and w not in body])


_VOCAB: OrderedDict[tuple[str, str], tuple[int, dict[str, int]]] = OrderedDict()  # (cache, epoch) -> counts
_DF_LOCK = threading.Lock()
MAX_VOCABS = 8


def row_count(cache: Cache, term: str, total: int) -> int:
    """Rows holding a stemmed term, from ``raw_vocab``. Looking a term up walks its doclist (a
    common one costs ~0.3 ms at 100k rows), so the whole table is read into memory at once (30 ms
    at 10k rows, 0.2 s at 100k) and kept per process until the table has grown by a tenth: the
    counts only steer cost."""
    epoch = cache.db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
    return vocabulary(cache, total, epoch[0] if epoch else None).get(term, 0)


def forget_vocabularies() -> None:
    """Drop every kept term count (an erasure: the terms are words of the users')."""
    with _DF_LOCK:
        _VOCAB.clear()
        _MISSES.clear()


_MISSES: dict[tuple[str, str], int] = {}  # (cache, epoch) -> searches that looked terms up one by one
LOOKUPS_FIRST = 2  # a process's first searches of a cache look their terms up instead of reading all


def term_counts(cache: Cache, wanted: set[str], total: int, epoch: str | None) -> dict[str, int]:
    """The row counts of ``wanted`` terms: from the kept vocabulary (``vocabulary``), or, for the
    first ``LOOKUPS_FIRST`` searches of a process, from ``raw_vocab`` term by term (the numbers a
    whole read would give, without reading 30k terms to rank a fresh process's first search)."""
    key = (str(cache.path), str(epoch or ""))
    with _DF_LOCK:
        hit = _VOCAB.get(key)
        fresh = hit is not None and hit[0] <= total <= hit[0] * 1.1 + 10
        early = not fresh and _MISSES.get(key, 0) < LOOKUPS_FIRST
        if early:
            _MISSES[key] = _MISSES.get(key, 0) + 1
            while len(_MISSES) > 10_000:
                _MISSES.pop(next(iter(_MISSES)))
    if early:
        sql = "SELECT doc FROM raw_vocab WHERE term = ?"
        return {t: int(r[0]) if (r := cache.db.execute(sql, (t,)).fetchone()) else 0 for t in wanted}
    vocab = vocabulary(cache, total, epoch)
    return {t: vocab.get(t, 0) for t in wanted}


def vocabulary(cache: Cache, total: int, epoch: str | None) -> dict[str, int]:
    """Every term's row count, read at once and kept per (cache, epoch) (see ``row_count``)."""
    key = (str(cache.path), str(epoch or ""))
    with _DF_LOCK:
        hit = _VOCAB.get(key)
        if hit is not None and hit[0] <= total <= hit[0] * 1.1 + 10:
            _VOCAB.move_to_end(key)
            return hit[1]
    counts = {str(t): int(d) for t, d in cache.db.execute("SELECT term, doc FROM raw_vocab")}
    with _DF_LOCK:
        _VOCAB[key] = (total, counts)
        _VOCAB.move_to_end(key)
        while len(_VOCAB) > MAX_VOCABS:
            _VOCAB.popitem(last=False)
    return counts


def turn_lane(cache: Cache, full: Sequence[str], body: Sequence[str], user_id: str, limit: int, as_of: str | None,
              known_at: str | None, context_weight: float = 0.3, snap: Snapshot | None = None) -> list[Row]:
    """The user's top ``limit`` turns by BM25 for ``match_of(full, body)``, under the time filters.

    Ranked by the in-memory lexicon (``index.lexicon``: FTS5's own bm25() numbers, over this
    user's turns only), else (a query word FTS5 would read as a phrase; a lexicon that
    disagreed with FTS5) by SQLite (``sql_turn_lane``). Both give the same rows and scores.
    """
    phrases: list[lexicon.Phrase] = []
    for words, in_body in ((full, False), (body, True)):
        for w in words:
            toks = _query_token(w)
            if toks is None:
                break
            phrases.append((toks, in_body))
    match = match_of(full, body)
    if match is None:
        return []
    ranked = None
    if LEXICON and len(phrases) == len(full) + len(body):
        ranked = lexicon.rank(cache, user_id, phrases, context_weight, as_of, known_at, limit,
                              None if snap is None else snap.lexicon())
    if ranked is not None:
        return ranked
    return sql_turn_lane(cache, match, user_id, limit, as_of, known_at, context_weight)


LEXICON = True  # False: always rank in SQLite (tests and benchmarks compare the two)
_TOKENS: OrderedDict[str, str | None] = OrderedDict()


def _query_token(word: str) -> str | None:
    """A query word's one FTS5 term; None when FTS5 reads it as a phrase of several (or none)."""
    hit = _TOKENS.get(word, "")
    if hit != "":
        return hit
    toks = lexicon.query_terms(word)
    term = toks[0] if len(toks) == 1 else None
    with _DF_LOCK:
        _TOKENS[word] = term
        while len(_TOKENS) > 50_000:
            _TOKENS.popitem(last=False)
    return term


def sql_turn_lane(cache: Cache, match: str, user_id: str, limit: int, as_of: str | None, known_at: str | None,
                  context_weight: float = 0.3) -> list[Row]:
    """The turn lane in SQLite: the user's top ``limit`` turns by BM25, under the time filters.

    Joining ``raw`` for the owner and filters costs about as much per matching row as BM25
    itself, so the FTS5 index is ranked alone first, for its top ``limit x (1 + PROBE_EXTRA)``
    rows; only those are looked up and filtered. When ``limit`` of them pass (or the probe saw
    every match) that is exactly the joined query's answer; else (a user owning few of the
    matching rows, a narrow ``as_of``) the joined query runs, and runs first for that user's
    next ``JOIN_RUN`` searches (with the same kind of filter) before a probe is tried again.
    """
    where, params = turn_time(as_of, known_at)
    key = (str(cache.path), user_id, bool(where))
    if key in _JOIN_FIRST:
        return _turn_join(cache, match, user_id, limit, where, params, context_weight, key)
    probe = limit + max(1, int(limit * PROBE_EXTRA))
    scored = cache.db.execute(
        "SELECT rowid, -bm25(raw_fts, 1.0, ?) AS bm25 FROM raw_fts WHERE raw_fts MATCH ? "
        "ORDER BY bm25 DESC, rowid LIMIT ?",
        (context_weight, match, probe + 1),
    ).fetchall()
    if not scored:
        return []
    ids = [rowid for rowid, _ in scored[:probe]]
    found = {r["rowid"]: r for r in cache.rows(
        f"SELECT {TURN_COLS} FROM raw r WHERE r.rowid IN ({','.join('?' * len(ids))}) AND +r.user_id = ? "
        f"AND r.quarantined IS NULL {where}", [*ids, user_id, *params])}
    out: list[Row] = []
    for rowid, bm25 in scored[:probe]:
        row = found.get(rowid)
        if row is not None:
            row["bm25"] = bm25
            out.append(row)
            if len(out) == limit:
                return out
    if len(scored) <= probe:  # every match was seen
        return out
    _remember(key)
    return _turn_join(cache, match, user_id, limit, where, params, context_weight, None)


_JOIN_FIRST: OrderedDict[tuple[str, str, bool], int] = OrderedDict()  # key -> joined searches left
JOIN_RUN = 32  # after a probe fell short, this many searches of that user go straight to the join


def _remember(key: tuple[str, str, bool]) -> None:
    with _DF_LOCK:
        _JOIN_FIRST[key] = JOIN_RUN
        if len(_JOIN_FIRST) > 10_000:
            _JOIN_FIRST.popitem(last=False)


def _turn_join(cache: Cache, match: str, user_id: str, limit: int, where: str, params: list[str],
               context_weight: float, key: tuple[str, str, bool] | None) -> list[Row]:
    """The turn lane as one joined query (the filters apply to every matching row)."""
    if key is not None:
        with _DF_LOCK:
            left = _JOIN_FIRST.get(key, 1) - 1
            if left > 0:
                _JOIN_FIRST[key] = left
            else:
                _JOIN_FIRST.pop(key, None)  # the next search probes again
    sql = (
        f"SELECT {TURN_COLS}, -bm25(raw_fts, 1.0, ?) AS bm25 FROM raw_fts JOIN raw r ON r.rowid = raw_fts.rowid "
        f"WHERE raw_fts MATCH ? AND r.user_id = ? AND r.quarantined IS NULL {where} ORDER BY bm25 DESC, r.rowid LIMIT ?"
    )
    return cache.rows(sql, [context_weight, match, user_id, *params, limit])


def claim_lane(cache: Cache, match: str, user_id: str, limit: int, as_of: str | None,
               known_at: str | None, terms: Sequence[str] | None = None, snap: Snapshot | None = None) -> list[Row]:
    """The user's top ``limit`` live claims by BM25 for ``match`` (the OR of ``terms``), under the
    time filters: from the in-memory index (``index.claimlex``) when it can answer, else SQLite."""
    present = utc_now()
    if terms is not None and snap is not None and snap.claims_stamp is not None and claimlex.ENABLED:
        toks = [_query_token(w) for w in terms[:MAX_TERMS]]
        if None not in toks:
            got = claimlex.rank(cache, user_id, toks, limit, as_of, known_at, present,  # type: ignore[arg-type]
                                snap.claims_stamp)
            if got is not None:
                return got
    where, params = claim_time(as_of, known_at, present)
    sql = (
        f"SELECT {CLAIM_COLS}, -bm25(claims_fts) AS bm25 FROM claims_fts JOIN claims c ON c.rowid = claims_fts.rowid "
        f"WHERE claims_fts MATCH ? AND c.user_id = ? AND c.archived = 0 {where} ORDER BY bm25 DESC LIMIT ?"
    )
    return cache.rows(sql, [match, user_id, *params, limit])


def exact_lane(cache: Cache, literals: Sequence[str], user_id: str, limit: int, as_of: str | None,
               known_at: str | None) -> list[tuple[str, Row]]:
    """Units whose text contains a literal (case-insensitive), found via its FTS phrase, then checked."""
    out: list[tuple[str, Row]] = []
    seen: set[tuple[str, str]] = set()
    for lit in literals:
        expr = phrase(lit)
        if expr is None:
            continue
        needle = lit.casefold()
        t_where, t_params = turn_time(as_of, known_at)
        turns = cache.rows(
            f"SELECT {TURN_COLS}, r.content AS text FROM raw_fts JOIN raw r ON r.rowid = raw_fts.rowid "
            f"WHERE raw_fts MATCH ? AND r.user_id = ? AND r.quarantined IS NULL {t_where} "
            "ORDER BY r.valid_at DESC, r.rowid DESC LIMIT ?",
            ["body : " + expr, user_id, *t_params, limit * 4],
        )
        c_where, c_params = claim_time(as_of, known_at)
        claims = cache.rows(
            f"SELECT {CLAIM_COLS}, c.text AS text FROM claims_fts JOIN claims c ON c.rowid = claims_fts.rowid "
            f"WHERE claims_fts MATCH ? AND c.user_id = ? AND c.archived = 0 {c_where} LIMIT ?",
            [expr, user_id, *c_params, limit * 4],
        )
        for kind, rows in (("claim", claims), ("turn", turns)):
            for row in rows:
                if needle in row["text"].casefold() and (kind, row["id"]) not in seen:
                    seen.add((kind, row["id"]))
                    out.append((kind, row))
    return out[:limit]


def filtered(cache: Cache, kind: str, ids: Sequence[str], user_id: str, as_of: str | None,
             known_at: str | None) -> list[Row]:
    """Light rows for candidates found by id (the vector lane), under the lexical lanes' filters."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    if kind == "turn":
        where, params = turn_time(as_of, known_at)
        sql = (f"SELECT {TURN_COLS} FROM raw r WHERE r.id IN ({marks}) AND +r.user_id = ? "
               f"AND r.quarantined IS NULL {where}")
    else:
        where, params = claim_time(as_of, known_at)
        sql = f"SELECT {CLAIM_COLS} FROM claims c WHERE c.id IN ({marks}) AND +c.user_id = ? AND c.archived = 0 {where}"
    return cache.rows(sql, [*ids, user_id, *params])


def answers(cache: Cache, rowids: Sequence[int], user_id: str, as_of: str | None,
            known_at: str | None, snap: Snapshot | None = None) -> list[Row]:
    """Light rows of the turns that answer candidate questions (by rowid, ascending), under the same
    filters: from the user's in-memory lexicon when it is at ``snap``'s stamp, else from SQLite."""
    if not rowids:
        return []
    if snap is not None and LEXICON:
        found = lexicon.rows(cache, user_id, rowids, as_of, known_at, snap.lexicon()[0])
        if found is not None:
            return found
    where, params = turn_time(as_of, known_at)
    marks = ",".join("?" * len(rowids))
    sql = (f"SELECT {TURN_COLS} FROM raw r WHERE r.rowid IN ({marks}) AND +r.user_id = ? "
           f"AND r.quarantined IS NULL {where}")
    return cache.rows(sql, [*rowids, user_id, *params])


HIT_TURN_COLS = "id, user_id, role, content, path, occurred_at, metadata, valid_at"  # what a turn hit shows


def hydrate(cache: Cache, kind: str, ids: Sequence[str], user_id: str) -> dict[str, Row]:
    """Rows by id for the hits (a turn's ``HIT_TURN_COLS``, a claim's every column), never another user's."""
    if not ids:
        return {}
    cols = HIT_TURN_COLS if kind == "turn" else "*"
    table = "raw" if kind == "turn" else "claims"
    marks = ",".join("?" * len(ids))
    # "+user_id": look rows up by id (the unique index), then check the owner
    rows = cache.rows(f"SELECT {cols} FROM {table} WHERE id IN ({marks}) AND +user_id = ?", [*ids, user_id])
    return {r["id"]: r for r in rows}


def hydrate_turns(cache: Cache, rowids: Sequence[int], user_id: str) -> dict[str, Row]:
    """``hydrate`` for turns known by their light rows' rowids: the table's own b-tree, no id index
    to descend first. Rows by id (a rowid that now holds another turn finds no row under its id)."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    rows = cache.rows(f"SELECT {HIT_TURN_COLS} FROM raw WHERE rowid IN ({marks}) AND +user_id = ?",
                      [*rowids, user_id])
    return {r["id"]: r for r in rows}


def claim_time(as_of: str | None, known_at: str | None, present: str | None = None) -> tuple[str, list[str]]:
    clauses, params = [], []
    if as_of is None and known_at is None:  # current: valid now (a temporary state may have ended, a
        present = present or utc_now()        # future-dated change may not have started yet)
        clauses.append("(c.valid_until IS NULL OR c.valid_until > ?) AND (c.valid_from IS NULL OR c.valid_from <= ?)")
        params += [present, present]
    if as_of is not None:
        clauses.append("(c.valid_from IS NULL OR c.valid_from <= ?) AND (c.valid_until IS NULL OR c.valid_until > ?)")
        params += [as_of, as_of]
    if known_at is not None:
        clauses.append("c.recorded_at <= ? AND (c.closed_at IS NULL OR c.closed_at > ?)")
        params += [known_at, known_at]
    return "".join(" AND " + c for c in clauses), params


def turn_time(as_of: str | None, known_at: str | None) -> tuple[str, list[str]]:
    clauses, params = [], []
    if as_of is not None:
        clauses.append("r.valid_at <= ?")
        params.append(as_of)
    if known_at is not None:
        clauses.append("r.recorded_at <= ?")
        params.append(known_at)
    return "".join(" AND " + c for c in clauses), params

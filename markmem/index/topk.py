"""Exact top-k for the lexicon's BM25 (``lexicon.rank``): MaxScore over per-phrase score lists.

``lexicon._score`` (the reference, ``EARLY = False``) scores every posting of every query phrase
and keeps the best ``limit`` rows. A question about the user ("where does the user live?") has a
phrase matching thousands of turns, and every one is scored, summed and filtered to keep 40. Here:

* **one list per phrase, per generation.** A phrase's bm25 terms (``idf * tf part``) depend only on
  the index and FTS5's totals, so they are computed once per (lexicon stamp, totals, column
  weight) and kept: the rows ascending, each row's term, the rows best first, and the best term
  (``ub``, the list's upper bound), derived from the postings when first asked for (a persisted
  lexicon gets them the same way). Only while the cache holds this user's rows alone (every
  number ``bm25()`` needs is then in memory; else the reference runs);
* **a threshold from real rows.** The best ``limit`` rows (passing the filters) of each long list,
  and every row of the short ones, are scored in full; the ``limit``-th best of those, ``theta``,
  is a lower bound of the answer's ``limit``-th score;
* **the bound.** Every term is positive. A row outside the short lists that is in one long list
  alone scores that list's term, so it needs a term of ``theta`` or more: only the list's head down
  to ``theta`` (a small margin covers float rounding; beyond its best ``limit`` rows that head
  holds only ties) is a candidate. Rows in two or more long lists are candidates too (few: a
  sort of the long lists' rows finds them). The candidates are scored in full, each row's terms
  added in the query's order from 0.0 as ``np.add.at`` adds them in the reference, and the best
  ``limit`` picked as the reference picks them (ties by rowid): the same rows, the same floats.

A query of one phrase, or with a phrase matching ``EARLY_AT`` rows or more, takes this path; a
few short lists are scored whole as before (building and bounding them costs as much). At 10k
turns a common-term question scores ~100 rows instead of ~4,000 (half the lane's time).

tests/test_search_exact.py runs both on varied queries, filters and limits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import log
from typing import Any

import numpy as np

from .lexicon import K1, B, Lexicon, Phrase, _freq

EARLY = True  # False: every posting is scored (``lexicon._score``'s reference path)
EARLY_AT = 1000  # a query of several phrases takes this path when one matches this many rows (else: as fast)
SHORT = 64  # a list this long (or up to 2 x limit) is scored whole, never bounded
MAX_LISTS = 4096  # kept phrase lists per lexicon before they are dropped and made again
MARGIN = 1e-9  # relative slack on the bound (float sums may differ from real ones in the last bits)


class Scored:
    """One phrase's bm25 terms at one generation; the order by term, made when first needed."""

    __slots__ = ("docs", "score", "_rowid", "_best", "_neg")

    def __init__(self, docs: np.ndarray, score: np.ndarray, rowid: np.ndarray) -> None:
        self.docs = docs  # rows ascending
        self.score = score  # each row's term (float64)
        self._rowid = rowid
        self._best: np.ndarray | None = None
        self._neg: np.ndarray | None = None

    @property
    def best(self) -> np.ndarray:
        """Positions in ``docs``, best term first (ties: lower rowid first)."""
        if self._best is None:
            self._best = np.lexsort((self._rowid[self.docs], -self.score))
            self._neg = -self.score[self._best]
        return self._best

    @property
    def neg(self) -> np.ndarray:
        """``-score[best]``, ascending: a bound's cut by ``searchsorted``."""
        if self._neg is None:
            self.best  # noqa: B018 - made together
        assert self._neg is not None
        return self._neg

    @property
    def ub(self) -> float:
        """The best term: the list's upper bound."""
        return float(-self.neg[0]) if len(self.docs) else 0.0


def scored(docs: np.ndarray, score: np.ndarray, rowid: np.ndarray) -> Scored:
    return Scored(docs, score, rowid)


Passes = Callable[[np.ndarray], np.ndarray]  # rows -> which pass the filters (quarantine, as_of, known_at)


def _unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` for an integer array (sorted, each value once), without its first call's
    import of ``numpy.ma`` (~30 ms of a fresh process's first search: ``np.ma.is_masked``)."""
    a = np.sort(a)
    keep = np.ones(len(a), bool)
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def top(lists: Sequence[Scored], limit: int, passes: Passes, rowid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best ``limit`` rows passing the filters by the sum of their terms over ``lists`` (in the
    query's order), best first (ties by rowid), and their scores: ``lexicon._score``'s answer."""
    lists = [s for s in lists if len(s.docs)]
    if not lists or limit <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    if len(lists) == 1:  # one phrase: its best rows that pass, in its own order (ties by rowid)
        rows = _head(lists[0], limit, passes)
        at = np.searchsorted(lists[0].docs, rows)
        return rows, lists[0].score[at]
    short = max(SHORT, 2 * limit)
    long_ = [s for s in lists if len(s.docs) > short]
    seen = [s.docs for s in lists if len(s.docs) <= short] + [_head(s, limit, passes) for s in long_]
    first = _unique(np.concatenate(seen))
    first = first[passes(first)]
    if not long_ or len(first) < limit:  # nothing to bound, or too few rows for a threshold
        cands = first if not long_ else _passing(_unique(np.concatenate([s.docs for s in lists])), passes)
        acc = _sum(lists, cands)
    else:
        acc = _sum(lists, first)
        theta = float(np.partition(acc, len(acc) - limit)[len(acc) - limit])
        slack = MARGIN * (abs(theta) + sum(s.ub for s in long_))
        # a row in one long list alone scores its term there: it needs theta; a row in two or more is a candidate
        heads = [s.docs[s.best[: int(np.searchsorted(s.neg, slack - theta, "right"))]] for s in long_]
        cands = _unique(np.concatenate([first, *heads, _shared(long_)]))
        if len(cands) > len(first):  # else the candidates are the rows already scored
            cands = _passing(cands, passes)
            acc = _sum(lists, cands)
        else:
            cands = first
    if len(acc) > limit:  # every row scoring at least the limit-th best (ties included), as the reference
        kth = np.partition(acc, len(acc) - limit)[len(acc) - limit]
        pick = np.flatnonzero(acc >= kth)
        cands, acc = cands[pick], acc[pick]
    order = np.lexsort((cands, rowid[cands], -acc))[:limit]
    return cands[order], acc[order]


def _passing(rows: np.ndarray, passes: Passes) -> np.ndarray:
    return rows[passes(rows)]


def _shared(lists: Sequence[Scored]) -> np.ndarray:
    """The rows in two or more of ``lists``."""
    if len(lists) < 2:
        return np.zeros(0, np.int64)
    rows = np.concatenate([s.docs for s in lists])
    rows.sort()
    return rows[1:][rows[1:] == rows[:-1]]


def _head(s: Scored, limit: int, passes: Passes) -> np.ndarray:
    """The list's best ``limit`` rows that pass the filters (fewer when the list runs out)."""
    take = limit
    while True:
        rows = s.docs[s.best[:take]]
        ok = rows[passes(rows)]
        if len(ok) >= limit or take >= len(s.best):
            return ok[:limit]
        take *= 4


def _sum(lists: Sequence[Scored], rows: np.ndarray) -> np.ndarray:
    """Each row's terms added in the lists' order, from 0.0 (``rows`` ascending)."""
    acc = np.zeros(len(rows), np.float64)
    for s in lists:
        at = np.searchsorted(s.docs, rows)
        at[at == len(s.docs)] = 0
        hit = s.docs[at] == rows if len(s.docs) else np.zeros(len(rows), bool)
        acc[hit] += s.score[at[hit]]
    return acc


# -- the lexicon's side -----------------------------------------------------------------------
def worth(lex: Lexicon, phrases: Sequence[Phrase]) -> bool:
    """One phrase, or one matching ``EARLY_AT`` rows or more: bounding pays (else scoring every
    posting of a few short lists costs what building and bounding them costs)."""
    ids, ptr, found = lex.tokens.ids, lex.ptr, 0
    big = False
    for term, _ in phrases:
        tid = ids.get(term)
        if tid is None:
            continue
        found += 1
        rows = (int(ptr[tid + 1] - ptr[tid]) if tid + 1 < len(ptr) else 0) + len(lex.delta.get(tid, ()))
        big = big or rows >= EARLY_AT
    return found == 1 or big


def rank(lex: Lexicon, user_id: str, phrases: Sequence[Phrase], context_weight: float, as_of: str | None,
         known_at: str | None, limit: int, sizes: tuple[int, int]) -> list[dict[str, Any]]:
    """``lexicon._score``'s answer by :func:`top` (the cache holds this user alone: row counts are ours)."""
    lists = kept(lex, phrases, context_weight, sizes)

    def passes(docs: np.ndarray) -> np.ndarray:
        ok = ~lex.quarantined[docs]
        if as_of is not None or known_at is not None:
            va, ra = lex.valid_at, lex.recorded_at
            ok &= np.fromiter(((as_of is None or va[d] <= as_of) and (known_at is None or ra[d] <= known_at)
                               for d in docs.tolist()), bool, len(docs))
        return ok

    docs, acc = top(lists, limit, passes, lex.rowid)
    rows = lex.light(user_id, docs.tolist())
    for row, score in zip(rows, acc.tolist(), strict=True):
        row["bm25"] = score
    return rows


def kept(lex: Lexicon, phrases: Sequence[Phrase], context_weight: float, sizes: tuple[int, int]) -> list[Scored]:
    """Each known phrase's list (in the query's order), made once per (lexicon stamp, totals, weight)."""
    at = (lex.stamp, *sizes)
    if lex.scored_at != at or len(lex.scored) > MAX_LISTS:
        lex.scored, lex.scored_at = {}, at
    lists = []
    for term, body in phrases:
        tid = lex.tokens.ids.get(term)
        if tid is None:
            continue
        got = lex.scored.get((tid, body, context_weight))
        if got is None:
            got = lex.scored[(tid, body, context_weight)] = phrase(lex, tid, body, context_weight, *sizes)
        lists.append(got)
    return lists


def phrase(lex: Lexicon, tid: int, body: bool, weight: float, nrow: int, ntok: int) -> Scored:
    """One phrase's bm25 terms over the user's rows: ``lexicon._score``'s arithmetic, one phrase at a time."""
    docs, nb, nc = lex.postings(tid)
    if body:
        has = nb > 0
        docs, nb = docs[has], nb[has]
        nc = np.zeros(len(docs), np.int32)
    if not len(docs):
        return scored(docs, np.zeros(0, np.float64), lex.rowid)
    hits = len(docs)
    idf = log((nrow - hits + 0.5) / (hits + 0.5))
    if idf <= 0.0:
        idf = 1e-6
    freq = _freq(nb, nc, weight)
    score = idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * lex.size[docs] / (ntok / nrow))))
    return scored(docs, score, lex.rowid)

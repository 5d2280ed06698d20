"""Two-step retrieval (pseudo-relevance feedback): the first hits' key terms search a second time.

A question that needs two hops ("What activities has Melanie done with her family?") shares few
words with most of its evidence: one turn says "camping with the kids", another "the museum". The
first hits carry the words the question lacks, so their most telling terms (frequent in those hits,
rare in the user's memory: the RM3 idea of IR) make a second BM25 query. Its ranking is added to the
fused scores at a low weight (``Recipe.feedback_weight``): a turn the question found and the
feedback confirms rises; a turn only the feedback found enters below the question's own hits,
scaled by its role's trust. Nothing here knows a question type or a word list.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..context import Context
from . import fts
from .fuse import Cand, Recipe
from .query import Query, terms
from .stem import stem


def expansion(texts: Sequence[tuple[str, float]], asked: Sequence[str], df: dict[str, int], total: int,
              n: int) -> list[str]:
    """The ``n`` best feedback terms of ``texts`` (``(text, weight)`` of the first hits): each term's
    weight is the sum over hits of ``hit weight x its share of the hit's words``, times its IDF in
    the user's memory (``df``: stemmed term -> rows holding it). Terms of the question are left out."""
    seen = {stem(w) for w in asked}
    gain: Counter[str] = Counter()
    for text, weight in texts:
        words = [w for w in terms(text) if w.isalpha() and len(w) > 2 and stem(w) not in seen]
        if not words:
            continue
        for w in set(words):
            idf = math.log((total + 1) / (df.get(stem(w), 0) + 1))
            gain[w] += weight * idf / len(words)
    return [w for w, _ in sorted(gain.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def expand(ctx: Context, q: Query, ranked: list[Cand], cands: dict[tuple[str, str], Cand], user_id: str,
           as_of: str | None, known_at: str | None, recipe: Recipe, roles: dict[str, float],
           snap: fts.Snapshot | None) -> tuple[list[Cand], list[str]]:
    """``ranked`` re-scored by a second BM25 query of the first hits' terms: ``(ranked, the terms)``."""
    top = [c for c in ranked[: recipe.feedback_docs] if c.kind == "turn"]
    texts = _texts(ctx, top, user_id)
    top = [c for c in top if texts.get(c.id)]
    if not top or q.match is None:
        return ranked, []
    total, epoch = (snap.max_rowid, snap.epoch) if snap is not None else _totals(ctx)
    words = {w for c in top for w in terms(texts[c.id])}
    df = fts.term_counts(ctx.cache, {stem(w) for w in words}, total or 0, epoch)
    best = top[0].score or 1.0
    extra = expansion([(texts[c.id], c.score / best) for c in top], q.terms, df, total or 0,
                      recipe.feedback_terms)
    if not extra:
        return ranked, []
    full, body, _ = fts.plan(ctx.cache, extra, recipe.postings_budget, snap)
    rows = fts.turn_lane(ctx.cache, full, body, user_id, recipe.depth, as_of, known_at, recipe.context_weight, snap)
    if not rows:
        return ranked, extra
    top_bm25 = max(float(r["bm25"]) for r in rows) or 1.0
    out = list(ranked)
    for rank, row in enumerate(rows, 1):
        c = cands.get(("turn", row["id"]))
        if c is None and not recipe.feedback_new:
            continue
        if c is None:  # found by the feedback alone: it enters at the feedback's weight only
            c = Cand("turn", row["id"], row, {}, bm25=0.0)
            cands[c.key] = c
            out.append(c)
        bonus = recipe.feedback_weight * float(row["bm25"]) / top_bm25 * roles.get(row.get("role") or "user", 0.8)
        c.ranks["feedback"] = rank
        c.weights["feedback"] = round(bonus, 6)
        c.score += bonus
    return sorted(out, key=lambda c: (-c.score, c.kind, c.id)), extra


def _texts(ctx: Context, cands: list[Cand], user_id: str) -> dict[str, str]:
    """Each turn's text, from its lane row or, for those without, the cache."""
    out = {c.id: c.row["content"] for c in cands if c.row.get("content")}
    missing = [c.row["rowid"] for c in cands if c.id not in out and "rowid" in c.row]
    if missing:
        out.update((rid, row["content"]) for rid, row in fts.hydrate_turns(ctx.cache, missing, user_id).items())
    return out


def _totals(ctx: Context) -> tuple[int, str | None]:
    total, epoch = ctx.cache.db.execute(
        "SELECT max(rowid), (SELECT value FROM meta WHERE key = 'epoch') FROM raw").fetchone()
    return int(total or 0), epoch

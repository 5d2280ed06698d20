"""search(): lanes (BM25 turns and claims, exact, vectors) -> fusion -> typed hits with explain traces."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from ..context import Context
from ..index import lexicon
from ..model import Hit, Source
from . import facts, fts, said, when
from .fuse import DEFAULT, GRAPH, ROLE_TRUST, Cand, Recipe, day_number, fuse, trace
from .query import Query, parse

Key = tuple[str, str]


def search(
    ctx: Context,
    query: str,
    user_id: str,
    top_k: int = 5,
    as_of: str | None = None,
    known_at: str | None = None,
    explain: bool = False,
    recipe: Recipe | None = None,
) -> list[Hit]:
    try:
        chosen = recipe or (GRAPH if ctx.settings.graph_lane else DEFAULT)
        return _search(ctx.scoped(user_id), query, user_id, top_k, as_of, known_at, explain, chosen)
    finally:
        lexicon.start_pending()  # a big user's in-memory index, built once this search has returned


def _search(ctx: Context, query: str, user_id: str, top_k: int, as_of: str | None, known_at: str | None,
            explain: bool, recipe: Recipe) -> list[Hit]:
    ref = as_of or known_at or datetime.now(timezone.utc).isoformat()
    cued = when.has_cue(query)  # the cheap check: most questions stop here
    span = when.window(query, datetime.fromisoformat(ref.replace("Z", "+00:00"))) \
        if cued and recipe.time_boost else None
    parts = when.events(query) if cued and recipe.events else ()
    if cued and span is None and recipe.time_boost and recipe.events:
        span, parts = _anchored(ctx, query, user_id, top_k, as_of, known_at, recipe, ref, parts)
    # the words of a resolved date ("a month ago") are the window now, not words to match
    text = when.without(query, span) if span else query
    ranked, about = _ranked(ctx, text, user_id, top_k, as_of, known_at, recipe, ref[:10], span)
    if parts:  # each event of a comparison gets its own search; their rankings take turns after the question's
        lists = [_ranked(ctx, p, user_id, top_k, as_of, known_at, recipe, ref[:10], span)[0] for p in parts]
        ranked = _interleave([ranked, *lists])
    ranked = ranked[:top_k]
    if not ranked:
        return []
    about = about or {}
    top_bm25 = about.pop("top_bm25", 1.0)
    hits = _hits(ctx, ranked, user_id, recipe, top_bm25 if explain else None)
    if explain:
        about["when"] = {"window": span.as_dict() if span else None, "boost": 1.0 + recipe.time_boost if span else None,
                         "events": list(parts)}
        for h in hits:
            (h.explain or {})["query"] = about
    return hits


def _ranked(ctx: Context, query: str, user_id: str, top_k: int, as_of: str | None, known_at: str | None,
            recipe: Recipe, ref: str, span: when.Window | None) -> tuple[list[Cand], dict[str, Any] | None]:
    """One query's candidates from every lane, fused and re-ranked: ``(ranked, what explain says of the query)``."""
    q = parse(query)
    cands: dict[Key, Cand] = {}
    snap = fts.snapshot(ctx.cache, user_id)  # every freshness check of this search, in one statement
    dropped = _lexical(ctx, q, user_id, top_k, as_of, known_at, recipe, cands, snap)
    _exact(ctx, q, user_id, as_of, known_at, cands)
    if recipe.answer_weight:
        _answers(ctx, user_id, as_of, known_at, cands, snap)
    if recipe.graph_depth and snap is not None:
        _graph(ctx, query, user_id, as_of, known_at, recipe, cands, snap)
    if recipe.vectors and ctx.embedder is not None:
        _vectors(ctx, query, user_id, as_of, known_at, recipe, cands, snap)
    if not cands:
        return [], None
    asked = recipe.assistant_asked and said.asks_assistant(query)  # "what did you recommend?"
    roles = said.ASKED_ROLES if asked else ROLE_TRUST if recipe.assistant_trust == ROLE_TRUST["assistant"] \
        else {**ROLE_TRUST, "assistant": recipe.assistant_trust}
    if recipe.answer_trust and recipe.answer_weight:
        _measure_askers(ctx, cands, roles, user_id)
    ranked = fuse(list(cands.values()), recipe, q, day_number(ref), _dated(ctx, cands, span, user_id), roles)
    if recipe.sentence_weight and recipe.vectors and ctx.embedder is not None:  # a turn's best sentence counts
        ranked = _sentences(ctx, query, ranked, recipe, user_id)
    if as_of is None and known_at is None and recipe.fact_first:
        # only the first top_k are shown (also after _interleave: each list's first top_k fill them)
        ranked = facts.rerank(ctx.cache, user_id, ranked[: max(3 * top_k, top_k + 10)], query,
                              None if snap is None else snap.vectors(), top_k)
    elif as_of is not None and known_at is None and recipe.fact_first:  # marked as of then, order kept
        window = max(3 * top_k, top_k + 10)
        ranked = facts.mark(ctx.cache, user_id, ranked[:window], as_of,
                            None if snap is None else snap.vectors()) + ranked[window:]
    model = ctx.embedder.name if recipe.vectors and ctx.embedder else None
    return ranked, {"terms": [t for t in q.terms if t not in dropped], "dropped_terms": dropped,
                    "literals": list(q.literals), "vectors": model, "asks_assistant": asked,
                    "top_bm25": max((c.bm25 for c in cands.values()), default=0.0)}


def _measure_askers(ctx: Context, cands: dict[Key, Cand], roles: dict[str, float], user_id: str) -> None:
    """The length (``row["chars"]``) of each less trusted candidate turn that asks: fusion passes a long one's
    relevance to its answer at its trust (fuse._asker_trust). Lane rows without the text are read for it."""
    have = {c.row.get("rowid") for c in cands.values() if c.kind == "turn"}  # only a candidate answer inherits
    asking = [c for c in cands.values() if c.kind == "turn" and c.row.get("question") and c.row.get("answer") in have
              and roles.get(c.row.get("role") or "user", 0.8) != 1.0]
    missing = [c.row["rowid"] for c in asking if "content" not in c.row and "rowid" in c.row]
    texts = {i: r["content"] for i, r in fts.hydrate_turns(ctx.cache, missing, user_id).items()} if missing else {}
    for c in asking:
        c.row["chars"] = len(c.row.get("content") or texts.get(c.id) or "")


def _sentences(ctx: Context, query: str, ranked: list[Cand], recipe: Recipe, user_id: str) -> list[Cand]:
    from . import passage
    from . import vectors as dense_lane  # numpy: only with the vector tier

    qv = dense_lane.encode(ctx, query)
    return ranked if qv is None else passage.lift(ctx, ranked, qv, recipe.sentence_weight, recipe.sentence_depth,
                                                  user_id)


def _anchored(ctx: Context, query: str, user_id: str, top_k: int, as_of: str | None, known_at: str | None,
              recipe: Recipe, ref: str, parts: tuple[str, ...]) -> tuple[when.Window | None, tuple[str, ...]]:
    """"two weeks after my trip": date the trip by its own best hit, then the span from there; the trip's
    hits join the results like a compared event's."""
    hang = when.anchor(query)
    if hang is None:
        return None, parts
    found, _ = _ranked(ctx, hang.phrase, user_id, top_k, as_of, known_at, recipe, ref[:10], None)
    stamp = next((c.row.get("valid_at") or c.row.get("valid_from") for c in found[:1]), None)
    if not stamp:
        return None, parts
    today = datetime.fromisoformat(ref.replace("Z", "+00:00")).date()
    return hang.window(datetime.fromisoformat(stamp.replace("Z", "+00:00")).date(), today), parts or (hang.phrase,)


def _dated(ctx: Context, cands: dict[Key, Cand], span: when.Window | None, user_id: str) -> set[Key]:
    """The candidates ``span`` covers: dated inside it, or soon after it and telling of the past (their
    text is read only for those few)."""
    if span is None:
        return set()
    inside, later = set(), []
    for key, c in cands.items():
        stamp = c.row.get("valid_at") or c.row.get("valid_from")
        if span.holds(stamp):
            inside.add(key)
        elif span.soon_after(stamp):
            later.append(c)
    rowids = [c.row["rowid"] for c in later if c.kind == "turn" and "content" not in c.row and "rowid" in c.row]
    texts = {i: r["content"] for i, r in fts.hydrate_turns(ctx.cache, rowids, user_id).items()}
    for c in later:
        if span.looks_back(c.row.get("content") or c.row.get("text") or texts.get(c.id)):
            inside.add(c.key)
    return inside


def _interleave(lists: list[list[Cand]]) -> list[Cand]:
    """Round robin over the rankings, each memory once (at its best place)."""
    out: dict[Key, Cand] = {}
    for rank in range(max(map(len, lists), default=0)):
        for ranked in lists:
            if rank < len(ranked):
                out.setdefault(ranked[rank].key, ranked[rank])
    return list(out.values())


def _lexical(ctx: Context, q: Query, user_id: str, top_k: int, as_of: str | None, known_at: str | None,
             recipe: Recipe, cands: dict[Key, Cand], snap: fts.Snapshot | None = None) -> list[str]:
    """The BM25 lanes; returns the query terms the turn lane left out (see ``fts.prune``)."""
    if q.match is None:
        return []
    depth = max(recipe.depth, 4 * top_k)
    full, body, dropped = fts.plan(ctx.cache, q.terms, recipe.postings_budget, snap)
    turns = fts.turn_lane(ctx.cache, full, body, user_id, depth, as_of, known_at, recipe.context_weight, snap)
    # a user without a live claim (none compiled yet, or no extractor) has no claim lane to ask
    claims = fts.claim_lane(ctx.cache, q.match, user_id, depth, as_of, known_at, q.terms, snap) \
        if snap is None or snap.claims else []
    for kind, lane, rows in (("turn", "turns", turns), ("claim", "claims", claims)):
        for rank, row in enumerate(rows, 1):  # positional: a keyword call costs ~0.5 us more, ~80 times a search
            ident = row["id"]
            cands[(kind, ident)] = Cand(kind, ident, row, {lane: rank}, float(row["bm25"]))
    return dropped


def _exact(ctx: Context, q: Query, user_id: str, as_of: str | None, known_at: str | None,
           cands: dict[Key, Cand]) -> None:
    if not q.literals:
        return
    for rank, (kind, row) in enumerate(fts.exact_lane(ctx.cache, q.literals, user_id, 50, as_of, known_at), 1):
        c = cands.setdefault((kind, row["id"]), Cand(kind, row["id"], row))
        c.ranks["exact"] = rank
        c.exact = True


def _answers(ctx: Context, user_id: str, as_of: str | None, known_at: str | None, cands: dict[Key, Cand],
             snap: fts.Snapshot | None = None) -> None:
    """Bring in the turns that answer candidate questions: fusion lets them inherit relevance."""
    have = {c.row["rowid"] for c in cands.values() if c.kind == "turn"}
    wanted = {c.row["answer"] for c in cands.values() if c.kind == "turn" and c.row.get("answer")} - have
    for row in fts.answers(ctx.cache, sorted(wanted), user_id, as_of, known_at, snap):
        cands[("turn", row["id"])] = Cand("turn", row["id"], row)


def _graph(ctx: Context, query: str, user_id: str, as_of: str | None, known_at: str | None, recipe: Recipe,
           cands: dict[Key, Cand], snap: fts.Snapshot) -> None:
    """The graph lane (read/graph.py): turns a walk from the entities the query names reaches."""
    from . import graph as lane

    g = lane.graph(ctx, user_id, (snap.epoch, snap.gen))
    top = sorted((c for c in cands.values() if c.kind == "turn"), key=lambda c: -c.bm25)[:3]
    seeds = lane.seeds(g, query, [c.row.get("content") or "" for c in top])
    ranked = lane.rank(g, seeds, recipe.graph_depth) if seeds else []
    if not ranked:
        return
    new = [rid for rid, _ in ranked if ("turn", rid) not in cands]
    for row in fts.filtered(ctx.cache, "turn", new, user_id, as_of, known_at):
        cands[("turn", row["id"])] = Cand("turn", row["id"], row)
    best = ranked[0][1]
    for r, (rid, mass) in enumerate(ranked, 1):
        c = cands.get(("turn", rid))
        if c is not None:
            c.ranks["graph"] = r
            c.graph = mass / best


def _vectors(ctx: Context, query: str, user_id: str, as_of: str | None, known_at: str | None, recipe: Recipe,
             cands: dict[Key, Cand], snap: fts.Snapshot | None = None) -> None:
    from . import vectors as dense_lane  # numpy: only with the vector tier

    qv = dense_lane.encode(ctx, query)
    if qv is None:
        return
    rowids = {key: c.row["rowid"] for key, c in cands.items() if c.kind == "turn" and "rowid" in c.row}
    res = dense_lane.dense(ctx, user_id, qv, recipe.dense_depth, cands.keys(), recipe.dense_scan_max,
                           None if snap is None else snap.vectors(), rowids)
    ranks = {key: r for r, key in enumerate(res.top, 1)}
    new = [key for key in res.top if key not in cands]
    for kind in ("turn", "claim"):
        ids = [i for k, i in new if k == kind]
        for row in fts.filtered(ctx.cache, kind, ids, user_id, as_of, known_at):
            cands[(kind, row["id"])] = Cand(kind, row["id"], row)
    for key, c in cands.items():
        c.cos = res.cos.get(key)
        if key in ranks:
            c.ranks["vector"] = ranks[key]


def _hits(ctx: Context, ranked: list[Cand], user_id: str, recipe: Recipe, top_bm25: float | None) -> list[Hit]:
    # a turn's lane row already holds what its hit shows (see fts.TURN_COLS)
    turns = {c.id: c.row for c in ranked if c.kind == "turn" and "content" in c.row}
    missing = [c.row["rowid"] for c in ranked if c.kind == "turn" and c.id not in turns]
    turns.update(fts.hydrate_turns(ctx.cache, missing, user_id))
    claims = _claim_rows(ctx, [c.id for c in ranked if c.kind == "claim"], user_id)
    # every claim hit's source turns in one statement (was one per claim)
    refs = {cid: json.loads(row["sources"] or "[]") for cid, row in claims.items()}
    raw = _source_rows(ctx, [r for rs in refs.values() for r in rs], user_id)
    out = []
    for c in ranked:
        row = turns.get(c.id) if c.kind == "turn" else claims.get(c.id)
        if row is None:  # vanished between the lanes and now
            continue
        trace_ = trace(c, recipe, top_bm25) if top_bm25 is not None else None
        out.append(_turn_hit(row, c, trace_) if c.kind == "turn" else _claim_hit(row, c, trace_, raw, refs[c.id]))
    return out


def _turn_hit(row: dict[str, Any], c: Cand, explain: dict[str, Any] | None) -> Hit:
    meta = row["metadata"]
    src = Source(row["id"], row["path"], row["occurred_at"], {} if not meta or meta == "{}" else json.loads(meta))
    return Hit(id=row["id"], kind="turn", score=round(c.score, 6), text=row["content"], user_id=row["user_id"],
               valid_from=row["valid_at"], valid_until=c.row.get("valid_until"), sources=(src,), explain=explain,
               superseded_by=c.row.get("superseded_by"), role=c.row.get("role") or row.get("role"),
               starts=c.row.get("starts"), stale=c.row.get("stale", ()))


def _claim_hit(row: dict[str, Any], c: Cand, explain: dict[str, Any] | None, raw: dict[str, dict[str, Any]],
               refs: list[str]) -> Hit:
    # c.row's marks: a claim the user's later words say is over (``read.ended``), as on a turn
    until = c.row.get("valid_until") or row["valid_until"]
    return Hit(id=row["id"], kind="claim", score=round(c.score, 6), text=row["text"], user_id=row["user_id"],
               page_id=row["page_id"], valid_from=row["valid_from"], valid_until=until,
               sources=_sources(refs, raw), explain=explain, superseded_by=c.row.get("superseded_by"),
               stale=c.row.get("stale", ()))


def _claim_rows(ctx: Context, ids: list[str], user_id: str) -> dict[str, dict[str, Any]]:
    """``fts.hydrate`` of claims, only the columns a claim hit shows."""
    if not ids:
        return {}
    sql = (f"SELECT id, user_id, text, page_id, valid_from, valid_until, sources FROM claims "
           f"WHERE id IN ({','.join('?' * len(ids))}) AND +user_id = ?")
    return {r["id"]: r for r in ctx.cache.rows(sql, [*ids, user_id])}


def _source_rows(ctx: Context, refs: list[str], user_id: str) -> dict[str, dict[str, Any]]:
    """The user's raw rows (id, path, occurred_at, metadata) that ``refs`` ("path#id") name, by id."""
    ids = list(dict.fromkeys(r.rsplit("#", 1)[-1] for r in refs))
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    sql = f"SELECT id, path, occurred_at, metadata FROM raw WHERE id IN ({marks}) AND +user_id = ?"
    return {r["id"]: r for r in ctx.cache.user(user_id).rows(sql, [*ids, user_id])}


def _sources(refs: list[str], by_id: dict[str, dict[str, Any]]) -> tuple[Source, ...]:
    out = []
    for ref in refs:
        path, rid = ref.rsplit("#", 1)[0], ref.rsplit("#", 1)[-1]
        r = by_id.get(rid)
        meta = json.loads(r["metadata"] or "{}") if r else {}
        out.append(Source(rid, path, r["occurred_at"] if r else None, meta))
    return tuple(out)

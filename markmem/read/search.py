"""search(): lanes -> RRF fusion -> provenance weight -> typed hits (with an explain trace)."""

from __future__ import annotations

import json
from typing import Any

from ..context import Context
from ..model import PROVENANCE_TRUST, Hit, Source
from . import fts
from .query import fts_query

RRF_K = 60


def search(
    ctx: Context,
    query: str,
    user_id: str,
    top_k: int = 5,
    as_of: str | None = None,
    known_at: str | None = None,
    explain: bool = False,
) -> list[Hit]:
    match = fts_query(query)
    if match is None:
        return []
    depth = max(50, top_k * 10)
    lanes = {
        "claims": fts.claim_lane(ctx.cache, match, user_id, depth, as_of, known_at),
        "turns": fts.turn_lane(ctx.cache, match, user_id, depth, as_of, known_at),
    }
    fused: dict[str, dict[str, Any]] = {}
    for lane, rows in lanes.items():
        for rank, row in enumerate(rows, 1):
            key = ("claim:" if lane == "claims" else "turn:") + row["id"]
            slot = fused.setdefault(key, {"row": row, "lane": lane, "rrf": 0.0, "ranks": {}})
            slot["rrf"] += 1.0 / (RRF_K + rank)
            slot["ranks"][lane] = rank
    hits = [_hit(ctx, s, explain) for s in fused.values()]
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits[:top_k]


def _hit(ctx: Context, slot: dict[str, Any], explain: bool) -> Hit:
    row = slot["row"]
    if slot["lane"] == "claims":
        weight = PROVENANCE_TRUST.get(row["provenance"], 0.6)
        score = slot["rrf"] * weight
        trace = {"lanes": slot["ranks"], "rrf": slot["rrf"], "provenance": weight} if explain else None
        return Hit(
            id=row["id"], kind="claim", score=round(score, 6), text=row["text"], user_id=row["user_id"],
            page_id=row["page_id"], valid_from=row["valid_from"], valid_until=row["valid_until"],
            sources=sources_for(ctx, json.loads(row["sources"] or "[]")), explain=trace,
        )
    trace = {"lanes": slot["ranks"], "rrf": slot["rrf"]} if explain else None
    src = Source(row["id"], row["path"], row["occurred_at"], json.loads(row["metadata"] or "{}"))
    return Hit(
        id=row["id"], kind="turn", score=round(slot["rrf"], 6), text=row["content"], user_id=row["user_id"],
        valid_from=row["valid_at"], sources=(src,), explain=trace,
    )


def sources_for(ctx: Context, refs: list[str]) -> tuple[Source, ...]:
    ids = [r.rsplit("#", 1)[-1] for r in refs]
    if not ids:
        return ()
    marks = ",".join("?" * len(ids))
    rows = ctx.cache.rows(f"SELECT id, path, occurred_at, metadata FROM raw WHERE id IN ({marks})", ids)
    by_id = {r["id"]: r for r in rows}
    out = []
    for ref, rid in zip(refs, ids, strict=True):
        r = by_id.get(rid)
        path = ref.rsplit("#", 1)[0]
        meta = json.loads(r["metadata"] or "{}") if r else {}
        out.append(Source(rid, path, r["occurred_at"] if r else None, meta))
    return tuple(out)

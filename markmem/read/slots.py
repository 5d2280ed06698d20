"""The slot lane: a question about a kind ("what activities does Melanie do?") reaches the turns whose
compiled claims fill a slot of that kind ("hobby: pottery"), though they never say the kind's word.

The user's live claims are grouped by their slot (``predicate``: ``hobby``, ``plays``, ``pet``,
``likes``); each slot's name has a vector from the vector lane's static model (kept per name, a
token lookup). The slots whose name is closest to the question (cosine at least ``floor``, the best
``SLOTS`` of them) bring in the turns their claims cite, each with that cosine as ``Cand.slot``,
which fusion adds at ``Recipe.slot_weight``. When the question names a claim's subject (a speaker,
"Melanie"), only that subject's claims count. Off by default (``slot_weight`` 0): see
bench/results/recall.md, round 6.
"""

from __future__ import annotations

import json
import threading

import numpy as np

from ..context import Context
from ..index import claimbook

SLOTS = 3  # slots a question may reach
MAX_TURNS = 30  # turns the lane brings in
_NAMES: dict[tuple[str, str], np.ndarray | None] = {}  # (model, slot name) -> unit vector (no user text)
_LOCK = threading.Lock()


def reach(ctx: Context, user_id: str, query_vec: np.ndarray, words: set[str], floor: float,
          stamp: claimbook.Stamp | None = None) -> dict[str, float]:
    """Raw turn id -> the cosine of the question with the slot of a claim citing it (the best one)."""
    book = claimbook.book(ctx.cache, user_id, stamp) if claimbook.ENABLED else None
    if book is None or not book.by_id:
        return {}
    claims = list(book.by_id.values())
    named = {c["subject"] for c in claims if c.get("subject") and _names(c["subject"], words)}
    if named:
        claims = [c for c in claims if c.get("subject") in named]
    slots = _closest({str(c.get("predicate") or "") for c in claims} - {""}, ctx, query_vec, floor)
    out: dict[str, float] = {}
    for c in claims:
        sim = slots.get(str(c.get("predicate") or ""))
        if sim is None or c.get("superseded_by"):
            continue
        for ref in json.loads(c.get("sources") or "[]"):
            rid = str(ref).rsplit("#", 1)[-1]
            if sim > out.get(rid, 0.0):
                out[rid] = sim
    best = sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TURNS]
    return dict(best)


def _names(subject: str, words: set[str]) -> bool:
    return any(part in words for part in subject.casefold().split())


def _closest(names: set[str], ctx: Context, query_vec: np.ndarray, floor: float) -> dict[str, float]:
    sims = []
    for name in names:
        v = _vector(ctx, name)
        if v is not None:
            sims.append((float(np.dot(v, query_vec)), name))
    sims.sort(reverse=True)
    return {name: s for s, name in sims[:SLOTS] if s >= floor}


def _vector(ctx: Context, name: str) -> np.ndarray | None:
    assert ctx.embedder is not None
    key = (ctx.embedder.name, name)
    with _LOCK:
        if key in _NAMES:
            return _NAMES[key]
    vec = np.asarray(ctx.embedder.embed([name.replace("_", " ")]), dtype=np.float32)[0]
    norm = float(np.linalg.norm(vec))
    out = vec / norm if norm > 0 else None
    with _LOCK:
        _NAMES[key] = out
    return out

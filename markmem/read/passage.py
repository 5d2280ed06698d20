"""The best sentence of a turn: a long turn is judged by the sentence that answers, not by its average.

A chat turn often wraps one fact in a request: "I'm looking for workout playlists. By the way, I take
Zumba on Tuesdays and Thursdays. Any suggestions?". The turn's vector is the mean of all its words, so
the fact is diluted by the request around it, and a short turn on the same topic outranks it. Here
each of the first ``depth`` fused candidates with two or more sentences gets the cosine of its best
sentence with the question, and ``weight`` x that cosine is added to its score (a one-sentence turn
or a claim adds its own cosine: the same signal, so every candidate is on one scale).

Sentence vectors come from the vector lane's static model (a lookup per token) and are kept per turn
(``MAX_TURNS``, least recently used first out); an erasure empties them (erase.scrub.TEXT_DICTS).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict

import numpy as np

from ..context import Context
from . import fts
from .fuse import Cand

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_WORDS = 3  # a shorter piece ("Thanks!", "Wow.") is no sentence to judge a turn by
MAX_TURNS = 20000
_SENTS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


def lift(ctx: Context, ranked: list[Cand], query_vec: np.ndarray, weight: float, depth: int,
         user_id: str) -> list[Cand]:
    """``ranked`` with its first ``depth`` candidates scored up by their best sentence's cosine, re-sorted."""
    if ctx.embedder is None or weight <= 0 or not ranked:
        return ranked
    head = ranked[:depth]
    name = ctx.embedder.name
    with _cache_lock:
        unseen = [c for c in head if c.kind == "turn" and (name, c.id) not in _SENTS]
    texts = _texts(ctx, unseen, user_id) if unseen else {}
    for c, best in zip(head, _bests(ctx, head, texts, query_vec), strict=True):
        if best > 0:
            c.weights["sentence"] = round(best, 6)
            c.score += weight * best
    return sorted(head, key=lambda c: (-c.score, c.kind, c.id)) + ranked[depth:]


def split(text: str) -> list[str]:
    """The sentences of ``text`` worth judging it by (at least ``MIN_WORDS`` words each)."""
    return [s for s in _SPLIT.split(text) if len(s.split()) >= MIN_WORDS]


def _bests(ctx: Context, cands: list[Cand], texts: dict[str, str], query_vec: np.ndarray) -> list[float]:
    """Each candidate's best sentence cosine (its own cosine for a claim or a one-sentence turn), with
    one matrix product for all their sentences."""
    out = [c.cos or 0.0 for c in cands]
    blocks, owners = [], []
    for i, c in enumerate(cands):
        vecs = _vectors(ctx, c.id, texts.get(c.id)) if c.kind == "turn" else None
        if vecs is not None:
            blocks.append(vecs)
            owners.append(i)
    if blocks:
        sims = np.einsum("ij,j->i", np.vstack(blocks), query_vec)
        starts = np.cumsum([0] + [len(b) for b in blocks[:-1]])
        for i, best in zip(owners, np.maximum.reduceat(sims, starts).tolist(), strict=True):
            out[i] = best
    return out


def _vectors(ctx: Context, turn_id: str, text: str | None) -> np.ndarray | None:
    """The turn's sentence vectors (rows L2-normalised), or None for a turn of one sentence."""
    assert ctx.embedder is not None
    key = (ctx.embedder.name, turn_id)
    with _cache_lock:
        got = _SENTS.get(key)
        if got is not None:
            _SENTS.move_to_end(key)
            return got if len(got) else None
    if not text:
        return None
    sentences = split(text)
    vecs = np.zeros((0, 1), dtype=np.float32) if len(sentences) < 2 else \
        np.vstack([np.asarray(ctx.embedder.embed([s]), dtype=np.float32) for s in sentences])
    vecs.flags.writeable = False
    with _cache_lock:
        _SENTS[key] = vecs
        while len(_SENTS) > MAX_TURNS:
            _SENTS.popitem(last=False)
    return vecs if len(vecs) else None


def _texts(ctx: Context, cands: list[Cand], user_id: str) -> dict[str, str]:
    """Each candidate turn's text, from its lane row or, for the few without, the cache."""
    out = {c.id: c.row["content"] for c in cands if c.kind == "turn" and c.row.get("content")}
    missing = [c.row["rowid"] for c in cands if c.kind == "turn" and c.id not in out and "rowid" in c.row]
    if missing:
        out.update((rid, row["content"]) for rid, row in fts.hydrate_turns(ctx.cache, missing, user_id).items())
    return out

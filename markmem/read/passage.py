"""The best sentence of a turn: a long turn is judged by the sentence that answers, not by its average.

A chat turn often wraps one fact in a request: "I'm looking for workout playlists. By the way, I take
Zumba on Tuesdays and Thursdays. Any suggestions?". The turn's vector is the mean of all its words, so
the fact is diluted by the request around it, and a short turn on the same topic outranks it. Here
each of the first ``depth`` fused candidates with two or more sentences gets the cosine of its best
sentence with the question, and ``weight`` x that cosine is added to its score (a one-sentence turn
or a claim adds its own cosine: the same signal, so every candidate is on one scale).

Sentence vectors come from the vector lane's static model (a lookup per token) and are kept per turn
(``MAX_TURNS``, the oldest first out); an erasure empties them (erase.scrub.TEXT_DICTS).
"""

from __future__ import annotations

import re
import threading

import numpy as np

from ..context import Context
from . import fts
from .fuse import Cand

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_WORDS = 3  # a shorter piece ("Thanks!", "Wow.") is no sentence to judge a turn by
MAX_TURNS = 20000
_SENTS: dict[tuple[str, str], np.ndarray] = {}
_cache_lock = threading.Lock()


def lift(ctx: Context, ranked: list[Cand], query_vec: np.ndarray, weight: float, depth: int,
         user_id: str) -> list[Cand]:
    """``ranked`` with its first ``depth`` candidates scored up by their best sentence's cosine, re-sorted."""
    if ctx.embedder is None or weight <= 0 or not ranked:
        return ranked
    head = ranked[:depth]
    for c, best in zip(head, _bests(ctx, head, query_vec, user_id), strict=True):
        if best > 0:
            c.weights["sentence"] = round(best, 6)
            c.score += weight * best
    return sorted(head, key=lambda c: (-c.score, c.kind, c.id)) + ranked[depth:]


def split(text: str) -> list[str]:
    """The sentences of ``text`` worth judging it by (at least ``MIN_WORDS`` words each)."""
    return [s for s in _SPLIT.split(text) if len(s.split()) >= MIN_WORDS]


def _bests(ctx: Context, cands: list[Cand], query_vec: np.ndarray, user_id: str) -> list[float]:
    """Each candidate's best sentence cosine (its own cosine for a claim or a one-sentence turn), with
    one matrix product for all their sentences."""
    assert ctx.embedder is not None
    name = ctx.embedder.name
    turns = [c for c in cands if c.kind == "turn"]
    with _cache_lock:
        kept = {c.id: _SENTS.get((name, c.id)) for c in turns}
    unseen = [c for c in turns if kept[c.id] is None]
    if unseen:
        kept.update(_embed(ctx, unseen, user_id))
    out = [c.cos or 0.0 for c in cands]
    blocks, owners = [], []
    for i, c in enumerate(cands):
        vecs = kept.get(c.id) if c.kind == "turn" else None
        if vecs is not None and len(vecs):
            blocks.append(vecs)
            owners.append(i)
    if blocks:
        sims = np.einsum("ij,j->i", np.concatenate(blocks), query_vec)
        starts, at = [], 0
        for b in blocks:
            starts.append(at)
            at += len(b)
        for i, best in zip(owners, np.maximum.reduceat(sims, starts).tolist(), strict=True):
            out[i] = best
    return out


def _embed(ctx: Context, turns: list[Cand], user_id: str) -> dict[str, np.ndarray]:
    """Sentence vectors (rows L2-normalised; no rows for a turn of one sentence) of turns not kept yet."""
    assert ctx.embedder is not None
    texts = _texts(ctx, turns, user_id)
    made = {}
    pieces: dict[str, list[str]] = {}
    for c in turns:
        sentences = split(texts.get(c.id) or "")
        if len(sentences) < 2:
            vecs = np.zeros((0, 1), dtype=np.float32)
            vecs.flags.writeable = False
            made[c.id] = vecs
        else:
            made[c.id] = np.zeros((0, 1), dtype=np.float32)  # its place in the order, filled below
            pieces[c.id] = sentences
    if pieces:  # every sentence of these turns in one call: the rows embed([sentence]) gives, one by one
        each = getattr(ctx.embedder, "embed_each", None)
        flat = [s for sentences in pieces.values() for s in sentences]
        rows = np.asarray(each(flat), dtype=np.float32) if each is not None else \
            np.vstack([np.asarray(ctx.embedder.embed([s]), dtype=np.float32) for s in flat])
        at = 0
        for rid, sentences in pieces.items():
            vecs = rows[at: at + len(sentences)].copy()
            at += len(sentences)
            vecs.flags.writeable = False
            made[rid] = vecs
    name = ctx.embedder.name
    with _cache_lock:
        for rid, vecs in made.items():
            _SENTS[(name, rid)] = vecs
        while len(_SENTS) > MAX_TURNS:  # the oldest first out
            del _SENTS[next(iter(_SENTS))]
    return made


def _texts(ctx: Context, cands: list[Cand], user_id: str) -> dict[str, str]:
    """Each candidate turn's text, from its lane row or, for the few without, the cache."""
    out = {c.id: c.row["content"] for c in cands if c.kind == "turn" and c.row.get("content")}
    missing = [c.row["rowid"] for c in cands if c.kind == "turn" and c.id not in out and "rowid" in c.row]
    if missing:
        out.update((rid, row["content"]) for rid, row in fts.hydrate_turns(ctx.cache, missing, user_id).items())
    return out

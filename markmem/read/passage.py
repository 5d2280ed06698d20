"""The best sentence of a turn: a long turn is judged by the sentence that answers, not by its average.

A chat turn often wraps one fact in a request: "I'm looking for workout playlists. By the way, I take
Zumba on Tuesdays and Thursdays. Any suggestions?". The turn's vector is the mean of all its words, so
the fact is diluted by the request around it, and a short turn on the same topic outranks it. Here
each of the first ``depth`` fused candidates with two or more sentences gets the cosine of its best
sentence with the question, and ``weight`` x that cosine is added to its score (a one-sentence turn
or a claim adds its own cosine: the same signal, so every candidate is on one scale).

A turn that asks carries less fact than the turn that answers it (``Recipe.question_weight``), but a
turn that asks *and* tells ("... By the way, I take Zumba on Tuesdays. Any suggestions?") holds its
fact in a statement: with ``Recipe.asked_by_sentence`` the discount stays only when the turn's best
sentence is itself a question (ends with "?"), and is lifted when it is a statement.

Sentence vectors come from the vector lane's static model (a lookup per token) and are kept per turn
(``MAX_TURNS``, the oldest first out) with which of them ask; an erasure empties them
(erase.scrub.TEXT_DICTS).
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
_SENTS: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}  # (model, turn) -> (vectors, asks)
_cache_lock = threading.Lock()


def lift(ctx: Context, ranked: list[Cand], query_vec: np.ndarray, weight: float, depth: int,
         user_id: str, by_sentence: bool = False) -> list[Cand]:
    """``ranked`` with its first ``depth`` candidates scored up by their best sentence's cosine, re-sorted;
    ``by_sentence``: a turn that asks keeps its question discount only if its best sentence asks."""
    if ctx.embedder is None or weight <= 0 or not ranked:
        return ranked
    head = ranked[:depth]
    for c, (best, asks) in zip(head, _bests(ctx, head, query_vec, user_id), strict=True):
        if by_sentence and asks is False and c.weights.get("question"):
            c.score /= c.weights.pop("question")  # it asks, but the sentence that matches tells
            c.weights["told"] = 1.0
        if best > 0:
            c.weights["sentence"] = round(best, 6)
            c.score += weight * best
    return sorted(head, key=lambda c: (-c.score, c.kind, c.id)) + ranked[depth:]


def split(text: str) -> list[str]:
    """The sentences of ``text`` worth judging it by (at least ``MIN_WORDS`` words each)."""
    return [s for s in _SPLIT.split(text) if len(s.split()) >= MIN_WORDS]


def _bests(ctx: Context, cands: list[Cand], query_vec: np.ndarray,
           user_id: str) -> list[tuple[float, bool | None]]:
    """Each candidate's best sentence cosine (its own cosine for a claim or a one-sentence turn) and
    whether that sentence asks (None: no sentence of its own), with one matrix product for all."""
    assert ctx.embedder is not None
    name = ctx.embedder.name
    turns = [c for c in cands if c.kind == "turn"]
    with _cache_lock:
        kept = {c.id: _SENTS.get((name, c.id)) for c in turns}
    unseen = [c for c in turns if kept[c.id] is None]
    if unseen:
        kept.update(_embed(ctx, unseen, user_id))
    out: list[tuple[float, bool | None]] = [(c.cos or 0.0, None) for c in cands]
    blocks, asks, owners = [], [], []
    for i, c in enumerate(cands):
        got = kept.get(c.id) if c.kind == "turn" else None
        if got is not None and len(got[0]):
            blocks.append(got[0])
            asks.append(got[1])
            owners.append(i)
    if blocks:
        sims = np.einsum("ij,j->i", np.concatenate(blocks), query_vec)
        at = 0
        for i, b, a in zip(owners, blocks, asks, strict=True):
            j = int(np.argmax(sims[at: at + len(b)]))
            out[i] = (float(sims[at + j]), bool(a[j]))
            at += len(b)
    return out


def _embed(ctx: Context, turns: list[Cand], user_id: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Sentence vectors (rows L2-normalised; no rows for a turn of one sentence) of turns not kept yet,
    and which of those sentences ask."""
    assert ctx.embedder is not None
    texts = _texts(ctx, turns, user_id)
    made = {}
    for c in turns:
        sentences = split(texts.get(c.id) or "")
        vecs = np.zeros((0, 1), dtype=np.float32) if len(sentences) < 2 else \
            np.vstack([np.asarray(ctx.embedder.embed([s]), dtype=np.float32) for s in sentences])
        asks = np.array([x.rstrip().endswith("?") for x in sentences] if len(vecs) else [], dtype=bool)
        vecs.flags.writeable = False
        asks.flags.writeable = False
        made[c.id] = (vecs, asks)
    name = ctx.embedder.name
    with _cache_lock:
        for rid, got in made.items():
            _SENTS[(name, rid)] = got
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

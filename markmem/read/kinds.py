"""Instances of a kind: "what instruments does Melanie play?" is answered by "clarinet" and "violin".

A listing or counting question names a *kind* (read.intent's focus: "instruments", "martial arts",
"pets"), and the memories that answer it name *instances* of that kind, rarely the kind's own word:
BM25 cannot see it, and a whole-turn cosine dilutes one word among twenty. Here each candidate turn
scores the best cosine between the kind and any one of its words (static word vectors of the same
model as the vector lane: a lookup per word, kept), and that score lifts the turn by ``weight``.
Only questions that list or count pay for it (a few hundred word look-ups, cached).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from ..context import Context
from . import fts
from .fuse import Cand

_WORD = re.compile(r"[a-z][a-z'-]{2,}")
_SKIP = frozenset(
    "the and for you your are was were but not have has had this that with from they them their what when where "
    "which who will would could should can about just like really also been being into over very much more some "
    "any all our out its it's i'm i've i'd that's there here than then too yes yeah wow sure thanks thank great "
    "good awesome cool love glad hope know think feel felt make made get got going gonna want did does doing done "
    "shares photo".split()
)
WORD_CACHE = 20000


def lift(ctx: Context, ranked: list[Cand], kind: str, weight: float, depth: int, user_id: str,
         floor: float = 0.0) -> list[Cand]:
    """``ranked`` with its first ``depth`` turns lifted by ``weight`` x (their best word cosine with ``kind``
    above ``floor``)."""
    if ctx.embedder is None or not ranked or weight <= 0:
        return ranked
    name = ctx.embedder.name
    target = _vector(ctx.embedder, name, kind)
    if target is None:
        return ranked
    head = ranked[:depth]
    texts = _texts(ctx, head, user_id)
    for c in head:
        best = max((float(target @ v) for w in _words(texts.get(c.key, "")) if (v := _vector(ctx.embedder, name, w))
                    is not None), default=0.0)
        if best > floor:
            c.weights["kind"] = round(best, 6)
            c.score += weight * (best - floor)
    return sorted(head, key=lambda c: (-c.score, c.kind, c.id)) + ranked[depth:]


def _texts(ctx: Context, cands: list[Cand], user_id: str) -> dict[tuple[str, str], str]:
    out = {c.key: c.row.get("content") or c.row.get("text") or "" for c in cands}
    missing = [c.row["rowid"] for c in cands if c.kind == "turn" and not out[c.key] and "rowid" in c.row]
    rows = fts.hydrate_turns(ctx.cache, missing, user_id) if missing else {}
    for c in cands:
        if c.kind == "turn" and c.id in rows:
            out[c.key] = rows[c.id]["content"]
    return out


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _SKIP}


def _vector(embedder: Any, name: str, word: str) -> np.ndarray | None:
    return _cached(embedder, name, word)


@lru_cache(maxsize=WORD_CACHE)
def _cached(embedder: Any, name: str, word: str) -> np.ndarray | None:
    vec = np.asarray(embedder.embed([word]), dtype=np.float32)[0]
    norm = float(np.linalg.norm(vec))
    if norm == 0:
        return None
    out = vec / norm
    out.flags.writeable = False
    return out

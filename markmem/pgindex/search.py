"""Search a user's memory from the PostgreSQL index: what ``Memory.search`` returns, ranked the same.

The user's local copy (``local``) is brought up to date, then ``read.search`` and ``read.pack``
run on it unchanged: the same lanes, BM25 numbers, fusion, fact-first order and packs as the
SQLite backend with ``cache_layout="split"`` (statistics per user).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..config import Settings
from ..context import Context
from ..model import Hit, Pack
from ..ports import Embedder
from ..read import pack as packing
from ..read import request
from ..read import search as searching
from . import local

_EMBEDDERS: dict[str, Embedder | None] = {}
_EMBEDDERS_LOCK = threading.Lock()


def search(conn: Any, settings: Settings, user_id: str, query: str, top_k: int = 5, as_of: Any = None,
           known_at: Any = None, format: str = "json", explain: bool = False, budget: int | None = None, *,
           embedder: Embedder | None | bool = True) -> list[Hit] | Pack:
    """``Memory.search`` over the PostgreSQL index (same arguments, errors and results).
    ``embedder``: the vector model to use (True: the one ``settings.vector_model`` names, loaded
    once per process; None or False: BM25 only)."""
    a = request.check(query, user_id, top_k, as_of, known_at, format, explain, budget)
    model = embedder_for(settings) if embedder is True else (embedder or None)
    with local.opened(conn, user_id) as (cache, copy, _store):
        ctx = read_context(settings, cache, model)
        hits = searching.search(ctx, a.query, user_id, a.top_k, a.as_of, a.known_at, a.explain)
        if a.format == "json":
            out: list[Hit] | Pack = hits
        else:
            chosen = settings.token_budget if a.budget is None else a.budget
            out = packing.pack(ctx, user_id, hits, chosen, a.as_of, a.known_at)
        if copy is not None and model is not None:
            local.push_vectors(conn, cache, copy, user_id)
    return out


def read_context(settings: Settings, cache: Any, embedder: Embedder | None) -> Context:
    """A Context for the read path, which uses only its settings, cache and embedder (no repo,
    git, queue, locks, gate or extractor: a replica's search touches none of them)."""
    none: Any = None
    return Context(settings=settings, root=Path(cache.path).parent, git=none, codec=none, cache=cache, queue=none,
                   write_lock=none, append_lock=none, scanner=none, extractor=none, embedder=embedder)


def embedder_for(settings: Settings) -> Embedder | None:
    """The vector model ``settings.vector_model`` names, loaded on first use, once per process."""
    spec = settings.vector_model
    if spec is None:
        return None
    with _EMBEDDERS_LOCK:
        if spec not in _EMBEDDERS:
            from ..adapters.deferred import DeferredEmbedder
            from ..adapters.vectors import load_embedder, probe_embedder

            name = probe_embedder(spec)
            _EMBEDDERS[spec] = DeferredEmbedder(name, lambda: load_embedder(spec))  # type: ignore[arg-type,return-value]
        return _EMBEDDERS[spec]

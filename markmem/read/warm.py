"""Memory.warm(): load now what a fresh process's first search would load, so that search costs what a
later one does.

A fresh process's first search imports the read side (numpy with it: about half of that search at
10k turns, most of it at 500 turns), loads the query embedder, and reads the
user's saved lexicon, vector matrix and claim book (``index.lexstore``, ``index.vecfile``,
``index.claimbook``) and the claims' ledger fact-first ranking reads (``read.echo``). A server, a
worker or a serverless handler that opens its ``Memory`` when it starts (a handler's init phase)
can pay that there, before its first request, with ``warm``. A CLI call gains nothing: it
searches once.

Nothing ranks differently: the same derived state is loaded, by the same code (a search for a
probe word, whose hits are dropped), and the claim book a first search would ask SQL for instead
(``claimbook.book(lazy=True)``) is read in full, as a later search reads it.
"""

from __future__ import annotations

from ..context import Context

PROBE = "markmem"  # a word: every lane runs (its hits, if any, are dropped)


def read_side(ctx: Context) -> None:
    """Import the read side (what a search imports), with the regular expressions a process before
    compiled put in ``re``'s cache first (``index.rxcache``: the same patterns, ~20 ms of CPU less
    in a fresh process; saved beside ``ctx``'s cache when they were not)."""
    from ..index import rxcache

    def load() -> None:
        from . import pack, request, search  # noqa: F401 - imported for their import cost

    rxcache.imported(ctx.cache.path, load)


def warm(ctx: Context, user_id: str | None) -> None:
    """Import the read side and load the query embedder; with ``user_id``, the user's saved indexes
    too (``user_id`` checked by the caller)."""
    read_side(ctx)
    from ..index import claimbook
    from . import echo, pack, passage, request, search  # noqa: F401 - imported for their import cost
    from . import vectors as dense_lane

    if ctx.embedder is not None:
        dense_lane.encode(ctx, PROBE)  # loads the model (a vector query is cached like any other)
    if user_id is None:
        return
    search.search(ctx, PROBE, user_id, top_k=1)
    if claimbook.ENABLED:
        cache = ctx.scoped(user_id).cache
        echo.ledger(cache, user_id, claimbook.book(cache, user_id))  # kept on the book, read by fact-first

"""The derived index of cluster mode, in PostgreSQL: a room beside ``index/``.

PostgreSQL holds, per user, the rows the SQLite cache is made from (turns as gated raw entries,
pages, claims, pgvector vectors with the hash of the text they embed) and a generation row that
says when they changed (``schema``). ``sync`` writes them: ``add_turns`` at ``add()`` time (in
the caller's transaction: read-your-writes), ``sync_users`` from a shard repo's files after a
compile or a forget (and ``reindex``: every user of a repo), ``delete_user``.

``search`` ranks exactly as the SQLite backend does: each process keeps a per-user SQLite file
built from those rows (``local``: the same FTS5 index, neighbour context, lexicon and vector
matrix the split cache holds), checked against the generation row on every search (one round
trip) and caught up incrementally, then runs ``read.search`` and ``read.pack`` unchanged. BM25
statistics are per user, as in ``cache_layout="split"``. Nothing here ranks with ``ts_rank``.
"""

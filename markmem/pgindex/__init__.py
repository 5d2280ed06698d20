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

How the cluster side calls it (every function takes a psycopg 3 connection)::

    schema.ensure(conn)                                # at startup, idempotent, any replica
    cte, insert, params = sync.add_statement(uid, es)  # add(): the caller's intake CTE and these
    conn.execute(f"WITH <intake CTE>, {cte} {insert}", ...)  # in ONE statement, one commit
    sync.add_turns(conn, gated_entries)                # or alone, in the caller's transaction
    sync.sync_users(conn, shard_root, user_ids, embedder=e)  # after a compile or a forget
    sync.reindex(conn, shard_root, also=users_of_shard)      # `markmem reindex`, per shard
    sync.delete_user(conn, user_id); sync.user_rows(conn, user_id)  # forget, verify-erasure
    search.search(conn, settings, user_id, query, top_k=5, as_of=None, known_at=None,
                  format="json", explain=False, budget=None, embedder=e)  # what Memory.search returns

``search`` reads outside any transaction of its own: give it an autocommit connection (or
commit after it), so a long-lived replica never holds a snapshot open.
"""

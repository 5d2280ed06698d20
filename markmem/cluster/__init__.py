"""Cluster mode: many app replicas serve one memory, on PostgreSQL and user-sharded git repos.

Turned on by ``Settings.database_url``. ``repo_path`` is then the cluster root, holding one
ordinary markmem repo per shard (``shards/NN``), so every per-repo invariant holds per shard.

add()     replica: the one gate (``pipeline.prepare``) -> INSERT into ``markmem_intake`` (sealed by
          the shard's codec) and the derived index's turn rows, ONE statement -> return
                                                                          (intake.py, backend.py)
compile   ``markmem worker``: take a shard's lease (advisory lock) -> intake rows -> raw/ (skip
          ids already there) -> ``pipeline.compile_batch`` (ONE commit) -> delete the intake rows
          and sync the index -> push to the shard's remote               (lease.py, worker.py)
forget    take the shard's lease -> delete intake and index rows -> ``erase.api.forget`` on the
          shard repo -> push (a rewrite force-pushes)                     (erasure.py)
lint, export, review   the embedded code on every shard repo, merged; writes hold the lease (repos.py)
"""

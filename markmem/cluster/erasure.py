"""Erasure across the cluster: the shard repo's own forget, plus PostgreSQL and the remote.

forget: take the shard's lease (no worker compiles it meanwhile) -> delete the user's intake
rows and derived index rows (one transaction) -> ``erase.api.forget`` on the shard repo ->
push (a rewrite force-pushes the rewritten branch). verify: the shard repo's verification plus
the intake and every table of the derived index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..erase import api
from ..erase.verify import Finding, VerifyReport
from . import index_port, intake
from .lease import Leases
from .shards import ShardSet
from .worker import push


def forget(shards: ShardSet, leases: Leases, conn: Any, shard: int, user_id: str, mode: str,
           dry_run: bool) -> Any:
    ctx = shards.ctx(shard)
    if dry_run:
        return api.forget(ctx, user_id, mode, True)
    with leases.held(shard, shards.settings.lock_timeout):
        with conn.transaction():
            intake.drop_user(conn, user_id)
            index_port.delete_user(conn, user_id)
        report = api.forget(shards.ctx(shard), user_id, mode, False)
        push(ctx, shards.remote(shard), force=mode == "rewrite")
    return report


def verify(shards: ShardSet, conn: Any, shard: int, user_id: str) -> VerifyReport:
    report = api.verify(shards.ctx(shard), user_id)
    found = [Finding("database", f"{table}: {n} row(s)") for table, n in database_rows(conn, user_id)]
    return replace(report, findings=report.findings + tuple(found)) if found else report


def database_rows(conn: Any, user_id: str) -> list[tuple[str, int]]:
    """(table, rows) still holding the user's rows: the intake and every table of the index."""
    counts = {"markmem_intake": intake.count_user(conn, user_id), **index_port.user_rows(conn, user_id)}
    return [(table, n) for table, n in sorted(counts.items()) if n]

"""A shard's lease: a PostgreSQL session advisory lock on a connection of its own.

Whoever holds it is the shard's only writer (compile, forget). A worker that dies (kill -9, a
lost machine) drops its connection and PostgreSQL releases the lock, so another worker takes
the shard over; what the dead one left half done is finished by ``pipeline.recover`` and by
skipping intake ids already in the shard's raw files (worker.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import LockTimeout

LEASE_CLASS = 0x6D6D  # first key of the two-int advisory lock; the second is the shard
WORKER_CLASS = 0x6D77  # a running worker loop holds (WORKER_CLASS, its backend pid): workers are counted
_TAKE = ("WITH l AS (SELECT pg_try_advisory_lock(%s, %s) AS ok) INSERT INTO markmem_lease (shard, epoch) "
         "SELECT %s, 1 FROM l WHERE l.ok ON CONFLICT (shard) DO UPDATE SET epoch = markmem_lease.epoch + 1 "
         "RETURNING epoch")  # no row: the lock is held elsewhere


class Leases:
    def __init__(self, url: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)
        self.epoch: dict[int, int] = {}  # shard -> the epoch of this object's latest lease

    def try_take(self, shard: int) -> bool:
        """The lease if it is free, and its epoch bumped: one statement, one round trip."""
        try:
            row = self._conn.execute(_TAKE, (LEASE_CLASS, shard, shard)).fetchone()
        except Exception:
            self.release(shard)  # a session lock outlives the failed statement: never keep it unknowingly
            raise
        if row is None:
            return False
        self.epoch[shard] = int(row[0])
        return True

    def _bump(self, shard: int) -> None:
        """Count the shard's leases: every holder (worker, forget, review decision) takes the next
        epoch, so a worker whose last lease was the one before knows nobody held it since."""
        row = self._conn.execute("INSERT INTO markmem_lease (shard, epoch) VALUES (%s, 1) ON CONFLICT (shard) "
                                 "DO UPDATE SET epoch = markmem_lease.epoch + 1 RETURNING epoch", (shard,)).fetchone()
        assert row is not None
        self.epoch[shard] = int(row[0])

    def register(self) -> None:
        """Count this connection as a running worker (``sharing``) until it closes."""
        self._conn.execute("SELECT pg_advisory_lock(%s, pg_backend_pid())", (WORKER_CLASS,))

    def sharing(self) -> tuple[int, set[int]]:
        """(running workers, shards someone is waiting to lease): one round trip. A worker that
        keeps its leases between passes gives up those others wait for (forget, a review decision)."""
        row = self._conn.execute(
            "SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND granted), "
            "array(SELECT objid::int FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND NOT granted)",
            (WORKER_CLASS, LEASE_CLASS)).fetchone()
        assert row is not None
        return max(int(row[0]), 1), {int(s) for s in row[1]}

    def release(self, shard: int) -> None:
        self._conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LEASE_CLASS, shard))

    @contextmanager
    def held(self, shard: int, timeout: float) -> Iterator[None]:
        """Wait up to ``timeout`` seconds for the lease (forget uses this; workers try_take)."""
        import psycopg

        try:
            self._conn.execute(f"SET lock_timeout = '{int(timeout * 1000)}ms'")
            self._conn.execute("SELECT pg_advisory_lock(%s, %s)", (LEASE_CLASS, shard))
        except psycopg.errors.LockNotAvailable:
            raise LockTimeout(f"shard {shard:02d}: its lease was held elsewhere for over {timeout:g}s") from None
        finally:
            self._conn.execute("SET lock_timeout = 0")
        try:
            self._bump(shard)
            yield
        finally:
            self.release(shard)

    def close(self) -> None:
        self._conn.close()


def holders(conn: Any) -> list[int]:
    """Shards whose lease is held right now (for doctor and tests)."""
    cur = conn.execute("SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND granted",
                       (LEASE_CLASS,))
    return sorted(int(r[0]) for r in cur.fetchall())

"""The durable intake in PostgreSQL: gated raw entries waiting for their shard's compile worker.

A row's ``id`` is the raw entry's id, so the worker that compiles it (or takes over after a
crash) can tell an entry already in the shard's raw files from one that is not. Rows are deleted
once their batch is committed: the intake holds only what git does not yet have.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..model import RawEntry
from ..store.codec import Codec
from ..store.raw import entry_from_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS markmem_cluster (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS markmem_intake (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  shard integer NOT NULL,
  user_id text NOT NULL,
  entry jsonb NOT NULL,
  added_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS markmem_intake_shard ON markmem_intake (shard, seq);
CREATE TABLE IF NOT EXISTS markmem_lease (
  shard integer PRIMARY KEY,
  epoch bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS markmem_intake_user ON markmem_intake (user_id);
"""


def ensure_schema(conn: Any) -> None:
    conn.execute(SCHEMA)


def get_setting(conn: Any, key: str) -> str | None:
    row = conn.execute("SELECT value FROM markmem_cluster WHERE key = %s", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_setting(conn: Any, key: str, value: str) -> None:
    conn.execute("INSERT INTO markmem_cluster (key, value) VALUES (%s, %s) "
                 "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (key, value))


_INSERT = ("i AS (INSERT INTO markmem_intake (id, shard, user_id, entry) SELECT x.id, %s, %s, x.entry "
           "FROM unnest(%s::text[], %s::jsonb[]) WITH ORDINALITY AS x(id, entry, n) ORDER BY x.n)")


def insert(conn: Any, shard: int, user_id: str, entries: Sequence[RawEntry], codec: Codec,
           then: tuple[str, str, list[Any]] | None = None) -> None:
    """One user's entries as intake rows, each sealed by the shard's ``codec`` (with encryption
    on, the user's key: a crypto-shred covers the intake's copies in WAL and backups too).

    ``then`` is another write's (CTE, final statement, parameters), e.g. the index's turn rows:
    both go in ONE statement, so on an autocommit connection an add() is one round trip and one
    commit (both rows or neither). Without it, the rows alone, in the caller's transaction."""
    stored = [json.dumps(codec.seal_entry(user_id, e.to_json()), ensure_ascii=False) for e in entries]
    params: list[Any] = [shard, user_id, [e.id for e in entries], stored]
    if then is None:
        conn.execute("WITH " + _INSERT + " SELECT 1", params)
        return
    cte, final, more = then
    conn.execute(f"WITH {_INSERT}, {cte} {final}", params + more)


def take(conn: Any, shard: int, limit: int, codec: Codec) -> list[RawEntry]:
    """The shard's oldest rows, in arrival order (the caller holds the shard's lease)."""
    cur = conn.execute("SELECT user_id, entry FROM markmem_intake WHERE shard = %s ORDER BY seq LIMIT %s",
                       (shard, limit))
    return [_open(codec, uid, entry) for uid, entry in cur.fetchall()]


def _open(codec: Codec, user_id: str, stored: dict[str, Any]) -> RawEntry:
    return entry_from_json(codec.open_entry(user_id, stored), "")


def done(conn: Any, ids: Sequence[str]) -> int:
    """In the caller's transaction."""
    return int(conn.execute("DELETE FROM markmem_intake WHERE id = ANY(%s)", (list(ids),)).rowcount)


def pending_shards(conn: Any) -> dict[int, int]:
    cur = conn.execute("SELECT shard, count(*) FROM markmem_intake GROUP BY shard")
    return {int(s): int(n) for s, n in cur.fetchall()}


def get(conn: Any, raw_id: str, codec_of: Callable[[str], Codec]) -> RawEntry | None:
    """A pending entry by id; ``codec_of(user_id)`` is the codec of the user's shard."""
    row = conn.execute("SELECT user_id, entry FROM markmem_intake WHERE id = %s", (raw_id,)).fetchone()
    return None if row is None else _open(codec_of(row[0]), row[0], row[1])


def user_entries(conn: Any, user_id: str, codec: Codec) -> list[RawEntry]:
    """The user's pending entries, in arrival order (an access export lists them)."""
    cur = conn.execute("SELECT user_id, entry FROM markmem_intake WHERE user_id = %s ORDER BY seq", (user_id,))
    return [_open(codec, uid, entry) for uid, entry in cur.fetchall()]


def drop_user(conn: Any, user_id: str) -> int:
    """In the caller's transaction."""
    return int(conn.execute("DELETE FROM markmem_intake WHERE user_id = %s", (user_id,)).rowcount)


def count_user(conn: Any, user_id: str) -> int:
    row = conn.execute("SELECT count(*) FROM markmem_intake WHERE user_id = %s", (user_id,)).fetchone()
    return int(row[0]) if row else 0

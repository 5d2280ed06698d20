"""The derived PostgreSQL index (``markmem.pgindex``) as cluster mode calls it: the calls below, so the
write side names the index in one place (``schema.ensure``, ``sync.add_turns``,
``sync.sync_users``, ``sync.delete_user``, ``sync.claim_owners``, ``search.search``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..config import Settings
from ..context import Context
from ..model import Hit, Pack, RawEntry
from ..pgindex import schema, sync
from ..pgindex import search as pgsearch

NAME = "pgindex"


def ensure(conn: Any) -> None:
    schema.ensure(conn)


def add_turns(conn: Any, entries: Sequence[RawEntry]) -> None:
    """In the caller's transaction: read-your-writes on every replica."""
    sync.add_turns(conn, entries)


def add_statement(user_id: str, entries: Sequence[RawEntry]) -> tuple[str, str, list[Any]]:
    """``add_turns`` as parts of the caller's one statement (intake.insert's ``then``)."""
    return sync.add_statement(user_id, entries)


def sync_users(conn: Any, ctx: Context, user_ids: Sequence[str], compiled: Sequence[RawEntry] | None = None) -> None:
    """From the shard repo's files (its codec: an encrypted shard is read through its keys);
    ``compiled``: the turns a worker's batch just compiled, the only turns to sync."""
    sync.sync_users(conn, ctx.root, list(user_ids), codec=ctx.codec, embedder=ctx.embedder, compiled=compiled)


def reindex(conn: Any, ctx: Context, also: Sequence[str]) -> None:
    """Every user of the shard repo, and ``also`` (users the index holds for this shard: one the
    repo no longer has is deleted from the index)."""
    sync.reindex(conn, ctx.root, codec=ctx.codec, embedder=ctx.embedder, also=also)


def indexed_users(conn: Any) -> list[str]:
    return sync.indexed_users(conn)


def delete_user(conn: Any, user_id: str) -> None:
    sync.delete_user(conn, user_id)


def claim_owners(conn: Any, claim_id: str) -> list[str]:
    return sync.claim_owners(conn, claim_id)


def user_rows(conn: Any, user_id: str) -> dict[str, int]:
    return sync.user_rows(conn, user_id)


def search(conn: Any, settings: Settings, user_id: str, query: str, **kwargs: Any) -> list[Hit] | Pack:
    return pgsearch.search(conn, settings, user_id, query, **kwargs)

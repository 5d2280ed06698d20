"""The derived PostgreSQL index, as cluster mode calls it: ``markmem.pgindex`` when installed.

Until that package is present this module stands in with a turn-only index (one table, a term
match) so that add -> search -> forget run end to end; it names itself ``shim`` in ``doctor``.
The calls and their arguments are the ones pgindex provides: ``schema.ensure``,
``sync.add_turns``, ``sync.sync_users``, ``sync.delete_user``, ``search.search``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..config import Settings
from ..model import Hit, RawEntry

try:  # the real index (branch h-pgindex)
    from ..pgindex import schema as _schema  # type: ignore[import-not-found,unused-ignore]
    from ..pgindex import search as _search  # type: ignore[import-not-found,unused-ignore]
    from ..pgindex import sync as _sync  # type: ignore[import-not-found,unused-ignore]

    NAME = "pgindex"
except ImportError:  # pragma: no cover - depends on which branches are merged
    _schema = _search = _sync = None
    NAME = "shim"

_SHIM = """
CREATE TABLE IF NOT EXISTS markmem_shim_turns (
  id text PRIMARY KEY, user_id text NOT NULL, role text, content text NOT NULL, recorded_at text NOT NULL
);
CREATE INDEX IF NOT EXISTS markmem_shim_turns_user ON markmem_shim_turns (user_id);
"""


def ensure(conn: Any) -> None:
    if _schema is not None:
        _schema.ensure(conn)
    else:
        conn.execute(_SHIM)


def add_turns(conn: Any, entries: Sequence[RawEntry]) -> None:
    """In the caller's transaction: read-your-writes on every replica."""
    if _sync is not None:
        _sync.add_turns(conn, entries)
        return
    rows = [(e.id, e.user_id, e.role, e.content, e.recorded_at) for e in entries if not e.quarantined]
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO markmem_shim_turns VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING", rows)


def sync_users(conn: Any, repo_root: Path, user_ids: Sequence[str]) -> None:
    if _sync is not None:
        _sync.sync_users(conn, repo_root, list(user_ids))


def delete_user(conn: Any, user_id: str) -> None:
    if _sync is not None:
        _sync.delete_user(conn, user_id)
    else:
        conn.execute("DELETE FROM markmem_shim_turns WHERE user_id = %s", (user_id,))


def search(conn: Any, settings: Settings, user_id: str, query: str, **kwargs: Any) -> list[Hit]:
    if _search is not None:
        return list(_search.search(conn, settings, user_id, query, **kwargs))
    terms = sorted({t for t in re.findall(r"\w+", query.lower()) if len(t) > 2})
    if not terms:
        return []
    score = " + ".join(["(lower(content) LIKE %s)::int"] * len(terms))
    sql = (f"SELECT id, role, content, {score} AS s FROM markmem_shim_turns WHERE user_id = %s "
           f"ORDER BY s DESC, recorded_at DESC LIMIT %s")
    args = [f"%{t}%" for t in terms] + [user_id, kwargs.get("top_k", 5)]
    rows = conn.execute(sql, args).fetchall()
    return [Hit(id=r[0], kind="turn", score=float(r[3]), text=r[2], user_id=user_id, role=r[1])
            for r in rows if r[3] > 0]

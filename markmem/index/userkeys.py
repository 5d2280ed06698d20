"""Per-process indexes keyed by ``(cache path, user id, ...)``: dropping one user's entries (an erasure)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any


def drop_user(user_id: str, *tables: MutableMapping[Any, Any]) -> None:
    """Delete every entry whose key names ``user_id`` second. The caller holds the tables' lock."""
    for table in tables:
        for key in [k for k in table if k[1] == user_id]:
            del table[key]

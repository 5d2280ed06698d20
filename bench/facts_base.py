"""The "latest mention wins" baseline of ``bench/facts.py``: BM25 over a user's own turns (SQLite
FTS5 with the porter stemmer), and of the 10 best turns up to the check time, the latest one."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from markmem.ids import parse_time

STOP = frozenset(
    "a an and are as at be been by can could did do does for from had has have he her his how i if in is it "
    "its me my now of on or our she so that the their them they this to user user's was we were what when "
    "where which who whom why will with would you your current currently".split()
)


class LatestMention:
    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(content, user_id UNINDEXED, at UNINDEXED, "
                        "tokenize='porter unicode61')")
        self.db.executemany("INSERT INTO t(content, user_id, at) VALUES (?, ?, ?)",
                            [(x["content"], x["user_id"], parse_time(x["occurred_at"]))
                             for x in turns if x["role"] == "user"])

    def latest(self, user_id: str, query: str, t: str) -> str | None:
        words = [w for w in re.findall(r"\w+", query.lower()) if w not in STOP and len(w) > 1]
        if not words:
            return None
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute(
            "SELECT content, at FROM t WHERE t MATCH ? AND user_id = ? AND at <= ? ORDER BY bm25(t) LIMIT 10",
            (match, user_id, t)).fetchall()
        return max(rows, key=lambda r: r[1])[0] if rows else None

"""The compile queue is first in, first out even when its newest row is gone (``seq`` is a plain
rowid since the queue dropped AUTOINCREMENT: a new row gets max(seq) + 1)."""

from __future__ import annotations

from pathlib import Path

from markmem.store.raw import Located
from markmem.write.queue import Queue


def row(raw_id: str, user: str = "alice") -> Located:
    return Located(f"raw/u/{user}/2026/12/02.jsonl", 0, 10, raw_id, user)


def taken(q: Queue) -> list[str]:
    return [r.raw_id for r in q.take(100)]


def test_order_holds_after_the_newest_row_is_dropped(tmp_path: Path) -> None:
    q = Queue(tmp_path / "state.db")
    q.enqueue([row("r-1"), row("r-2")])
    q.enqueue([row("r-3", "bob")])
    assert q.drop_user("bob") == 1  # the newest row: its seq may be handed out again
    q.enqueue([row("r-4")])
    q.enqueue([row("r-5"), row("r-6")])
    assert taken(q) == ["r-1", "r-2", "r-4", "r-5", "r-6"]
    q.close()


def test_order_holds_after_the_queue_is_drained(tmp_path: Path) -> None:
    q = Queue(tmp_path / "state.db")
    q.enqueue([row("r-1"), row("r-2")])
    q.done(taken(q))
    q.enqueue([row("r-3")])
    q.enqueue([row("r-4")])
    q.enqueue([row("r-3")])  # queued twice (a recover): kept once, in its first place
    assert taken(q) == ["r-3", "r-4"] and q.pending() == 2
    q.done(["r-3"])
    q.enqueue([row("r-5")])
    assert taken(q) == ["r-4", "r-5"]
    q.close()

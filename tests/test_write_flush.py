"""add() flushes its raw lines in a helper thread while it writes the cache rows (store/flush.py):
nothing of the turn is visible (cache row, queue row) before the fsync returns, and a failed fsync
leaves no cache or queue row and no open descriptor."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from markmem import Memory
from markmem.store.flush import Flush


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _visible(mem: Memory, text: str) -> tuple[int, int]:
    """(cache rows, queue rows) holding ``text``, as another connection sees them."""
    cache = sqlite3.connect(mem.context.cache.user("alice").path)
    queue = sqlite3.connect(mem.root / ".markmem" / "state.db")
    try:
        rows = cache.execute("SELECT id FROM raw WHERE content = ?", (text,)).fetchall()
        queued = sum(queue.execute("SELECT count(*) FROM queue WHERE raw_id = ?", r).fetchone()[0] for r in rows)
        return len(rows), queued
    finally:
        cache.close()
        queue.close()


def test_nothing_shows_before_the_fsync(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.add("a first turn, so the files exist", user_id="alice")
    seen: list[tuple[int, int]] = []
    real = os.fdatasync

    def slow_sync(fd: int) -> None:
        seen.append(_visible(mem, "the second turn"))  # from the helper thread, mid-add()
        real(fd)

    monkeypatch.setattr(os, "fdatasync", slow_sync)
    mem.add("the second turn", user_id="alice")
    monkeypatch.setattr(os, "fdatasync", real)
    assert seen == [(0, 0)]
    assert _visible(mem, "the second turn") == (1, 1)
    assert [h.id for h in mem.search("second turn", user_id="alice")]  # type: ignore[union-attr]


def test_a_failed_fsync_writes_no_rows_and_leaks_nothing(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.add("a first turn, so the files exist", user_id="alice")
    before = _fds()

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken)
    with pytest.raises(OSError):
        mem.add("never acknowledged", user_id="alice")
    with pytest.raises(OSError):
        mem.add(["never", "acknowledged either"], user_id="alice")
    monkeypatch.undo()
    assert _fds() == before
    assert _visible(mem, "never acknowledged") == (0, 0)
    assert mem.stats()["queue_pending"] == 1  # the first turn's
    mem.add("works again", user_id="alice")
    assert _visible(mem, "works again") == (1, 1)


def test_flush_without_start_runs_on_wait(tmp_path: Path) -> None:
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"x")
    flush = Flush()
    flush.add(fd, str(tmp_path))
    flush.wait()
    flush.wait()  # once only
    with pytest.raises(OSError):
        os.fstat(fd)  # closed by the flush

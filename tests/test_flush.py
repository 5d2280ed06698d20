"""flush() tells a caller what was compiled, also when the background worker got there first."""

from __future__ import annotations

import time
from pathlib import Path

from markmem import Memory


def test_flush_reports_what_the_background_worker_compiled_first(tmp_repo: Path) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None) as m:
        m.add("I live in Lisbon", user_id="bob")
        deadline = time.monotonic() + 60
        while m.context.queue.pending() and time.monotonic() < deadline:  # the worker compiles it
            time.sleep(0.05)
        assert m.context.queue.pending() == 0
        reports = m.flush()
        assert sum(r.entries for r in reports) == 1 and reports[0].commit
        assert m.flush() == []  # each batch is reported once


def test_flush_without_a_worker_reports_its_own_batches(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="bob")
    mem.add("I work as a nurse", user_id="ann")
    assert sum(r.entries for r in mem.flush()) == 2
    assert mem.flush() == []

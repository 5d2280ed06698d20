"""A list of messages is one raw append (one fsync) and one cache transaction (linked before insert):
a crash anywhere in it loses nothing add() returned for, and leaves no half-linked rows."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from markmem import Memory
from markmem.model import RawEntry
from markmem.write import pipeline
from tests.test_durability import count_lines, wait_for_more_lines

OPEN = {"pii_engine": "regex", "vector_model": None, "background": False}

CHILD = r"""
import os, sys
from markmem import Memory
repo, acked, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = Memory(repo, pii_engine="regex", vector_model=None, background=False)
i = start
with open(acked, "a") as fh:
    while True:
        chat = [{"role": "user" if k % 2 == 0 else "assistant",
                 "content": f"where is town{i}-{k}?" if k % 3 == 0 else f"tea number {i}-{k}"} for k in range(20)]
        r = m.add(chat, user_id="alice" if i % 3 else "bob")
        fh.write(" ".join(r.ids) + "\n"); fh.flush(); os.fsync(fh.fileno())
        i += 1
"""


def _raw_ids(repo: Path) -> Counter[str]:
    ids: Counter[str] = Counter()
    for path in (repo / "raw").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                ids[json.loads(line)["id"]] += 1
    return ids


def _rows(mem: Memory, user: str) -> list[tuple]:
    db = mem.context.cache.user(user).db
    sql = "SELECT id, context, question, answer IS NOT NULL FROM raw ORDER BY recorded_at, rowid"
    return db.execute(sql).fetchall()


def _fts(mem: Memory, user: str) -> list[tuple]:
    db = mem.context.cache.user(user).db
    return db.execute("SELECT term, doc, cnt FROM raw_vocab ORDER BY term").fetchall()


@pytest.mark.slow
def test_kill_9_during_list_adds_loses_no_acknowledged_turn(tmp_repo: Path, tmp_path: Path) -> None:
    acked = tmp_path / "acked.txt"
    rng = random.Random(int(os.environ.get("MARKMEM_TEST_SEED", "4321")))
    Memory(tmp_repo, **OPEN).close()
    for round_ in range(6):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_repo), str(acked), str(round_ * 100_000)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        before = count_lines(acked)
        time.sleep(rng.uniform(0.8, 2.0))
        if round_ % 2:  # every other kill waits for progress first: a loaded machine starts children slowly
            wait_for_more_lines(acked, before, child)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    lists = [line.split() for line in acked.read_text().splitlines() if line.strip()]
    assert len(lists) >= 3 and all(len(ids) == 20 for ids in lists)
    with Memory(tmp_repo, **OPEN) as mem:
        lines = _raw_ids(tmp_repo)
        assert all(lines[i] == 1 for ids in lists for i in ids), "every acknowledged turn is in raw/ exactly once"
        cached = {r["id"] for r in mem.context.cache.rows("SELECT id FROM raw")}
        assert set(lines) <= cached  # the turns of an unacknowledged list, too, once raw/ holds them
        live = {u: (_rows(mem, u), _fts(mem, u)) for u in ("alice", "bob")}
        mem.reindex()
        assert {u: (_rows(mem, u), _fts(mem, u)) for u in ("alice", "bob")} == live
        assert mem.stats()["queue_pending"] == len(lines)


def test_a_crash_before_the_cache_rows_keeps_the_list_and_links_it_on_open(tmp_repo: Path, monkeypatch) -> None:
    chat = [f"question {k} about the trip?" if k % 2 == 0 else f"answer {k} with tea" for k in range(20)]
    with Memory(tmp_repo, **OPEN) as mem:
        mem.add("I live in Porto", user_id="alice")

        def killed(*_a: object, **_k: object) -> None:
            raise SystemExit("killed after the raw append")

        monkeypatch.setattr(mem.context.cache, "upsert_raw", killed)
        with pytest.raises(SystemExit):
            mem.add(chat, user_id="alice")  # not acknowledged: raw/ holds it, the cache does not
        monkeypatch.undo()
    assert len(_raw_ids(tmp_repo)) == 21
    with Memory(tmp_repo, **OPEN) as mem:
        live = _rows(mem, "alice"), _fts(mem, "alice")
        assert len(live[0]) == 21
        mem.add("and I love jazz", user_id="alice")
        live = _rows(mem, "alice"), _fts(mem, "alice")
        mem.reindex()
        assert (_rows(mem, "alice"), _fts(mem, "alice")) == live
        mem.flush()
        assert mem.stats()["queue_pending"] == 0


def test_the_entry_copied_with_its_path_equals_replace() -> None:
    e = RawEntry("r-1", "alice", "user", "hi", "2026-08-02T10:00:00Z", occurred_at="2023-05-08T13:56:00Z",
                 speaker="Kai", agent_id="a", run_id="r", metadata={"k": [1]}, pii=("PERSON",), quarantined="x")
    copied = pipeline._with_path(e, "raw/u/alice/2026/08/02.jsonl")
    assert copied == dataclasses.replace(e, path="raw/u/alice/2026/08/02.jsonl") and e.path == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.path = "x"  # type: ignore[misc]


@pytest.mark.parametrize("torn", [b'{"id": "r-torn", "user_id": "ali', b"x" * 9000])
def test_a_torn_tail_longer_than_a_read_is_cut_before_a_list_is_appended(tmp_repo: Path, torn: bytes) -> None:
    with Memory(tmp_repo, **OPEN) as mem:
        first = mem.add(["I live in Lisbon", "and I like tea"], user_id="alice").ids
    (path,) = (tmp_repo / "raw" / "u" / "alice").rglob("*.jsonl")
    intact = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(torn)  # a crash mid-append: never acknowledged
    with Memory(tmp_repo, **OPEN) as mem:
        second = mem.add(["I work as a pilot", "on long flights"], user_id="alice").ids
    data = path.read_bytes()
    assert data.startswith(intact) and b"torn" not in data and b"xxx" not in data
    assert list(_raw_ids(tmp_repo)) == [*first, *second]

"""Many writers, one repo: 8 threads, and separately 4 processes with their own Memory objects."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from markmem import Memory
from tests.conftest import git

PER_WRITER = 500

CHILD = r"""
import json, sys
from markmem import Memory
repo, who = sys.argv[1], sys.argv[2]
ids = []
with Memory(repo, pii_engine="regex", vector_model=None, background=True, batch_size=200) as m:
    for i in range(int(sys.argv[3])):
        ids += m.add(f"{who} says item {i}: I live in town{who}{i}", user_id=f"user{i % 3}").ids
print(json.dumps(ids))
"""


def raw_ids(repo: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for path in (repo / "raw").rglob("*.jsonl"):
        out.update(json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip())
    return out


def check_consistent(mem: Memory, ids: list[str]) -> None:
    lines = raw_ids(mem.root)
    assert len(ids) == len(set(ids))
    assert all(lines[i] == 1 for i in ids) and sum(lines.values()) == len(ids)
    compiled = sum(f.db.execute("SELECT count(*) FROM raw WHERE compiled = 1").fetchone()[0]
                   for f in mem.context.cache.each())  # one file, or one per user
    assert compiled == len(ids)
    assert mem.stats()["queue_pending"] == 0
    git(mem.root, "fsck", "--strict")
    assert git(mem.root, "status", "--porcelain") == ""


def test_eight_threads_on_one_memory(tmp_repo: Path) -> None:
    ids: list[str] = []
    lock = threading.Lock()
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=True, batch_size=300) as mem:

        def writer(n: int) -> None:
            mine = [mem.add(f"thread {n} item {i}: I work as a pilot{i}", user_id=f"user{i % 4}").ids[0]
                    for i in range(PER_WRITER)]
            with lock:
                ids.extend(mine)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        mem.flush()
        check_consistent(mem, ids)


@pytest.mark.slow
def test_four_processes_with_their_own_memory(tmp_repo: Path) -> None:
    Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False).close()
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_repo), f"p{n}", str(PER_WRITER)],
                              stdout=subprocess.PIPE, text=True) for n in range(4)]
    ids: list[str] = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0
        ids += json.loads(out)
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.flush()
        check_consistent(mem, ids)
        for u in range(3):
            assert mem.get_all(f"user{u}")

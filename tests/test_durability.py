"""Nothing accepted is lost: kill -9 at random points while compiling; lose the queue database."""

from __future__ import annotations

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
from tests.conftest import git

CHILD = r"""
import os, sys
from markmem import Memory
repo, acked, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = Memory(repo, pii_engine="regex", vector_model=None, background=True, batch_size=7)
i = start
with open(acked, "a") as fh:
    while True:
        user = "alice" if i % 2 else "bob"
        r = m.add(f"My favorite number is {i}. I live in town{i}", user_id=user)
        fh.write(f"{r.ids[0]} {user} {i}\n"); fh.flush(); os.fsync(fh.fileno())
        i += 1
        if i % 9 == 0:
            m.flush()
"""


def raw_lines(repo: Path) -> Counter[str]:
    ids: Counter[str] = Counter()
    for path in (repo / "raw").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                ids[json.loads(line)["id"]] += 1
    return ids


def count_lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def wait_for_more_lines(path: Path, before: int, child: subprocess.Popen[bytes], deadline: float = 120.0) -> None:
    end = time.monotonic() + deadline
    while count_lines(path) <= before and child.poll() is None and time.monotonic() < end:
        time.sleep(0.05)


@pytest.mark.slow
def test_kill_9_at_random_points_loses_nothing_and_compiles_once(tmp_repo: Path, tmp_path: Path) -> None:
    acked = tmp_path / "acked.txt"
    rng = random.Random(int(os.environ.get("MARKMEM_TEST_SEED", "1234")))
    Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False).close()
    for round_ in range(12):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_repo), str(acked), str(round_ * 100_000)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        before = count_lines(acked)
        time.sleep(rng.uniform(0.8, 2.0))
        if round_ % 2:  # every other kill waits for progress first: a loaded machine starts children slowly
            wait_for_more_lines(acked, before, child)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    ack = [line.split() for line in acked.read_text().splitlines() if line.strip()]
    assert len(ack) >= 6, "every waiting round acknowledged at least one add"

    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.flush()
        lines = raw_lines(tmp_repo)
        for raw_id, _user, _n in ack:
            assert lines[raw_id] == 1, f"{raw_id} must be in raw/ exactly once"
        compiled = {r["id"] for r in mem.context.cache.rows("SELECT id FROM raw WHERE compiled = 1")}
        assert {a[0] for a in ack} <= compiled
        for user in ("alice", "bob"):
            claims = [c for p in mem.get_all(user) for c in p.claims if c.predicate == "favorite_number"]
            per_source = Counter(s.rsplit("#", 1)[1] for c in claims for s in c.sources)
            mine = [a[0] for a in ack if a[1] == user]
            wrong = {r: per_source[r] for r in mine if per_source[r] != 1}
            if wrong and os.environ.get("MARKMEM_DEBUG_DIR"):
                import shutil

                shutil.copytree(tmp_repo, os.environ["MARKMEM_DEBUG_DIR"], dirs_exist_ok=True)
                (Path(os.environ["MARKMEM_DEBUG_DIR"]) / "wrong.json").write_text(json.dumps(wrong))
            assert not wrong, f"each acknowledged input compiled exactly once: {wrong}"
            assert len({c.id for c in claims}) == len(claims)
            assert sum(c.active for c in claims) == 1, "the supersession chain stays intact"
        assert mem.stats()["queue_pending"] == 0
    git(tmp_repo, "fsck", "--strict")
    assert git(tmp_repo, "status", "--porcelain") == ""


def test_lost_queue_database_is_recovered_from_raw(tmp_repo: Path) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        ids = [mem.add(f"I live in town{i}", user_id="alice").ids[0] for i in range(25)]
        mem.flush()
        ids += [mem.add(f"My favorite number is {i}", user_id="alice").ids[0] for i in range(10)]
    for p in (tmp_repo / ".markmem").glob("state.db*"):
        p.unlink()
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        assert mem.stats()["queue_pending"] == 10
        mem.flush()
        claims = [c for p in mem.get_all("alice") for c in p.claims]
        sources = Counter(s.rsplit("#", 1)[1] for c in claims for s in c.sources)
        assert all(sources[i] == 1 for i in ids)


def test_torn_tail_of_a_raw_file_is_cut_before_the_next_append(tmp_repo: Path) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        first = mem.add("I live in Lisbon", user_id="alice").ids[0]
    (path,) = (tmp_repo / "raw" / "u" / "alice").rglob("*.jsonl")
    with open(path, "ab") as fh:
        fh.write(b'{"id": "r-torn", "user_id": "ali')  # a crash mid-append: never acknowledged
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        second = mem.add("I work as a pilot", user_id="alice").ids[0]
        mem.flush()
        assert set(raw_lines(tmp_repo)) == {first, second}
        assert {p.title for p in mem.get_all("alice")} == {"lives in", "job"}


def test_uncommitted_batch_after_a_crash_is_committed_on_open(tmp_repo: Path) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.add("I live in Lisbon", user_id="alice")
        mem.flush()
        (page,) = mem.get_all("alice")
    # simulate: pages written, process died before `git commit`, leaving a stale index.lock
    path = tmp_repo / page.path
    path.write_text(path.read_text().replace("pinned: true", "pinned: true\nnote: crashed-before-commit"))
    (tmp_repo / ".git" / "index.lock").write_text("")
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False):
        assert git(tmp_repo, "status", "--porcelain") == ""
        assert "Markmem-Op: recover" in git(tmp_repo, "log", "-1", "--format=%B")


@pytest.mark.parametrize("fail_at", [0, 1])
def test_crash_between_page_writes_during_rollover_loses_no_claim(tmp_repo: Path, monkeypatch, fail_at: int) -> None:
    """Fault injection: the process dies after `fail_at` page writes of a batch that rolls a page over."""
    from markmem.write import pipeline
    from markmem.write.rollover import ROLL_AT

    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        for i in range(ROLL_AT + 1):
            mem.add(f"My favorite number is {i}", user_id="alice")
            mem.flush()
        last = mem.add(f"My favorite number is {ROLL_AT + 1}", user_id="alice").ids[0]
        real, calls = pipeline.write_page, []

        def dying(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(1)
            if len(calls) > fail_at:
                raise SystemExit("killed")
            return real(*args, **kwargs)

        monkeypatch.setattr(pipeline, "write_page", dying)
        with pytest.raises(SystemExit):
            mem.flush()
        monkeypatch.setattr(pipeline, "write_page", real)
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.flush()
        claims = [c for p in mem.get_all("alice") for c in p.claims if c.predicate == "favorite_number"]
        values = Counter(c.value for c in claims)
        assert set(values) == {str(i) for i in range(ROLL_AT + 2)} and set(values.values()) == {1}
        assert any(last in s for c in claims for s in c.sources)
        assert sum(c.active for c in claims) == 1


def test_crash_before_the_commit_of_a_rollover_batch_keeps_the_cache_complete(tmp_repo: Path, monkeypatch) -> None:
    """Pages (live and archive) are written, the process dies before `git commit`: recovery commits
    them on the next open, and the cache must learn about the archive page too."""
    from markmem.store.git import Git
    from markmem.write.rollover import ROLL_AT

    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        for i in range(ROLL_AT + 1):
            mem.add(f"My favorite number is {i}", user_id="alice")
            mem.flush()
        mem.add(f"My favorite number is {ROLL_AT + 1}", user_id="alice")

        def dying(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise SystemExit("killed before commit")

        monkeypatch.setattr(Git, "commit", dying)
        with pytest.raises(SystemExit):
            mem.flush()
        monkeypatch.undo()
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.flush()
        on_disk = {p.relative_to(tmp_repo / "wiki").as_posix()[:-3] for p in (tmp_repo / "wiki").rglob("*.md")}
        assert {p.id for p in mem.get_all("alice")} == on_disk
        claims = [c for p in mem.get_all("alice") for c in p.claims if c.predicate == "favorite_number"]
        assert sorted(int(c.value) for c in claims) == list(range(ROLL_AT + 2))
    assert git(tmp_repo, "status", "--porcelain") == ""
